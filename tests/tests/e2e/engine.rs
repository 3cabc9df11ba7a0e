//! End-to-end tests of the probe engine against the real test target on
//! loopback: timing accuracy, connection reuse, redirects and failures,
//! each over HTTP/1.1, HTTP/2 (TCP + TLS) and HTTP/3 (QUIC) for real.
//!
//! Timing checks compare medians of several attempts, so a busy machine
//! does not make them flaky, yet a mis-measured phase (off by more than the
//! tolerance) still fails them. They take a lock so they never overlap.

use crate::support::{SERIAL, probe, probe_with, run};
use h123::probe::Engine;
use h123::probe::guard::ConnectPolicy;
use h123::probe::plan::{Limits, Plan};
use h123::probe::tls::TrustSettings;
use h123_shared::{
    Attempt, ConnectionMode, FailureKind, Phase, ProbeOptions, ProbeResult, Protocol, ProtocolRun,
};
use h123_target::{TargetConfig, TestTarget};
use std::time::Duration;

const TCP_PROTOCOLS: [Protocol; 2] = [Protocol::H1, Protocol::H2];
const ALL: [Protocol; 3] = Protocol::ALL;

fn ms(attempt: &Attempt, phase: Phase) -> f64 {
    attempt
        .phases
        .get(phase)
        .unwrap_or_else(|| panic!("attempt {} has no {phase:?} phase", attempt.attempt))
        .duration()
        .as_ms()
}

fn median(mut values: Vec<f64>) -> f64 {
    assert!(!values.is_empty());
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn assert_ok(run: &ProtocolRun) {
    for a in &run.attempts {
        assert!(
            a.failure.is_none(),
            "{} attempt {} failed: {:?}",
            run.protocol,
            a.attempt,
            a.failure
        );
        let violations = h123_shared::invariant::check_attempt(a, h123_shared::Method::Get);
        assert!(
            violations.is_empty(),
            "{} attempt {}: {violations:?}",
            run.protocol,
            a.attempt
        );
    }
}

/// The delay the target really slept, from its `Server-Timing: delay;dur=` header.
fn server_delay_ms(attempt: &Attempt) -> f64 {
    let response = attempt.response.as_ref().expect("response");
    h123_shared::server_timing::from_response(response)
        .into_iter()
        .find(|m| m.name == "delay")
        .and_then(|m| m.duration_ms)
        .expect("server reports its delay")
}

/// A phase against the target's own figure for it, attempt by attempt (`errors`: measured less
/// what the target reports, ms). A busy machine only ever adds time to an attempt, so the
/// attempt it disturbed least shows the instrument's own error: that one is within `tolerance`;
/// and no attempt is shorter than its cause (less `tolerance`), whatever the load.
fn assert_tracks(what: &str, errors: &[f64], tolerance: f64) {
    let least = errors.iter().copied().fold(f64::INFINITY, f64::min);
    println!("{what}: {errors:.3?} ms");
    assert!(
        least >= -tolerance && least <= tolerance,
        "{what}: the closest attempt is {least:+.3} ms off, over ± {tolerance} ms ({errors:.3?})"
    );
}

/// The fastest of `values`: the one a busy machine disturbed least.
fn fastest(values: impl IntoIterator<Item = f64>) -> f64 {
    values.into_iter().fold(f64::INFINITY, f64::min)
}

fn assert_within(what: &str, measured: f64, expected: f64, tolerance: f64) {
    println!("{what}: measured {measured:.3} ms, expected {expected:.3} ms");
    let off = measured - expected;
    assert!(
        off.abs() <= tolerance,
        "{what}: measured {measured:.3} ms, expected {expected:.3} ms ± {tolerance} ms (off by {off:+.3})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_matches_the_servers_own_delay() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = target.https_url("/delay/50");
        o.repeat = 7;
    })
    .await;
    for protocol in ALL {
        let run = run(&result, protocol);
        assert_ok(run);
        let errors: Vec<f64> = run
            .attempts
            .iter()
            .map(|a| ms(a, Phase::Wait) - server_delay_ms(a))
            .collect();
        assert_tracks(&format!("{protocol} wait - server delay"), &errors, 2.0);
    }
}

