//! API integration tests against the real test target: probes over h1 and h2
//! end to end, the event stream (order, late subscribers), ETags, exports,
//! every error answer, per-client limits, graceful shutdown, and one run over a real socket.

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123::server::limit::RateConfig;
use h123_shared::api::{ProbeCreated, ProbeEvent, ProbeRecord, ProbeStatus};
use h123_shared::{FailureKind, Protocol};
use serde_json::Value;
use std::net::IpAddr;
use std::time::Duration;

/// The owner token every probe of these tests is made under.
const OWNER: &str = "api-tests-owner-token-0123456789";

fn as_owner(
    mut request: axum::http::Request<axum::body::Body>,
) -> axum::http::Request<axum::body::Body> {
    request
        .headers_mut()
        .insert("x-h123-owner", axum::http::HeaderValue::from_static(OWNER));
    request
}

async fn create(state: &h123::server::AppState, body: &str) -> ProbeCreated {
    let answer = call(state, as_owner(post_json("/api/v1/probes", body)), CLIENT).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let created: ProbeCreated = serde_json::from_slice(&answer.body).expect("ProbeCreated");
    assert_eq!(
        answer.header("location"),
        Some(created.links.self_.as_str())
    );
    assert!(answer.header("ratelimit-limit").is_some());
    created
}

/// Reads the whole event stream (it ends after `done`).
async fn events(state: &h123::server::AppState, id: &str) -> Vec<Sse> {
    let answer = call(state, get(&format!("/api/v1/probes/{id}/events")), CLIENT).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    parse_sse(&answer.text())
}

fn done_record(events: &[Sse]) -> ProbeRecord {
    let last = events.last().expect("at least the done event");
    assert_eq!(last.event, "done", "the stream ends with done");
    serde_json::from_value(last.data.clone()).expect("done carries a ProbeRecord")
}

/// Checks the order of a stream: ids count up from 0, each attempt's phase
/// events come before its `attempt` event, offsets never go back within an attempt, and where
/// HTTP/3 will be tried is said before its first phase.
fn assert_ordered(events: &[Sse]) {
    let body = &events[..events.len() - 1];
    let mut last_at: Option<(u32, u32, u64)> = None;
    let mut discovered = false;
    for (i, e) in body.iter().enumerate() {
        assert_eq!(e.id.as_deref(), Some(i.to_string().as_str()));
        let event: ProbeEvent = serde_json::from_value(e.data.clone()).expect("ProbeEvent");
        match event {
            ProbeEvent::Phase {
                protocol,
                attempt,
                hop,
                event,
            } => {
                assert!(
                    protocol != Protocol::H3 || discovered,
                    "discovery precedes HTTP/3's first phase"
                );
                if let Some((a, h, at)) = last_at
                    && (a, h) == (attempt, hop)
                {
                    assert!(event.at.0 >= at, "offsets go forward");
                }
                last_at = Some((attempt, hop, event.at.0));
            }
            ProbeEvent::Attempt { attempt, .. } => {
                let previous = body[..i].last().map(|p| p.event.as_str());
                assert_eq!(
                    previous,
                    Some("phase"),
                    "attempt {} follows its phases",
                    attempt.attempt
                );
                last_at = None;
            }
            ProbeEvent::Discovery {
                protocol,
                discovery,
            } => {
                assert_eq!(protocol, Protocol::H3);
                assert_eq!(e.event, "discovery");
                assert!(discovery.endpoint.is_some(), "{discovery:?}");
                discovered = true;
            }
            ProbeEvent::Skipped { .. } | ProbeEvent::Stopped { .. } => {}
        }
    }
}

