//! End-to-end tests of HTTP/3 discovery against the loopback target: found
//! through Alt-Svc, through an HTTPS DNS record, not advertised, advertised
//! but UDP silent (within the QUIC budget, not the phase timeout), advertised or tried where nothing listens on UDP (refused,
//! at once), tried directly, a failed handshake, an IPv6 endpoint, and
//! endpoints the safety policy refuses (private, off the port list); each a typed
//! outcome, with the h1/h2 results unaffected; and a DNS server that never
//! answers HTTPS queries, which must not stall HTTP/3.

use crate::support::{SERIAL, https_record_target, probe, probe_with, run};
use h123::probe::Engine;
use h123::probe::guard::ConnectPolicy;
use h123::probe::plan::{Limits, Plan};
use h123::probe::tls::TrustSettings;
use h123_shared::analysis::{Outcome, analyzed};
use h123_shared::exit::Exit;
use h123_shared::{H3Outcome, H3Via, ProbeOptions, ProbeResult, Protocol};
use h123_target::{H3Mode, TargetConfig, TestTarget};

fn discovery(result: &ProbeResult) -> &h123_shared::H3Discovery {
    run(result, Protocol::H3)
        .discovery
        .as_ref()
        .expect("h3 runs record their discovery")
}

/// A target that serves HTTP/3 but does not advertise it.
async fn unadvertised_target() -> TestTarget {
    let config = TargetConfig {
        advertise_h3: false,
        ..TargetConfig::default()
    };
    TestTarget::start(config).await.unwrap()
}

