//! The routed pages, one per file.

mod bench;
mod compare;
mod home;
mod not_found;

pub use bench::BenchPage;
pub use compare::ComparePage;
pub use home::HomePage;
pub use not_found::NotFoundPage;