#[tokio::test]
async fn probes_run_end_to_end_over_h1_h2_and_h3() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    for protocol in ["h1", "h2", "h3"] {
        let body = probe_body(&target.https_url("/delay/20"), &[protocol], 2);
        let created = create(&state, &body).await;
        assert_eq!(created.status, ProbeStatus::Running);
        assert_eq!(created.id.len(), 12);
        let events = events(&state, &created.id).await;
        assert_ordered(&events);
        let record = done_record(&events);
        assert_eq!(record.status, ProbeStatus::Done);
        let run = &record.result.runs[0];
        assert_eq!(run.protocol.as_str(), protocol);
        assert_eq!(run.attempts.len(), 2);
        for a in &run.attempts {
            assert!(a.failure.is_none(), "{protocol}: {:?}", a.failure);
            let wait = a.phases.wait.expect("wait").duration().as_ms();
            assert!(
                wait >= 20.0,
                "{protocol} wait {wait} ms includes the 20 ms delay"
            );
        }
        assert_eq!(
            events.iter().filter(|e| e.event == "attempt").count(),
            2,
            "one attempt event per attempt"
        );

        // The stored record is the streamed one; ETag gives 304.
        let path = format!("/api/v1/probes/{}", created.id);
        let answer = call(&state, get(&path), CLIENT).await;
        assert_eq!(answer.status, StatusCode::OK);
        let stored: ProbeRecord = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(stored, record);
        let etag = answer.header("etag").expect("etag").to_owned();
        // Finished, but its owner's browser measurement may still come: revalidated by ETag.
        assert_eq!(answer.header("cache-control"), Some("no-cache"));
        let curl = call(&state, get(&format!("{path}/curl")), CLIENT).await;
        assert_eq!(
            curl.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "curl's figures hold the server's result only"
        );
        let mut conditional = get(&path);
        conditional
            .headers_mut()
            .insert("if-none-match", etag.parse().unwrap());
        let answer = call(&state, conditional, CLIENT).await;
        assert_eq!(answer.status, StatusCode::NOT_MODIFIED);
        assert!(answer.body.is_empty());
        assert_eq!(answer.header("etag"), Some(etag.as_str()));

        // Exports.
        let har = call(&state, get(&format!("{path}/har")), CLIENT).await;
        assert_eq!(har.status, StatusCode::OK);
        assert_eq!(har.json()["log"]["entries"].as_array().unwrap().len(), 2);
        let curl = call(&state, get(&format!("{path}/curl")), CLIENT).await;
        assert!(
            curl.header("content-type")
                .unwrap()
                .starts_with("text/plain")
        );
        let text = curl.text();
        let timers = text
            .lines()
            .filter(|l| l.starts_with("time_total: "))
            .count();
        assert_eq!(timers, 2, "{text}");
        assert!(text.contains("curl -s"), "{text}");
        let svg = call(&state, get(&format!("{path}/waterfall.svg")), CLIENT).await;
        assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
        let picture = svg.text();
        assert!(picture.starts_with("<svg"));
        assert!(picture.contains("wait "), "phase labels are drawn");
        assert!(picture.contains(">total<"));
    }
    // The list has all three, newest first, and pages.
    let list = call(&state, as_owner(get("/api/v1/probes?limit=1")), CLIENT)
        .await
        .json();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    let next = list["next_before"].as_str().expect("a next page");
    let page2 = call(
        &state,
        as_owner(get(&format!("/api/v1/probes?limit=5&before={next}"))),
        CLIENT,
    )
    .await
    .json();
    assert_eq!(page2["items"].as_array().unwrap().len(), 2);
    assert!(page2.get("next_before").is_none());
}

#[tokio::test]
async fn late_subscribers_get_the_history_then_the_rest() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let body = probe_body(&target.https_url("/delay/150"), &["h1", "h2"], 2);
    let created = create(&state, &body).await;
    let early = {
        let state = state.clone();
        let id = created.id.clone();
        tokio::spawn(async move { events(&state, &id).await })
    };
    // Join once the first attempt is over and the second is on its way.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let partial = call(
        &state,
        get(&format!("/api/v1/probes/{}", created.id)),
        CLIENT,
    )
    .await
    .json();
    assert_eq!(partial["status"], "running");
    assert_eq!(
        call(
            &state,
            get(&format!("/api/v1/probes/{}", created.id)),
            CLIENT
        )
        .await
        .header("cache-control"),
        Some("no-cache")
    );
    let late = events(&state, &created.id).await;
    let early = early.await.unwrap();
    assert_eq!(
        late, early,
        "a late subscriber sees exactly what an early one saw"
    );
    assert_ordered(&late);
    let record = done_record(&late);
    let protocols: Vec<Protocol> = record.result.runs.iter().map(|r| r.protocol).collect();
    assert_eq!(protocols, [Protocol::H1, Protocol::H2]);
    // After the end, the stream is replayed from the record: attempts, then done.
    let replay = events(&state, &created.id).await;
    assert_eq!(replay.iter().filter(|e| e.event == "attempt").count(), 4);
    assert_eq!(done_record(&replay), record);
}

