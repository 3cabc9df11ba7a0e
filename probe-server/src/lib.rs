//! h123's probe engine, API server and CLI.
//!
//! The binary `h123` is glue over this library: [`probe::Engine`] measures,
//! [`cli`] presents.

pub mod cli;
pub mod probe;
