//! Monitors end to end: the API (owner tokens, bounds, clear refusals), the scheduler running
//! slots on time against the test target over h1, h2 and h3, thresholds judged on every run,
//! slots missed while the server was down recorded as missed, the series read back, each
//! monitor's histograms on `/metrics` until it is deleted, and two instances on one PostgreSQL
//! database running each slot exactly once (and one taking over when the other is killed).

use crate::support::*;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use h123::server::ServerConfig;
use h123_shared::api::ProbeRecord;
use h123_shared::monitor::{MonitorPoint, PointState, Series, lateness};
use h123_target::postgres::PgCluster;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::time::Duration;

/// Monitors every second allowed, many an owner.
fn monitor_config(target: &h123_target::TestTarget) -> ServerConfig {
    ServerConfig {
        monitors: h123::server::MonitorLimits {
            max_total: 100,
            per_owner: 3,
            per_client: 100,
            min_every_ms: 1000,
            bytes_per_minute: 1 << 40,
            // Many monitors of the one target every second (`monitor_budgets` tests the cap).
            runs_per_host_minute: 1_000_000,
            ..h123::server::MonitorLimits::default()
        },
        ..config(target)
    }
}

fn with_owner(method: Method, path: &str, token: &str, body: Option<&Value>) -> Request<Body> {
    let builder = Request::builder()
        .method(method)
        .uri(path)
        .header("x-h123-owner", token);
    match body {
        Some(json) => builder
            .header("content-type", "application/json")
            .body(Body::from(json.to_string())),
        None => builder.body(Body::empty()),
    }
    .expect("request")
}

/// A monitor of the target's `path` every second over every protocol.
fn every_second(target: &h123_target::TestTarget, path: &str) -> Value {
    json!({
        "url": target.https_url(path),
        "every": "1s",
        "options": {"repeat": 2, "rounds": 1, "timeout_ms": 5000, "phase_timeout_ms": 3000},
        "visibility": "public",
    })
}

