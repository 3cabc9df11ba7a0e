//! The building blocks of the pages, one job each.

mod clock;
mod problem;

pub use clock::{local_time, to_local_time};
pub use problem::{Problem, problem_markup, problem_section};
