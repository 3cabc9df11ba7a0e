//! Reads have their own per-client rate: a client that reads too fast gets
//! 429 `rate_limited` with `Retry-After`, while other clients (and its own
//! probe creations) are unaffected; and every per-client limit counts an
//! IPv6 /64 as one client.

use crate::support::*;
use axum::http::StatusCode;
use h123::server::limit::RateConfig;
use h123_shared::api::ProbeCreated;
use std::net::{IpAddr, Ipv4Addr};

#[tokio::test]
async fn a_fast_reader_is_limited_alone() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.read_rate = RateConfig {
        burst: 3,
        per_minute: 1,
    };
    let state = state(config, &dir);
    let body = probe_body(&target.https_url("/"), &["h1"], 1);
    let answer = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    let id = serde_json::from_slice::<ProbeCreated>(&answer.body)
        .unwrap()
        .id;
    let paths = [
        format!("/api/v1/probes/{id}"),
        format!("/api/v1/probes/{id}/har"),
        "/api/v1/probes".to_owned(),
    ];
    for path in &paths {
        let answer = call(&state, get(path), CLIENT).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
    }
    let limited = call(&state, get(&format!("/api/v1/probes/{id}/curl")), CLIENT).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.code(), "rate_limited");
    assert!(limited.header("retry-after").is_some());
    let events = call(&state, get(&format!("/api/v1/probes/{id}/events")), CLIENT).await;
    assert_eq!(
        events.status,
        StatusCode::TOO_MANY_REQUESTS,
        "streams count too"
    );

    let other = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 77));
    let answer = call(&state, get(&format!("/api/v1/probes/{id}")), other).await;
    assert_eq!(answer.status, StatusCode::OK, "another client reads");
    let answer = call(&state, get("/healthz"), CLIENT).await;
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "health is not a read of records"
    );
    let answer = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
    assert_eq!(
        answer.status,
        StatusCode::ACCEPTED,
        "creation has its own limit"
    );
}

#[tokio::test]
async fn an_ipv6_64_is_one_client_for_the_limits() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.rate = RateConfig {
        burst: 1,
        per_minute: 1,
    };
    let state = state(config, &dir);
    let body = probe_body(&target.https_url("/"), &["h1"], 1);
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let first = call(
        &state,
        post_json("/api/v1/probes", &body),
        ip("2001:db8:1:2::1"),
    )
    .await;
    assert_eq!(first.status, StatusCode::ACCEPTED);
    let same_64 = call(
        &state,
        post_json("/api/v1/probes", &body),
        ip("2001:db8:1:2:ffff::9"),
    )
    .await;
    assert_eq!(same_64.status, StatusCode::TOO_MANY_REQUESTS, "same /64");
    let next_64 = call(
        &state,
        post_json("/api/v1/probes", &body),
        ip("2001:db8:1:3::1"),
    )
    .await;
    assert_eq!(next_64.status, StatusCode::ACCEPTED, "another /64");
}

#[tokio::test]
async fn a_flood_of_comparisons_is_refused_while_health_answers() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    // The server's defaults (the tests' own configuration reads without a limit).
    config.read_rate = RateConfig {
        burst: 120,
        per_minute: 1200,
    };
    let state = state(config, &dir);
    let body = probe_body(&target.https_url("/"), &["h1"], 1);
    let (a, _) = probe_to_the_end(&state, &body, CLIENT).await;
    let (b, _) = probe_to_the_end(&state, &body, CLIENT).await;
    let path = format!("/api/v1/compare/{a}/{b}");
    // From one client and from four: each is refused once its burst is spent.
    for clients in [1u8, 4] {
        let mut refused = 0;
        let mut slowest_health = std::time::Duration::ZERO;
        let flood = h123::probe::trace::now();
        for round in 0..200 {
            for c in 0..clients {
                let from = IpAddr::V4(Ipv4Addr::new(127, 0, clients, 20 + c));
                let answer = call(&state, get(&path), from).await;
                if answer.status == StatusCode::TOO_MANY_REQUESTS
                    || answer.status == StatusCode::SERVICE_UNAVAILABLE
                {
                    refused += 1;
                }
            }
            if round % 20 == 0 {
                let started = h123::probe::trace::now();
                let health = call(&state, get("/healthz"), CLIENT).await;
                slowest_health = slowest_health.max(started.elapsed());
                assert_eq!(health.status, StatusCode::OK);
            }
        }
        // Each client's bucket held its burst and refilled while the flood lasted (longer on a
        // busy machine): every read past that is refused.
        let refilled = (flood.elapsed().as_secs_f64() * 1200.0 / 60.0).ceil() as usize;
        let allowed = (120 + refilled).min(200);
        println!(
            "{clients} client(s): {refused} refused, {allowed} allowed each over {:?}, /healthz at most {slowest_health:?}",
            flood.elapsed()
        );
        assert!(
            refused >= (200 - allowed) * usize::from(clients),
            "{clients}: {refused} refused, {allowed} allowed each"
        );
        assert!(
            slowest_health < std::time::Duration::from_secs(1),
            "{slowest_health:?}"
        );
    }
}