#[tokio::test]
async fn bad_requests_get_json_errors_with_stable_codes() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let cases: Vec<(axum::http::Request<axum::body::Body>, StatusCode, &str)> = vec![
        (
            post_json("/api/v1/probes", "{\"url\":"),
            StatusCode::BAD_REQUEST,
            "invalid_json",
        ),
        (
            post_json("/api/v1/probes", "[1,2]"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            post_json(
                "/api/v1/probes",
                r#"{"url":"https://example.com/","colour":"red"}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            post_json(
                "/api/v1/probes",
                r#"{"url":"https://example.com/","repeat":"3"}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
        ),
        (
            post_json("/api/v1/probes", r#"{"url":"not a url"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_url",
        ),
        (
            post_json("/api/v1/probes", "{}"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_url",
        ),
        (
            post_json("/api/v1/probes", r#"{"url":"ftp://example.com/"}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported_scheme",
        ),
        (
            post_json(
                "/api/v1/probes",
                r#"{"url":"https://example.com/","repeat":1000}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "out_of_range",
        ),
        (
            // More requests at once than a server sends to one target.
            post_json(
                "/api/v1/probes",
                r#"{"url":"https://example.com/","streams":17}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "out_of_range",
        ),
        (
            post_json(
                "/api/v1/probes",
                r#"{"url":"https://example.com/","headers":[{"name":"Content-Length","value":"5"}]}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "forbidden_header",
        ),
        (
            axum::http::Request::post("/api/v1/probes")
                .header("content-type", "text/plain")
                .body(axum::body::Body::from("{}"))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            post_json(
                "/api/v1/probes",
                // Over the options' 64 KiB plus a request body at the 1 MiB cap in base64.
                &format!(
                    "{{\"url\":\"{}\"}}",
                    "a".repeat(h123::api::probe_body_limit(1024 * 1024) + 1)
                ),
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            get("/api/v1/probes/AAAAAAAAAAAA"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            get("/api/v1/probes/nope/har"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            get("/api/v1/probes/AAAAAAAAAAAA/events"),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (get("/api/v1/nothing"), StatusCode::NOT_FOUND, "not_found"),
        (get("/api/v2/probes"), StatusCode::NOT_FOUND, "not_found"),
        (
            axum::http::Request::delete("/api/v1/probes/AAAAAAAAAAAA")
                .body(axum::body::Body::empty())
                .unwrap(),
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
        (
            get("/api/v1/probes?limit=0"),
            StatusCode::BAD_REQUEST,
            "invalid_query",
        ),
        (
            get("/api/v1/probes?limit=abc"),
            StatusCode::BAD_REQUEST,
            "invalid_query",
        ),
        (
            get("/api/v1/probes?before=zzz"),
            StatusCode::BAD_REQUEST,
            "invalid_query",
        ),
    ];
    for (request, status, code) in cases {
        let what = format!("{} {}", request.method(), request.uri());
        let answer = call(&state, request, CLIENT).await;
        assert_eq!(answer.status, status, "{what}: {}", answer.text());
        assert_eq!(
            answer.header("content-type"),
            Some("application/json"),
            "{what}"
        );
        assert_eq!(answer.code(), code, "{what}");
        let message = answer.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.len() > 10,
            "{what}: message `{message}` says what is wrong"
        );
    }
    let unknown = call(
        &state,
        post_json(
            "/api/v1/probes",
            r#"{"url":"https://example.com/","colour":"red"}"#,
        ),
        CLIENT,
    )
    .await;
    assert!(
        unknown.text().contains("unknown field `colour`"),
        "{}",
        unknown.text()
    );
}

#[tokio::test]
async fn rate_and_client_caps_answer_429_with_headers() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.rate = RateConfig {
        burst: 3,
        per_minute: 1,
    };
    config.per_client_probes = 1;
    let state = state(config, &dir);
    let slow = probe_body(&target.https_url("/delay/400"), &["h1"], 1);
    let first = call(&state, post_json("/api/v1/probes", &slow), CLIENT).await;
    assert_eq!(first.status, StatusCode::ACCEPTED);
    assert_eq!(first.header("ratelimit-limit"), Some("3"));
    assert_eq!(first.header("ratelimit-remaining"), Some("2"));
    // One probe in flight is this client's cap.
    let second = call(&state, post_json("/api/v1/probes", &slow), CLIENT).await;
    assert_eq!(second.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(second.code(), "too_many_probes");
    assert!(second.header("retry-after").is_some());
    // Another client is not affected.
    let other: IpAddr = "127.0.0.10".parse().unwrap();
    let third = call(&state, post_json("/api/v1/probes", &slow), other).await;
    assert_eq!(third.status, StatusCode::ACCEPTED, "{}", third.text());
    // Refused requests still take tokens: the third of CLIENT empties its bucket (3) ...
    let fourth = call(&state, post_json("/api/v1/probes", &slow), CLIENT).await;
    assert_eq!(fourth.code(), "too_many_probes");
    assert_eq!(fourth.header("ratelimit-remaining"), None);
    // ... and the next is a rate 429 with every header.
    let fourth = call(&state, post_json("/api/v1/probes", &slow), CLIENT).await;
    assert_eq!(fourth.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(fourth.code(), "rate_limited");
    assert_eq!(fourth.header("ratelimit-remaining"), Some("0"));
    let retry: u64 = fourth.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "retry after {retry} s");
    assert!(fourth.header("ratelimit-reset").is_some());
    let metrics = call(&state, get("/metrics"), CLIENT).await.text();
    assert!(
        metrics.contains("h123_rejections_total{reason=\"rate\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("h123_rejections_total{reason=\"client_probes\"} 2"));
}

#[tokio::test]
async fn shutdown_stores_unfinished_probes_as_cancelled() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let body = probe_body(&target.https_url("/delay/2000"), &["h1"], 1);
    let created = create(&state, &body).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(state.shutdown(Duration::from_millis(100)).await, 1);
    let record: ProbeRecord = serde_json::from_slice(
        &call(
            &state,
            get(&format!("/api/v1/probes/{}", created.id)),
            CLIENT,
        )
        .await
        .body,
    )
    .unwrap();
    assert_eq!(record.status, ProbeStatus::Cancelled);
    let refused = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.code(), "shutting_down");
}

#[tokio::test]
async fn health_metrics_openapi_and_ui_fallback() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let body = probe_body(&target.https_url("/"), &["h2"], 1);
    let created = create(&state, &body).await;
    let _ = events(&state, &created.id).await;
    let health = call(&state, get("/healthz"), CLIENT).await;
    assert_eq!(health.status, StatusCode::OK);
    assert_eq!(health.json()["status"], "ok");
    assert_eq!(health.json()["store"], "sqlite");
    let metrics = call(&state, get("/metrics"), CLIENT).await.text();
    for needle in [
        "h123_protocol_runs_total{protocol=\"h2\",outcome=\"ok\"} 1",
        "h123_phase_duration_seconds_bucket{phase=\"tls\",le=\"+Inf\"} 1",
        "h123_http_requests_total{route=\"/api/v1/probes\",status=\"202\"} 1",
        "h123_http_request_duration_seconds_count{route=\"/api/v1/probes\"} 1",
        "h123_probes_total{status=\"done\"} 1",
    ] {
        assert!(metrics.contains(needle), "missing {needle} in\n{metrics}");
    }
    let doc = call(&state, get("/api/openapi.json"), CLIENT).await.json();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for path in [
        "/api/v1/probes",
        "/api/v1/probes/{id}",
        "/api/v1/probes/{id}/events",
        "/api/v1/probes/{id}/view",
        "/api/v1/probes/{id}/view/events",
        "/api/v1/probes/{id}/har",
        "/api/v1/probes/{id}/curl",
        "/api/v1/probes/{id}/waterfall.svg",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} documented");
    }
    let schemas = &doc["components"]["schemas"];
    for schema in [
        "ProbeOptions",
        "ProbeRecord",
        "ProbeCreated",
        "ApiError",
        "ProbeEvent",
    ] {
        assert!(schemas.get(schema).is_some(), "{schema} described");
    }
    // A list line's outcome and verdict are described, and optional (older servers send neither).
    let line = &schemas["ProbeSummary"];
    for field in ["outcome", "verdict"] {
        assert!(line["properties"].get(field).is_some(), "{field} in {line}");
        let required = line["required"].as_array().unwrap();
        assert!(
            !required.iter().any(|r| r == field),
            "{field} optional: {line}"
        );
    }
    assert_eq!(
        schemas["ListOutcome"]["enum"],
        serde_json::json!(["done", "done_with_errors", "http_error", "failed"])
    );
    let page = call(&state, get(&format!("/r/{}", created.id)), CLIENT).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text().contains("not built"));
}

#[tokio::test]
async fn a_real_socket_serves_probes_and_events() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = h123::api::app(state.clone());
    tokio::spawn(async move {
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    let from: IpAddr = "127.0.0.1".parse().unwrap();
    let body = probe_body(&target.https_url("/bytes/5000"), &["h1", "h2"], 2);
    let answer = http(addr, from, Method::POST, "/api/v1/probes", Some(&body)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let id = answer.json()["id"].as_str().unwrap().to_owned();
    let stream = http(
        addr,
        from,
        Method::GET,
        &format!("/api/v1/probes/{id}/events"),
        None,
    )
    .await;
    let events = parse_sse(&stream.text());
    assert_ordered(&events);
    let record = done_record(&events);
    for run in &record.result.runs {
        assert_eq!(run.attempts.len(), 2);
        for a in &run.attempts {
            assert_eq!(a.response.as_ref().map(|r| r.body_bytes), Some(5000));
        }
    }
    let json: Value = http(
        addr,
        from,
        Method::GET,
        &format!("/api/v1/probes/{id}"),
        None,
    )
    .await
    .json();
    assert_eq!(json["status"], "done");
    // The engine's own check stops a redirect hop to a loopback port that is not allowed.
    let hop = format!(
        "/redirect-to?url=http%3A%2F%2F127.0.0.1%3A{}%2F",
        target.http_addr.port()
    );
    let body = serde_json::json!({
        "url": target.https_url(&hop), "protocols": ["h1"], "repeat": 1, "rounds": 1, "follow_redirects": true
    })
    .to_string();
    let answer = http(addr, from, Method::POST, "/api/v1/probes", Some(&body)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let id = answer.json()["id"].as_str().unwrap().to_owned();
    let stream = http(
        addr,
        from,
        Method::GET,
        &format!("/api/v1/probes/{id}/events"),
        None,
    )
    .await;
    let record = done_record(&parse_sse(&stream.text()));
    let attempts = &record.result.runs[0].attempts;
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    let failure = attempts[1].failure.as_ref().expect("the hop fails");
    assert_eq!(failure.kind, FailureKind::Blocked, "{failure:?}");
}

#[tokio::test]
async fn methods_outside_the_list_and_bodies_over_the_cap_are_refused() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let info = call(&state(config(&target), &dir), get("/api/v1/config"), CLIENT)
        .await
        .json();
    assert_eq!(
        info["allowed_methods"],
        serde_json::json!(["GET", "HEAD", "OPTIONS"])
    );
    assert_eq!(info["max_request_body"], 1024 * 1024);
    assert_eq!(
        info["public_targets_only"], true,
        "the test target is allowed by name only"
    );
    let mut open = config(&target);
    open.guard.policy = h123::probe::guard::ConnectPolicy::allow_all();
    let info = call(&state(open, &dir), get("/api/v1/config"), CLIENT)
        .await
        .json();
    assert_eq!(
        info["public_targets_only"], false,
        "as with --allow-private"
    );
    let url = target.https_url("/upload");
    let refused = call(
        &state(config(&target), &dir),
        post_json(
            "/api/v1/probes",
            &serde_json::json!({"url": url, "method": "POST", "body": {"text": "a=1"}}).to_string(),
        ),
        CLIENT,
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.code(), "method_not_allowed");
    assert!(
        refused.text().contains("GET, HEAD, OPTIONS"),
        "{}",
        refused.text()
    );

    let mut open = config(&target);
    open.limits.allowed_methods.push(h123_shared::Method::Post);
    open.limits.max_request_body = 1000;
    let state = state(open, &dir);
    let post = |body: serde_json::Value| {
        post_json(
            "/api/v1/probes",
            &serde_json::json!({"url": url, "protocols": ["h1"], "repeat": 1, "rounds": 1, "method": "POST", "body": body})
                .to_string(),
        )
    };
    let big = call(
        &state,
        post(serde_json::json!({"text": "x".repeat(1001)})),
        CLIENT,
    )
    .await;
    assert_eq!(big.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", big.text());
    assert_eq!(big.code(), "body_too_large");
    let both = call(
        &state,
        post(serde_json::json!({"text": "a", "base64": "YQ=="})),
        CLIENT,
    )
    .await;
    assert_eq!(both.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(both.code(), "invalid_request_body");
    let fits = call(
        &state,
        post(serde_json::json!({"text": "x".repeat(1000)})),
        CLIENT,
    )
    .await;
    assert_eq!(fits.status, StatusCode::ACCEPTED, "{}", fits.text());
}

#[tokio::test]
async fn vantages_are_listed_checked_and_stamped_on_results() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.vantage = h123_shared::vantage::Vantage {
        name: "fra1".into(),
        label: Some("Frankfurt, DE".into()),
        tags: vec!["eu".into()],
    };
    let state = state(config, &dir);

    let listed = call(&state, get("/api/v1/vantages"), CLIENT).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(
        listed.json(),
        serde_json::json!({"items": [{"name": "fra1", "label": "Frankfurt, DE", "tags": ["eu"],
            "kind": "server", "version": env!("CARGO_PKG_VERSION"), "online": true}]})
    );

    // Named (twice: one run), or not named at all: the server's own vantage measures it.
    let url = target.https_url("/delay/1");
    for vantages in [serde_json::json!(["fra1", "fra1"]), serde_json::json!([])] {
        let body = serde_json::json!({"url": url, "protocols": ["h2"], "repeat": 1, "rounds": 1, "vantages": vantages});
        let created = create(&state, &body.to_string()).await;
        let record = done_record(&events(&state, &created.id).await);
        assert_eq!(record.status, ProbeStatus::Done);
        let vantage = record
            .result
            .vantage
            .expect("the result says where it was measured");
        assert_eq!(
            (vantage.name.as_str(), vantage.label.as_deref()),
            ("fra1", Some("Frankfurt, DE"))
        );
        assert!(
            record.options.vantages.len() <= 1,
            "{:?}",
            record.options.vantages
        );
    }

    // Unknown or malformed names: 422 naming the problem, nothing created.
    for (vantages, says) in [
        (
            serde_json::json!(["sfo1"]),
            "no vantage `sfo1`; it has: fra1",
        ),
        (serde_json::json!(["a b"]), "`a b` is not a vantage name"),
        (
            serde_json::json!(["fra1", "x".repeat(33)]),
            "is not a vantage name",
        ),
    ] {
        let body = serde_json::json!({"url": url, "vantages": vantages});
        let answer = call(
            &state,
            post_json("/api/v1/probes", &body.to_string()),
            CLIENT,
        )
        .await;
        assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(answer.code(), "unknown_vantage");
        assert!(
            answer.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains(says),
            "{}",
            answer.text()
        );
    }

    // A record stored before vantages existed still reads: no vantage, no list.
    let old: ProbeRecord = serde_json::from_value(serde_json::json!({
        "id": "old-record-01", "status": "done", "created_at_unix_ms": 1,
        "options": {"url": "https://example.com/"},
        "result": {"schema_version": 3, "started_at_unix_ms": 1, "options": {"url": "https://example.com/"}, "runs": []}
    }))
    .expect("an old record");
    assert!(old.result.vantage.is_none() && old.options.vantages.is_empty());
}
