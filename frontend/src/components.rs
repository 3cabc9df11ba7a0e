//! The building blocks of the pages, one job each.

mod actions;
mod bench;
mod browser_group;
mod compare_actions;
mod comparison;
mod diff_table;
mod facts;
mod findings;
mod form;
mod network_note;
mod problem;
mod recent;
mod side_by_side;
mod streams;
mod summary;
mod vantage_group;
mod vantage_matrix;
mod vantage_picker;
mod verdict;
mod waterfall;

pub use actions::Actions;
pub use bench::{
    BenchActions, BenchForm, BenchProgressView, BenchSummaryLine, BenchTable, Caveats, DecayChart,
    PercentileChart,
};
pub use browser_group::BrowserVantage;
pub use compare_actions::{CompareWith, compare_links};
pub use comparison::Comparison;
pub use diff_table::DiffTable;
pub use facts::Facts;
pub use findings::Findings;
pub use form::ProbeForm;
pub use network_note::{BenchNetworkNote, MigrationNote, NetworkNote, NetworkPicker};
pub use problem::{ApiProblem, Problem};
pub use recent::RecentList;
pub use side_by_side::SideBySide;
pub use streams::StreamsChart;
pub use summary::{ProbeSummaryLine, local_time};
pub use vantage_group::VantageGroups;
pub use vantage_matrix::VantageMatrix;
pub use verdict::VerdictPanel;
pub use waterfall::Waterfalls;
