//! `--cors-origin`: a page from a listed origin may read and create probes
//! (preflight answered, the headers the UI needs exposed, never credentials);
//! any other origin gets no CORS headers, so the browser keeps the answer
//! from it; without the flag, no CORS header at all; a bad origin is refused
//! at start with one readable line.

use crate::support::*;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use h123::server::cors_origin::CorsOrigin;

const UI: &str = "https://ui.h123.test";

fn with_origin(method: Method, path: &str, origin: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header("origin", origin)
}

fn preflight(origin: &str) -> Request<Body> {
    with_origin(Method::OPTIONS, "/api/v1/probes", origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type, x-h123-owner",
        )
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn a_listed_origin_reads_and_creates_and_no_other_does() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.cors_origins = vec![UI.parse().unwrap()];
    let state = state(config, &dir);

    let answer = call(&state, preflight(UI), CLIENT).await;
    assert!(answer.status.is_success(), "{}", answer.status);
    assert_eq!(answer.header("access-control-allow-origin"), Some(UI));
    let allowed = answer
        .header("access-control-allow-headers")
        .unwrap_or_default();
    assert!(
        allowed.contains("x-h123-owner") && allowed.contains("content-type"),
        "{allowed}"
    );
    assert!(
        answer
            .header("access-control-allow-methods")
            .unwrap_or_default()
            .contains("POST")
    );
    assert_eq!(answer.header("access-control-max-age"), Some("3600"));
    assert_eq!(answer.header("access-control-allow-credentials"), None);

    let body = probe_body(&target.https_url("/"), &["h2"], 1);
    let created = call(
        &state,
        with_origin(Method::POST, "/api/v1/probes", UI)
            .header("content-type", "application/json")
            .body(Body::from(body.clone()))
            .unwrap(),
        CLIENT,
    )
    .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
    assert_eq!(created.header("access-control-allow-origin"), Some(UI));
    let exposed = created
        .header("access-control-expose-headers")
        .unwrap_or_default();
    for name in ["location", "ratelimit-remaining", "retry-after", "etag"] {
        assert!(exposed.contains(name), "{name} not exposed: {exposed}");
    }
    // An error answer carries the headers too, so the page can read what went wrong.
    let missing = call(
        &state,
        with_origin(Method::GET, "/api/v1/probes/nosuchprobe", UI)
            .body(Body::empty())
            .unwrap(),
        CLIENT,
    )
    .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.header("access-control-allow-origin"), Some(UI));

    for stranger in ["https://evil.h123.test", "http://ui.h123.test"] {
        let answer = call(&state, preflight(stranger), CLIENT).await;
        assert_eq!(
            answer.header("access-control-allow-origin"),
            None,
            "{stranger}"
        );
        let read = call(
            &state,
            with_origin(Method::GET, "/api/v1/probes", stranger)
                .body(Body::empty())
                .unwrap(),
            CLIENT,
        )
        .await;
        assert_eq!(read.status, StatusCode::OK);
        assert_eq!(
            read.header("access-control-allow-origin"),
            None,
            "{stranger}"
        );
    }
}

#[tokio::test]
async fn any_origin_or_none() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut open = config(&target);
    open.cors_origins = vec![CorsOrigin::Any];
    let answer = call(
        &state(open, &dir),
        preflight("https://anyone.h123.test"),
        CLIENT,
    )
    .await;
    assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
    assert_eq!(answer.header("access-control-allow-credentials"), None);

    let dir = tempfile::tempdir().unwrap();
    let closed = state(config(&target), &dir);
    let read = call(
        &closed,
        with_origin(Method::GET, "/api/v1/probes", UI)
            .body(Body::empty())
            .unwrap(),
        CLIENT,
    )
    .await;
    assert_eq!(read.status, StatusCode::OK);
    assert!(
        read.headers
            .keys()
            .all(|k| !k.as_str().starts_with("access-control-")),
        "{:?}",
        read.headers
    );
}

#[test]
fn a_bad_origin_is_refused_at_start() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_h123"))
        .args(["serve", "--cors-origin", "https://ui.h123.test/app"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--cors-origin `https://ui.h123.test/app`"),
        "{stderr}"
    );
    assert!(stderr.contains("no path"), "{stderr}");
}
