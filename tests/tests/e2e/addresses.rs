//! End-to-end tests of `-4`, `-6` and `--all-addresses` against the test
//! target on both loopback families: `dual.h123.test` has A `127.0.0.1` and
//! AAAA `::1`, the HTTPS port answers on both (IPv6 through a front that holds
//! the server's first handshake flight, so IPv6's TLS is slower by a known
//! delay), and the diagnosis names the slow or broken family.

use crate::support::{SERIAL, probe, probe_with, run};
use h123::probe::Engine;
use h123::probe::guard::{AllowedTarget, ConnectPolicy};
use h123::probe::plan::{Limits, Plan};
use h123::probe::tls::TrustSettings;
use h123_shared::analysis::analyze;
use h123_shared::{
    AddressFamily, Attempt, ConnectionMode, FailureKind, Phase, ProbeOptions, ProbeResult,
    Protocol, ProtocolRun,
};
use h123_target::{TargetConfig, TestTarget};
use std::net::IpAddr;
use std::time::Duration;

const TCP_PROTOCOLS: [Protocol; 2] = [Protocol::H1, Protocol::H2];

/// The TLS hold on IPv6.
const V6_DELAY: Duration = Duration::from_millis(80);

fn v4() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}

fn v6() -> IpAddr {
    "::1".parse().unwrap()
}

/// A target where `dual.h123.test` resolves to both families, and (with
/// `v6_delay`) the HTTPS port answers on `[::1]` too.
async fn dual_target(v6_delay: Option<Duration>) -> TestTarget {
    TestTarget::start(TargetConfig {
        dns_records: vec![
            ("dual.h123.test".to_owned(), v4()),
            ("dual.h123.test".to_owned(), v6()),
            ("target.h123.test".to_owned(), v4()),
        ],
        ipv6_https_delay: v6_delay,
        ..TargetConfig::default()
    })
    .await
    .unwrap()
}

fn dual(target: &TestTarget, o: &mut ProbeOptions) {
    o.url = format!("https://dual.h123.test:{}/", target.https_addr.port());
    o.dns_server = Some(target.dns_addr.to_string());
}

fn remote_ip(attempt: &Attempt) -> IpAddr {
    let remote = &attempt.connection.as_ref().expect("connected").remote_addr;
    remote.parse::<std::net::SocketAddr>().unwrap().ip()
}