async fn create(state: &h123::server::AppState, body: &Value) -> (String, String) {
    let created = call(
        state,
        post_json("/api/v1/monitors", &body.to_string()),
        CLIENT,
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let json = created.json();
    (
        json["monitor"]["id"].as_str().unwrap().to_owned(),
        json["owner_token"].as_str().unwrap().to_owned(),
    )
}

/// A server in `dir` with its scheduler running and a monitor of the target's `/` every second
/// over HTTP/2: the server, the monitor's id and its owner token.
async fn scheduled_h2_monitor(
    target: &h123_target::TestTarget,
    dir: &tempfile::TempDir,
) -> (h123::server::AppState, String, String) {
    let server = state(monitor_config(target), dir);
    h123::server::schedule::spawn(server.clone());
    let mut body = every_second(target, "/");
    body["protocols"] = json!(["h2"]);
    let (id, token) = create(&server, &body).await;
    (server, id, token)
}

/// Waits until monitor `id` has points of `slots` distinct runs (or 30 s pass) and returns them.
async fn points_of_runs(
    state: &h123::server::AppState,
    id: &str,
    slots: usize,
) -> Vec<MonitorPoint> {
    for _ in 0..300 {
        let points = state
            .store
            .points(id.to_owned(), 0, u64::MAX / 2, None)
            .await
            .unwrap();
        let runs: std::collections::BTreeSet<u64> = points
            .iter()
            .filter(|p| p.protocol.is_some())
            .map(|p| p.slot_unix_ms)
            .collect();
        if runs.len() >= slots {
            return points;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("monitor {id} did not run {slots} times in 30 s");
}

#[tokio::test]
async fn a_monitor_is_made_read_listed_paused_resumed_and_deleted_by_its_owner_only() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(monitor_config(&target), &dir);
    let mut body = every_second(&target, "/");
    body["options"]["headers"] = json!([{"name": "Authorization", "value": "Bearer s3cret"}]);
    body["visibility"] = "unlisted".into();
    let (id, token) = create(&state, &body).await;

    let read = call(&state, get(&format!("/api/v1/monitors/{id}")), CLIENT).await;
    assert_eq!(read.status, StatusCode::OK);
    let monitor = read.json();
    assert_eq!(monitor["spec"]["every_ms"], 1000);
    assert_eq!(
        monitor["spec"]["options"]["protocols"],
        json!(["h1", "h2", "h3"])
    );
    assert!(!read.text().contains("s3cret"), "{}", read.text());
    assert_eq!(monitor["paused"], false);

    // Unlisted: only its owner's list shows it.
    let strangers = call(&state, get("/api/v1/monitors"), CLIENT).await;
    assert_eq!(strangers.json()["items"], json!([]));
    let own = call(
        &state,
        with_owner(Method::GET, "/api/v1/monitors", &token, None),
        CLIENT,
    )
    .await;
    assert_eq!(own.json()["items"][0]["id"], id.as_str());

    let stranger = "A".repeat(43);
    for action in ["pause", "resume"] {
        let path = format!("/api/v1/monitors/{id}/{action}");
        let refused = call(
            &state,
            with_owner(Method::POST, &path, &stranger, None),
            CLIENT,
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text());
        assert_eq!(refused.code(), "not_owner");
    }
    let path = format!("/api/v1/monitors/{id}/pause");
    let paused = call(
        &state,
        with_owner(Method::POST, &path, &token, None),
        CLIENT,
    )
    .await;
    assert_eq!(paused.status, StatusCode::OK, "{}", paused.text());
    assert_eq!(paused.json()["paused"], true);
    let path = format!("/api/v1/monitors/{id}/resume");
    let resumed = call(
        &state,
        with_owner(Method::POST, &path, &token, None),
        CLIENT,
    )
    .await;
    assert_eq!(resumed.json()["paused"], false);
    assert!(
        resumed.json()["next_slot_unix_ms"].as_u64().unwrap()
            >= monitor["created_at_unix_ms"].as_u64().unwrap()
    );

    let path = format!("/api/v1/monitors/{id}");
    let refused = call(
        &state,
        with_owner(Method::DELETE, &path, &stranger, None),
        CLIENT,
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let deleted = call(
        &state,
        with_owner(Method::DELETE, &path, &token, None),
        CLIENT,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let gone = call(&state, get(&path), CLIENT).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(gone.code(), "not_found");
}

#[tokio::test]
async fn a_bad_monitor_request_names_what_is_wrong_and_an_owner_holds_a_bounded_number() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(monitor_config(&target), &dir);
    let good = every_second(&target, "/");
    let cases = [
        (json!({"every": "10"}), "invalid_interval"),
        (json!({"every": "500ms"}), "invalid_interval"),
        (json!({"every": "2d"}), "invalid_interval"),
        (
            json!({"thresholds": {"total": "fast"}}),
            "invalid_threshold",
        ),
        (
            json!({"thresholds": {"speed": "10ms"}}),
            "invalid_threshold",
        ),
        (
            json!({"options": {"url": "https://elsewhere.example/"}}),
            "invalid_body",
        ),
        (json!({"colour": "blue"}), "invalid_body"),
        (json!({"url": "ftp://example.com/"}), "unsupported_scheme"),
        (json!({"vantages": ["nowhere"]}), "unknown_vantage"),
    ];
    for (change, code) in cases {
        let mut body = good.clone();
        for (key, value) in change.as_object().unwrap() {
            body[key] = value.clone();
        }
        let refused = call(
            &state,
            post_json("/api/v1/monitors", &body.to_string()),
            CLIENT,
        )
        .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{change}: {}",
            refused.text()
        );
        assert_eq!(refused.code(), code, "{change}: {}", refused.text());
        assert!(
            !refused.json()["error"]["message"]
                .as_str()
                .unwrap()
                .is_empty()
        );
    }
    // A target the safety policy refuses is refused at creation too.
    let mut private = good.clone();
    private["url"] = "https://rebind.h123.test/".into();
    let refused = call(
        &state,
        post_json("/api/v1/monitors", &private.to_string()),
        CLIENT,
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text());
    assert_eq!(refused.code(), "blocked_target");
    // So is a webhook's, in the probes' words: never the address a name resolves to.
    for (hook, said) in [
        (
            "https://meta.h123.test/hook",
            "blocked target: alerts: meta.h123.test resolves to a non-public address, which this server does not notify",
        ),
        (
            "http://localhost:9/hook",
            "blocked target: alerts: localhost always names this machine (a loopback address)",
        ),
    ] {
        let mut hooked = good.clone();
        hooked["alerts"] = json!([{ "webhook": hook }]);
        let refused = call(
            &state,
            post_json("/api/v1/monitors", &hooked.to_string()),
            CLIENT,
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text());
        assert_eq!(refused.json()["error"]["message"], said);
    }

    let (_, token) = create(&state, &good).await;
    for _ in 0..2 {
        let made = call(
            &state,
            with_owner(Method::POST, "/api/v1/monitors", &token, Some(&good)),
            CLIENT,
        )
        .await;
        assert_eq!(made.status, StatusCode::CREATED);
    }
    let fourth = call(
        &state,
        with_owner(Method::POST, "/api/v1/monitors", &token, Some(&good)),
        CLIENT,
    )
    .await;
    assert_eq!(
        fourth.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        fourth.text()
    );
    assert_eq!(fourth.code(), "too_many_monitors");
    // Nothing was stored for the refusals.
    assert_eq!(
        state
            .store
            .count_monitors(h123::store::monitor_rows::MonitorsOf::All)
            .await
            .unwrap(),
        3
    );

    let series = call(&state, get("/api/v1/monitors/nosuchmonit/series"), CLIENT).await;
    assert_eq!(series.status, StatusCode::NOT_FOUND);
    let listed = call(&state, get("/api/v1/monitors?limit=1"), CLIENT).await;
    let id = listed.json()["items"][0]["id"].as_str().unwrap().to_owned();
    for query in ["metric=speed", "protocol=h4", "from=10&to=5", "from=x"] {
        let bad = call(
            &state,
            get(&format!("/api/v1/monitors/{id}/series?{query}")),
            CLIENT,
        )
        .await;
        assert_eq!(
            bad.status,
            StatusCode::BAD_REQUEST,
            "{query}: {}",
            bad.text()
        );
        assert_eq!(bad.code(), "invalid_query");
    }
}

#[tokio::test]
async fn monitors_run_on_schedule_over_every_protocol_and_their_series_links_each_run() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(monitor_config(&target), &dir);
    h123::server::schedule::spawn(state.clone());
    let mut body = every_second(&target, "/delay/20");
    body["thresholds"] = json!({"total.max": "5ms"});
    let (id, _) = create(&state, &body).await;
    let points = points_of_runs(&state, &id, 8).await;

    let mut late = lateness(&points);
    late.sort_unstable();
    let p = |q: f64| late[((q * late.len() as f64).ceil() as usize).clamp(1, late.len()) - 1];
    println!(
        "lateness over {} runs: median {} ms, p99 {} ms, max {} ms",
        late.len(),
        p(0.5),
        p(0.99),
        late.last().unwrap()
    );
    // The tick is 200 ms: a run starts within it, unless the machine is very busy.
    assert!(p(0.5) <= 1000, "median lateness {} ms", p(0.5));
    assert!(
        points.iter().all(|p| p.state != PointState::Missed),
        "nothing is missed while the server runs: {points:?}"
    );

    let runs: Vec<&MonitorPoint> = points.iter().filter(|p| p.protocol.is_some()).collect();
    for point in &runs {
        assert_eq!(point.state, PointState::Ok, "{point:?}");
        // A 20 ms wait breaches a 5 ms threshold on every run.
        assert_eq!(
            point.breached,
            vec!["total.max <= 5.00 ms".to_owned()],
            "{point:?}"
        );
        assert!(point.figures.ttfb.unwrap().as_ms() >= 20.0, "{point:?}");
    }
    // Slots a second apart, each a normal probe record linked to its monitor and slot.
    let slots: std::collections::BTreeSet<u64> = runs.iter().map(|p| p.slot_unix_ms).collect();
    let slots: Vec<u64> = slots.into_iter().collect();
    assert!(slots.windows(2).all(|w| w[1] - w[0] == 1000), "{slots:?}");
    let first = runs[0];
    let record = call(
        &state,
        get(&format!(
            "/api/v1/probes/{}",
            first.probe_id.as_ref().unwrap()
        )),
        CLIENT,
    )
    .await;
    let record: ProbeRecord = serde_json::from_value(record.json()).unwrap();
    let link = record.monitor.expect("the record names its monitor");
    assert_eq!(
        (link.id.as_str(), link.slot_unix_ms),
        (id.as_str(), first.slot_unix_ms)
    );

    let to = slots.last().unwrap() + 1;
    let from = slots[0];
    let answer = call(
        &state,
        get(&format!(
            "/api/v1/monitors/{id}/series?metric=ttfb&from={from}&to={to}"
        )),
        CLIENT,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let series: Series = serde_json::from_value(answer.json()).unwrap();
    assert_eq!(series.bucket_ms, 1000);
    assert_eq!(series.lines.len(), 3, "a line per protocol");
    for line in &series.lines {
        assert_eq!(line.buckets.len(), slots.len(), "{line:?}");
        for bucket in &line.buckets {
            assert_eq!((bucket.runs, bucket.failures, bucket.breaches), (1, 0, 1));
            assert!(bucket.probe_id.is_some() && bucket.median.is_some());
        }
    }
    let verdict = series.verdict.expect("three protocols answered every run");
    println!("window verdict: {}", verdict.sentence);
    assert_eq!(verdict.runs as usize, slots.len());

    let one = call(
        &state,
        get(&format!(
            "/api/v1/monitors/{id}/series?protocol=h3&from={from}&to={to}"
        )),
        CLIENT,
    )
    .await;
    let one: Series = serde_json::from_value(one.json()).unwrap();
    assert_eq!(one.lines.len(), 1);
    assert_eq!(one.lines[0].protocol, h123_shared::Protocol::H3);

    // The badge: the last run's total, amber since it is over the threshold; cacheable.
    let badge = call(&state, get(&format!("/badge/{id}/h3.svg")), CLIENT).await;
    assert_eq!(badge.status, StatusCode::OK, "{}", badge.text());
    assert_eq!(badge.header("content-type"), Some("image/svg+xml"));
    assert_eq!(badge.header("cache-control"), Some("public, max-age=60"));
    let svg = badge.text();
    assert!(
        svg.contains(">h3</text>") && svg.contains(" ms over</text>"),
        "{svg}"
    );
    let none = call(&state, get(&format!("/badge/{id}/h4.svg")), CLIENT).await;
    assert_eq!(none.status, StatusCode::NOT_FOUND);
    state.shutdown(Duration::from_secs(10)).await;
}

#[tokio::test]
async fn a_monitor_page_draws_status_charts_and_badges_and_a_status_page_is_public_only() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(monitor_config(&target), &dir);
    h123::server::schedule::spawn(state.clone());
    let mut body = every_second(&target, "/delay/20");
    body["protocols"] = json!(["h2", "h3"]);
    // Every run breaches a 5 ms median (the target waits 20 ms): the total chart marks it.
    body["thresholds"] = json!({"total": "5ms"});
    let (id, _) = create(&state, &body).await;
    body["visibility"] = "unlisted".into();
    let (unlisted, _) = create(&state, &body).await;
    points_of_runs(&state, &id, 3).await;

    let page = call(&state, get(&format!("/m/{id}?range=1h")), CLIENT).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text());
    assert_eq!(page.headers["content-type"], "text/html; charset=utf-8");
    let html = page.text();
    assert_eq!(
        html.matches(r#"class="monitor-metric""#).count(),
        6,
        "a chart per metric"
    );
    assert!(html.contains(r#"class="monitor-chart""#), "{html}");
    // A point links its bucket's slowest run: a record of this monitor.
    let linked: Vec<&str> = html
        .split(r#"<a href="/r/"#)
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect();
    assert!(linked.len() >= 2, "a point per protocol at least: {html}");
    let record = call(
        &state,
        get(&format!("/api/v1/probes/{}", linked[0])),
        CLIENT,
    )
    .await;
    assert_eq!(record.status, StatusCode::OK);
    assert_eq!(record.json()["monitor"]["id"], id.as_str());
    assert!(
        html.contains("chart-breach h3") && html.contains("chart-threshold"),
        "{html}"
    );
    assert!(html.contains(r#"href="/m/"#) && html.contains(r#"?range=1h" aria-current="page""#));
    assert!(
        html.contains(r#"<tr data-protocol="h2">"#) && html.contains(r#"<tr data-protocol="h3">"#)
    );
    assert!(
        html.contains(&format!(r#"src="/badge/{id}/h3.svg""#)),
        "{html}"
    );
    assert!(html.contains("no webhook or Alertmanager"), "{html}");
    assert!(html.contains("<title>h123 monitor: https://"), "{html}");

    let status = call(
        &state,
        get(&format!("/api/v1/monitors/{id}/status")),
        CLIENT,
    )
    .await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.text());
    let rows = status.json()["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in &rows {
        let day = &row["windows"][0];
        assert_eq!(day["window"], "24h");
        assert!(day["runs"].as_u64().unwrap() >= 3, "{row}");
        assert_eq!(
            day["up"], day["runs"],
            "the target answers every run: {row}"
        );
        assert_eq!(row["last"]["state"], "ok", "{row}");
    }

    let public = call(&state, get(&format!("/m/{id}/status")), CLIENT).await;
    assert_eq!(public.status, StatusCode::OK, "{}", public.text());
    assert!(public.text().contains("Uptime 7d") && public.text().contains("100.00%"));
    let hidden = call(&state, get(&format!("/m/{unlisted}/status")), CLIENT).await;
    assert_eq!(hidden.status, StatusCode::NOT_FOUND);
    assert!(
        hidden
            .text()
            .contains("only public monitors have a status page")
    );
    let own_page = call(&state, get(&format!("/m/{unlisted}")), CLIENT).await;
    assert_eq!(
        own_page.status,
        StatusCode::OK,
        "its link is its page, as a permalink"
    );

    let bad = call(&state, get(&format!("/m/{id}?range=2y")), CLIENT).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.text().contains("1h, 6h, 24h, 7d, 30d"),
        "{}",
        bad.text()
    );
    for unknown in ["/m/nosuchmonitor", "/m/%2e%2e", "/m/nosuchmonitor/status"] {
        let answer = call(&state, get(unknown), CLIENT).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{unknown}");
        assert!(
            answer.text().contains("No monitor"),
            "{unknown}: {}",
            answer.text()
        );
    }
}

#[tokio::test]
async fn slots_that_pass_while_the_server_is_down_are_recorded_as_missed() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let (first, id, _) = scheduled_h2_monitor(&target, &dir).await;
    points_of_runs(&first, &id, 2).await;
    first.shutdown(Duration::from_secs(10)).await;
    drop(first);
    tokio::time::sleep(Duration::from_millis(3500)).await;

    // The same database, a new server.
    let second = state(monitor_config(&target), &dir);
    h123::server::schedule::spawn(second.clone());
    let points = points_of_runs(&second, &id, 4).await;
    second.shutdown(Duration::from_secs(10)).await;
    let missed: Vec<&MonitorPoint> = points
        .iter()
        .filter(|p| p.state == PointState::Missed)
        .collect();
    // One stretch of 2 to 4 slots, each saying why. The last slot late from the stop may be a
    // point of its own, next to the rest: its turn in the restart's spread came after its next slot.
    assert!(
        (1..=2).contains(&missed.len()),
        "one missed stretch: {points:?}"
    );
    let slots: u64 = missed.iter().map(|p| p.missed).sum();
    assert!((2..=4).contains(&slots), "{missed:?}");
    assert!(
        missed
            .windows(2)
            .all(|w| w[0].slot_unix_ms + w[0].missed * 1000 == w[1].slot_unix_ms),
        "{missed:?}"
    );
    assert!(
        missed
            .iter()
            .all(|p| p.detail.as_deref() == Some("the server was not running at its time")),
        "{missed:?}"
    );
    // Every slot from the first to the last is a run or a missed one: none skipped silently.
    let mut covered: Vec<u64> = points
        .iter()
        .flat_map(|p| (0..p.missed.max(1)).map(move |n| p.slot_unix_ms + n * 1000))
        .collect();
    covered.sort_unstable();
    covered.dedup();
    assert!(
        covered.windows(2).all(|w| w[1] - w[0] == 1000),
        "{covered:?}"
    );
}

/// The value of the `/metrics` line that starts with `series` (labels included), if any.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test]
async fn a_monitors_phases_are_histograms_on_metrics_until_it_is_deleted() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let (state, id, token) = scheduled_h2_monitor(&target, &dir).await;

    let bucket = format!(
        "h123_monitor_phase_seconds_bucket{{monitor=\"{id}\",protocol=\"h2\",phase=\"total\",le=\"+Inf\"}}"
    );
    let mut metrics = String::new();
    for _ in 0..300 {
        metrics = call(&state, get("/metrics"), CLIENT).await.text();
        if sample(&metrics, &bucket).is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(sample(&metrics, &bucket) >= Some(1.0), "{metrics}");
    let ten_seconds = bucket.replace("+Inf", "10");
    assert!(sample(&metrics, &ten_seconds) >= Some(1.0), "{metrics}");
    let ok = format!("h123_monitor_runs_total{{monitor=\"{id}\",protocol=\"h2\",state=\"ok\"}}");
    assert!(sample(&metrics, &ok) >= Some(1.0), "{metrics}");
    assert!(metrics.contains("h123_monitors_tracked 1\n"), "{metrics}");

    let path = format!("/api/v1/monitors/{id}");
    let deleted = call(
        &state,
        with_owner(Method::DELETE, &path, &token, None),
        CLIENT,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    // A run under way when it was deleted does not bring its series back.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let metrics = call(&state, get("/metrics"), CLIENT).await.text();
    assert!(!metrics.contains(&format!("monitor=\"{id}\"")), "{metrics}");
    assert!(metrics.contains("h123_monitors_tracked 0\n"), "{metrics}");
}

/// With `--metrics-token`, `/metrics` answers only its bearer: 401 without it or with another.
#[tokio::test]
async fn metrics_under_a_token_answer_only_its_bearer() {
    use sha2::Digest as _;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        metrics_token: Some(sha2::Sha256::digest(b"operator-s3cret").into()),
        ..monitor_config(&target)
    };
    let state = state(config, &dir);
    let stranger = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 78));
    for offered in [None, Some("Bearer guess"), Some("operator-s3cret")] {
        let mut request = get("/metrics");
        if let Some(value) = offered {
            request
                .headers_mut()
                .insert("authorization", value.parse().unwrap());
        }
        let answer = call(&state, request, stranger).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{offered:?}");
        assert_eq!(answer.code(), "unauthorized");
    }
    let mut request = get("/metrics");
    request
        .headers_mut()
        .insert("authorization", "Bearer operator-s3cret".parse().unwrap());
    let answer = call(&state, request, stranger).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.text().contains("h123_monitors_tracked"));
}

/// Nothing a stranger can get without an id names an unlisted monitor: not the lists, not a
/// public monitor's record, page, status page, status, series, deliveries, badge or runs, not
/// `/metrics` (plain or gzipped), where its runs count under `_other`.
#[tokio::test]
async fn no_answer_a_stranger_can_get_names_an_unlisted_monitor() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(monitor_config(&target), &dir);
    h123::server::schedule::spawn(state.clone());
    let mut open = every_second(&target, "/");
    open["protocols"] = json!(["h2"]);
    let mut hidden = open.clone();
    hidden["visibility"] = "unlisted".into();
    let (public_id, _) = create(&state, &open).await;
    let (unlisted_id, _) = create(&state, &hidden).await;
    let points = points_of_runs(&state, &public_id, 2).await;
    points_of_runs(&state, &unlisted_id, 2).await;
    let run = points.iter().find_map(|p| p.probe_id.clone()).unwrap();
    let stranger = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 77));
    let paths = [
        "/".to_owned(),
        "/api/v1/monitors".to_owned(),
        "/api/v1/monitors?limit=100".to_owned(),
        "/api/v1/probes".to_owned(),
        "/api/v1/benches".to_owned(),
        "/api/v1/config".to_owned(),
        "/api/v1/vantages".to_owned(),
        "/api/openapi.json".to_owned(),
        "/healthz".to_owned(),
        "/metrics".to_owned(),
        format!("/api/v1/monitors/{public_id}"),
        format!("/api/v1/monitors/{public_id}/status"),
        format!("/api/v1/monitors/{public_id}/series"),
        format!("/api/v1/monitors/{public_id}/deliveries"),
        format!("/badge/{public_id}/h2.svg"),
        format!("/m/{public_id}"),
        format!("/m/{public_id}?range=30d"),
        format!("/m/{public_id}/status"),
        format!("/r/{run}"),
        format!("/api/v1/probes/{run}"),
    ];
    let mut naming_the_public_one = 0;
    for path in &paths {
        for gzip in [false, true] {
            let mut request = get(path);
            if gzip {
                request
                    .headers_mut()
                    .insert("accept-encoding", "gzip".parse().unwrap());
            }
            let answer = call(&state, request, stranger).await;
            let mut body = Vec::new();
            match answer.header("content-encoding") {
                Some("gzip") => {
                    use std::io::Read as _;
                    flate2::read::GzDecoder::new(&answer.body[..])
                        .read_to_end(&mut body)
                        .unwrap();
                }
                _ => body = answer.body.to_vec(),
            }
            let text = String::from_utf8_lossy(&body);
            assert!(
                !text.contains(&unlisted_id),
                "{path} (gzip: {gzip}) names the unlisted monitor: {text}"
            );
            naming_the_public_one += usize::from(text.contains(&public_id));
        }
    }
    // Not vacuous: the public monitor is named (on /metrics too), the unlisted one ran.
    assert!(naming_the_public_one >= 10, "{naming_the_public_one}");
    let metrics = call(&state, get("/metrics"), stranger).await.text();
    assert!(
        metrics.contains(&format!("monitor=\"{public_id}\"")),
        "{metrics}"
    );
    assert!(
        sample(&metrics, "h123_monitor_untracked_runs_total") >= Some(2.0),
        "{metrics}"
    );
    let gzipped = call(
        &state,
        Request::builder()
            .uri("/metrics")
            .header("accept-encoding", "br, gzip")
            .body(Body::empty())
            .unwrap(),
        stranger,
    )
    .await;
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    assert!(
        gzipped.body.len() * 3 < metrics.len(),
        "{} bytes",
        gzipped.body.len()
    );
}

