//! What the kernel takes beyond a probe's byte budget, and what a budgeted probe of a large
//! answer costs in time, on loopback: the bytes `lo` carried (`/proc/net/dev`, both ways,
//! headers included) against the bytes the server counted, per protocol; and the receive
//! time of a 32 MiB answer within its budget.
//!
//! `cargo test --release -p h123 --test server -- --ignored --nocapture egress_kernel
//! --test-threads=1` prints the figures (a quiet machine: anything else on `lo` counts too).
//! Behind a bottleneck, in a network namespace of its own (as root; the test binary's path as
//! cargo printed it):
//!
//! ```text
//! unshare -n sh -c "ip link set lo mtu 1500 && ip link set lo up && \
//!   tc qdisc add dev lo root tbf rate 400mbit burst 256kb latency 40ms && \
//!   target/release/deps/server-HASH --ignored --nocapture --test-threads=1 egress_kernel"
//! ```

use crate::support::*;
use h123::server::ServerConfig;
use std::net::{IpAddr, Ipv4Addr};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 23));
const MIB: u64 = 1 << 20;

/// Bytes `lo` has received, from `/proc/net/dev`.
fn lo_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/net/dev").expect("/proc/net/dev");
    text.lines()
        .find_map(|line| line.trim_start().strip_prefix("lo:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .expect("lo's received bytes")
}

/// A server whose probes may receive `budget` bytes and bodies as large.
fn budgeted(target: &h123_target::TestTarget, budget: u64) -> ServerConfig {
    let mut config = config(target);
    config.limits.max_probe_bytes = Some(budget);
    config.limits.max_body_bytes = budget;
    config
}

/// One probe of `path` over `protocols` (`repeat` attempts of `streams` requests) on a server
/// with `budget`: the bytes `lo` carried meanwhile, the bytes the server counted, and the first
/// protocol's attempts' receive times in milliseconds.
async fn probe(
    target: &h123_target::TestTarget,
    budget: u64,
    protocols: &[&str],
    path: &str,
    (repeat, streams): (u32, u32),
) -> (u64, u64, Vec<f64>) {
    let dir = tempfile::tempdir().unwrap();
    let state = state(budgeted(target, budget), &dir);
    let mut body = serde_json::json!({
        "url": target.https_url(path),
        "protocols": protocols,
        "repeat": repeat, "rounds": 1,
        "timeout_ms": 30000,
    });
    if streams > 1 {
        body["streams"] = streams.into();
    }
    let body = body.to_string();
    let before = lo_bytes();
    let (_, record) = probe_to_the_end(&state, &body, CLIENT).await;
    // What was in flight when the connection was dropped lands within a moment.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let crossed = lo_bytes() - before;
    let metrics = call(&state, get("/metrics"), CLIENT).await.text();
    let counted = metrics
        .lines()
        .find_map(|l| l.strip_prefix("h123_target_bytes_total "))
        .and_then(|n| n.parse().ok())
        .expect("the counter");
    let receive = record.result.runs[0]
        .attempts
        .iter()
        .filter_map(|a| a.phases.receive)
        .map(|span| (span.end_us.0 - span.start_us.0) as f64 / 1000.0)
        .collect();
    (crossed, counted, receive)
}

#[tokio::test]
#[ignore = "a measurement: cargo test --release -p h123 --test server -- --ignored --nocapture egress_kernel"]
async fn what_the_kernel_takes_beyond_a_budget_and_what_a_large_answer_costs() {
    let _alone = SERIAL.lock().await;
    let target = target().await;
    let cases: [(&str, &[&str], (u32, u32)); 4] = [
        ("h1", &["h1"], (1, 1)),
        ("h2", &["h2"], (1, 1)),
        ("h3", &["h3"], (1, 1)),
        // The audit's amplifier: every protocol, 10 attempts of 16 requests at once.
        ("amplifier", &["h1", "h2", "h3"], (10, 16)),
    ];
    for (name, protocols, shape) in cases {
        let path = "/bytes/67108864";
        let (crossed, counted, _) = probe(&target, 8 * MIB, protocols, path, shape).await;
        eprintln!(
            "{name}: an 8 MiB budget against 64 MiB answers: {counted} bytes counted, \
             {crossed} crossed lo ({:.2} MB beyond)",
            (crossed.saturating_sub(counted)) as f64 / 1e6
        );
    }
    for protocol in ["h1", "h2", "h3"] {
        let path = "/bytes/33554432";
        let (_, _, mut receive) = probe(&target, 64 * MIB, &[protocol], path, (5, 1)).await;
        receive.sort_by(f64::total_cmp);
        eprintln!(
            "{protocol}: a 32 MiB answer within a 64 MiB budget, 5 attempts: receive \
             median {:.1} ms (all {receive:.1?})",
            receive.get(receive.len() / 2).copied().unwrap_or(f64::NAN)
        );
    }
}
