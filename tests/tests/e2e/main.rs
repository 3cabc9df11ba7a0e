//! End-to-end tests of the engine, the CLI's references and the web UI
//! against the loopback test target, one binary (each test binary links
//! the whole engine in release: one binary instead of fourteen saves most
//! of CI's compile time). Modules are the former files, one subject each.
//! Tests that compare timings, or load both cores, hold `support::SERIAL`.

mod addresses;
mod answer;
mod bench;
mod bodies;
mod browser;
mod browser_compare;
mod browser_decay;
mod browser_edge;
mod browser_islands;
mod browser_long_phase;
mod browser_migration;
mod browser_monitor;
mod browser_network;
mod browser_own;
mod browser_streams;
mod browser_usability;
mod browser_vantages;
mod discovery;
mod engine;
mod hostile;
mod interop;
mod keylog;
mod migration;
mod network;
mod proxy;
mod repeatability;
mod resumption;
mod streams;
mod support;
mod tcp_info;
mod watch;
mod web_size;
mod wire;
