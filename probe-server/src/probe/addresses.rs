//! `--all-addresses`: each other address a protocol's host resolved to gets
//! its own run of the same attempts, pinned to it, beside the main run.

use super::budget::RecordBudget;
use super::connection::{ConnectSettings, Connection};
use super::dns::NameResolver;
use super::plan::Plan;
use super::run::ProtocolRunner;
use super::trace::Progress;
use h123_shared::addresses::main_address;
use h123_shared::{AddressFamily, AddressRun, MAX_OTHER_ADDRESSES, Protocol, ProtocolRun};
use std::net::{IpAddr, SocketAddr};

/// The addresses besides the main run's to probe on `port`: those the main
/// run's first lookup gave, of the probe's family, allowed by the connect
/// policy (a refused one is neither dialled nor named), without the main
/// run's own, deduplicated, at most [`MAX_OTHER_ADDRESSES`]. None without
/// `all_addresses`, or through a proxy (which dials for itself).
pub fn others(
    plan: &Plan,
    run: &ProtocolRun,
    settings: &ConnectSettings,
    port: u16,
) -> Vec<IpAddr> {
    let proxied = settings
        .proxy
        .as_ref()
        .is_some_and(|p| p.for_url(&plan.url).is_some());
    if !plan.options.all_addresses || proxied || run.skipped.is_some() {
        return Vec::new();
    }
    let main = main_address(&run.attempts);
    let resolved = run
        .attempts
        .iter()
        .filter(|a| a.hop == 0)
        .find_map(|a| a.dns.as_ref())
        .map(|dns| dns.addresses.as_slice())
        .unwrap_or_default();
    let mut out: Vec<IpAddr> = Vec::new();
    for ip in resolved.iter().filter_map(|a| a.parse::<IpAddr>().ok()) {
        let allowed = settings.policy.check(SocketAddr::new(ip, port)).is_ok();
        if plan.options.family.admits(ip) && allowed && Some(ip) != main && !out.contains(&ip) {
            out.push(ip);
        }
    }
    out.truncate(MAX_OTHER_ADDRESSES);
    out
}

/// One run of `C` per address in `ips`, each pinned to its address, sharing
/// the protocol's `budget` with the main run (so the record's cap holds);
/// `endpoint` is the main run's `connect_to` (HTTP/3's discovered endpoint).
/// They report no live progress: the live view follows the main runs.
pub async fn side_runs<C: Connection>(
    protocol: Protocol,
    plan: &Plan,
    resolver: &NameResolver,
    settings: &ConnectSettings,
    budget: &RecordBudget,
    endpoint: Option<(String, u16)>,
    ips: Vec<IpAddr>,
) -> Vec<AddressRun> {
    let mut out = Vec::new();
    for ip in ips {
        let run = ProtocolRunner::<C>::new(protocol, plan, resolver, settings, Progress::default())
            .connect_to(endpoint.clone())
            .pin(ip)
            .budget(budget)
            .run()
            .await;
        out.push(AddressRun {
            address: ip.to_string(),
            family: AddressFamily::of(ip),
            stopped: run.stopped,
            cut_short: run.cut_short,
            attempts: run.attempts,
        });
    }
    out
}
