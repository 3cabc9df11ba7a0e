//! Bounded egress: a probe receives at most its byte budget from its target
//! over all its attempts, streams and protocols, and says so when the
//! budget stopped it; a client's probes reserve their budgets from its bytes
//! per minute, and one more is `429 egress_budget_spent` with `Retry-After`.

use crate::support::*;
use axum::http::StatusCode;
use h123::server::{SERVER_MAX_BODY_BYTES, SERVER_MAX_PROBE_BYTES, ServerConfig};
use h123_shared::FailureKind;
use h123_shared::api::ProbeRecord;
use std::net::{IpAddr, Ipv4Addr};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 21));

/// The amplifier of the audit: one small request asking for every protocol,
/// 10 attempts each and 16 requests at once, of a 10 MiB answer.
fn amplifier(target: &h123_target::TestTarget) -> String {
    serde_json::json!({
        "url": target.https_url("/bytes/10485760"),
        "protocols": ["h1", "h2", "h3"],
        "repeat": 10, "rounds": 1,
        "streams": 16,
        "timeout_ms": 20000,
    })
    .to_string()
}

/// Body bytes the record says were received, attempts and streams.
fn body_bytes(record: &ProbeRecord) -> u64 {
    record
        .result
        .runs
        .iter()
        .map(|run| {
            let attempts: u64 = run
                .attempts
                .iter()
                .filter_map(|a| a.response.as_ref())
                .map(|r| r.body_bytes)
                .sum();
            let streams: u64 = run
                .streams
                .iter()
                .flat_map(|b| &b.streams)
                .map(|s| s.body_bytes)
                .sum();
            attempts + streams
        })
        .sum()
}

/// Bytes from targets the server counted (`h123_target_bytes_total`).
async fn target_bytes(state: &h123::server::AppState) -> u64 {
    let metrics = call(state, get("/metrics"), CLIENT).await.text();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("h123_target_bytes_total "))
        .expect("the counter")
        .parse()
        .expect("a number")
}

/// Runs the amplifier once on a server with `config`: the record, the bytes
/// the server received, and the bytes the client sent (its request).
async fn amplify(
    config: ServerConfig,
    target: &h123_target::TestTarget,
) -> (ProbeRecord, u64, usize) {
    let dir = tempfile::tempdir().unwrap();
    let state = state(config, &dir);
    let body = amplifier(target);
    // The request line and headers a client sends with it (curl's, about).
    let sent = body.len() + 120;
    let (_, record) = probe_to_the_end(&state, &body, CLIENT).await;
    let received = target_bytes(&state).await;
    (record, received, sent)
}

#[tokio::test]
async fn a_probe_receives_no_more_than_its_budget_and_says_so() {
    let _alone = SERIAL.lock().await;
    let target = target().await;
    let (record, received, sent) = amplify(config(&target), &target).await;
    let bodies = body_bytes(&record);
    eprintln!(
        "budget {SERVER_MAX_PROBE_BYTES}: received {received} bytes ({bodies} of bodies) \
         for a {sent}-byte request: ratio {:.0}",
        received as f64 / sent as f64
    );
    assert!(
        received <= SERVER_MAX_PROBE_BYTES + 64 * 1024,
        "received {received} bytes, over the budget of {SERVER_MAX_PROBE_BYTES} (and one datagram)"
    );
    assert!(bodies <= received, "{bodies} > {received}");
    assert!(
        received > SERVER_MAX_PROBE_BYTES / 2,
        "the budget was used, not skipped: {received}"
    );
    let failures: Vec<_> = record
        .result
        .runs
        .iter()
        .flat_map(|r| r.attempts.iter().filter_map(|a| a.failure.as_ref()))
        .collect();
    assert!(
        failures.iter().any(|f| f.kind == FailureKind::Budget),
        "an attempt says the budget stopped it: {failures:?}"
    );
    assert!(
        failures.iter().all(|f| f.kind == FailureKind::Budget),
        "nothing else failed: {failures:?}"
    );
    let stopped: Vec<_> = record
        .result
        .runs
        .iter()
        .filter_map(|r| r.stopped.as_deref())
        .collect();
    assert!(
        stopped
            .iter()
            .any(|s| s.contains("budget of 8388608 bytes")),
        "a run says the budget ended it: {stopped:?}"
    );
    let findings = &record.result.analysis.as_ref().expect("analysis").findings;
    assert!(
        findings.iter().any(|f| f.id == "failure_budget"),
        "{:?}",
        findings.iter().map(|f| &f.id).collect::<Vec<_>>()
    );
    for run in &record.result.runs {
        for a in run.attempts.iter().filter_map(|a| a.response.as_ref()) {
            // The cap stops the read at the frame that reaches it.
            assert!(
                a.body_bytes <= SERVER_MAX_BODY_BYTES + 128 * 1024,
                "{}",
                a.body_bytes
            );
        }
    }
}

