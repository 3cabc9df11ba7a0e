//! The routed pages, one per file.

mod bench;
mod home;
mod not_found;

pub use bench::BenchPage;
pub use home::HomePage;
pub use not_found::NotFoundPage;
