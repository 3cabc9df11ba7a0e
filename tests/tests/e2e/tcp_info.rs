//! End-to-end tests of the transport facts against the real test target:
//! the kernel's `TCP_INFO` snapshots (at connect, first byte and end) over
//! h1 and h2, through the HTTPS and plaintext listeners, plausible on
//! loopback, retransmits counted when an nftables rule drops some of the
//! probe's segments to the target's port, and QUIC's path statistics on h3.

use crate::support::{SERIAL, probe, run};
use h123_shared::{
    Attempt, ConnectionMode, Method, Micros, Protocol, ProtocolRun, RequestBody, TcpInfo,
};
use h123_target::{TargetConfig, TestTarget};
use std::process::Command;

const TCP_PROTOCOLS: [Protocol; 2] = [Protocol::H1, Protocol::H2];

/// A loopback round trip is tens of microseconds; 1 ms is generous.
const LOOPBACK_RTT_BOUND: Micros = Micros(1_000);

fn snapshot<'a>(
    attempt: &'a Attempt,
    which: &str,
    pick: impl Fn(&h123_shared::TcpInfoSnapshots) -> Option<&TcpInfo>,
) -> &'a TcpInfo {
    let snapshots = attempt
        .tcp_info
        .as_ref()
        .unwrap_or_else(|| panic!("attempt {} has no TCP facts", attempt.attempt));
    pick(snapshots).unwrap_or_else(|| panic!("attempt {} has no {which} snapshot", attempt.attempt))
}

/// A snapshot of a clean loopback connection: a round trip far below 1 ms,
/// a window and segment size, nothing retransmitted or lost.
fn assert_plausible(what: &str, info: &TcpInfo) {
    println!("{what}: {}", h123_shared::transport::tcp_line(info));
    let rtt = info.rtt_us.expect("rtt");
    assert!(rtt < LOOPBACK_RTT_BOUND, "{what}: rtt {rtt:?} on loopback");
    assert!(info.rttvar_us.is_some(), "{what}: rttvar");
    assert!(
        info.snd_cwnd.is_some_and(|c| c > 0),
        "{what}: cwnd {info:?}"
    );
    assert!(info.snd_mss.is_some_and(|m| m > 0), "{what}: mss {info:?}");
    assert_eq!(info.total_retrans, Some(0), "{what}: clean loopback");
    assert_eq!(info.lost, Some(0), "{what}: clean loopback");
}

/// Every attempt succeeded; attempt 1 (and, cold, every attempt) has all
/// three snapshots, the others first byte and end only; all plausible, and
/// the byte counts grow from connect to first byte to end.
fn assert_snapshots(run: &ProtocolRun, cold: bool) {
    for a in &run.attempts {
        let what = format!("{} attempt {}", run.protocol, a.attempt);
        assert!(a.failure.is_none(), "{what}: {:?}", a.failure);
        let new_connection = a.attempt == 1 || cold;
        let snapshots = a.tcp_info.as_ref().expect("TCP facts");
        assert_eq!(
            snapshots.at_connect.is_some(),
            new_connection,
            "{what}: a connect snapshot only on a new connection"
        );
        let first = snapshot(a, "first byte", |s| s.at_first_byte.as_ref());
        let end = snapshot(a, "end", |s| s.at_end.as_ref());
        assert_plausible(&format!("{what} at first byte"), first);
        assert_plausible(&format!("{what} at end"), end);
        assert!(end.bytes_received >= first.bytes_received, "{what}");
        assert!(end.segs_in >= first.segs_in, "{what}");
        assert!(end.bytes_sent.is_some_and(|b| b > 0), "{what}: the request");
        if let Some(connect) = &snapshots.at_connect {
            assert_plausible(&format!("{what} at connect"), connect);
            // Taken before TLS or the request: no data sent or received yet.
            assert_eq!(connect.bytes_sent, Some(0), "{what} at connect");
            assert_eq!(connect.bytes_received, Some(0), "{what} at connect");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_facts_over_https_are_taken_at_connect_first_byte_and_end() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = target.https_url("/bytes/200000");
        o.repeat = 3;
    })
    .await;
    for protocol in TCP_PROTOCOLS {
        let run = run(&result, protocol);
        assert_eq!(run.attempts.len(), 3);
        assert_snapshots(run, false);
        // A reused connection's counts carry on from the previous attempt.
        let end = |n: usize| run.attempts[n].tcp_info.as_ref().unwrap().at_end.clone();
        let received = |n: usize| end(n).and_then(|e| e.bytes_received).unwrap();
        assert!(received(2) > received(1) && received(1) > received(0));
    }
    // HTTP/3 has no TCP socket: its facts are QUIC's path statistics.
    let h3 = run(&result, Protocol::H3);
    for a in &h3.attempts {
        assert!(
            a.failure.is_none(),
            "h3 attempt {}: {:?}",
            a.attempt,
            a.failure
        );
        assert!(a.tcp_info.is_none(), "h3 attempt {}", a.attempt);
        let quic = a.quic.as_ref().expect("QUIC facts");
        println!(
            "h3 attempt {}: {}",
            a.attempt,
            h123_shared::transport::quic_line(quic)
        );
        assert!(quic.sent_packets > 0);
        assert!(quic.cwnd_bytes.is_some_and(|c| c > 0), "{quic:?}");
        assert!(quic.current_mtu.is_some_and(|m| m >= 1200), "{quic:?}");
        assert!(quic.lost_bytes.is_some(), "{quic:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_facts_over_plaintext_h1_and_h2c_on_new_connections() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = target.http_url("/bytes/1000");
        o.protocols = TCP_PROTOCOLS.to_vec();
        o.repeat = 2;
        o.mode = ConnectionMode::Cold;
    })
    .await;
    for protocol in TCP_PROTOCOLS {
        let run = run(&result, protocol);
        assert_eq!(run.attempts.len(), 2);
        assert_snapshots(run, true);
    }
}