/// Cold attempts per protocol where a phase is compared with what the target held: enough
/// that on a busy machine (whose scheduler tick can hold a woken task 4 ms) one of them is
/// left undisturbed.
const LOOKUPS: u32 = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_phase_matches_the_dns_servers_delay() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        dns_delay: Duration::from_millis(30),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let result = probe(&target, |o| {
        o.url = format!("https://target.h123.test:{}/", target.https_addr.port());
        o.dns_server = Some(target.dns_addr.to_string());
        o.mode = ConnectionMode::Cold;
        o.repeat = LOOKUPS;
    })
    .await;
    let held = target.dns_hold_times();
    // hickory asks for A and AAAA at once: a lookup ends with the later answer.
    assert_eq!(
        held.len(),
        2 * 3 * LOOKUPS as usize,
        "two queries per cold attempt"
    );
    let lookups: Vec<f64> = held
        .chunks(2)
        .map(|pair| pair.iter().max().unwrap().as_secs_f64() * 1000.0)
        .collect();
    for (i, protocol) in ALL.into_iter().enumerate() {
        let run = run(&result, protocol);
        assert_ok(run);
        let errors: Vec<f64> = run
            .attempts
            .iter()
            .zip(&lookups[i * LOOKUPS as usize..])
            .map(|(a, served)| ms(a, Phase::Dns) - served)
            .collect();
        assert_tracks(&format!("{protocol} dns - server hold"), &errors, 2.0);
        let info = run.attempts[0].dns.as_ref().expect("dns facts");
        assert_eq!(info.addresses, vec!["127.0.0.1"]);
        assert_eq!(info.source, target.dns_addr.to_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_phase_carries_the_slow_fronts_delay() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        slow_tls_delay: Duration::from_millis(40),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    for protocol in TCP_PROTOCOLS {
        let cold = |url: String| {
            move |o: &mut ProbeOptions| {
                o.url = url;
                o.protocols = vec![protocol];
                o.mode = ConnectionMode::Cold;
                o.repeat = LOOKUPS;
            }
        };
        let direct = probe(&target, cold(target.https_url("/"))).await;
        let before = target.slow_tls_holds().len();
        let slow = probe(&target, cold(target.slow_tls_url("/"))).await;
        let (direct, slow) = (run(&direct, protocol), run(&slow, protocol));
        assert_ok(direct);
        assert_ok(slow);
        // The front holds each server flight 40 ms and records how long it really did (its
        // late timer included): each slow handshake is a direct one plus that hold, which the
        // attempt the machine disturbed least shows against the fastest direct handshake.
        let holds = &target.slow_tls_holds()[before..];
        assert_eq!(
            holds.len(),
            slow.attempts.len(),
            "one hold per cold attempt"
        );
        assert!(
            holds.iter().all(|h| h.as_millis() >= 40),
            "no hold is shorter than the front's delay: {holds:?}"
        );
        let handshake = fastest(direct.attempts.iter().map(|a| ms(a, Phase::Tls)));
        let errors: Vec<f64> = slow
            .attempts
            .iter()
            .zip(holds)
            .map(|(a, hold)| ms(a, Phase::Tls) - hold.as_secs_f64() * 1000.0 - handshake)
            .collect();
        assert_tracks(
            &format!("{protocol} tls - the front's hold - a direct handshake"),
            &errors,
            2.0,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_spans_a_dripped_body() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    for protocol in ALL {
        // One protocol at a time, so the target's drips pair with the attempts in order.
        h123_target::take_drip_spans();
        let result = probe(&target, |o| {
            o.url = target.https_url("/drip/10000/100");
            o.protocols = vec![protocol];
            o.repeat = 3;
        })
        .await;
        let run = run(&result, protocol);
        assert_ok(run);
        // Against the target's own account of each drip (100 ms, and what its late timers
        // added on a busy machine), attempt by attempt.
        // HTTP/3's discovery may fetch the URL first: the attempts' drips are the last ones.
        let spans = h123_target::take_drip_spans();
        let spans = &spans[spans.len().saturating_sub(run.attempts.len())..];
        assert_eq!(spans.len(), run.attempts.len(), "one drip per attempt");
        let errors: Vec<f64> = run
            .attempts
            .iter()
            .zip(spans)
            .map(|(a, span)| ms(a, Phase::Receive) - span.as_secs_f64() * 1000.0)
            .collect();
        assert_tracks(
            &format!("{protocol} receive - the target's drip"),
            &errors,
            5.0,
        );
        assert!(
            spans.iter().all(|s| s.as_millis() >= 100),
            "no drip ends before its 100 ms: {spans:?}"
        );
        let response = run.attempts[0].response.as_ref().unwrap();
        assert_eq!(response.body_bytes, 10_000);
        assert!(!response.truncated);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_attempts_reuse_the_first_connection() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.repeat = 4;
        o.idle_gap_ms = 20;
    })
    .await;
    for protocol in ALL {
        let run = run(&result, protocol);
        assert_ok(run);
        let first = &run.attempts[0];
        let conn = first.connection.as_ref().unwrap();
        assert!(!conn.reused && conn.id == 1 && conn.request_index == 1);
        assert!(
            has_handshake(first, protocol),
            "{protocol} first attempt sets up"
        );
        let tls = first.tls.as_ref().unwrap();
        assert_eq!(tls.version, "TLSv1.3");
        assert!(tls.verified);
        let (alpn, version) = match protocol {
            Protocol::H1 => ("http/1.1", "HTTP/1.1"),
            Protocol::H2 => ("h2", "HTTP/2"),
            Protocol::H3 => ("h3", "HTTP/3"),
        };
        assert_eq!(tls.alpn.as_deref(), Some(alpn));
        assert!(tls.certificates[0].sans.iter().any(|s| s == "127.0.0.1"));
        assert_eq!(first.response.as_ref().unwrap().http_version, version);
        assert_eq!(first.quic.is_some(), protocol == Protocol::H3);
        for (i, a) in run.attempts.iter().enumerate().skip(1) {
            let conn = a.connection.as_ref().unwrap();
            assert!(
                conn.reused && conn.was_idle,
                "{protocol} attempt {} not reused",
                a.attempt
            );
            assert_eq!((conn.id, conn.request_index), (1, i as u32 + 1));
            assert!(
                conn.idle_us.unwrap().as_ms() >= 19.0,
                "idle gap shows as idle time"
            );
            assert!(
                a.phases.dns.is_none() && !has_handshake(a, protocol) && a.phases.connect.is_none()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cold_attempts_each_open_a_connection() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.repeat = 3;
        o.mode = ConnectionMode::Cold;
    })
    .await;
    for protocol in ALL {
        let run = run(&result, protocol);
        assert_ok(run);
        for (i, a) in run.attempts.iter().enumerate() {
            let conn = a.connection.as_ref().unwrap();
            assert!(!conn.reused);
            assert_eq!(conn.id, i as u32 + 1);
            assert!(has_handshake(a, protocol));
        }
    }
}

/// The tool's own work (TLS and QUIC configuration, a UDP socket, the HTTP
/// layer's objects, certificate parsing) is out of the timed path or inside
/// a phase that says so, so a new connection's phases add up to its total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phases_of_a_new_connection_add_up_to_its_total() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = format!("https://target.h123.test:{}/", target.https_addr.port());
        o.dns_server = Some(target.dns_addr.to_string());
        o.repeat = 9;
        o.mode = ConnectionMode::Cold;
    })
    .await;
    for protocol in ALL {
        let run = run(&result, protocol);
        assert_ok(run);
        let unaccounted = run
            .attempts
            .iter()
            .map(|a| {
                let phases: f64 = a.phases.present().map(|(_, s)| s.duration().as_ms()).sum();
                a.phases.total.duration().as_ms() - phases
            })
            .collect();
        assert_within(
            &format!("{protocol} total - sum of phases"),
            median(unaccounted),
            0.0,
            0.05,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plaintext_http_works_for_h1_and_h2c() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.h3_direct = true;
        o.url = target.http_url("/bytes/1000");
        o.repeat = 2;
    })
    .await;
    for protocol in TCP_PROTOCOLS {
        let run = run(&result, protocol);
        assert_ok(run);
        let a = &run.attempts[0];
        assert!(a.tls.is_none() && a.phases.tls.is_none());
        assert_eq!(a.response.as_ref().unwrap().body_bytes, 1000);
        assert!(run.attempts[1].connection.as_ref().unwrap().reused);
    }
    let h3 = run(&result, Protocol::H3).attempts[0]
        .failure
        .clone()
        .unwrap();
    assert_eq!((h3.phase, h3.kind), (Phase::Quic, FailureKind::Unsupported));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_hops_when_followed_and_entries_otherwise() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let followed = probe(&target, |o| {
        o.url = target.https_url("/redirect/2");
        o.follow_redirects = true;
        o.repeat = 2;
    })
    .await;
    for protocol in ALL {
        let run = run(&followed, protocol);
        assert_ok(run);
        let shape: Vec<(u32, u32, u16)> = run
            .attempts
            .iter()
            .map(|a| (a.attempt, a.hop, a.response.as_ref().unwrap().status))
            .collect();
        assert_eq!(
            shape,
            vec![
                (1, 0, 302),
                (1, 1, 302),
                (1, 2, 200),
                (2, 0, 302),
                (2, 1, 302),
                (2, 2, 200)
            ]
        );
        assert!(run.attempts[1].url.ends_with("/redirect/1"));
        assert!(
            run.attempts[1].connection.as_ref().unwrap().reused,
            "same origin hop reuses"
        );
    }
    let not_followed = probe(&target, |o| o.url = target.https_url("/redirect/2")).await;
    assert_eq!(run(&not_followed, Protocol::H1).attempts.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn body_cap_truncates_and_head_reads_no_body() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let capped = probe(&target, |o| {
        o.url = target.https_url("/bytes/200000");
        o.max_body_bytes = 1000;
        o.repeat = 2;
    })
    .await;
    for protocol in ALL {
        let run = run(&capped, protocol);
        assert_ok(run);
        let response = run.attempts[0].response.as_ref().unwrap();
        assert!(response.truncated && response.body_bytes >= 1000 && response.body_bytes < 200_000);
        // HTTP/1.1 must close a connection whose body was not read; HTTP/2 resets only the stream.
        let reused = run.attempts[1].connection.as_ref().unwrap().reused;
        assert_eq!(
            reused,
            protocol != Protocol::H1,
            "{protocol} reuse after a cut body"
        );
    }
    let head = probe(&target, |o| {
        o.url = target.https_url("/bytes/5000");
        o.method = h123_shared::Method::Head;
    })
    .await;
    for protocol in ALL {
        let response = run(&head, protocol).attempts[0].response.clone().unwrap();
        assert_eq!((response.status, response.body_bytes), (200, 0));
    }
}

/// The first attempt's failure per protocol: (protocol, phase, kind, message).
fn failures(result: &ProbeResult) -> Vec<(Protocol, Phase, FailureKind, String)> {
    result
        .runs
        .iter()
        .map(|r| {
            let a = &r.attempts[0];
            let f = a
                .failure
                .clone()
                .unwrap_or_else(|| panic!("{} did not fail: {a:?}", r.protocol));
            (r.protocol, f.phase, f.kind, f.message)
        })
        .collect()
}

/// Whether an attempt set up a connection: TCP connect + TLS, or QUIC.
fn has_handshake(attempt: &Attempt, protocol: Protocol) -> bool {
    match protocol {
        Protocol::H3 => attempt.phases.quic.is_some() && attempt.phases.connect.is_none(),
        _ => attempt.phases.connect.is_some() && attempt.phases.tls.is_some(),
    }
}

/// The handshake phase of a protocol: TLS over TCP, or QUIC.
fn handshake_phase(protocol: Protocol) -> Phase {
    if protocol == Protocol::H3 {
        Phase::Quic
    } else {
        Phase::Tls
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_port_fails_in_connect_and_silent_udp_times_out() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.h3_direct = true;
        o.url = format!("https://{}/", target.refused_addr);
        o.phase_timeout_ms = 500;
    })
    .await;
    for (protocol, phase, kind, message) in failures(&result) {
        let expected = match protocol {
            // The host refuses QUIC on a closed UDP port (ICMP port unreachable), at once.
            Protocol::H3 => (Phase::Quic, FailureKind::Refused),
            _ => (Phase::Connect, FailureKind::Refused),
        };
        assert_eq!((phase, kind), expected, "{protocol}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_mid_body_fails_in_receive() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = target.https_url("/close-mid-body/100000")
    })
    .await;
    for (protocol, phase, kind, message) in failures(&result) {
        assert_eq!(phase, Phase::Receive, "{protocol}: {message}");
        assert!(
            matches!(kind, FailureKind::Reset | FailureKind::Protocol),
            "{protocol} {kind:?}: {message}"
        );
        let a = &run(&result, protocol).attempts[0];
        let status = a.response.as_ref().unwrap().status;
        assert_eq!(status, 200, "{protocol}: headers arrived before the cut");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_times_out_in_the_phase_it_hangs() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let tls = probe(&target, |o| {
        o.h3_direct = true;
        o.url = format!("https://{}/", target.silent_addr);
        o.phase_timeout_ms = 300;
    })
    .await;
    for (protocol, phase, kind, message) in failures(&tls) {
        // Its TCP port accepts and says nothing; nothing listens on its UDP
        // port, which the host says at once.
        let kind_expected = match protocol {
            Protocol::H3 => FailureKind::Refused,
            _ => FailureKind::Timeout,
        };
        let expected = (handshake_phase(protocol), kind_expected);
        assert_eq!((phase, kind), expected, "{protocol}: {message}");
    }
    let plain = probe(&target, |o| {
        o.url = format!("http://{}/", target.silent_addr);
        o.phase_timeout_ms = 300;
        o.protocols = vec![Protocol::H1];
    })
    .await;
    let attempt = &run(&plain, Protocol::H1).attempts[0];
    let f = attempt.failure.clone().unwrap();
    assert_eq!(
        (f.phase, f.kind),
        (Phase::Wait, FailureKind::Timeout),
        "{}",
        f.message
    );
    let total = attempt.phases.total.duration().as_ms();
    assert!(
        (300.0..2000.0).contains(&total),
        "stopped by the phase limit, total {total} ms"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_ca_fails_verification_and_insecure_gets_through() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let wrong = TrustSettings::from_ca_file(target.wrong_ca_file()).unwrap();
    let result = probe_with(&target, wrong.clone(), |o| o.h3_direct = true).await;
    for (protocol, phase, kind, message) in failures(&result) {
        let expected = (handshake_phase(protocol), FailureKind::Certificate);
        assert_eq!((phase, kind), expected, "{protocol}: {message}");
        assert!(message.contains("UnknownIssuer"), "{protocol}: {message}");
    }
    let insecure = probe_with(&target, wrong, |o| {
        o.insecure = true;
        o.h3_direct = true;
    })
    .await;
    for protocol in ALL {
        let run = run(&insecure, protocol);
        assert_ok(run);
        assert!(!run.attempts[0].tls.as_ref().unwrap().verified);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_name_fails_in_dns() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.h3_direct = true;
        o.url = "https://no-such-name.h123.test/".into();
        o.dns_server = Some(target.dns_addr.to_string());
    })
    .await;
    for (protocol, phase, kind, message) in failures(&result) {
        let expected = (Phase::Dns, FailureKind::NameNotFound);
        assert_eq!((phase, kind), expected, "{protocol}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_address_skips_dns_and_is_recorded() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = format!("https://pinned.h123.test:{}/", target.https_addr.port());
        o.resolve = vec![h123_shared::ResolveOverride {
            host: "pinned.h123.test".into(),
            port: target.https_addr.port(),
            addr: "127.0.0.1".into(),
        }];
    })
    .await;
    for protocol in ALL {
        let run = run(&result, protocol);
        assert_ok(run);
        let a = &run.attempts[0];
        assert!(a.phases.dns.is_none());
        assert_eq!(a.dns.as_ref().unwrap().source, "pinned");
        assert_eq!(
            a.connection.as_ref().unwrap().remote_addr,
            target.https_addr.to_string()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guard_refuses_private_targets_at_connect_time() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let options = ProbeOptions {
        url: format!("https://target.h123.test:{}/", target.https_addr.port()),
        dns_server: Some(target.dns_addr.to_string()),
        repeat: 1,
        rounds: 1,
        h3_direct: true,
        ..ProbeOptions::default()
    };
    let plan = Plan::new(options, &Limits::default()).unwrap();
    let trust = TrustSettings::from_ca_file(target.ca_file()).unwrap();
    let public = Engine::new(trust.clone(), ConnectPolicy::public_only(Vec::new()));
    let result = public.run(&plan).await;
    for (protocol, phase, kind, message) in failures(&result) {
        let dial = if protocol == Protocol::H3 {
            Phase::Quic
        } else {
            Phase::Connect
        };
        assert_eq!((phase, kind), (dial, FailureKind::Blocked), "{protocol}");
        // A refused name's addresses stay out of the record (as out of the API's 403).
        assert!(
            message
                .contains("target.h123.test: it resolves to an address this server does not probe")
                && !message.contains("127.0.0.1"),
            "{message}"
        );
    }
    for run in &result.runs {
        let dns = run.attempts[0]
            .dns
            .as_ref()
            .expect("the lookup is recorded");
        assert!(dns.addresses.is_empty(), "{:?}", dns.addresses);
    }
    let allowed = vec![target.https_addr.to_string().parse().unwrap()];
    let excepted = Engine::new(trust, ConnectPolicy::public_only(allowed))
        .run(&plan)
        .await;
    for protocol in ALL {
        assert_ok(run(&excepted, protocol));
    }
}