/// The probe records in a PostgreSQL database that are monitor runs: (monitor, slot) each.
async fn monitor_runs(url: &str) -> Vec<(String, u64)> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let rows = client
        .query("SELECT record FROM probes", &[])
        .await
        .unwrap();
    rows.iter()
        .filter_map(|row| {
            let record: ProbeRecord = serde_json::from_str(row.get::<_, &str>(0)).ok()?;
            record.monitor.map(|m| (m.id, m.slot_unix_ms))
        })
        .collect()
}

#[tokio::test]
async fn two_instances_on_postgres_run_each_slot_once_and_one_takes_over_when_the_other_dies() {
    let Some(cluster) = PgCluster::shared() else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let url = cluster.create_database().unwrap();
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let extra = [
        "--monitor-min-interval",
        "1s",
        "--max-monitors-per-owner",
        "100",
        "--instance-lease-ms",
        "3000",
        "--max-monitor-runs-per-host-minute",
        "100000",
    ];
    let (a, b) = tokio::join!(
        ServerProcess::start_with_db(&target, url.as_ref(), dir.path(), &extra),
        ServerProcess::start_with_db(&target, url.as_ref(), dir.path(), &extra)
    );
    const MONITORS: usize = 10;
    let from: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    let mut ids = Vec::new();
    for _ in 0..MONITORS {
        let body = json!({
            "url": target.https_url("/"),
            "protocols": ["h2"],
            "every": "1s",
            "options": {"repeat": 1, "rounds": 1, "timeout_ms": 5000},
        });
        let made = http(
            a.addr,
            from,
            Method::POST,
            "/api/v1/monitors",
            Some(&body.to_string()),
        )
        .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
        ids.push(made.json()["monitor"]["id"].as_str().unwrap().to_owned());
    }
    // 10 monitors a second for 20 s: 200 slots between two schedulers.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let runs = monitor_runs(&url).await;
    let distinct: std::collections::BTreeSet<&(String, u64)> = runs.iter().collect();
    println!(
        "{} runs, {} distinct slots, on two instances",
        runs.len(),
        distinct.len()
    );
    assert!(runs.len() >= 180, "about 200 slots ran: {}", runs.len());
    assert_eq!(runs.len(), distinct.len(), "a slot ran twice");

    // Kill one instance: the other takes its monitors on.
    let mut a = a;
    a.child.start_kill().unwrap();
    a.child.wait().await.unwrap();
    let killed_at = h123::probe::trace::unix_ms();
    tokio::time::sleep(Duration::from_secs(8)).await;
    let runs = monitor_runs(&url).await;
    let distinct: std::collections::BTreeSet<&(String, u64)> = runs.iter().collect();
    assert_eq!(runs.len(), distinct.len(), "a slot ran twice");
    for id in &ids {
        let mut slots: Vec<u64> = runs
            .iter()
            .filter(|(m, _)| m == id)
            .map(|(_, s)| *s)
            .collect();
        slots.sort_unstable();
        let after = slots.iter().filter(|s| **s > killed_at + 1000).count();
        assert!(after >= 5, "monitor {id} went on after the kill: {slots:?}");
        // At most the slot the dead instance was running is lost.
        let gaps = slots.windows(2).filter(|w| w[1] - w[0] > 1000).count();
        let widest = slots.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        assert!(gaps <= 1 && widest <= 2000, "monitor {id}: {slots:?}");
    }
    drop(b);
}

