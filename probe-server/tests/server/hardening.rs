//! Response hardening: the web UI's policy allows its inline module script
//! by hash and WebAssembly, API answers and the SVG export run no script,
//! every answer says `nosniff`, no framing and no referrer, and an over-long
//! path is a JSON 4xx (it was a 500 through the static file server).

use crate::support::*;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use tower::ServiceExt;

/// The shape of `dist/index.html`: one inline script that loads the app.
const INDEX: &str = "<!doctype html><html><head>\
<link rel=\"stylesheet\" href=\"/style-1.css\"/>\n<script type=\"module\">\n\
import init from '/app-1.js';\nawait init({ module_or_path: '/app-1_bg.wasm' });\n</script>\
</head><body></body></html>";

async fn send(app: &axum::Router, path: &str) -> (StatusCode, axum::http::HeaderMap, String) {
    let response = app
        .clone()
        .oneshot(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

fn header<'a>(headers: &'a axum::http::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("{name} is set"))
        .to_str()
        .unwrap()
}

#[tokio::test]
async fn every_answer_is_hardened_and_long_paths_are_4xx() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let web = tempfile::tempdir().unwrap();
    std::fs::write(web.path().join("index.html"), INDEX).unwrap();
    let state = state(config(&target), &dir);
    let app = h123::api::app_with_web_root(state.clone(), Some(web.path()));

    let (status, headers, body) = send(&app, "/r/abcdefghijkl").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no probe has this id");
    for (path, expected) in [
        ("/", StatusCode::OK),
        // No bench has this id.
        ("/b/abcdefghijkl", StatusCode::NOT_FOUND),
        ("/no/such/page", StatusCode::NOT_FOUND),
        ("/favicon.ico", StatusCode::NOT_FOUND),
    ] {
        let (status, _, page) = send(&app, path).await;
        assert_eq!(status, expected, "{path}");
        assert!(
            page.contains("<script type=\"module\">"),
            "{path}: the app says what it is"
        );
    }
    assert!(
        body.contains("<script type=\"module\">"),
        "the SPA fallback"
    );
    let csp = header(&headers, "content-security-policy");
    let script = INDEX
        .split("<script type=\"module\">")
        .nth(1)
        .unwrap()
        .split("</script>")
        .next()
        .unwrap();
    let digest = Sha256::digest(script.as_bytes());
    let expected = format!(
        "'sha256-{}'",
        std::process::Command::new("base64")
            .arg("-w0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(&digest)?;
                child.wait_with_output()
            })
            .map(|o| String::from_utf8(o.stdout).unwrap())
            .unwrap()
    );
    assert!(csp.contains(&expected), "{csp} lacks {expected}");
    assert!(
        csp.contains("script-src 'self' 'wasm-unsafe-eval'"),
        "{csp}"
    );
    assert!(!csp.contains("'unsafe-eval'") && !csp.contains("script-src 'self' 'unsafe-inline'"));
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
    ] {
        assert_eq!(header(&headers, name), value);
    }

    // API answers and the SVG export run no script.
    let body = probe_body(&target.https_url("/"), &["h1"], 1);
    let created = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
    let id = created.json()["id"].as_str().unwrap().to_owned();
    let (_, headers, _) = send(&app, &format!("/api/v1/probes/{id}")).await;
    assert_eq!(
        header(&headers, "content-security-policy"),
        "default-src 'none'; frame-ancestors 'none'"
    );
    assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
    let (status, headers, svg) = send(&app, &format!("/api/v1/probes/{id}/waterfall.svg")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!svg.contains("<script"));
    let svg_csp = header(&headers, "content-security-policy");
    assert!(
        svg_csp.starts_with("default-src 'none'; style-src 'unsafe-inline'"),
        "{svg_csp}"
    );
    assert!(!svg_csp.contains("script-src"));

    // Over-long paths: 414 past the limit, 404 for a segment no file can have; JSON either way.
    let (status, headers, body) = send(&app, &format!("/r/{}", "a".repeat(10_000))).await;
    assert_eq!(status, StatusCode::URI_TOO_LONG);
    assert!(body.contains("\"uri_too_long\""), "{body}");
    assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
    let (status, _, body) = send(&app, &format!("/r/{}", "a".repeat(300))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("\"not_found\""), "{body}");
    let (status, _, _) = send(&app, &format!("/api/v1/probes/{}", "a".repeat(3000))).await;
    assert_eq!(status, StatusCode::URI_TOO_LONG);
}
