//! The routed pages, one per file.

mod home;
mod not_found;
mod result;

pub use home::HomePage;
pub use not_found::NotFoundPage;
pub use result::ResultPage;
