//! A monitor's latest slot while its run is under way, through the status API and its pages:
//! "running since …" above the rows, which keep the last run that finished; never down,
//! never missed; gone once the run's points are in.

use crate::support::*;
use axum::http::StatusCode;
use h123::server::{MonitorLimits, ServerConfig};
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test]
async fn a_run_under_way_reads_running_since_on_the_status_and_its_pages() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        monitors: MonitorLimits {
            min_every_ms: 1000,
            runs_per_host_minute: 1_000_000,
            ..MonitorLimits::default()
        },
        ..config(&target)
    };
    let state = state(config, &dir);
    h123::server::schedule::spawn(state.clone());
    // Runs of 1.5 s every 2 s: most of the time one is under way.
    let body = json!({
        "url": target.https_url("/delay/1500"),
        "protocols": ["h2"],
        "every": "2s",
        "options": {"repeat": 1, "rounds": 1, "timeout_ms": 5000, "phase_timeout_ms": 3000},
        "visibility": "public",
    });
    let made = call(
        &state,
        post_json("/api/v1/monitors", &body.to_string()),
        CLIENT,
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    let id = made.json()["monitor"]["id"].as_str().unwrap().to_owned();

    // Until a run finished and the next is under way.
    let mut seen: Option<Value> = None;
    for _ in 0..150 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let status = call(
            &state,
            get(&format!("/api/v1/monitors/{id}/status")),
            CLIENT,
        )
        .await;
        assert_eq!(status.status, StatusCode::OK, "{}", status.text());
        let status = status.json();
        let finished = status["rows"]
            .as_array()
            .is_some_and(|rows| !rows.is_empty());
        // Early in the run, so the pages read below find it still under way.
        let early = status["at_unix_ms"]
            .as_u64()
            .zip(status["latest"]["since_unix_ms"].as_u64())
            .is_some_and(|(at, since)| at.saturating_sub(since) < 700);
        if finished && status["latest"]["state"] == "running" && early {
            seen = Some(status);
            break;
        }
    }
    let status = seen.expect("a status with a finished run and one under way");
    let latest = &status["latest"];
    let (slot, since) = (
        latest["slot_unix_ms"].as_u64().unwrap(),
        latest["since_unix_ms"].as_u64().unwrap(),
    );
    assert!(since >= slot, "{latest}");
    assert!(latest.get("detail").is_none(), "{latest}");
    let row = &status["rows"][0];
    assert_eq!(
        row["last"]["state"], "ok",
        "the last finished run stands: {row}"
    );
    assert!(
        row["last"]["slot_unix_ms"].as_u64().unwrap() < slot,
        "{row}"
    );
    assert_eq!(row["windows"][0]["runs"], row["windows"][0]["up"], "{row}");
    assert_eq!(status["missed"][0]["missed"], 0, "{status}");

    // The pages say the same, within the second a running status is kept.
    for path in [format!("/m/{id}"), format!("/m/{id}/status")] {
        let page = call(&state, get(&path), CLIENT).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        let html = page.text();
        let line = html
            .split_once(r#"class="monitor-latest""#)
            .and_then(|(before, rest)| Some((before.rsplit_once("<p ")?.1, rest)))
            .map(|(open, rest)| format!("{open}{}", rest.split("</p>").next().unwrap_or_default()))
            .unwrap_or_else(|| panic!("{path} has no latest line: {html}"));
        assert!(line.contains(r#"data-state="running""#), "{path}: {line}");
        assert!(
            line.contains(r#"<span class="state muted">running</span> since "#),
            "{path}: {line}"
        );
        assert!(!html.contains("state danger"), "{path}: {html}");
    }

    // Once that run's points are in, the slot is no longer apart.
    let mut replaced = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let status = call(
            &state,
            get(&format!("/api/v1/monitors/{id}/status")),
            CLIENT,
        )
        .await
        .json();
        let last = status["rows"][0]["last"]["slot_unix_ms"].as_u64().unwrap();
        if last >= slot {
            assert!(
                status["latest"]["slot_unix_ms"].as_u64() != Some(slot),
                "the run's own slot is not apart once it ended: {status}"
            );
            replaced = true;
            break;
        }
    }
    state.shutdown(Duration::from_secs(5)).await;
    assert!(
        replaced,
        "the run under way ended and its point replaced it"
    );
}
