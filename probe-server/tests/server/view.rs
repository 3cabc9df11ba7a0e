//! The result's markup from the API against the real test target over HTTP/1.1, 2 and 3:
//! `/view` of a finished probe and of one still running, `/view/events` drawing a running
//! probe's progress until `done` (a finished one's `done` alone), and JSON 404s for unknown ids.

use crate::support::*;
use axum::http::{HeaderValue, StatusCode};
use h123_shared::api::ProbeStatus;
use std::io::Read as _;
use std::time::Duration;

/// One Server-Sent Event whose data is markup, not JSON.
#[derive(Debug)]
struct Drawn {
    event: String,
    data: String,
}

/// The events of a whole event-stream body (keep-alive comments skipped), data lines joined.
fn drawn(text: &str) -> Vec<Drawn> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data: Vec<&str> = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            Some(Drawn {
                event: event?,
                data: data.join("\n"),
            })
        })
        .collect()
}

/// Whether `html` is the result's root for probe `id` in `status`.
fn is_result(html: &str, id: &str, status: &str) -> bool {
    html.contains("id=\"result\"")
        && html.contains(&format!("data-id=\"{id}\""))
        && html.contains(&format!("data-status=\"{status}\""))
}

async fn start(state: &h123::server::AppState, body: &str) -> String {
    let created = call(state, post_json("/api/v1/probes", body), CLIENT).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
    created.json()["id"].as_str().expect("id").to_owned()
}

#[tokio::test]
async fn a_finished_probe_s_view_is_its_markup_and_its_stream_is_done_alone() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let body = probe_body(&target.https_url("/delay/5"), &["h1", "h2", "h3"], 2);
    let (id, record) = probe_to_the_end(&state, &body, CLIENT).await;
    assert_eq!(record.status, ProbeStatus::Done);

    let path = format!("/api/v1/probes/{id}/view");
    let view = call(&state, get(&path), CLIENT).await;
    assert_eq!(view.status, StatusCode::OK, "{}", view.text());
    assert_eq!(
        view.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(view.header("cache-control"), Some("no-cache"));
    let html = view.text();
    assert!(is_result(&html, &id, "done"), "{html}");

    // Gzipped for who accepts it: the same markup.
    let mut request = get(&path);
    request
        .headers_mut()
        .insert("accept-encoding", HeaderValue::from_static("gzip"));
    let gzipped = call(&state, request, CLIENT).await;
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    assert_eq!(gzipped.header("vary"), Some("accept-encoding"));
    let mut unzipped = String::new();
    flate2::read::GzDecoder::new(&gzipped.body[..])
        .read_to_string(&mut unzipped)
        .expect("gzip");
    assert!(is_result(&unzipped, &id, "done"), "{unzipped}");

    let stream = call(&state, get(&format!("{path}/events")), CLIENT).await;
    assert_eq!(stream.status, StatusCode::OK);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    assert_eq!(stream.header("cache-control"), Some("no-cache"));
    let events = drawn(&stream.text());
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].event, "done");
    assert!(is_result(&events[0].data, &id, "done"), "{events:?}");
}

#[tokio::test]
async fn a_running_probe_s_view_is_drawn_as_it_goes_then_done() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    // Slow answers, so the probe is still running when it is looked at.
    let body = probe_body(&target.https_url("/delay/150"), &["h1", "h2", "h3"], 2);
    let id = start(&state, &body).await;
    let path = format!("/api/v1/probes/{id}/view");
    let following = {
        let (state, path) = (state.clone(), format!("{path}/events"));
        tokio::spawn(async move { call(&state, get(&path), CLIENT).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let now = call(&state, get(&path), CLIENT).await;
    assert_eq!(now.status, StatusCode::OK);
    assert_eq!(now.header("cache-control"), Some("no-cache"));
    assert!(is_result(&now.text(), &id, "running"), "{}", now.text());

    let stream = following.await.expect("the stream's task");
    assert_eq!(stream.status, StatusCode::OK);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    let events = drawn(&stream.text());
    let (last, views) = events.split_last().expect("events");
    assert!(!views.is_empty(), "a view before done: {events:?}");
    assert_eq!(last.event, "done", "{events:?}");
    for view in views {
        assert_eq!(view.event, "view", "{events:?}");
        assert!(is_result(&view.data, &id, "running"), "{}", view.data);
    }
    assert!(is_result(&last.data, &id, "done"), "{}", last.data);
    let finished = call(&state, get(&path), CLIENT).await.text();
    assert!(is_result(&finished, &id, "done"), "{finished}");
}

#[tokio::test]
async fn an_unknown_probe_s_view_is_a_json_404() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    for path in [
        "/api/v1/probes/AAAAAAAAAAAA/view",
        "/api/v1/probes/AAAAAAAAAAAA/view/events",
        "/api/v1/probes/not%20an%20id/view",
        "/api/v1/probes/x/view/events",
    ] {
        let answer = call(&state, get(path), CLIENT).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            answer.header("content-type"),
            Some("application/json"),
            "{path}"
        );
        assert_eq!(answer.code(), "not_found", "{path}");
    }
}
