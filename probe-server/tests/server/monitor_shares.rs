//! Monitors bounded per client: one address holds at most its number of monitors whatever
//! owner tokens it uses, and gets its share of the monitors' bytes per minute, while another
//! address's monitors run every slot.

use crate::support::*;
use axum::http::StatusCode;
use h123::server::MonitorLimits;
use h123_shared::monitor::{MonitorPoint, PointState};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

const HOG: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));

/// A public monitor of the target's `path` over HTTP/2, one attempt, `every`.
fn monitor(target: &h123_target::TestTarget, path: &str, every: &str) -> Value {
    json!({
        "url": target.https_url(path),
        "every": every,
        "protocols": ["h2"],
        "options": {"repeat": 1, "rounds": 1, "timeout_ms": 5000, "phase_timeout_ms": 3000},
        "visibility": "public",
    })
}

/// Creates a monitor as client `from` under a new owner token; the answer.
async fn create(state: &h123::server::AppState, body: &Value, from: IpAddr) -> Answer {
    call(
        state,
        post_json("/api/v1/monitors", &body.to_string()),
        from,
    )
    .await
}

async fn points(state: &h123::server::AppState, id: &str) -> Vec<MonitorPoint> {
    state
        .store
        .points(id.to_owned(), 0, u64::MAX / 2, None)
        .await
        .unwrap()
}

#[tokio::test]
async fn one_client_gets_its_share_of_monitors_and_bytes_while_another_keeps_every_slot() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let budget: u64 = 256 * 1024;
    let mut config = config(&target);
    config.limits.max_probe_bytes = Some(budget);
    config.monitors = MonitorLimits {
        max_total: 100,
        per_owner: 100,
        per_client: 3,
        min_every_ms: 1000,
        // Two clients: a share of two budgets a minute each.
        bytes_per_minute: 4 * budget,
        runs_per_host_minute: 1_000_000,
        ..MonitorLimits::default()
    };
    let state = state(config, &dir);
    h123::server::schedule::spawn(state.clone());
    let started = h123::probe::trace::unix_ms();

    // The other client's monitor: a small answer every two seconds.
    let made = create(&state, &monitor(&target, "/", "2s"), OTHER).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    let other_id = made.json()["monitor"]["id"].as_str().unwrap().to_owned();

    // The hog: three monitors of answers far past the budget, every second, each under a
    // fresh owner token (tokens are free); the fourth is refused, naming why.
    let big = monitor(&target, "/bytes/10485760", "1s");
    let mut hog_ids = Vec::new();
    for _ in 0..3 {
        let made = create(&state, &big, HOG).await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
        hog_ids.push(made.json()["monitor"]["id"].as_str().unwrap().to_owned());
    }
    let refused = create(&state, &big, HOG).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.code(), "too_many_monitors");
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("at most 3 monitors") && message.contains("127.0.0.2"),
        "{message}"
    );
    // Another address is another client.
    let third = create(&state, &big, CLIENT).await;
    assert_eq!(third.status, StatusCode::CREATED, "{}", third.text());
    let third = third.json();
    let third_id = third["monitor"]["id"].as_str().unwrap();
    let deleted = call(
        &state,
        axum::http::Request::builder()
            .method("DELETE")
            .uri(format!("/api/v1/monitors/{third_id}"))
            .header("x-h123-owner", third["owner_token"].as_str().unwrap())
            .body(axum::body::Body::empty())
            .unwrap(),
        CLIENT,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.text());

    // Six runs of the other client's monitor: twelve seconds of the hog asking every second.
    let mut others = Vec::new();
    for _ in 0..300 {
        others = points(&state, &other_id).await;
        if others.iter().filter(|p| p.protocol.is_some()).count() >= 6 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let elapsed_s = (h123::probe::trace::unix_ms() - started) as f64 / 1000.0;
    state.shutdown(Duration::from_secs(5)).await;

    // The other client's monitor kept every slot: runs only, one every two seconds.
    let runs: Vec<&MonitorPoint> = others.iter().filter(|p| p.protocol.is_some()).collect();
    assert!(runs.len() >= 6, "{others:?}");
    assert!(
        others.iter().all(|p| p.state != PointState::Missed),
        "{others:?}"
    );
    for pair in runs.windows(2) {
        assert_eq!(
            pair[1].slot_unix_ms - pair[0].slot_unix_ms,
            2000,
            "{runs:?}"
        );
    }

    // The hog fetched no more than its share: two budgets at once, then two a minute.
    let mut fetched = 0;
    let mut share_spent = 0;
    for id in &hog_ids {
        for point in points(&state, id).await {
            if point.protocol.is_some() {
                fetched += 1;
            } else if point.detail.as_deref()
                == Some("its client's share of the monitors' bytes per minute is spent")
            {
                share_spent += 1;
            }
        }
    }
    let share_allows = 2.0 + 2.0 * elapsed_s / 60.0;
    println!(
        "in {elapsed_s:.1} s: the other client {} runs, 0 missed; the hog {fetched} runs, \
         {share_spent} slots missed for its share",
        runs.len()
    );
    assert!(
        f64::from(fetched) <= share_allows.floor() + 1.0,
        "{fetched} runs of a budget each in {elapsed_s:.1} s; the share allows {share_allows:.1}"
    );
    assert!(
        share_spent > 0,
        "the hog's other slots were missed for its share"
    );
}