fn assert_tcp_ok(result: &ProbeResult) {
    for protocol in [Protocol::H1, Protocol::H2] {
        let first = &run(result, protocol).attempts[0];
        assert!(first.failure.is_none(), "{protocol}: {:?}", first.failure);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_svc_is_found_and_used() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| o.repeat = 2).await;
    let d = discovery(&result);
    assert_eq!(d.via, Some(H3Via::AltSvc));
    assert_eq!(d.alt_svc[0].port, target.https_addr.port());
    assert_eq!(d.alt_svc[0].protocol, "h3");
    assert_eq!(d.outcome, H3Outcome::Ok, "{}", d.detail);
    let h3 = run(&result, Protocol::H3);
    assert!(h3.attempts.iter().all(|a| a.failure.is_none()));
    assert!(h3.attempts[1].connection.as_ref().unwrap().reused);
    assert_tcp_ok(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_record_is_found_and_used() {
    let _serial = SERIAL.lock().await;
    let (target, port) = https_record_target().await;
    let result = probe(&target, |o| {
        o.url = format!("https://target.h123.test:{port}/");
        o.dns_server = Some(target.dns_addr.to_string());
    })
    .await;
    let d = discovery(&result);
    assert!(d.alt_svc.is_empty());
    let record = d.https_record.as_ref().expect("HTTPS record");
    assert_eq!(
        (record.alpn.clone(), record.port),
        (vec!["h3".to_owned()], Some(port))
    );
    assert_eq!(d.via, Some(H3Via::HttpsRecord));
    assert_eq!(d.outcome, H3Outcome::Ok, "{}", d.detail);
    assert_tcp_ok(&result);
}

/// A DNS server that never answers HTTPS queries must not stall HTTP/3: the
/// record is not asked for when Alt-Svc already named the endpoint, nor for a
/// pinned name; when it must be asked, the wait is bounded (1 s), not the
/// phase timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dns_server_silent_on_https_queries_does_not_stall_http3() {
    let _serial = SERIAL.lock().await;
    let silent = |advertise_h3| TargetConfig {
        advertise_h3,
        dns_https_silent: true,
        ..TargetConfig::default()
    };
    let phase_timeout_ms = 8_000;
    let by_name = |target: &TestTarget, o: &mut ProbeOptions| {
        o.url = format!("https://target.h123.test:{}/", target.https_addr.port());
        o.dns_server = Some(target.dns_addr.to_string());
        o.phase_timeout_ms = phase_timeout_ms;
        o.timeout_ms = 20_000;
    };

    let advertised = TestTarget::start(silent(true)).await.unwrap();
    let started = h123_target::clock::now();
    let result = probe(&advertised, |o| by_name(&advertised, o)).await;
    let took = started.elapsed();
    let d = discovery(&result);
    assert_eq!(
        (d.via, d.outcome),
        (Some(H3Via::AltSvc), H3Outcome::Ok),
        "{}",
        d.detail
    );
    assert_eq!(
        advertised.dns_https_query_count(),
        0,
        "Alt-Svc named the endpoint"
    );
    assert!(d.https_lookup.as_deref().unwrap().contains("Alt-Svc"));
    assert!(
        took.as_millis() < u128::from(phase_timeout_ms),
        "took {took:?}"
    );

    let pinned = TestTarget::start(silent(false)).await.unwrap();
    let port = pinned.https_addr.port();
    let result = probe(&pinned, |o| {
        by_name(&pinned, o);
        o.protocols = vec![Protocol::H3];
        o.resolve = vec![h123_shared::ResolveOverride {
            host: "target.h123.test".into(),
            port,
            addr: "127.0.0.1".into(),
        }];
    })
    .await;
    let d = discovery(&result);
    assert_eq!(
        (d.via, d.outcome),
        (Some(H3Via::Direct), H3Outcome::Ok),
        "{}",
        d.detail
    );
    assert_eq!(
        pinned.dns_https_query_count(),
        0,
        "a pinned name is not looked up"
    );
    assert_eq!(pinned.dns_query_count(), 0);

    let started = h123_target::clock::now();
    let result = probe(&pinned, |o| {
        by_name(&pinned, o);
        o.protocols = vec![Protocol::H3];
    })
    .await;
    let took = started.elapsed();
    let d = discovery(&result);
    assert_eq!(
        (d.via, d.outcome),
        (Some(H3Via::Direct), H3Outcome::Ok),
        "{}",
        d.detail
    );
    assert!(
        pinned.dns_https_query_count() >= 1,
        "asked (the resolver may retry)"
    );
    assert_eq!(d.https_lookup.as_deref(), Some("no answer within 1000 ms"));
    assert!(
        took.as_millis() < 3_000,
        "a bounded wait, not the phase timeout: {took:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_advertised_is_a_finding_not_an_error() {
    let _serial = SERIAL.lock().await;
    let target = unadvertised_target().await;
    let result = probe(&target, |_| {}).await;
    let h3 = run(&result, Protocol::H3);
    assert!(h3.attempts.is_empty());
    assert!(h3.skipped.as_deref().unwrap().contains("not advertised"));
    let d = discovery(&result);
    assert_eq!((d.outcome, d.via), (H3Outcome::NotAdvertised, None));
    assert_tcp_ok(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_udp_is_advertised_but_silent_within_the_bounded_wait() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        h3: H3Mode::BlockUdp,
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let result = probe(&target, |o| o.phase_timeout_ms = 400).await;
    let d = discovery(&result);
    assert_eq!(
        (d.via, d.outcome),
        (Some(H3Via::AltSvc), H3Outcome::UdpSilent),
        "{}",
        d.detail
    );
    let waited = run(&result, Protocol::H3).attempts[0]
        .phases
        .total
        .duration()
        .as_ms();
    assert!(
        (400.0..1500.0).contains(&waited),
        "bounded wait, took {waited} ms"
    );
    assert_tcp_ok(&result);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_endpoint_costs_the_quic_budget_not_the_phase_timeout() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        h3: H3Mode::BlockUdp,
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    // The default options: a 10 s phase timeout, no QUIC timeout set.
    let started = h123_target::clock::now();
    let result = analyzed(probe(&target, |_| {}).await);
    let took = started.elapsed();
    let d = discovery(&result);
    assert_eq!(d.outcome, H3Outcome::UdpSilent, "{}", d.detail);
    // Loopback's TCP round trip is well under a millisecond: 2 s and a few ms.
    let budget = d.quic_budget_ms.expect("the budget is said");
    assert!((2_000..2_100).contains(&budget), "{budget}");
    let quic = quic_ms(&result);
    println!(
        "silent endpoint, default probe: {:.2} s in all, QUIC {quic:.0} ms of a {budget} ms budget",
        took.as_secs_f64()
    );
    assert!(quic >= budget as f64, "{quic:.1} ms");
    assert!(quic < 10_000.0, "not the phase timeout: {quic:.1} ms");
    assert!(
        d.detail.contains(&format!("within {budget} ms")),
        "the budget is said: {}",
        d.detail
    );
    // --quic-timeout sets it, the phase timeout bounds it.
    let set = probe(&target, |o| o.quic_timeout_ms = Some(300)).await;
    assert_eq!(discovery(&set).quic_budget_ms, Some(300));
    let bounded = probe(&target, |o| {
        o.quic_timeout_ms = Some(5_000);
        o.phase_timeout_ms = 400;
    })
    .await;
    assert_eq!(discovery(&bounded).quic_budget_ms, Some(400));
    assert_tcp_ok(&result);
}

/// The QUIC phase of the h3 run's first attempt, in ms.
fn quic_ms(result: &ProbeResult) -> f64 {
    run(result, Protocol::H3).attempts[0]
        .phases
        .quic
        .expect("a quic phase")
        .duration()
        .as_ms()
}

/// Every finding's words, for what they must and must not say.
fn words(result: &ProbeResult) -> String {
    let analysis = result.analysis.as_ref().expect("analysed");
    let mut text = analysis.headline.clone();
    for f in &analysis.findings {
        text.push_str(&format!(
            "\n{}: {} | {} | {}",
            f.id, f.title, f.evidence.detail, f.next_step
        ));
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_advertised_port_where_nothing_listens_on_udp_is_refused_at_once() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        h3: H3Mode::Off,
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let refused = analyzed(probe(&target, |o| o.repeat = 2).await);
    let d = discovery(&refused);
    assert_eq!(
        (d.via, d.outcome),
        (Some(H3Via::AltSvc), H3Outcome::UdpRefused),
        "{}",
        d.detail
    );
    let port = target.https_addr.port();
    let said = format!("nothing listens on UDP port {port} at 127.0.0.1");
    assert!(d.detail.starts_with(&said), "{}", d.detail);
    let quic = quic_ms(&refused);
    println!("refused: QUIC phase {quic:.2} ms");
    assert!(quic < 1_000.0, "not the 3 s phase timeout: {quic:.1} ms");
    let text = words(&refused);
    assert!(
        text.contains("h3_udp_refused: HTTP/3 advertised but nothing listens on UDP"),
        "{text}"
    );
    assert!(
        !text.contains("firewall"),
        "a refusal is not a firewall: {text}"
    );
    let analysis = refused.analysis.as_ref().unwrap();
    assert_eq!(analysis.outcome, Outcome::DoneWithErrors, "{text}");
    assert!(
        analysis
            .headline
            .starts_with("done with errors · 4 of 4 HTTP/1.1 and HTTP/2 attempt(s) succeeded · HTTP/3 failed: nothing listens on UDP port"),
        "{}",
        analysis.headline
    );
    assert_eq!(Exit::of_result(&refused), Exit::HandshakeFailed);
    assert_tcp_ok(&refused);

    // The same port, read but never answered: silent, and only the timeout ends it.
    let target = TestTarget::start(TargetConfig {
        h3: H3Mode::BlockUdp,
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let silent = analyzed(probe(&target, |o| o.phase_timeout_ms = 400).await);
    let d = discovery(&silent);
    assert_eq!(d.outcome, H3Outcome::UdpSilent, "{}", d.detail);
    let quic = quic_ms(&silent);
    println!("silent: QUIC phase {quic:.2} ms");
    assert!(quic >= 400.0, "the whole phase timeout: {quic:.1} ms");
    let text = words(&silent);
    assert!(
        text.contains("HTTP/3 advertised but unreachable: UDP is silent"),
        "{text}"
    );
    assert!(!text.contains("nothing listens"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_attempt_where_nothing_listens_is_a_calm_fact_never_advertised() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        h3: H3Mode::Off,
        advertise_h3: false,
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let result = analyzed(probe(&target, |o| o.h3_direct = true).await);
    let d = discovery(&result);
    assert_eq!(
        (d.via, d.outcome),
        (Some(H3Via::Direct), H3Outcome::UdpRefused),
        "{}",
        d.detail
    );
    let text = words(&result);
    assert!(
        !text.contains("advertised"),
        "nothing advertised it: {text}"
    );
    assert!(
        text.contains("h3_udp_refused: No HTTP/3 on this port"),
        "{text}"
    );
    let analysis = result.analysis.as_ref().unwrap();
    assert_eq!(analysis.outcome, Outcome::Done, "{text}");
    assert!(
        analysis.headline.starts_with(
            "done · 2 of 2 HTTP/1.1 and HTTP/2 attempt(s) succeeded · no HTTP/3: nothing listens"
        ),
        "{}",
        analysis.headline
    );
    assert_eq!(Exit::of_result(&result), Exit::Success);

    // HTTP/3 alone: all there is, so it counts, and fails.
    let only = analyzed(probe(&target, |o| o.protocols = vec![Protocol::H3]).await);
    assert_eq!(discovery(&only).outcome, H3Outcome::UdpRefused);
    let text = words(&only);
    assert!(
        !text.contains("advertised"),
        "nothing advertised it: {text}"
    );
    assert_eq!(only.analysis.as_ref().unwrap().outcome, Outcome::Failed);
    assert_eq!(Exit::of_result(&only), Exit::HandshakeFailed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_attempts_need_no_advertisement() {
    let _serial = SERIAL.lock().await;
    let target = unadvertised_target().await;
    let asked = probe(&target, |o| o.h3_direct = true).await;
    assert_eq!(discovery(&asked).via, Some(H3Via::Direct));
    assert_eq!(discovery(&asked).outcome, H3Outcome::Ok);
    let only_h3 = probe(&target, |o| o.protocols = vec![Protocol::H3]).await;
    assert_eq!(discovery(&only_h3).via, Some(H3Via::Direct));
    assert_eq!(discovery(&only_h3).outcome, H3Outcome::Ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_handshake_is_named() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let wrong = TrustSettings::from_ca_file(target.wrong_ca_file()).unwrap();
    let result = probe_with(&target, wrong, |o: &mut ProbeOptions| {
        o.protocols = vec![Protocol::H3];
    })
    .await;
    let d = discovery(&result);
    assert_eq!(d.outcome, H3Outcome::HandshakeFailed, "{}", d.detail);
    assert!(d.detail.contains("UnknownIssuer"), "{}", d.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_svc_into_private_space_is_refused_by_the_guard() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        alt_svc_authority: Some("127.0.0.2:443".to_owned()),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let options = ProbeOptions {
        url: target.https_url("/"),
        repeat: 1,
        rounds: 1,
        phase_timeout_ms: 2_000,
        ..ProbeOptions::default()
    };
    let plan = Plan::new(options, &Limits::default()).unwrap();
    let trust = TrustSettings::from_ca_file(target.ca_file()).unwrap();
    // A public server that lets exactly the target's HTTPS port through, as `h123 serve` would.
    let allowed = vec![target.https_addr.to_string().parse().unwrap()];
    let result = Engine::new(trust, ConnectPolicy::public_only(allowed))
        .run(&plan)
        .await;
    assert_tcp_ok(&result);
    let d = discovery(&result);
    assert_eq!(d.via, Some(H3Via::AltSvc));
    assert_eq!(d.endpoint.as_deref(), Some("127.0.0.2:443"));
    assert_eq!(d.outcome, H3Outcome::Blocked, "{}", d.detail);
    assert!(
        d.detail.contains("127.0.0.2 is a loopback address"),
        "{}",
        d.detail
    );
    let failure = run(&result, Protocol::H3).attempts[0]
        .failure
        .clone()
        .unwrap();
    assert_eq!(failure.kind, h123_shared::FailureKind::Blocked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ipv6_alt_svc_endpoint_is_dialled_in_brackets() {
    let _serial = SERIAL.lock().await;
    // The HTTP/3 endpoint on ::1, advertised by a target on 127.0.0.1.
    let v6 = TestTarget::start(TargetConfig {
        bind_ip: "::1".parse().unwrap(),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let authority = format!("[::1]:{}", v6.https_addr.port());
    let target = TestTarget::start(TargetConfig {
        alt_svc_authority: Some(authority.clone()),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    // Each target has its own CA: the endpoint's certificate is the other one's.
    let result = probe(&target, |o| o.insecure = true).await;
    let d = discovery(&result);
    assert_eq!(d.alt_svc[0].host.as_deref(), Some("::1"));
    assert_eq!(d.endpoint.as_deref(), Some(authority.as_str()));
    assert_eq!(d.outcome, H3Outcome::Ok, "{}", d.detail);
    let first = &run(&result, Protocol::H3).attempts[0];
    assert!(first.failure.is_none(), "{:?}", first.failure);
    assert_eq!(
        first.connection.as_ref().unwrap().remote_addr,
        v6.https_addr.to_string()
    );
    assert!(first.phases.quic.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alt_svc_endpoint_off_the_port_list_is_refused() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        alt_svc_authority: Some("127.0.0.1:1".to_owned()),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let options = ProbeOptions {
        url: target.https_url("/"),
        repeat: 1,
        rounds: 1,
        phase_timeout_ms: 2_000,
        ..ProbeOptions::default()
    };
    let plan = Plan::new(options, &Limits::default()).unwrap();
    let trust = TrustSettings::from_ca_file(target.ca_file()).unwrap();
    // The target's address on any port, but only its HTTPS port on the port list
    // (`--allow-target 127.0.0.1 --allow-port <https>`).
    let policy = ConnectPolicy::public_only(vec!["127.0.0.1".parse().unwrap()])
        .with_ports(vec![target.https_addr.port()]);
    let result = Engine::new(trust, policy).run(&plan).await;
    assert_tcp_ok(&result);
    let d = discovery(&result);
    assert_eq!(d.outcome, H3Outcome::Blocked, "{}", d.detail);
    assert!(d.detail.contains("port 1 is not allowed"), "{}", d.detail);
    assert!(run(&result, Protocol::H3).attempts[0].quic.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alt_svc_name_that_does_not_resolve_is_a_dns_outcome() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        alt_svc_authority: Some("nowhere.h123.invalid:443".to_owned()),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let result = probe(&target, |o| {
        o.url = format!("https://target.h123.test:{}/", target.https_addr.port());
        o.dns_server = Some(target.dns_addr.to_string());
    })
    .await;
    assert_tcp_ok(&result);
    let d = discovery(&result);
    assert_eq!(d.via, Some(H3Via::AltSvc));
    assert_eq!(d.outcome, H3Outcome::NameUnresolved, "{}", d.detail);
    assert!(
        d.detail.contains("did not resolve, so nothing was sent"),
        "{}",
        d.detail
    );
    let h3 = run(&result, Protocol::H3);
    assert_eq!(
        h3.attempts[0].failure.as_ref().unwrap().phase,
        h123_shared::Phase::Dns
    );
    let analyzed = h123_shared::analysis::analyzed(result.clone());
    let ids: Vec<&str> = analyzed
        .analysis
        .as_ref()
        .unwrap()
        .findings
        .iter()
        .map(|f| f.id.as_str())
        .collect();
    assert!(ids.contains(&"h3_name_unresolved"), "{ids:?}");
    assert!(!ids.contains(&"h3_handshake_failed"), "{ids:?}");
}
