//! h123's wire contract: the timing schema, and pure functions over it.
//!
//! No I/O and no clock: this crate builds for `wasm32-unknown-unknown` as well
//! as natively, so the web UI, the server and the CLI share one definition of
//! every figure they show.

// The paths `#[derive(ReadJson)]` writes (`::h123_shared::json`) work here too.
extern crate self as h123_shared;

pub mod addresses;
pub mod agent;
pub mod alert;
pub mod alt_svc;
pub mod analysis;
pub mod api;
pub mod arms;
pub mod badge;
pub mod base64;
pub mod bench;
pub mod bench_chart;
pub mod blackbox;
pub mod browser;
pub mod chain;
pub mod compare;
pub mod schema;
pub mod timeline;

pub mod curl;
pub mod diagnosis;
pub mod exit;
#[cfg(any(test, feature = "fixture"))]
pub mod fixture;
pub mod format;
pub mod har;
pub mod input;
pub mod invariant;
pub mod json;
pub mod live;
pub mod markup;
pub mod migration;
pub mod monitor;
pub mod monitor_chart;
pub mod monitor_rollup;
pub mod monitor_status;
pub mod network;
pub mod palette;
pub mod quic_budget;
pub mod redact;
pub mod route;
pub mod server_timing;
pub mod slo;
pub mod stats;
pub mod streams;
pub mod sweep;
pub mod table;
pub mod transport;
pub mod uri;
pub mod vantage;
pub mod verdict;
pub mod watch;
pub mod waterfall;

pub use schema::*;
