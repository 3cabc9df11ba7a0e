//! `POST /api/v1/probes/{id}/browser` on a real probe of the real target (h1, h2, h3) over a
//! real SQLite file: only the owner of a finished probe may add one measurement; what a browser
//! could not have measured is named; the server sets the user agent, the time and the finding
//! (whatever the client sent for them); the record's caching follows; and only the measuring
//! page may fetch the target.

use crate::support::*;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use h123_shared::api::{ProbeCreated, ProbeRecord};
use h123_shared::browser::{BrowserAttempt, BrowserRun, Marks};
use tower::ServiceExt;

const UA: &str = "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/131.0.0.0 Safari/537.36";

fn attach(id: &str, token: Option<&str>, body: &str) -> Request<Body> {
    let mut request = post_json(&format!("/api/v1/probes/{id}/browser"), body);
    request
        .headers_mut()
        .insert(header::USER_AGENT, UA.parse().expect("header value"));
    if let Some(token) = token {
        request
            .headers_mut()
            .insert("x-h123-owner", token.parse().expect("header value"));
    }
    request
}

/// Five visible requests of about `wait` ms on a new, then reused, HTTP/2 connection.
fn measured(wait: f64) -> BrowserRun {
    let attempt = |connect: f64| {
        BrowserAttempt::from_marks(&Marks {
            start: 10.0,
            dns_start: 10.0,
            dns_end: 10.0 + connect / 4.0,
            connect_start: 10.0 + connect / 4.0,
            secure_start: if connect > 0.0 {
                10.0 + connect / 2.0
            } else {
                0.0
            },
            connect_end: 10.0 + connect,
            request_start: 10.0 + connect,
            response_start: 10.0 + connect + wait,
            response_end: 11.0 + connect + wait,
            protocol: "h2".into(),
        })
    };
    BrowserRun {
        user_agent: "forged".into(),
        measured_at_unix_ms: 1,
        attempts: [4.0, 0.0, 0.0, 0.0, 0.0].map(attempt).to_vec(),
        finding: Some(h123_shared::browser::BrowserFinding {
            summary: "forged".into(),
            lines: Vec::new(),
            implausible: false,
        }),
    }
}

async fn create(state: &h123::server::AppState, url: &str) -> ProbeCreated {
    let answer = call(
        state,
        post_json("/api/v1/probes", &probe_body(url, &["h1", "h2", "h3"], 3)),
        CLIENT,
    )
    .await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    serde_json::from_slice(&answer.body).expect("ProbeCreated")
}

