//! Bench API tests against the real test target: refused unless enabled,
//! invalid options, targets off the bench list, a real bench over h1, h2 and
//! h3 end to end (progress, ETag, list), one bench at a time, records that
//! survive a restart, and crash and shutdown recovery.

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123::server::{AppState, BenchConfig, ServerConfig, server_bench_limits};
use h123_shared::api::{BenchCreated, BenchRecord, ProbeStatus};
use h123_target::TestTarget;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// The test config with benches enabled against the target's HTTPS address only.
pub(crate) fn bench_config(target: &TestTarget) -> ServerConfig {
    ServerConfig {
        bench: Some(BenchConfig {
            targets: allowed(target),
            limits: server_bench_limits(),
            max_bytes: h123::server::SERVER_BENCH_MAX_BYTES,
        }),
        ..config(target)
    }
}

/// The options JSON of a bench of `url` over `protocols` for `duration_ms`.
pub(crate) fn bench_body(url: &str, protocols: &[&str], duration_ms: u64) -> String {
    serde_json::json!({
        "url": url,
        "protocols": protocols,
        "concurrency": 4,
        "duration_ms": duration_ms,
        "timeout_ms": 5000,
    })
    .to_string()
}

pub(crate) async fn create(state: &AppState, body: &str) -> BenchCreated {
    let answer = call(state, post_json("/api/v1/benches", body), CLIENT).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let created: BenchCreated = serde_json::from_slice(&answer.body).expect("BenchCreated");
    assert_eq!(
        answer.header("location"),
        Some(created.links.self_.as_str())
    );
    assert_eq!(created.links.permalink, format!("/b/{}", created.id));
    assert!(answer.header("ratelimit-remaining").is_some());
    created
}

