//! The server's integration tests, one binary (each test binary links the
//! whole server in release: one binary instead of eighteen saves most of
//! CI's compile time). Modules are the former files, one subject each.
//! Tests that compare timings, or load both cores, hold `support::SERIAL`.

mod agent;
mod agent_rules;
mod agent_shared;
mod api;
mod bench_api;
mod bench_page;
mod browser_attach;
mod ci_gates;
mod cli;
mod compare;
mod cors;
mod docs;
mod durability;
mod egress;
mod egress_kernel;
mod fairness;
mod flood;
mod guard;
mod hardening;
mod history_flood;
mod layers;
mod link_preview;
mod list_verdict;
mod listener;
mod load;
mod migration;
mod monitor_budgets;
mod monitor_latest;
mod monitor_restart;
mod monitor_shares;
mod monitors;
mod network;
mod privacy;
mod reads;
mod remote;
mod retention;
mod routes;
mod scrape;
mod shape_redaction;
mod store;
mod store_serve;
mod streams;
mod support;
mod trusted_proxy;
mod vantage_exports;
mod view;
mod web_assets;