/// An nftables table that drops every `nth` data-carrying segment sent to
/// `port` over TCP (the probe's side of the target's listener only, so
/// tests running alongside are untouched); removed on drop. It drops on
/// input: a drop on output is reported to the sending socket, which sends
/// the segment again without counting a retransmit.
struct DropEveryNth {
    table: String,
}

impl DropEveryNth {
    fn install(port: u16, nth: u32) -> Self {
        let table = format!("h123_drop_{port}");
        let drop = Self {
            table: table.clone(),
        };
        nft(&["add", "table", "inet", &table]);
        nft(&[
            "add",
            "chain",
            "inet",
            &table,
            "in",
            "{ type filter hook input priority 0; }",
        ]);
        // Segments over 200 bytes carry data (a TLS flight, the request
        // body); handshake and bare acknowledgements pass.
        let rule = format!("tcp dport {port} meta length gt 200 numgen inc mod {nth} == 0 drop");
        nft(&["add", "rule", "inet", &table, "in", &rule]);
        drop
    }
}

impl Drop for DropEveryNth {
    fn drop(&mut self) {
        let _ = Command::new("nft")
            .args(["delete", "table", "inet", &self.table])
            .status();
    }
}

fn nft(args: &[&str]) {
    let out = Command::new("nft")
        .args(args)
        .output()
        .expect("nft runs (scripts/test installs nftables; the test needs root)");
    assert!(
        out.status.success(),
        "nft {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retransmits_are_counted_when_packets_are_dropped() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let _drops = DropEveryNth::install(target.https_addr.port(), 4);
    let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    let result = probe(&target, |o| {
        o.url = target.https_url("/upload");
        o.protocols = TCP_PROTOCOLS.to_vec();
        o.method = Method::Post;
        o.body = Some(RequestBody {
            base64: Some(h123_shared::base64::encode(&bytes)),
            content_type: Some("application/octet-stream".into()),
            ..RequestBody::default()
        });
        o.timeout_ms = 20_000;
        o.phase_timeout_ms = 15_000;
    })
    .await;
    for protocol in TCP_PROTOCOLS {
        let a = &run(&result, protocol).attempts[0];
        assert!(a.failure.is_none(), "{protocol}: {:?}", a.failure);
        let end = snapshot(a, "end", |s| s.at_end.as_ref());
        println!(
            "{protocol} at end: {}",
            h123_shared::transport::tcp_line(end)
        );
        assert!(
            end.total_retrans.is_some_and(|r| r > 0),
            "{protocol}: a quarter of the data segments dropped, yet {end:?}"
        );
        assert!(end.bytes_sent.is_some_and(|b| b >= 1_000_000), "{end:?}");
    }
}
