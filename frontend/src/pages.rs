//! The routed pages, one per file.

mod home;
mod not_found;

pub use home::HomePage;
pub use not_found::NotFoundPage;