/// The amplifier measured with the old defaults (a 10 MiB body cap, no probe
/// budget) and the new ones; prints both ratios (target bytes per client byte).
#[tokio::test]
#[ignore = "a measurement: cargo test --release -p h123 --test server -- --ignored egress:: --nocapture"]
async fn amplification_before_and_after() {
    let _alone = SERIAL.lock().await;
    let target = target().await;
    let mut before = config(&target);
    before.limits.max_body_bytes = 10 * 1024 * 1024;
    before.limits.max_probe_bytes = None;
    let (record, _, sent) = amplify(before, &target).await;
    // Without a budget nothing counts the bytes: the bodies are a floor.
    let bodies = body_bytes(&record);
    eprintln!(
        "before: at least {bodies} bytes (bodies) for {sent}: ratio {:.0}",
        bodies as f64 / sent as f64
    );
    let (record, received, sent) = amplify(config(&target), &target).await;
    eprintln!(
        "after: {received} bytes ({} of bodies) for {sent}: ratio {:.0}",
        body_bytes(&record),
        received as f64 / sent as f64
    );
    // One client's minute: the creation rate's burst of 10 amplifiers at once.
    let dir = tempfile::tempdir().unwrap();
    let state = state(
        ServerConfig {
            client_bytes_per_minute: h123::server::SERVER_CLIENT_BYTES_PER_MINUTE,
            ..config(&target)
        },
        &dir,
    );
    let body = amplifier(&target);
    let mut accepted = Vec::new();
    for _ in 0..10 {
        let created = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
        if created.status == StatusCode::ACCEPTED {
            accepted.push(created.json()["id"].as_str().unwrap().to_owned());
        }
    }
    for id in &accepted {
        call(&state, get(&format!("/api/v1/probes/{id}/events")), CLIENT).await;
    }
    let received = target_bytes(&state).await;
    let sent = 10 * (body.len() + 120);
    eprintln!(
        "one client, 10 amplifiers at once: {} accepted, {received} bytes for {sent}: ratio {:.0}",
        accepted.len(),
        received as f64 / sent as f64
    );
}

/// A refusal's `Retry-After`: within the half minute that refills a 1 MiB budget.
fn refills_within_half_a_minute(refused: &Answer) {
    let retry: u64 = refused
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!(
        (1..=30).contains(&retry),
        "half a minute refills 1 MiB: {retry}"
    );
}

