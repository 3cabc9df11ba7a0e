//! Redaction by shape: a credential-looking query parameter (`?api_key=`) and header
//! (`X-Api-Key`) are sent by the probe but reach no read path (JSON, HAR, curl, SVG, the
//! permalink page, view, view events, compare, the live and replayed event streams, the list)
//! nor the database; a name the probe's `keep_secret` lists is kept.

use crate::support::*;
use axum::http::StatusCode;
use h123_shared::api::ProbeCreated;
use h123_shared::redact::REDACTED;
use tower::ServiceExt;

const QUERY_SECRET: &str = "QUERYKEY-SECRET-5b1c";
const HEADER_SECRET: &str = "HEADERKEY-SECRET-8e2d";

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in [QUERY_SECRET, HEADER_SECRET] {
        let at = text.find(secret);
        assert!(
            at.is_none(),
            "{what} holds {secret}: {}",
            &text[at.unwrap_or(0).saturating_sub(300)..(at.unwrap_or(0) + 50).min(text.len())]
        );
    }
}

fn body(url: &str, keep: &[&str]) -> String {
    serde_json::json!({
        "url": url,
        "protocols": ["h1", "h2"],
        "repeat": 2, "rounds": 2,
        "headers": [{"name": "X-Api-Key", "value": HEADER_SECRET}],
        "keep_secret": keep,
    })
    .to_string()
}

/// Probe `body` to its end, following its live event streams, which must hold no secret when
/// `clean` says so.
async fn probed(state: &h123::server::AppState, body: &str, clean: bool) -> String {
    let answer = call(state, post_json("/api/v1/probes", body), CLIENT).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let created: ProbeCreated = serde_json::from_slice(&answer.body).unwrap();
    let (view, events) = tokio::join!(
        call(
            state,
            get(&format!("/api/v1/probes/{}/view/events", created.id)),
            CLIENT
        ),
        call(
            state,
            get(&format!("/api/v1/probes/{}/events", created.id)),
            CLIENT
        ),
    );
    if clean {
        assert_clean("the live view stream", &view.body);
        assert_clean("the live event stream", &events.body);
    }
    created.id
}

#[tokio::test]
async fn credential_looking_names_are_redacted_in_every_read_path_unless_kept() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let url = target.https_url(&format!("/?api_key={QUERY_SECRET}&q=1"));
    let a = probed(&state, &body(&url, &[]), true).await;
    let b = probed(&state, &body(&url, &[]), true).await;

    let web = tempfile::tempdir().unwrap();
    std::fs::write(
        web.path().join("index.html"),
        "<!doctype html><title>h123</title><main><!--h123:summary-->intro<!--/h123:summary--></main>",
    )
    .unwrap();
    let app = h123::api::app_with_web_root(state.clone(), Some(web.path()));
    let read = |path: String| {
        let mut request = get(&path);
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(std::net::SocketAddr::new(
                CLIENT, 40000,
            )));
        let app = app.clone();
        async move { collect(app.oneshot(request).await.expect("infallible")).await }
    };
    let probe = format!("/api/v1/probes/{a}");
    let mut paths: Vec<String> = [
        "",
        "/har",
        "/curl",
        "/waterfall.svg",
        "/view",
        "/view/events",
        "/events",
    ]
    .iter()
    .map(|suffix| format!("{probe}{suffix}"))
    .collect();
    paths.extend([
        format!("/r/{a}"),
        format!("/api/v1/compare/{a}/{b}"),
        format!("/compare/{a}/{b}"),
        "/api/v1/probes".to_owned(),
    ]);
    for path in &paths {
        let answer = read(path.clone()).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_clean(&format!("GET {path}"), &answer.body);
    }
    let page = read(format!("/r/{a}")).await.text();
    assert!(page.contains("api_key="), "the page shows the probe's URL");
    let record = read(probe.clone()).await.json();
    assert_eq!(
        record["options"]["url"].as_str().unwrap(),
        target.https_url(&format!("/?api_key={REDACTED}&q=1"))
    );
    assert_eq!(record["options"]["headers"][0]["value"], REDACTED);

    // The database file, write-ahead log included.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let entry = entry.unwrap();
        assert_clean(
            &entry.path().display().to_string(),
            &std::fs::read(entry.path()).unwrap(),
        );
    }

    // A name the probe keeps stays, in its record; the others are still hidden.
    let kept = probed(&state, &body(&url, &["X-Api-Key"]), false).await;
    let record = read(format!("/api/v1/probes/{kept}")).await.json();
    assert_eq!(record["options"]["headers"][0]["value"], HEADER_SECRET);
    assert!(
        !record.to_string().contains(QUERY_SECRET),
        "api_key was not kept"
    );
    let refused = call(
        &state,
        post_json(
            "/api/v1/probes",
            &body(
                &url,
                &[
                    "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p",
                    "q",
                ],
            ),
        ),
        CLIENT,
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.code(), "out_of_range");
}
