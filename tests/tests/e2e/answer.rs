//! End-to-end tests of the answer a probe gives (outcome, verdict, findings) against the
//! loopback target: HTTP errors, redirects unfollowed and followed as chains, refused
//! ports, unknown names and a silent HTTP/3 port are each told for what they are.

use crate::support::{SERIAL, probe, run};
use h123_shared::analysis::{Analysis, Outcome, analyze};
use h123_shared::chain::chains;
use h123_shared::diagnosis::Severity;
use h123_shared::verdict::VerdictKind;
use h123_shared::{ProbeResult, Protocol};
use h123_target::{H3Mode, TargetConfig, TestTarget};

fn ids(a: &Analysis) -> Vec<&str> {
    a.findings.iter().map(|f| f.id.as_str()).collect()
}

async fn probe_path(target: &TestTarget, path: &str, repeat: u32) -> (ProbeResult, Analysis) {
    let result = probe(target, |o| {
        o.url = target.https_url(path);
        o.protocols = vec![Protocol::H1, Protocol::H2];
        o.repeat = repeat;
    })
    .await;
    let analysis = analyze(&result);
    (result, analysis)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_502_everywhere_is_a_failed_probe_with_an_error_finding() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let (_, a) = probe_path(&target, "/status/502", 2).await;
    assert_eq!(a.outcome, Outcome::Failed);
    assert_eq!((a.counts.attempts, a.counts.http_errors), (4, 4));
    assert_eq!(a.verdict.kind, VerdictKind::NotComparable);
    assert!(
        a.verdict.summary.contains("502 Bad Gateway"),
        "{}",
        a.verdict.summary
    );
    assert_eq!(ids(&a), vec!["http_server_error"], "nothing else is said");
    assert_eq!(a.findings[0].severity, Severity::Critical);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_is_a_warning_and_names_no_winner() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let (_, a) = probe_path(&target, "/status/404", 3).await;
    assert_eq!(a.outcome, Outcome::Failed);
    assert_eq!(a.findings[0].id, "http_client_error");
    assert_eq!(a.findings[0].severity, Severity::Warning);
    assert!(a.verdict.comparisons.is_empty(), "no winner among 404s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unfollowed_redirect_says_where_it_points() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let (_, a) = probe_path(&target, "/redirect/3", 1).await;
    let finding = a
        .findings
        .iter()
        .find(|f| f.id == "redirect_not_followed")
        .expect("redirect_not_followed");
    assert!(
        finding.evidence.detail.contains("/redirect/2"),
        "{}",
        finding.evidence.detail
    );
    assert_eq!(a.outcome, Outcome::Done, "a 302 is an answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_chain_is_measured_as_one_request() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = target.https_url("/redirect/3");
        o.protocols = vec![Protocol::H1, Protocol::H2];
        o.follow_redirects = true;
        o.repeat = 2;
    })
    .await;
    for protocol in [Protocol::H1, Protocol::H2] {
        for chain in chains(run(&result, protocol)) {
            assert_eq!(chain.redirects(), 3);
            assert_eq!(chain.status(), Some(200), "the final answer");
            let hops: u64 = chain
                .hops
                .iter()
                .map(|(a, _)| a.phases.total.duration().0)
                .sum();
            let total = chain.total().0;
            eprintln!(
                "{protocol} #{}: chain {total} µs, hops {hops} µs",
                chain.attempt()
            );
            assert!(total >= hops, "hops lie end to end");
            assert!(
                total - hops < 100,
                "the chain's total is the sum of its hops within 0.1 ms"
            );
            // Each hop starts where the previous ended.
            for pair in chain.hops.windows(2) {
                let (prev, start) = pair[0];
                assert!(pair[1].1.0 >= start.0 + prev.phases.total.end_us.0);
            }
        }
    }
    let a = analyze(&result);
    assert!(ids(&a).contains(&"redirect_cost"), "{:?}", ids(&a));
    assert!(!ids(&a).contains(&"redirect_not_followed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_port_fails_without_talk_of_http3() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = format!("https://{}/", target.refused_addr);
        o.repeat = 2;
    })
    .await;
    let a = analyze(&result);
    assert_eq!(a.outcome, Outcome::Failed);
    assert_eq!(a.verdict.kind, VerdictKind::Failed);
    assert!(
        a.verdict.summary.contains("connect phase"),
        "{}",
        a.verdict.summary
    );
    assert!(
        ids(&a).iter().all(|id| !id.starts_with("h3_")),
        "no HTTP/3 findings when nothing answered: {:?}",
        ids(&a)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_name_is_explained_in_plain_words() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = "https://no-such-name.h123.test/".into();
        o.dns_server = Some(target.dns_addr.to_string());
    })
    .await;
    let a = analyze(&result);
    assert_eq!(a.outcome, Outcome::Failed);
    for run in &result.runs {
        for attempt in &run.attempts {
            let message = &attempt.failure.as_ref().expect("failed").message;
            assert!(!message.contains("Query {"), "no debug output: {message}");
        }
    }
    assert!(
        a.verdict.summary.contains("does not exist"),
        "{}",
        a.verdict.summary
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_http3_port_is_tried_once() {
    let _serial = SERIAL.lock().await;
    let config = TargetConfig {
        h3: H3Mode::BlockUdp,
        ..TargetConfig::default()
    };
    let target = TestTarget::start(config).await.unwrap();
    let result = probe(&target, |o| {
        o.repeat = 3;
        o.phase_timeout_ms = 1_000;
    })
    .await;
    let h3 = run(&result, Protocol::H3);
    assert_eq!(h3.attempts.len(), 1, "later attempts are not made");
    let stopped = h3.stopped.as_deref().expect("the run says why it stopped");
    assert!(stopped.contains("UDP"), "{stopped}");
    let a = analyze(&result);
    // Advertised but unreachable: the site's error beside the TCP attempts,
    // which the first line counts apart (and the exit code is 7).
    assert_eq!(a.outcome, Outcome::DoneWithErrors, "{}", a.headline);
    assert!(
        a.headline.starts_with(
            "done with errors · 6 of 6 HTTP/1.1 and HTTP/2 attempt(s) succeeded · HTTP/3 failed: "
        ),
        "{}",
        a.headline
    );
    assert!(ids(&a).contains(&"h3_udp_silent"), "{:?}", ids(&a));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_mode_says_what_was_resumed_but_no_saving_from_one_handshake() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.mode = h123_shared::ConnectionMode::Resumed;
        o.repeat = 3;
    })
    .await;
    let a = analyze(&result);
    assert_eq!(a.outcome, Outcome::Done);
    // `--resumed` keeps one session across rounds: one full handshake per protocol is no
    // sample, so no saving is stated, only what was resumed and how to measure the saving.
    assert!(
        !ids(&a).contains(&"resumption_saving"),
        "one full handshake is no saving: {:?}",
        ids(&a)
    );
    let seen: Vec<_> = a
        .findings
        .iter()
        .filter(|f| f.id == "resumption_seen")
        .collect();
    assert_eq!(seen.len(), 3, "one per protocol: {:?}", ids(&a));
    for finding in &seen {
        assert_eq!(finding.evidence.duration, None, "{finding:?}");
        assert!(
            finding.next_step.contains("--arms cold,resumed"),
            "{finding:?}"
        );
    }
    let h3 = seen
        .iter()
        .map(|f| f.evidence.detail.as_str())
        .find(|d| d.contains("0-RTT"))
        .expect("HTTP/3 used 0-RTT");
    assert!(h3.contains("of them sent the request in 0-RTT"), "{h3}");
    // Later attempts are compared as resumed connections, never mixed with the first.
    assert!(
        a.verdict
            .comparisons
            .iter()
            .any(|c| c.state == h123_shared::chain::ConnState::Resumed),
        "{:?}",
        a.verdict
    );
}

