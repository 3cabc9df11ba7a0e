//! The building blocks of the pages, one job each.

mod actions;
mod addresses;
mod bench;
mod comparison;
mod facts;
mod findings;
mod form;
mod problem;
mod recent;
mod summary;
mod vantage_group;
mod vantage_matrix;
mod vantage_picker;
mod verdict;
mod waterfall;

pub use actions::Actions;
pub use bench::{
    BenchActions, BenchForm, BenchProgressView, BenchSummaryLine, BenchTable, Caveats,
    PercentileChart,
};
pub use comparison::Comparison;
pub use facts::Facts;
pub use findings::Findings;
pub use form::ProbeForm;
pub use problem::{ApiProblem, Problem};
pub use recent::RecentList;
pub use summary::ProbeSummaryLine;
pub use vantage_group::VantageGroups;
pub use vantage_matrix::VantageMatrix;
pub use verdict::VerdictPanel;
pub use waterfall::Waterfalls;