/// Every request a receiver got: its signature header and its body.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(Option<String>, Vec<u8>)>>>;

/// A webhook receiver on loopback: keeps every request's signature and body, and answers the
/// first `failures` requests 500, the rest 204.
struct Receiver {
    addr: std::net::SocketAddr,
    seen: Seen,
}

impl Receiver {
    async fn start(failures: usize) -> Receiver {
        use http_body_util::BodyExt;
        use hyper::service::service_fn;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Seen = std::sync::Arc::default();
        let kept = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let kept = kept.clone();
                tokio::spawn(async move {
                    let service =
                        service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                            let kept = kept.clone();
                            async move {
                                let signature = request
                                    .headers()
                                    .get("x-h123-signature")
                                    .and_then(|v| v.to_str().ok())
                                    .map(str::to_owned);
                                let body = request.into_body().collect().await.unwrap().to_bytes();
                                let n = {
                                    let mut seen = kept.lock().unwrap();
                                    seen.push((signature, body.to_vec()));
                                    seen.len()
                                };
                                let status = if n <= failures { 500 } else { 204 };
                                Ok::<_, std::convert::Infallible>(
                                    hyper::Response::builder()
                                        .status(status)
                                        .body(http_body_util::Empty::<bytes::Bytes>::new())
                                        .unwrap(),
                                )
                            }
                        });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Receiver { addr, seen }
    }

