//! The building blocks of the pages, one job each.

mod bench;
mod clock;
mod form;
mod network_note;
mod problem;
mod recent;
mod vantage_picker;

pub use bench::{
    BenchActions, BenchForm, BenchProgressView, BenchSummaryLine, BenchTable, Caveats, DecayChart,
    PercentileChart,
};
pub use clock::local_time;
pub use form::ProbeForm;
pub use network_note::{BenchNetworkNote, NetworkPicker, SweepNetworkNote};
pub use problem::{ApiProblem, Problem, problem_markup};
pub use recent::RecentList;