/// Polls the record over `get` until it is no longer running.
pub(crate) async fn finished<F, Fut>(mut get: F) -> BenchRecord
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = BenchRecord>,
{
    for _ in 0..600 {
        let record = get().await;
        if record.status != ProbeStatus::Running {
            return record;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the bench did not finish within a minute");
}

/// Checks a finished real bench: done, one run per protocol, every request counted.
fn assert_measured(record: &BenchRecord, protocols: &[&str]) {
    assert_eq!(record.status, ProbeStatus::Done);
    assert!(record.progress.is_none(), "progress only while running");
    assert!(record.finished_at_unix_ms >= Some(record.created_at_unix_ms));
    let result = record.result.as_ref().expect("a done bench has a result");
    let got: Vec<&str> = result.runs.iter().map(|r| r.protocol.as_str()).collect();
    assert_eq!(got, protocols);
    for run in &result.runs {
        assert!(run.failure.is_none(), "{}: {:?}", run.protocol, run.failure);
        assert!(run.requests > 0, "{}: no requests", run.protocol);
        assert_eq!(run.requests, run.successes + run.errors, "{}", run.protocol);
        assert!(run.requests_per_sec() > 0.0);
        assert!(run.latency.p50.0 > 0 && run.latency.p50 <= run.latency.max);
        assert!(!run.latency_percentiles.is_empty());
    }
}

#[tokio::test]
async fn benches_are_refused_unless_enabled() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let body = bench_body(&target.https_url("/bytes/100"), &["h1"], 500);
    let answer = call(&state, post_json("/api/v1/benches", &body), CLIENT).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text());
    assert_eq!(answer.code(), "bench_disabled");
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--enable-bench")
    );
    let info = call(&state, get("/api/v1/config"), CLIENT).await.json();
    assert_eq!(info["bench_enabled"], false);
    assert!(info.get("bench_limits").is_none());
    let view = call(&state, get("/api/v1/config/view"), CLIENT).await;
    assert_eq!(view.status, StatusCode::OK);
    assert_eq!(
        view.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(
        view.text().contains(r#"id="probe-title""#),
        "{}",
        view.text()
    );
    assert!(
        !view.text().contains("bench-form"),
        "no bench form without benches"
    );
    // Reading still works (records from an earlier run with benches on).
    let list = call(&state, get("/api/v1/benches"), CLIENT).await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(list.json()["items"], serde_json::json!([]));
    let unknown = call(&state, get("/api/v1/benches/AAAAAAAAAAAA"), CLIENT).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(unknown.code(), "not_found");
}

#[tokio::test]
async fn bad_options_and_targets_off_the_list_are_refused() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(bench_config(&target), &dir);
    let info = call(&state, get("/api/v1/config"), CLIENT).await.json();
    assert_eq!(info["bench_enabled"], true);
    assert!(info["bench_limits"]["max_concurrency"].as_u64().unwrap() > 0);
    let url = target.https_url("/bytes/100");
    let port = target.https_addr.port();
    assert_eq!(
        info["bench_targets"],
        serde_json::json!([target.https_addr.to_string()]),
        "the form shows what it may load"
    );
    let view = call(&state, get("/api/v1/config/view"), CLIENT)
        .await
        .text();
    assert!(
        view.contains(&format!("one bench at a time: {}.</p>", target.https_addr)),
        "the home page's forms as the server draws them: {view}"
    );
    let wrong_port = format!("is a bench target of this server on port {port} only, not on port");
    let unlisted =
        format!("rebind.h123.test is not one of this server's bench targets (127.0.0.1:{port})");
    let cases = [
        (
            serde_json::json!({"url": url, "concurrency": 0, "duration_ms": 500}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "out_of_range",
            "concurrency",
        ),
        (
            serde_json::json!({"url": url, "concurrency": 1_000_000_000u64, "duration_ms": 500}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "out_of_range",
            "concurrency",
        ),
        (
            serde_json::json!({"url": url, "duration_ms": 500, "network": "3g"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "network_not_allowed",
            "--allow-network",
        ),
        (
            serde_json::json!({"url": url, "duration_ms": 500, "sweep": "rtt=0,50ms"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "network_not_allowed",
            "--allow-network",
        ),
        (
            serde_json::json!({"url": url, "duration_ms": 500, "sweep": "rtt=50,0ms"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            "steps must grow",
        ),
        (
            serde_json::json!({"url": url, "duration_ms": 500, "sweep": {"axis": "loss", "steps": [0, 9000]}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            "loss",
        ),
        (
            serde_json::json!({"url": "ftp://127.0.0.1/", "duration_ms": 500}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported_scheme",
            "ftp",
        ),
        (
            serde_json::json!({"url": url, "protocols": [], "duration_ms": 500}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "no_protocols",
            "protocol",
        ),
        (
            serde_json::json!({"url": url, "threads": 4}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            "unknown field `threads`",
        ),
        (
            serde_json::json!({"url": target.http_url("/"), "protocols": ["h1", "h2"], "duration_ms": 500}),
            StatusCode::FORBIDDEN,
            "blocked_target",
            wrong_port.as_str(),
        ),
        (
            serde_json::json!({"url": format!("https://rebind.h123.test:{port}/"), "duration_ms": 500}),
            StatusCode::FORBIDDEN,
            "blocked_target",
            unlisted.as_str(),
        ),
    ];
    for (body, status, code, says) in cases {
        let answer = call(
            &state,
            post_json("/api/v1/benches", &body.to_string()),
            CLIENT,
        )
        .await;
        assert_eq!(answer.status, status, "{body}: {}", answer.text());
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert_eq!(answer.code(), code, "{body}");
        let message = answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(says), "{body}: `{message}` names `{says}`");
    }
    // A name that resolves to a listed address passes the early check.
    let named = bench_body(
        &format!("https://target.h123.test:{port}/bytes/100"),
        &["h1"],
        200,
    );
    let created = create(&state, &named).await;
    let record = finished(|| async {
        let path = format!("/api/v1/benches/{}", created.id);
        serde_json::from_slice(&call(&state, get(&path), CLIENT).await.body).unwrap()
    })
    .await;
    assert_eq!(record.status, ProbeStatus::Done);
}

#[tokio::test]
async fn a_real_bench_runs_one_at_a_time_and_survives_restarts() {
    let _alone = crate::support::SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/h123.sqlite");
    let https = target.https_addr.to_string();
    let flags = ["--enable-bench", "--bench-target", https.as_str()];
    let server = ServerProcess::start(&target, &db, &flags).await;
    let from: IpAddr = "127.0.0.1".parse().unwrap();
    let protocols = ["h1", "h2", "h3"];
    // Public, so the list (read without an owner token below) shows it.
    let body = bench_body(&target.https_url("/bytes/1000"), &protocols, 1000).replacen(
        '{',
        r#"{"visibility":"public","#,
        1,
    );
    let answer = http(
        server.addr,
        from,
        Method::POST,
        "/api/v1/benches",
        Some(&body),
    )
    .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let id = answer.json()["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/benches/{id}");

    // One at a time: a second is refused while the first runs, with when to retry.
    let second = http(
        server.addr,
        from,
        Method::POST,
        "/api/v1/benches",
        Some(&body),
    )
    .await;
    assert_eq!(second.status, StatusCode::CONFLICT, "{}", second.text());
    assert_eq!(second.code(), "bench_busy");
    let retry: u64 = second.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=10).contains(&retry), "retry after {retry} s");

    // While it runs: progress, and no caching.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let running = http(server.addr, from, Method::GET, &path, None).await;
    assert_eq!(running.header("cache-control"), Some("no-cache"));
    let partial: BenchRecord = serde_json::from_slice(&running.body).unwrap();
    assert_eq!(partial.status, ProbeStatus::Running);
    assert!(partial.result.is_none());
    let progress = partial.progress.expect("progress while running");
    assert!(progress.protocol.is_some(), "{progress:?}");

    let addr = server.addr;
    let record = finished(|| {
        let path = path.clone();
        async move {
            let answer = http(addr, from, Method::GET, &path, None).await;
            serde_json::from_slice(&answer.body).expect("BenchRecord")
        }
    })
    .await;
    assert_measured(&record, &protocols);

    // Finished: immutable, cacheable, conditional.
    let done = http(server.addr, from, Method::GET, &path, None).await;
    assert!(done.header("cache-control").unwrap().contains("immutable"));
    let etag = done.header("etag").unwrap().to_owned();
    let list = http(
        server.addr,
        from,
        Method::GET,
        "/api/v1/benches?limit=5",
        None,
    )
    .await
    .json();
    assert_eq!(list["items"][0]["id"], id.as_str());
    assert_eq!(list["items"][0]["status"], "done");

    // A second bench may run now; SIGKILL the server in the middle of it.
    let long = bench_body(&target.https_url("/bytes/1000"), &["h1"], 20_000);
    let answer = http(
        server.addr,
        from,
        Method::POST,
        "/api/v1/benches",
        Some(&long),
    )
    .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let killed_id = answer.json()["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut server = server;
    server.child.start_kill().unwrap();
    server.child.wait().await.unwrap();

    // After a restart on the same database: the finished bench is unchanged,
    // the killed one is cancelled, and the slot is free again.
    let server = ServerProcess::start(&target, &db, &flags).await;
    let again = get_record(server.addr, from, &id).await;
    assert_eq!(again, record, "the stored record survives the restart");
    let answer = http(server.addr, from, Method::GET, &path, None).await;
    assert_eq!(
        answer.header("etag"),
        Some(etag.as_str()),
        "the same ETag after a restart"
    );
    let killed = get_record(server.addr, from, &killed_id).await;
    assert_eq!(killed.status, ProbeStatus::Cancelled);
    assert!(killed.result.is_none() && killed.finished_at_unix_ms.is_some());
    let short = bench_body(&target.https_url("/bytes/10"), &["h2"], 200);
    let answer = http(
        server.addr,
        from,
        Method::POST,
        "/api/v1/benches",
        Some(&short),
    )
    .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
}

/// A sweep through the API: refused when it would hold the bench slot too
/// long, then run step by step (the record and its decay chart grow while it
/// runs), stored with every step, and drawn; a plain bench has no chart.
#[tokio::test]
async fn a_sweep_runs_each_step_and_draws_its_decay_chart() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = bench_config(&target);
    if let Some(bench) = config.bench.as_mut() {
        bench.limits.network = true;
    }
    let state = state(config, &dir);
    let url = target.https_url("/bytes/100");
    let too_long = serde_json::json!({
        "url": url, "duration_ms": 60_000, "sweep": "rtt=0,1,2,3,4,5,6,7,8,9ms",
    });
    let answer = call(
        &state,
        post_json("/api/v1/benches", &too_long.to_string()),
        CLIENT,
    )
    .await;
    assert_eq!(answer.code(), "out_of_range", "{}", answer.text());
    assert!(
        answer.text().contains("over the limit of 600 s"),
        "{}",
        answer.text()
    );

    let body = serde_json::json!({
        "url": url, "protocols": ["h1", "h3"], "concurrency": 4, "duration_ms": 400,
        "sweep": "rtt=0,30ms",
    });
    let created = create(&state, &body.to_string()).await;
    let path = format!("/api/v1/benches/{}", created.id);
    let chart_path = format!("{path}/decay.svg");
    let mut saw_partial = false;
    let record = loop {
        let record: BenchRecord =
            serde_json::from_slice(&call(&state, get(&path), CLIENT).await.body).unwrap();
        if record.status != ProbeStatus::Running {
            break record;
        }
        if record.steps.len() == 1 {
            saw_partial = true;
            let partial = call(&state, get(&chart_path), CLIENT).await.text();
            assert_eq!(partial.matches(r#"class="line measured "#).count(), 2);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(saw_partial, "the first step shows while the second runs");
    assert_eq!(record.status, ProbeStatus::Done);
    assert!(record.result.is_none(), "a sweep's figures are its steps");
    let values: Vec<u32> = record.steps.iter().map(|s| s.value).collect();
    assert_eq!(values, [0, 30]);
    for step in &record.steps {
        assert_measured(
            &BenchRecord {
                result: Some(step.result.clone()),
                ..record.clone()
            },
            &["h1", "h3"],
        );
        let network = step
            .result
            .options
            .network
            .as_ref()
            .expect("each step's network");
        assert_eq!(network.rtt_ms, step.value);
    }
    let slow = &record.steps[1].result.runs[0].latency.p50;
    assert!(slow.0 >= 30_000, "h1's p50 at 30 ms added: {slow:?}");
    let chart = call(&state, get(&chart_path), CLIENT).await;
    assert_eq!(chart.status, StatusCode::OK, "{}", chart.text());
    assert_eq!(chart.header("content-type"), Some("image/svg+xml"));
    let svg = chart.text();
    assert_eq!(svg.matches(r#"class="line measured "#).count(), 2);
    assert!(svg.contains(">30 ms<"), "the steps label the axis");

    // The slot is freed just after the record is stored.
    while state.bench.current().is_some() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let plain = create(&state, &bench_body(&url, &["h1"], 200)).await;
    let plain_chart = format!("/api/v1/benches/{}/decay.svg", plain.id);
    let answer = call(&state, get(&plain_chart), CLIENT).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert!(answer.text().contains("not a sweep"), "{}", answer.text());
}

async fn get_record(addr: SocketAddr, from: IpAddr, id: &str) -> BenchRecord {
    let answer = http(
        addr,
        from,
        Method::GET,
        &format!("/api/v1/benches/{id}"),
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    serde_json::from_slice(&answer.body).expect("BenchRecord")
}

#[tokio::test]
async fn shutdown_stores_a_running_bench_as_cancelled() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(bench_config(&target), &dir);
    let body = bench_body(&target.https_url("/bytes/100"), &["h1", "h2"], 10_000);
    let created = create(&state, &body).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(state.shutdown(Duration::from_millis(100)).await, 1);
    let path = format!("/api/v1/benches/{}", created.id);
    let record: BenchRecord =
        serde_json::from_slice(&call(&state, get(&path), CLIENT).await.body).unwrap();
    assert_eq!(record.status, ProbeStatus::Cancelled);
    assert!(record.progress.is_none() && record.result.is_none());
    let refused = call(&state, post_json("/api/v1/benches", &body), CLIENT).await;
    assert_eq!(refused.code(), "shutting_down");
}

#[tokio::test]
async fn the_openapi_document_describes_benches() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let doc = call(&state, get("/api/openapi.json"), CLIENT).await.json();
    for path in [
        "/api/v1/benches",
        "/api/v1/benches/{id}",
        "/api/v1/benches/{id}/decay.svg",
        "/api/v1/config",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} documented");
    }
    let post = &doc["paths"]["/api/v1/benches"]["post"]["responses"];
    for status in ["202", "403", "409", "422", "429"] {
        assert!(post.get(status).is_some(), "POST answers {status}");
    }
    let schemas = &doc["components"]["schemas"];
    for schema in [
        "BenchOptions",
        "BenchRecord",
        "BenchCreated",
        "BenchList",
        "ServerInfo",
        "BenchResult",
        "BenchProgress",
    ] {
        assert!(schemas.get(schema).is_some(), "{schema} described");
    }
}

#[test]
fn bench_flags_that_do_not_go_together_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h123.sqlite");
    for (flags, says) in [
        (
            vec!["--enable-bench"],
            "--enable-bench needs at least one --bench-target",
        ),
        (
            vec!["--bench-target", "127.0.0.1:8443"],
            "--bench-target has no effect without --enable-bench",
        ),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_h123"))
            .args(["serve", "--listen", "127.0.0.1:0", "--db"])
            .arg(&db)
            .args(&flags)
            .output()
            .expect("h123 runs");
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.starts_with("h123 serve: ") && stderr.contains(says),
            "{stderr}"
        );
    }
    assert!(!db.exists(), "nothing was started");
}

#[tokio::test]
async fn a_bench_is_as_private_as_a_probe() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(bench_config(&target), &dir);
    let secrets = [
        "URLPASS-BENCH-1a",
        "AUTH-BENCH-2b",
        "COOKIE-BENCH-3c",
        "QUERY-BENCH-4d",
        "KEY-BENCH-5e",
    ];
    let url = target
        .https_url(&format!("/?token={}&q=1", secrets[3]))
        .replacen("://", &format!("://alice:{}@", secrets[0]), 1);
    let body = serde_json::json!({
        "url": url, "protocols": ["h1"], "concurrency": 1, "requests": 4, "timeout_ms": 5000,
        "headers": [
            {"name": "Authorization", "value": format!("Bearer {}", secrets[1])},
            {"name": "Cookie", "value": format!("sid={}", secrets[2])},
            {"name": "X-Api-Key", "value": secrets[4]},
        ],
    })
    .to_string();
    let created = create(&state, &body).await;
    assert!(created.owner_token.len() >= 22, "a fresh owner token");
    let path = format!("/api/v1/benches/{}", created.id);
    let stranger: IpAddr = "127.0.0.11".parse().unwrap();
    let clean = |what: &str, bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        for secret in secrets {
            assert!(!text.contains(secret), "{what} holds {secret}");
        }
    };
    // While it runs and once it is done, a stranger reads no secret.
    let running = call(&state, get(&path), stranger).await;
    clean("the running bench", &running.body);
    let record = finished(|| async {
        let answer = call(&state, get(&path), stranger).await;
        clean("the bench", &answer.body);
        serde_json::from_slice::<BenchRecord>(&answer.body).unwrap()
    })
    .await;
    assert_eq!(record.status, ProbeStatus::Done, "{record:?}");
    assert!(
        record.result.as_ref().unwrap().runs[0].successes > 0,
        "the bench sent the real values"
    );
    assert!(record.options.url.contains("alice:[redacted]@"));
    assert!(record.options.url.contains("token=[redacted]&q=1"));

    // Unlisted: the stranger's list does not show it, the owner's does.
    let list = call(&state, get("/api/v1/benches"), stranger).await;
    assert_eq!(
        list.json()["items"].as_array().unwrap().len(),
        0,
        "{}",
        list.text()
    );
    let mut own = get("/api/v1/benches");
    own.headers_mut()
        .insert("x-h123-owner", created.owner_token.parse().unwrap());
    let list = call(&state, own, CLIENT).await;
    assert_eq!(list.json()["items"][0]["id"], created.id.as_str());
    clean("the owner's list", &list.body);

    // Nor does the database hold them.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let entry = entry.unwrap();
        clean(
            &entry.path().display().to_string(),
            &std::fs::read(entry.path()).unwrap(),
        );
    }
}
