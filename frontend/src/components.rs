//! The building blocks of the pages, one job each.

mod bench_form;
mod clock;
mod form;
mod network_picker;
mod problem;
mod recent;
mod vantage_picker;

pub use bench_form::BenchForm;
pub use clock::local_time;
pub use form::ProbeForm;
pub use network_picker::NetworkPicker;
pub use problem::{ApiProblem, Problem, problem_markup};
pub use recent::RecentList;