    /// The notifications delivered (answered 204), in order: (key, status).
    fn delivered(&self, failures: usize) -> Vec<(String, String)> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .skip(failures)
            .map(|(_, body)| {
                let json: Value = serde_json::from_slice(body).unwrap();
                (
                    json["notification"]["key"].as_str().unwrap().to_owned(),
                    json["notification"]["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }
}

/// Waits up to 60 s until `done` says so.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..600 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what} did not happen within 60 s");
}

#[tokio::test]
async fn a_slowed_target_trips_its_threshold_and_a_silent_udp_port_loses_http3_each_signed_and_retried()
 {
    use h123::probe::guard::{AllowedTarget, ConnectPolicy};
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let relay = h123_target::relay::Relay::start(
        IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 3)),
        target.https_addr,
        Duration::ZERO,
        &["target.h123.test"],
    )
    .await
    .expect("relay");
    const FAILURES: usize = 2;
    let receiver = Receiver::start(FAILURES).await;
    let allow = |addr: std::net::SocketAddr| AllowedTarget {
        ip: addr.ip(),
        port: Some(addr.port()),
    };
    let mut config = monitor_config(&target);
    config.guard.policy = ConnectPolicy::only(vec![
        allow(relay.addr),
        allow(relay.dns_addr),
        allow(receiver.addr),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let state = state(config, &dir);
    h123::server::schedule::spawn(state.clone());
    let body = json!({
        "url": format!("https://target.h123.test:{}/", relay.addr.port()),
        "protocols": ["h2", "h3"],
        "every": "1s",
        "options": {
            "repeat": 1, "rounds": 1, "timeout_ms": 3000, "phase_timeout_ms": 500,
            "dns_server": relay.dns_addr.to_string(),
        },
        "thresholds": {"h2:total": "60ms"},
        "alerting": {"after": 2},
        "alerts": [{"webhook": format!("http://{}/hooks/s3cret-path", receiver.addr)}],
    });
    let created = call(
        &state,
        post_json("/api/v1/monitors", &body.to_string()),
        CLIENT,
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let created = created.json();
    let id = created["monitor"]["id"].as_str().unwrap().to_owned();
    let secret = created["webhook_secret"]
        .as_str()
        .expect("a webhook secret")
        .to_owned();
    // Readers see where notifications go, never the path (often the webhook's secret).
    assert!(!created.to_string().contains("s3cret-path"), "{created}");
    points_of_runs(&state, &id, 2).await;
    assert!(
        receiver.seen.lock().unwrap().is_empty(),
        "healthy runs notify nobody"
    );

    // 40 ms each way: every new connection takes well over 60 ms.
    relay.set_delay(Duration::from_millis(40));
    until("the threshold alert", || {
        !receiver.delivered(FAILURES).is_empty()
    })
    .await;
    let fired = receiver.delivered(FAILURES);
    assert_eq!(fired, vec![("breach:server:h2".into(), "firing".into())]);
    relay.set_delay(Duration::ZERO);
    until("the threshold alert's recovery", || {
        receiver
            .delivered(FAILURES)
            .contains(&("breach:server:h2".into(), "resolved".into()))
    })
    .await;

    relay.mute_udp(true);
    until("HTTP/3 lost", || {
        receiver
            .delivered(FAILURES)
            .iter()
            .any(|(k, s)| k == "lost:server:h3" && s == "firing")
    })
    .await;
    relay.mute_udp(false);
    until("HTTP/3 back", || {
        receiver
            .delivered(FAILURES)
            .iter()
            .any(|(k, s)| k == "lost:server:h3" && s == "resolved")
    })
    .await;
    state.shutdown(Duration::from_secs(10)).await;

    let seen = receiver.seen.lock().unwrap().clone();
    for (signature, body) in &seen {
        assert_eq!(
            signature.as_deref(),
            Some(h123::server::alerts::sign(&secret, body).as_str())
        );
    }
    let lost = seen
        .iter()
        .map(|(_, body)| serde_json::from_slice::<Value>(body).unwrap())
        .find(|n| n["notification"]["key"] == "lost:server:h3")
        .unwrap();
    let summary = lost["notification"]["summary"].as_str().unwrap();
    println!("HTTP/3 lost says: {summary}");
    assert!(summary.starts_with("HTTP/3 lost: "), "{summary}");
    assert!(lost["permalink"].as_str().unwrap().starts_with("/r/"));

    // Every try is logged: the first notification's two failures, then its delivery.
    let log = call(
        &state,
        get(&format!("/api/v1/monitors/{id}/deliveries")),
        CLIENT,
    )
    .await;
    let log: Vec<Value> = serde_json::from_value(log.json()).unwrap();
    let first: Vec<&Value> = log.iter().rev().take(3).collect();
    assert_eq!(
        first
            .iter()
            .map(|t| (
                t["attempt"].as_u64().unwrap(),
                t["delivered"].as_bool().unwrap(),
                t["outcome"].as_str().unwrap()
            ))
            .collect::<Vec<_>>(),
        vec![
            (1, false, "HTTP 500"),
            (2, false, "HTTP 500"),
            (3, true, "HTTP 204")
        ],
        "{log:?}"
    );
    assert!(
        log.iter()
            .all(|t| !t["target"].as_str().unwrap().contains("s3cret")),
        "{log:?}"
    );
}

/// `h123 monitor ARGS` as a child process with `token` (if any) in its environment.
async fn h123_monitor(args: &[&str], token: Option<&str>) -> std::process::Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"));
    command
        .arg("monitor")
        .args(args)
        .env_remove("H123_OWNER_TOKEN");
    if let Some(token) = token {
        command.env("H123_OWNER_TOKEN", token);
    }
    command.output().await.expect("h123 runs")
}

#[tokio::test]
async fn the_cli_creates_lists_reads_the_series_of_pauses_and_deletes_a_monitor() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.sqlite"),
        &["--monitor-min-interval", "1s"],
    )
    .await;
    let base = format!("http://{}", server.addr);
    let url = target.https_url("/");
    let made = h123_monitor(
        &[
            "create",
            &url,
            "--every",
            "1s",
            "--proto",
            "h2",
            "--threshold",
            "total=2s",
            "--server",
            &base,
        ],
        None,
    )
    .await;
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let said = String::from_utf8_lossy(&made.stdout).into_owned();
    assert!(
        said.starts_with("monitor ") && said.contains("every 1s") && said.contains("total=2s"),
        "{said}"
    );
    let id = said.split_whitespace().nth(1).unwrap().to_owned();
    let stderr = String::from_utf8_lossy(&made.stderr).into_owned();
    let token = stderr
        .split("H123_OWNER_TOKEN=")
        .nth(1)
        .expect("the owner token is given")
        .trim()
        .to_owned();

    let listed = h123_monitor(&["list", "--server", &base], Some(&token)).await;
    assert!(String::from_utf8_lossy(&listed.stdout).contains(&id));
    let strangers = h123_monitor(&["list", "--server", &base], None).await;
    assert!(
        !String::from_utf8_lossy(&strangers.stdout).contains(&id),
        "unlisted"
    );

    // Three runs, then the series as a table and as JSON.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    let table = h123_monitor(&["series", &id, "--since", "1m", "--server", &base], None).await;
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(table.starts_with("total from "), "{table}");
    assert!(
        table.lines().filter(|l| l.contains(" ms")).count() >= 2,
        "{table}"
    );
    let json = h123_monitor(
        &[
            "series", &id, "--metric", "ttfb", "--server", &base, "-o", "json",
        ],
        None,
    )
    .await;
    let series: Series = serde_json::from_slice(&json.stdout).expect("the API's JSON");
    assert_eq!(series.lines.len(), 1);

    let refused = h123_monitor(&["pause", &id, "--server", &base], None).await;
    assert_eq!(refused.status.code(), Some(2));
    let line = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("(not_owner)"), "{line}");
    let paused = h123_monitor(&["pause", &id, "--server", &base], Some(&token)).await;
    assert!(String::from_utf8_lossy(&paused.stdout).contains("paused"));
    let bad = h123_monitor(
        &["create", &url, "--every", "soon", "--server", &base],
        None,
    )
    .await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("(invalid_interval)"));
    let deleted = h123_monitor(&["delete", &id, "--server", &base], Some(&token)).await;
    assert_eq!(
        String::from_utf8_lossy(&deleted.stdout),
        format!("monitor {id} deleted\n")
    );
    let gone = h123_monitor(&["show", &id, "--server", &base], None).await;
    assert_eq!(gone.status.code(), Some(2));
    let without = h123_monitor(&["list"], None).await;
    assert_eq!(without.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&without.stderr).contains("--server URL is needed"));
}