fn tls_ms(attempts: &[Attempt]) -> f64 {
    let mut values: Vec<f64> = attempts
        .iter()
        .map(|a| a.phases.tls.expect("a TLS phase").duration().as_ms())
        .collect();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn assert_ok(attempts: &[Attempt], what: &str) {
    for a in attempts {
        assert!(
            a.failure.is_none(),
            "{what} #{}: {:?}",
            a.attempt,
            a.failure
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_addresses_probes_both_families_and_names_the_slow_one() {
    let _serial = SERIAL.lock().await;
    let target = dual_target(Some(V6_DELAY)).await;
    let result = probe(&target, |o| {
        dual(&target, o);
        o.protocols = Protocol::ALL.to_vec();
        o.all_addresses = true;
        o.mode = ConnectionMode::Cold;
        // 4 new connections per family: what a difference needs.
        o.repeat = 4;
    })
    .await;
    for protocol in Protocol::ALL {
        let run = run(&result, protocol);
        assert_eq!(
            run.other_addresses.len(),
            1,
            "{protocol}: one other address"
        );
        // The main run dialled the lookup's first address, the side run the other.
        let first: IpAddr = run.attempts[0].dns.as_ref().unwrap().addresses[0]
            .parse()
            .unwrap();
        let second = if first == v4() { v6() } else { v4() };
        let other = &run.other_addresses[0];
        assert_eq!(other.address, second.to_string(), "{protocol}");
        assert_eq!(other.family, AddressFamily::of(second));
        assert_eq!(other.attempts.len(), 4, "{protocol}: the same attempts");
        assert_ok(&run.attempts, &format!("{protocol} main"));
        assert_ok(&other.attempts, &format!("{protocol} {second}"));
        // Each run dialled exactly its own address, after a real lookup.
        assert!(
            run.attempts.iter().all(|a| remote_ip(a) == first),
            "{protocol}"
        );
        assert!(
            other.attempts.iter().all(|a| remote_ip(a) == second),
            "{protocol}"
        );
        assert!(other.attempts.iter().all(|a| a.phases.dns.is_some()));
        let rows = h123_shared::addresses::rows(run);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].address.clone(), rows[0].main),
            (first.to_string(), true)
        );
    }
    for protocol in TCP_PROTOCOLS {
        let rows = h123_shared::addresses::rows(run(&result, protocol));
        let of = |family| {
            let row = rows.iter().find(|r| r.family == family).unwrap();
            tls_ms(row.attempts)
        };
        let (fast, slow) = (of(AddressFamily::V4), of(AddressFamily::V6));
        let injected = V6_DELAY.as_secs_f64() * 1000.0;
        println!("{protocol}: TLS median 127.0.0.1 {fast:.2} ms, ::1 {slow:.2} ms");
        assert!(
            (slow - fast - injected).abs() < 15.0,
            "{protocol}: IPv6's TLS is slower by the injected {injected} ms (within 15 ms): {slow:.2} against {fast:.2}"
        );
    }
    let analysis = analyze(&result);
    let slower: Vec<_> = analysis
        .findings
        .iter()
        .filter(|f| f.id == "address_family_slower")
        .collect();
    assert_eq!(
        slower.len(),
        1,
        "one finding for both TCP protocols: {slower:#?}"
    );
    let f = slower[0];
    assert!(
        f.title
            .starts_with("IPv6 (::1) is slower than IPv4 (127.0.0.1) by ")
            && f.title.ends_with(" at TLS over 4 attempts"),
        "{}",
        f.title
    );
    assert_eq!(f.evidence.phase, Some(Phase::Tls));
    let gap = f.evidence.duration.unwrap().as_ms();
    assert!((gap - 80.0).abs() < 15.0, "the finding's gap {gap} ms");
    assert!(f.next_step.contains("h123 probe -4"), "{}", f.next_step);
    println!("{}\n{}", f.title, f.evidence.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_4_and_dash_6_connect_only_to_their_family() {
    let _serial = SERIAL.lock().await;
    let target = dual_target(Some(Duration::ZERO)).await;
    for (family, ip) in [(AddressFamily::V4, v4()), (AddressFamily::V6, v6())] {
        let result = probe(&target, |o| {
            dual(&target, o);
            o.protocols = TCP_PROTOCOLS.to_vec();
            o.family = family;
            o.all_addresses = true;
            o.repeat = 2;
        })
        .await;
        for run in &result.runs {
            assert_ok(&run.attempts, family.as_str());
            assert!(
                run.attempts.iter().all(|a| remote_ip(a) == ip),
                "{family:?}"
            );
            assert!(run.other_addresses.is_empty(), "one address of {family:?}");
        }
    }
    // A name without an address of the family fails in the dns phase, as a result.
    let result = probe(&target, |o| {
        o.url = format!("https://target.h123.test:{}/", target.https_addr.port());
        o.dns_server = Some(target.dns_addr.to_string());
        o.protocols = TCP_PROTOCOLS.to_vec();
        o.family = AddressFamily::V6;
    })
    .await;
    for run in &result.runs {
        let f = run.attempts[0].failure.as_ref().expect("fails");
        assert_eq!((f.phase, f.kind), (Phase::Dns, FailureKind::NameNotFound));
        assert_eq!(
            f.message,
            "target.h123.test has no IPv6 address (AAAA record), and the probe asks for IPv6 only"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_ipv6_address_is_a_broken_family() {
    let _serial = SERIAL.lock().await;
    // Nothing listens on [::1] at the HTTPS port: IPv6 connects are refused.
    let target = dual_target(None).await;
    let result = probe(&target, |o| {
        dual(&target, o);
        o.protocols = TCP_PROTOCOLS.to_vec();
        o.all_addresses = true;
        o.repeat = 2;
    })
    .await;
    for run in &result.runs {
        assert_ok(&run.attempts, "main");
        let other = &run.other_addresses[0];
        assert_eq!(other.address, "::1");
        let f = other.attempts[0].failure.as_ref().expect("refused");
        assert_eq!((f.phase, f.kind), (Phase::Connect, FailureKind::Refused));
    }
    let analysis = analyze(&result);
    let f = analysis
        .findings
        .iter()
        .find(|f| f.id == "address_family_broken")
        .expect("the broken finding");
    assert_eq!(
        f.title,
        "IPv6 is broken: every attempt to ::1 failed in connect (refused)"
    );
    assert!(f.next_step.contains("h123 probe -4"), "{}", f.next_step);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_holds_for_every_address() {
    let _serial = SERIAL.lock().await;
    let target = dual_target(Some(Duration::ZERO)).await;
    let options = ProbeOptions {
        url: format!("https://dual.h123.test:{}/", target.https_addr.port()),
        dns_server: Some(target.dns_addr.to_string()),
        protocols: TCP_PROTOCOLS.to_vec(),
        repeat: 1,
        rounds: 1,
        all_addresses: true,
        ..ProbeOptions::default()
    };
    let plan = Plan::new(options, &Limits::default()).unwrap();
    let trust = TrustSettings::from_ca_file(target.ca_file()).unwrap();
    // Public addresses plus 127.0.0.1 at the HTTPS port: ::1 is refused.
    let policy = ConnectPolicy::public_only(vec![AllowedTarget {
        ip: v4(),
        port: Some(target.https_addr.port()),
    }]);
    let result: ProbeResult = Engine::new(trust.clone(), policy).run(&plan).await;
    for run in &result.runs {
        assert_ok(&run.attempts, "main");
        assert!(
            run.other_addresses.is_empty(),
            "{}: the refused ::1 is not dialled: {:?}",
            run.protocol,
            run.other_addresses
        );
    }
    // The whole record stays inside its size cap with side runs too: they
    // spend the protocol's share with the main run (hostile.rs's maximal probe).
    let capped = probe_with(&target, trust, |o| {
        dual(&target, o);
        o.url.push_str("headers/14/4000?loop");
        o.protocols = vec![Protocol::H2];
        o.all_addresses = true;
        o.repeat = 10;
        o.follow_redirects = true;
        o.max_redirects = 10;
    })
    .await;
    let size = serde_json::to_vec(&capped).unwrap().len();
    println!("capped record with side runs: {size} bytes");
    assert!(
        size <= h123::probe::budget::MAX_RECORD_BYTES,
        "{size} bytes"
    );
    let run: &ProtocolRun = run(&capped, Protocol::H2);
    let side = &run.other_addresses[0];
    assert!(
        run.cut_short.is_some()
            && side
                .cut_short
                .as_deref()
                .unwrap_or_default()
                .contains("size cap"),
        "{:?} / {:?}",
        run.cut_short,
        side.cut_short
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_family_beside_a_refusing_one_costs_one_phase_timeout() {
    let _serial = SERIAL.lock().await;
    // 127.0.0.1 reads QUIC and never answers; nothing listens on [::1]'s UDP port.
    let target = TestTarget::start(TargetConfig {
        h3: h123_target::H3Mode::BlockUdp,
        dns_records: vec![
            ("dual.h123.test".to_owned(), v4()),
            ("dual.h123.test".to_owned(), v6()),
        ],
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let result = probe(&target, |o| {
        dual(&target, o);
        o.phase_timeout_ms = 600;
    })
    .await;
    let h3 = run(&result, Protocol::H3);
    let attempt = &h3.attempts[0];
    let failure = attempt.failure.as_ref().expect("no QUIC answer");
    assert_eq!(
        (failure.phase, failure.kind),
        (Phase::Quic, FailureKind::Timeout)
    );
    let port = target.https_addr.port();
    assert!(
        failure.message.starts_with(&format!(
            "no QUIC handshake with 127.0.0.1:{port} within 600 ms"
        )) && failure
            .message
            .ends_with(&format!("nothing listens on UDP port {port} at ::1")),
        "{}",
        failure.message
    );
    let quic = attempt
        .phases
        .quic
        .expect("a quic phase")
        .duration()
        .as_ms();
    println!("QUIC phase across a silent and a refusing address: {quic:.1} ms");
    assert!(
        (600.0..900.0).contains(&quic),
        "one phase timeout, took {quic:.1} ms"
    );
    let discovery = h3.discovery.as_ref().expect("discovery");
    assert_eq!(discovery.outcome, h123_shared::H3Outcome::UdpSilent);
}

/// HTTP/3 over a dual-stack name whose QUIC answers on 127.0.0.1 only
/// (nothing listens on [::1]'s UDP port), `mode` for `rounds` × `repeat`;
/// every attempt answered from 127.0.0.1.
async fn probe_v4_only_quic(mode: ConnectionMode, rounds: u32, repeat: u32) -> ProbeResult {
    let target = dual_target(None).await;
    let result = probe(&target, |o| {
        dual(&target, o);
        o.protocols = vec![Protocol::H3];
        o.family = AddressFamily::Any;
        o.phase_timeout_ms = 3_000;
        o.rounds = rounds;
        o.repeat = repeat;
        o.mode = mode;
    })
    .await;
    let h3 = run(&result, Protocol::H3);
    assert_ok(&h3.attempts, "h3");
    for a in &h3.attempts {
        assert_eq!(remote_ip(a), v4());
    }
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quic_passes_over_a_refusing_family_at_once() {
    let _serial = SERIAL.lock().await;
    let result = probe_v4_only_quic(ConnectionMode::Cold, 1, 3).await;
    for a in &run(&result, Protocol::H3).attempts {
        let quic = a.phases.quic.expect("a quic phase").duration().as_ms();
        println!("h3 #{}: QUIC phase {quic:.1} ms", a.attempt);
        assert!(quic < 1_000.0, "passed over [::1], took {quic:.1} ms");
        let facts = a.quic.as_ref().expect("QUIC facts");
        assert!(facts.silent_addresses.is_empty(), "{facts:?}");
        assert_eq!(facts.refused_addresses.len(), 1, "{facts:?}");
        assert!(
            facts.refused_addresses[0].starts_with("[::1]:"),
            "{facts:?}"
        );
    }
    let findings = h123_shared::diagnosis::diagnose(&result);
    assert!(
        findings.iter().all(|f| f.id != "h3_address_silent"),
        "{findings:?}"
    );
    let fact = findings
        .iter()
        .find(|f| f.id == "h3_address_refused")
        .expect("the refusing address is a finding");
    assert_eq!(fact.severity, h123_shared::diagnosis::Severity::Info);
    assert!(
        fact.evidence
            .detail
            .starts_with("3 of 3 new HTTP/3 connection(s) were refused by [::1]:"),
        "{}",
        fact.evidence.detail
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_rtt_goes_where_the_ticket_came_from() {
    let _serial = SERIAL.lock().await;
    // [::1] comes first and nothing listens there: the early request must go
    // to the address that issued the ticket, not to one that refuses it.
    let result = probe_v4_only_quic(ConnectionMode::Resumed, 1, 4).await;
    let early: Vec<Option<bool>> = run(&result, Protocol::H3)
        .attempts
        .iter()
        .map(|a| a.quic.as_ref().and_then(|q| q.zero_rtt_accepted))
        .collect();
    assert_eq!(early, [None, Some(true), Some(true), Some(true)]);
}