/// A TLS server that agrees on no application protocol (no ALPN) and closes
/// each connection cleanly once it has read the request, without a byte of
/// answer: what an HTTP/2-only server built on Go's TLS (Caddy with
/// `protocols h2`) does to an HTTP/1.1 client. Its address.
async fn agrees_none_and_closes(target: &TestTarget) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let config = target.ca.server_config(&[]).expect("server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut buf = [0u8; 4096];
                let _ = tls.read(&mut buf).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_agrees_no_protocol_and_closes_gives_http1_a_calm_not_offered() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let addr = agrees_none_and_closes(&target).await;
    let result = probe(&target, |o| {
        o.url = format!("https://{addr}/");
        o.protocols = vec![Protocol::H1];
        o.repeat = 2;
    })
    .await;
    let h1 = run(&result, Protocol::H1);
    let not_offered = h1.not_offered.as_ref().expect("not offered");
    assert_eq!(
        (not_offered.chosen.as_deref(), not_offered.closed),
        (None, true)
    );
    assert!(h1.attempts.is_empty(), "{:?}", h1.attempts);
    assert_eq!(
        h1.skipped.as_deref(),
        Some(
            "this server does not offer HTTP/1.1: offered http/1.1 in TLS (ALPN), it agreed to \
             none of them and closed the connection without answering"
        )
    );
    let a = analyze(&result);
    assert!(ids(&a).contains(&"h1_not_offered"), "{:?}", ids(&a));
    assert!(
        a.findings.iter().all(|f| f.severity == Severity::Info),
        "not a reset, not critical: {:?}",
        a.findings
    );
    assert_eq!(a.outcome, Outcome::Failed);
    assert_eq!(
        a.headline,
        "failed · nothing measured: this server does not offer HTTP/1.1: offered http/1.1 in TLS \
         (ALPN), it agreed to none of them and closed the connection without answering"
    );
    assert_eq!(
        a.verdict.summary,
        "Nothing was measured: this server does not offer HTTP/1.1."
    );
    assert_eq!(
        h123_shared::exit::Exit::of_result(&result),
        h123_shared::exit::Exit::HandshakeFailed,
        "nothing measured: the server offers none of the protocols asked for"
    );
}