/// Scale: a monitor with 100,000 stored runs of three protocols (every 30 s, 35 days), and the
/// series read over the last 24 hours and the last 30 days: time, bytes and peak memory.
/// `cargo test --release -p h123 --test server -- --ignored monitors::series_over --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a figure, not a check: run it by name"]
async fn series_over_a_hundred_thousand_runs() {
    use h123::store::monitor_rows::StoredMonitor;
    use h123_shared::monitor::{Figures, Monitor, MonitorRequest, missed_point};
    use h123_shared::{Micros, Protocol};
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(monitor_config(&target), &dir);
    let request: MonitorRequest =
        serde_json::from_value(json!({"url": target.https_url("/"), "every": "30s"})).unwrap();
    let spec = request.spec(1000).unwrap();
    let id = "scalemonitor".to_owned();
    state
        .store
        .insert_monitor(StoredMonitor {
            monitor: Monitor {
                id: id.clone(),
                created_at_unix_ms: 0,
                spec,
                paused: true,
                next_slot_unix_ms: 0,
            },
            owner_hash: None,
            client: None,
            alert_secret: None,
            alert_state: Default::default(),
        })
        .await
        .unwrap();
    const RUNS: u64 = 100_000;
    let every = 30_000;
    let now = h123::probe::trace::unix_ms();
    let first = now - RUNS * every;
    let started = h123::probe::trace::now();
    let mut batch = Vec::new();
    for run in 0..RUNS {
        let slot = first + run * every;
        for (i, protocol) in Protocol::ALL.into_iter().enumerate() {
            let ms = 20 + (run % 17) + i as u64 * 3;
            batch.push(MonitorPoint {
                protocol: Some(protocol),
                state: PointState::Ok,
                vantage: "server".into(),
                probe_id: Some(format!("p{run:011}")),
                started_unix_ms: slot + 150,
                figures: Figures {
                    dns: Some(Micros(900)),
                    connect: Some(Micros(1200)),
                    tls: Some(Micros(4000)),
                    ttfb: Some(Micros(ms * 800)),
                    total: Some(Micros(ms * 1000)),
                    reused_total: Some(Micros(ms * 400)),
                },
                ..missed_point(slot, 0)
            });
        }
        if batch.len() >= 3000 {
            state
                .store
                .add_points(id.clone(), std::mem::take(&mut batch))
                .await
                .unwrap();
        }
    }
    state.store.add_points(id.clone(), batch).await.unwrap();
    let db = std::fs::metadata(dir.path().join("h123.sqlite"))
        .unwrap()
        .len()
        + std::fs::metadata(dir.path().join("h123.sqlite-wal")).map_or(0, |m| m.len());
    println!(
        "stored {RUNS} runs x 3 protocols in {:.1} s; database {:.1} MB ({:.0} bytes a point)",
        started.elapsed().as_secs_f64(),
        db as f64 / 1e6,
        db as f64 / (RUNS * 3) as f64
    );
    let series = |window: u64| {
        format!(
            "/api/v1/monitors/{id}/series?from={}&to={now}",
            now - window
        )
    };
    let reads = [
        ("series over 24 h", series(86_400_000)),
        ("series over 30 d", series(30 * 86_400_000)),
        ("status (30 d)", format!("/api/v1/monitors/{id}/status")),
        ("page over 24 h", format!("/m/{id}")),
        ("page over 30 d", format!("/m/{id}?range=30d")),
    ];
    for (name, path) in reads {
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..5 {
            let started = h123::probe::trace::now();
            let answer = call(&state, get(&path), CLIENT).await;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(answer.status, StatusCode::OK);
            bytes = answer.body.len();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{name}: median {:.1} ms (min {:.1}, max {:.1}), {bytes} bytes",
            times[2], times[0], times[4]
        );
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let peak = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap_or_default();
    println!("test process {peak}");
}

/// Scale: 1,000 monitors every 60 s (HTTP/2 and HTTP/3, one request each) on one `h123 serve`
/// against the test target: runs, lateness, the server's CPU per run and the store's growth.
/// `cargo test --release -p h123 --test server -- --ignored monitors::a_thousand --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a figure, not a check: run it by name (about four minutes)"]
async fn a_thousand_monitors_every_minute_on_one_instance() {
    thousand_monitors(false).await;
}

/// The same with every monitor also measured from an agent (`h123 agent`, on this machine):
/// each run a job for the agent besides the server's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a figure, not a check: run it by name (about four minutes)"]
async fn a_thousand_monitors_every_minute_on_one_instance_and_an_agent() {
    thousand_monitors(true).await;
}

/// 1,000 monitors every minute, from the server alone or also from agent `near`: the figures.
async fn thousand_monitors(with_agent: bool) {
    use crate::agent::{NEAR_TOKEN, start_near, until_online};
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h123.sqlite");
    let agent = format!("near={NEAR_TOKEN}");
    let mut flags = vec![
        "--max-monitors-per-owner",
        "1000",
        "--rate-burst",
        "5000",
        "--rate-per-minute",
        "100000",
        // The scheduler's figure, not the cap's: every run at the one target starts.
        "--max-monitor-runs-per-host-minute",
        "100000",
    ];
    if with_agent {
        flags.extend(["--agent", &agent]);
    }
    let server = ServerProcess::start(&target, &db, &flags).await;
    let _near = with_agent.then(|| start_near(server.addr, &target));
    if with_agent {
        until_online(server.addr, &["near"]).await;
    }
    let from: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    let vantages: &[&str] = if with_agent { &["server", "near"] } else { &[] };
    let body = json!({
        "url": target.https_url("/"),
        "protocols": ["h2", "h3"],
        "vantages": vantages,
        "every": "60s",
        "options": {"repeat": 1, "rounds": 1, "timeout_ms": 5000},
    })
    .to_string();
    for _ in 0..1000 {
        let made = http(
            server.addr,
            from,
            Method::POST,
            "/api/v1/monitors",
            Some(&body),
        )
        .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    }
    // The first minute places every monitor's first slot; then two minutes are measured.
    tokio::time::sleep(Duration::from_secs(65)).await;
    let size = |db: &std::path::Path| {
        std::fs::metadata(db).map_or(0, |m| m.len())
            + std::fs::metadata(db.with_extension("sqlite-wal")).map_or(0, |m| m.len())
    };
    let agent_cpu = || {
        _near
            .as_ref()
            .and_then(|child| cpu_time_of(child.id()?))
            .unwrap_or_default()
    };
    let agent_before = agent_cpu();
    let (cpu_before, bytes_before) = (server.cpu_time().unwrap(), size(&db));
    let since = h123::probe::trace::unix_ms();
    tokio::time::sleep(Duration::from_secs(120)).await;
    let (cpu_after, bytes_after) = (server.cpu_time().unwrap(), size(&db));
    let agent_used = agent_cpu().saturating_sub(agent_before);
    let until = h123::probe::trace::unix_ms();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let mut statement = conn
        .prepare(
            "SELECT started_unix_ms - slot_unix_ms, state FROM monitor_points \
             WHERE protocol = 'h2' AND vantage IN ('', 'server') \
             AND slot_unix_ms >= ?1 AND slot_unix_ms < ?2",
        )
        .unwrap();
    let rows: Vec<(i64, String)> = statement
        .query_map([since as i64, until as i64], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let missed: i64 = conn
        .query_row(
            "SELECT COALESCE(SUM(missed), 0) FROM monitor_points",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut late: Vec<f64> = rows.iter().map(|(l, _)| *l as f64).collect();
    late.sort_by(f64::total_cmp);
    let ok = rows.iter().filter(|(_, s)| s == "ok").count();
    let cpu = (cpu_after - cpu_before).as_secs_f64();
    let window = (until - since) as f64 / 1000.0;
    println!(
        "{} runs in {window:.0} s ({ok} ok), {missed} slots missed; lateness median {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        rows.len(),
        percentile(&late, 50.0),
        percentile(&late, 99.0),
        late.last().copied().unwrap_or(0.0)
    );
    println!(
        "server CPU {cpu:.2} s: {:.2} ms a run; store grew {:.2} MB, {:.0} MB a day at this rate",
        cpu * 1000.0 / rows.len().max(1) as f64,
        (bytes_after.saturating_sub(bytes_before)) as f64 / 1e6,
        (bytes_after.saturating_sub(bytes_before)) as f64 / 1e6 * 86_400.0 / window
    );
    if with_agent {
        let agent_runs: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM monitor_points WHERE protocol = 'h2' AND vantage = 'near' \
                 AND state = 'ok' AND slot_unix_ms >= ?1 AND slot_unix_ms < ?2",
                [since as i64, until as i64],
                |r| r.get(0),
            )
            .unwrap();
        println!(
            "agent near: {agent_runs} runs ok; its CPU {:.2} s, {:.2} ms a run",
            agent_used.as_secs_f64(),
            agent_used.as_secs_f64() * 1000.0 / agent_runs.max(1) as f64
        );
    }
    assert!(
        rows.len() >= 1500,
        "about 2,000 runs in two minutes: {}",
        rows.len()
    );
}

#[tokio::test]
async fn monitors_cannot_make_the_server_fetch_past_their_bytes_per_minute() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = monitor_config(&target);
    // Less than one probe's budget: no run can take it.
    config.monitors.bytes_per_minute = 1000;
    let state = state(config, &dir);
    h123::server::schedule::spawn(state.clone());
    let (id, _) = create(&state, &every_second(&target, "/")).await;
    let mut missed = Vec::new();
    for _ in 0..100 {
        missed = state
            .store
            .points(id.clone(), 0, u64::MAX / 2, None)
            .await
            .unwrap();
        if missed.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    state.shutdown(Duration::from_secs(5)).await;
    assert!(missed.len() >= 2, "{missed:?}");
    for point in &missed {
        assert_eq!(point.state, PointState::Missed, "{point:?}");
        assert_eq!(
            point.detail.as_deref(),
            Some("the monitors' bytes per minute are spent")
        );
    }
    // Nothing was fetched: no probe record was made for them.
    let probes = call(&state, get("/api/v1/probes"), CLIENT).await;
    assert_eq!(probes.json()["items"], json!([]));
}
