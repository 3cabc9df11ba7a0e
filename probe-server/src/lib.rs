//! h123's probe engine, API server and CLI.
//!
//! The binary `h123` is glue over this library: [`probe::Engine`] measures,
//! [`cli`] presents, [`api::app`] serves the REST API over the [`server`]
//! (admission, live probes, limits) and the [`store`].

pub mod api;
pub mod bench;
pub mod cli;
pub mod probe;
pub mod server;
pub mod store;