async fn finished(state: &h123::server::AppState, id: &str) -> Answer {
    for _ in 0..400 {
        let answer = call(state, get(&format!("/api/v1/probes/{id}")), CLIENT).await;
        if answer.json()["status"] != "running" {
            return answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("probe {id} did not finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_adds_one_browser_measurement_to_a_finished_probe() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let url = target.https_url("/tao/30");
    let created = create(&state, &url).await;
    let (id, token) = (created.id.as_str(), created.owner_token.as_str());
    let body = serde_json::to_string(&measured(30.0)).unwrap();

    // While it runs: nothing to compare with yet.
    let early = call(&state, attach(id, Some(token), &body), CLIENT).await;
    assert_eq!(
        (early.status, early.code()),
        (StatusCode::CONFLICT, "probe_running".into()),
        "{}",
        early.text()
    );

    let before = finished(&state, id).await;
    assert_eq!(
        before.header("cache-control"),
        Some("no-cache"),
        "a measurement may still come"
    );

    // Who may not, and what may not be sent.
    let other = "B".repeat(24);
    for (request, status, code) in [
        (attach(id, None, &body), StatusCode::FORBIDDEN, "not_owner"),
        (
            attach(id, Some(&other), &body),
            StatusCode::FORBIDDEN,
            "not_owner",
        ),
        (
            attach(id, Some(token), "{"),
            StatusCode::BAD_REQUEST,
            "invalid_json",
        ),
        (
            attach(id, Some(token), r#"{"attempts":[]}"#),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_browser_run",
        ),
        (
            attach(
                id,
                Some(token),
                r#"{"attempts":[{"total_us":5,"reused":false,"phases":[{"phase":"send","start_us":0,"end_us":1}]}]}"#,
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_browser_run",
        ),
        (
            attach(id, Some(token), &" ".repeat(70 * 1024)),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            attach("AAAAAAAAAAAA", Some(token), &body),
            StatusCode::NOT_FOUND,
            "not_found",
        ),
    ] {
        let answer = call(&state, request, CLIENT).await;
        assert_eq!(
            (answer.status, answer.code()),
            (status, code.to_owned()),
            "{}",
            answer.text()
        );
        assert!(!answer.text().contains(token), "the token is never echoed");
    }
    let refused = call(&state, attach(id, Some(token), r#"{"attempts":[{"total_us":5,"reused":false,"phases":[{"phase":"send","start_us":0,"end_us":1}]}]}"#), CLIENT).await;
    assert!(
        refused.text().contains("no send phase"),
        "{}",
        refused.text()
    );

    // The owner's: stored, with what the server sets.
    let stored = call(&state, attach(id, Some(token), &body), CLIENT).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", stored.text());
    let record: ProbeRecord = serde_json::from_slice(&stored.body).unwrap();
    let run = record.browser.as_ref().expect("the measurement");
    assert_eq!(run.user_agent, UA);
    assert!(run.measured_at_unix_ms > record.created_at_unix_ms);
    assert_eq!(run.attempts, measured(30.0).attempts);
    let finding = run.finding.as_ref().expect("the server's finding");
    assert_ne!(finding.summary, "forged");
    assert_eq!(
        finding.lines.len(),
        3,
        "one line per protocol: {:?}",
        finding.lines
    );
    assert!(
        finding.lines[1].starts_with(
            "HTTP/2: on a new connection the owner's browser's median is 35.0 ms (n=1)"
        ),
        "{:?}",
        finding.lines
    );
    assert!(
        !stored.text().contains(&token[..10]),
        "no owner token in the record"
    );

    // Once only; the record reads with it and is cacheable forever from now on.
    let again = call(&state, attach(id, Some(token), &body), CLIENT).await;
    assert_eq!(
        (again.status, again.code()),
        (StatusCode::CONFLICT, "browser_exists".into())
    );
    let after = call(&state, get(&format!("/api/v1/probes/{id}")), CLIENT).await;
    assert_eq!(
        after.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let read: ProbeRecord = serde_json::from_slice(&after.body).unwrap();
    assert_eq!(read, record);
    assert_eq!(
        read.result,
        serde_json::from_slice::<ProbeRecord>(&before.body)
            .unwrap()
            .result,
        "the server's result is as it was"
    );

    // The HAR export holds it as a page of its own, and passes the HAR 1.2 validator.
    let har = call(&state, get(&format!("/api/v1/probes/{id}/har")), CLIENT).await;
    let doc = har.json();
    let on_page = |page: &str| {
        doc["log"]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["pageref"] == page)
            .count()
    };
    assert_eq!(on_page("browser"), 5);
    assert_eq!(doc["log"]["_browser"]["user_agent"], UA);
    crate::cli::assert_valid_har(&har.body);

    // The picture draws it under the server's rows, and is cached forever from now on too.
    let svg = call(
        &state,
        get(&format!("/api/v1/probes/{id}/waterfall.svg")),
        CLIENT,
    )
    .await;
    let picture = svg.text();
    assert!(
        picture.contains("From the probe owner's browser · Headless Chrome 131"),
        "{picture}"
    );
    assert_eq!(picture.matches(r#"<g class="browser-row">"#).count(), 5);
    assert!(picture.contains(&finding.summary[..60]), "{picture}");
    assert_eq!(
        svg.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );

    // Only the measuring page may fetch the target, and only its origin.
    let web = tempfile::tempdir().unwrap();
    std::fs::write(
        web.path().join("index.html"),
        "<!doctype html><title>h123</title>",
    )
    .unwrap();
    let app = h123::api::app_with_web_root(state.clone(), Some(web.path()));
    let page = |query: &'static str| {
        let mut request = get(&format!("/r/{id}{query}"));
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(std::net::SocketAddr::new(
                CLIENT, 40000,
            )));
        let app = app.clone();
        async move { collect(app.oneshot(request).await.expect("infallible")).await }
    };
    let origin = format!("https://127.0.0.1:{}", target.https_addr.port());
    let plain = page("").await;
    let csp = plain
        .header("content-security-policy")
        .expect("a policy")
        .to_owned();
    assert!(csp.contains("connect-src 'self';"), "{csp}");
    let measuring = page("?measure=browser").await;
    assert_eq!(measuring.status, StatusCode::OK);
    let csp = measuring
        .header("content-security-policy")
        .expect("a policy");
    assert!(
        csp.contains(&format!("connect-src 'self' {origin};")),
        "{csp}"
    );
}
