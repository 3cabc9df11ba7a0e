//! End-to-end: h123's `wait` against the wire. A loopback capture, decrypted
//! with the key log h123 writes, shows when each request's last packet left
//! and the first packet of its response came back; what h123 adds to that
//! interval must be as small over HTTP/3 as over HTTP/2 (the goal:
//! within 0.2 ms), in one of three rounds (see [`ROUNDS`]). Comparing the two protocols' waits directly would also
//! compare the target's two server stacks, whose turnarounds differ from run
//! to run by up to 0.2 ms on their own; the wire takes the server out.
//!
//! The same comparison holds with h123 at the lowest priority on a machine
//! whose cores are all busy at the server's: its stamps come from the
//! kernel and from before its calls, not from when it got round to them.

use crate::browser::h123_binary;
use crate::support::capture::{Capture, read_rows};
use crate::support::{SERIAL, probe_with, run};
use h123::probe::keylog::KeyLogPath;
use h123::probe::tls::TrustSettings;
use h123_shared::{Phase, ProbeResult, Protocol, TtfbSource};
use h123_target::{TargetConfig, TestTarget};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const ATTEMPTS: u32 = 21;

/// Per request stream, in stream order: the time from the client's last
/// packet on it (the request's end) to the server's first (the response's
/// start), in ms, from the packets matching `filter` whose stream ids are in
/// `stream_field` (source port in `port_field`), keeping the streams
/// `is_request` names.
fn wire_waits(
    capture: &Path,
    port: u16,
    keys: &Path,
    (filter, stream_field, port_field): (&str, &str, &str),
    is_request: impl Fn(u64) -> bool,
) -> Vec<f64> {
    let mut ends: BTreeMap<u64, (f64, Option<f64>)> = BTreeMap::new();
    for row in read_rows(
        capture,
        port,
        Some(keys),
        filter,
        &["frame.time_epoch", port_field, stream_field],
    ) {
        let at = row[0].parse::<f64>().expect("a packet time") * 1000.0;
        let from_server = row[1] == port.to_string();
        for stream in row[2].split(',').filter_map(|id| id.parse().ok()) {
            if !is_request(stream) {
                continue;
            }
            let (request_end, response_start) = ends.entry(stream).or_insert((at, None));
            if from_server {
                response_start.get_or_insert(at);
            } else {
                *request_end = at;
            }
        }
    }
    ends.values()
        .map(|(request_end, response_start)| {
            response_start.expect("every request answered") - request_end
        })
        .collect()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// One round: what h123 adds to the wire's wait over HTTP/2 and over HTTP/3
/// (medians over the reused attempts), in ms.
async fn added_by_h123() -> (f64, f64) {
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (capture_file, keys) = (dir.path().join("waits.pcapng"), dir.path().join("keys.log"));
    let port = target.https_addr.port();
    let capture = Capture::start(port, &capture_file);
    let trust = TrustSettings::from_ca_file(target.ca_file())
        .unwrap()
        .with_key_log(KeyLogPath::open(&keys).unwrap());
    let result = probe_with(&target, trust, |o| {
        o.url = target.https_url("/delay/5");
        o.protocols = vec![Protocol::H2, Protocol::H3];
        o.repeat = ATTEMPTS;
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    capture.stop();

    added_to_the_wire(&result, &capture_file, port, &keys)
}

/// What h123's waits add to the wire's, over HTTP/2 and over HTTP/3 (medians
/// over the reused attempts), in ms, from `result` and its capture.
fn added_to_the_wire(
    result: &ProbeResult,
    capture_file: &Path,
    port: u16,
    keys: &Path,
) -> (f64, f64) {
    let h3_attempts = &run(result, Protocol::H3).attempts;
    assert!(
        h3_attempts
            .iter()
            .all(|a| a.ttfb_source == TtfbSource::Datagram),
        "HTTP/3's first byte is its datagram's arrival"
    );
    // Beyond the first attempt (a new connection), what h123 adds to the
    // wire's wait: its own wake-up to read the response, for both protocols.
    let added = |protocol, fields, is_request: fn(u64) -> bool| {
        let wire = wire_waits(capture_file, port, keys, fields, is_request);
        let attempts = &run(result, protocol).attempts;
        assert_eq!(
            wire.len(),
            attempts.len(),
            "{protocol:?}: one exchange per attempt on the wire"
        );
        let measured: Vec<f64> = attempts
            .iter()
            .map(|a| {
                assert!(a.failure.is_none(), "{protocol:?}: {a:?}");
                a.phases.get(Phase::Wait).unwrap().duration().as_ms()
            })
            .collect();
        let added: Vec<f64> = measured[1..]
            .iter()
            .zip(&wire[1..])
            .map(|(m, w)| m - w)
            .collect();
        println!(
            "{protocol:?}: wait {:.3} ms, on the wire {:.3} ms, added by h123 {:.3} ms",
            median(measured[1..].to_vec()),
            median(wire[1..].to_vec()),
            median(added.clone())
        );
        median(added)
    };
    // HTTP/2: the HEADERS frames, on odd (client) stream ids. HTTP/3: every
    // QUIC stream frame on client-initiated bidirectional streams.
    let h2 = added(
        Protocol::H2,
        ("http2.type == 1", "http2.streamid", "tcp.srcport"),
        |id| id % 2 == 1,
    );
    let h3 = added(
        Protocol::H3,
        (
            "quic.stream.stream_id",
            "quic.stream.stream_id",
            "udp.srcport",
        ),
        |id| id % 4 == 0,
    );
    (h2, h3)
}

/// Whether a round meets the bounds: each protocol's addition within
/// -0.1..0.3 ms, and HTTP/3's at most 0.2 ms over HTTP/2's (the goal).
fn meets((h2, h3): (f64, f64)) -> bool {
    [h2, h3].iter().all(|added| (-0.1..=0.3).contains(added)) && (h3 - h2).abs() <= 0.2
}

/// Rounds a miss is measured again: another process's load (a build) can
/// delay one wake-up by tenths of a millisecond, while an excess of h123's own
/// shows in every round.
const ROUNDS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http3_wait_matches_the_wire_as_closely_as_http2_wait() {
    let _serial = SERIAL.lock().await;
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let round = added_by_h123().await;
        println!(
            "h123 adds {:.3} ms to HTTP/2's wait and {:.3} ms to HTTP/3's: {:.3} ms more",
            round.0,
            round.1,
            round.1 - round.0
        );
        if meets(round) {
            return;
        }
        rounds.push(round);
    }
    panic!(
        "in {ROUNDS} rounds, h123 added (h2, h3) {rounds:.3?} ms to the wire's wait: \
         beyond -0.1..0.3 ms, or HTTP/3's more than 0.2 ms over HTTP/2's"
    );
}

/// Threads spinning at the test's own priority, one per core, until dropped:
/// a machine whose every core a loopback server shares with other work.
struct BusyCores {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyCores {
    fn start() -> BusyCores {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        BusyCores { stop, threads }
    }
}

impl Drop for BusyCores {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.threads.drain(..).for_each(|t| t.join().unwrap());
    }
}

/// One round with the priorities swapped: the CLI at `nice 19`, the target
/// and a spinning thread per core at the test's priority; what h123 adds to
/// the wire's wait over HTTP/2 and HTTP/3.
async fn added_at_low_priority() -> (f64, f64) {
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (capture_file, keys) = (dir.path().join("low.pcapng"), dir.path().join("keys.log"));
    let port = target.https_addr.port();
    let capture = Capture::start(port, &capture_file);
    let busy = BusyCores::start();
    let output = tokio::process::Command::new("nice")
        .args(["-n", "19"])
        .arg(h123_binary().expect("the h123 binary (cargo build --release -p h123)"))
        .args(["probe", &target.https_url("/delay/5"), "--proto", "h2,h3"])
        .args(["-n", &ATTEMPTS.to_string(), "--rounds", "1", "-o", "json"])
        .arg("--cacert")
        .arg(target.ca_file())
        .arg("--keylog")
        .arg(&keys)
        .output()
        .await
        .expect("h123 runs");
    drop(busy);
    tokio::time::sleep(Duration::from_millis(300)).await;
    capture.stop();
    assert!(
        output.status.success(),
        "h123 probe: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result: ProbeResult = serde_json::from_slice(&output.stdout).expect("a probe result");
    added_to_the_wire(&result, &capture_file, port, &keys)
}

/// The bound with the priorities swapped: each protocol's addition
/// within 0.1 ms of the wire.
fn within_a_tenth((h2, h3): (f64, f64)) -> bool {
    h2.abs() <= 0.1 && h3.abs() <= 0.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_match_the_wire_when_h123_runs_below_a_busy_server() {
    let _serial = SERIAL.lock().await;
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let round = added_at_low_priority().await;
        println!(
            "at nice 19 on busy cores, h123 adds {:.3} ms to HTTP/2's wait and {:.3} ms to HTTP/3's",
            round.0, round.1
        );
        if within_a_tenth(round) {
            return;
        }
        rounds.push(round);
    }
    panic!(
        "in {ROUNDS} rounds at nice 19 on busy cores, h123 added (h2, h3) {rounds:.3?} ms \
         to the wire's wait: beyond 0.1 ms"
    );
}