#[tokio::test]
async fn a_client_past_its_bytes_per_minute_gets_429_with_retry_after() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.limits.max_probe_bytes = Some(1024 * 1024);
    config.client_bytes_per_minute = 2 * 1024 * 1024;
    let state = state(config, &dir);
    let body = probe_body(&target.https_url("/delay/300"), &["h1"], 1);
    let mut ids = Vec::new();
    for _ in 0..2 {
        let created = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
        assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
        ids.push(created.json()["id"].as_str().unwrap().to_owned());
    }
    let refused = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.code(), "egress_budget_spent");
    refills_within_half_a_minute(&refused);
    assert!(
        refused.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("per minute")
    );
    let other = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 22));
    let elsewhere = call(&state, post_json("/api/v1/probes", &body), other).await;
    assert_eq!(
        elsewhere.status,
        StatusCode::ACCEPTED,
        "another client is not affected"
    );
    // What the two probes did not receive comes back when they end.
    for id in &ids {
        call(&state, get(&format!("/api/v1/probes/{id}/events")), CLIENT).await;
    }
    let again = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
    assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.text());
}

/// However many addresses a stranger has, the server as a whole fetches no more than its
/// bytes a minute: a second client within its own bytes gets 503 `server_bytes_spent` with
/// Retry-After once the first has taken the server's, and the server's come back as probes end.
#[tokio::test]
async fn the_server_as_a_whole_fetches_no_more_than_its_bytes_per_minute() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.limits.max_probe_bytes = Some(1024 * 1024);
    config.client_bytes_per_minute = 2 * 1024 * 1024;
    config.server_bytes_per_minute = 3 * 1024 * 1024;
    let state = state(config, &dir);
    let body = probe_body(&target.https_url("/delay/300"), &["h1"], 1);
    let client = |n: u8| IpAddr::V4(Ipv4Addr::new(198, 51, 100, n));
    let mut ids = Vec::new();
    for n in [1, 1, 2] {
        let created = call(&state, post_json("/api/v1/probes", &body), client(n)).await;
        assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
        ids.push(created.json()["id"].as_str().unwrap().to_owned());
    }
    for n in [2, 3] {
        let refused = call(&state, post_json("/api/v1/probes", &body), client(n)).await;
        assert_eq!(
            refused.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            refused.text()
        );
        assert_eq!(refused.code(), "server_bytes_spent");
        refills_within_half_a_minute(&refused);
    }
    // What the probes did not receive comes back to the server's bucket when they end.
    for id in &ids {
        call(
            &state,
            get(&format!("/api/v1/probes/{id}/events")),
            client(1),
        )
        .await;
    }
    let again = call(&state, post_json("/api/v1/probes", &body), client(3)).await;
    assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.text());
}

#[tokio::test]
async fn a_bench_stops_at_its_byte_budget() {
    let _alone = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let budget: u64 = 4 * 1024 * 1024;
    let config = ServerConfig {
        bench: Some(h123::server::BenchConfig {
            targets: allowed(&target),
            limits: h123::server::server_bench_limits(),
            max_bytes: budget,
        }),
        ..config(&target)
    };
    let state = state(config, &dir);
    let body = serde_json::json!({
        "url": target.https_url("/bytes/1048576"),
        "protocols": ["h1", "h2", "h3"],
        "concurrency": 4,
        "duration_ms": 5000,
        "timeout_ms": 5000,
    })
    .to_string();
    let started = h123::probe::trace::now();
    let created = call(&state, post_json("/api/v1/benches", &body), CLIENT).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_owned();
    let record = loop {
        let record = call(&state, get(&format!("/api/v1/benches/{id}")), CLIENT)
            .await
            .json();
        if record["status"] != "running" {
            break record;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let took = started.elapsed();
    let received = target_bytes(&state).await;
    eprintln!("bench budget {budget}: received {received} bytes, stopped after {took:?}");
    assert_eq!(record["status"], "cancelled", "stopped by its budget");
    assert_eq!(
        record["cancel_reason"],
        format!("stopped at the server's byte budget for a bench ({budget} bytes from the target)"),
        "the record says why"
    );
    assert!(
        took.as_secs() < 10,
        "well before its 15 s of measuring: {took:?}"
    );
    assert!(
        received <= budget + 256 * 1024,
        "received {received}, over the budget of {budget}"
    );
}
