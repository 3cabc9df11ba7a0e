//! `GET /api/v1/compare/{a}/{b}` and the page `/compare/{a}/{b}` on a real `h123 serve`:
//! a real difference (a 200 ms server delay against none: well past what a busy machine adds to
//! either side's spread, which a 40 ms one was not beside two CPU hogs) is called for every
//! protocol, a
//! result compared with itself shows none, a 502 is never compared, a running probe is a 409,
//! bad paths are JSON 404s, and the shared page carries the comparison's summary before any
//! script runs.

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::Protocol;
use h123_shared::api::{ProbeComparison, ProbeStatus};
use h123_shared::compare::{ComparisonKind, Side};
use std::net::{IpAddr, SocketAddr};

/// The slow side's server delay, ms.
const DELAY_MS: u64 = 200;

/// `index.html`'s shape: the shell with the summary markers.
const INDEX: &str = "<!doctype html><html><head><title>h123</title></head><body>\
<main><!--h123:summary--><section class=\"intro\"><h1>Where does the time go?</h1>\
</section><!--/h123:summary--></main></body></html>";

const FROM: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

async fn finished(addr: SocketAddr, url: &str) -> String {
    // The defaults' 4 rounds: 4 new and 4 reused connections a side, what a call needs.
    let mut body: serde_json::Value =
        serde_json::from_str(&probe_body(url, &["h1", "h2", "h3"], 2)).unwrap();
    body["rounds"] = serde_json::json!(4);
    let id = create_probe(addr, FROM, &body.to_string()).await;
    let record = probe_done(addr, FROM, &id).await;
    assert_ne!(record.status, ProbeStatus::Running);
    id
}

async fn compared(addr: SocketAddr, a: &str, b: &str) -> (Answer, ProbeComparison) {
    let answer = http(
        addr,
        FROM,
        Method::GET,
        &format!("/api/v1/compare/{a}/{b}"),
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let body = serde_json::from_slice(&answer.body).expect("a ProbeComparison");
    (answer, body)
}

/// A server with a web root, and two finished probes on it: a slow one and a fast one.
struct Setup {
    target: h123_target::TestTarget,
    server: ServerProcess,
    _dirs: [tempfile::TempDir; 2],
    slow: String,
    fast: String,
}

async fn setup() -> Setup {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let web = tempfile::tempdir().unwrap();
    std::fs::write(web.path().join("index.html"), INDEX).unwrap();
    let server = ServerProcess::start_with_web_root(
        &target,
        &dir.path().join("h123.sqlite"),
        web.path(),
        &[],
    )
    .await;
    let slow = finished(
        server.addr,
        &target.https_url(&format!("/delay/{DELAY_MS}")),
    )
    .await;
    let fast = finished(server.addr, &target.https_url("/delay/0")).await;
    Setup {
        target,
        server,
        _dirs: [dir, web],
        slow,
        fast,
    }
}

/// `h123 args…`: its exit code, stdout and stderr.
async fn h123(args: Vec<String>) -> (i32, String, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .await
        .expect("h123 runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn two_results_compare_by_the_significance_rule_and_share_a_page() {
    let Setup {
        target,
        server,
        slow,
        fast,
        _dirs,
    } = setup().await;
    let addr = server.addr;

    let (answer, both) = compared(addr, &slow, &fast).await;
    assert_eq!(
        answer.header("cache-control"),
        Some("no-cache"),
        "either record may still gain its owner's browser measurement"
    );
    assert_eq!(
        (both.a.id.as_str(), both.b.id.as_str()),
        (slow.as_str(), fast.as_str())
    );
    assert_eq!(both.permalink, format!("/compare/{slow}/{fast}"));
    let c = &both.comparison;
    assert_eq!(c.kind, ComparisonKind::Differs, "{}", c.summary);
    for protocol in [Protocol::H1, Protocol::H2, Protocol::H3] {
        let totals: Vec<_> = c
            .groups
            .iter()
            .filter(|g| g.protocol == protocol)
            .filter_map(|g| g.total())
            .collect();
        assert!(!totals.is_empty(), "{protocol:?}: {c:?}");
        for total in totals {
            assert_eq!(total.faster, Some(Side::B), "{protocol:?}: {total:?}");
            let gap = total.gap.unwrap().as_ms();
            // The delay, give or take what load adds to either side's median.
            let delay = DELAY_MS as f64;
            assert!(
                (0.75 * delay..1.3 * delay).contains(&gap),
                "{protocol:?}: {gap} ms"
            );
        }
    }
    assert!(
        c.summary
            .starts_with("B is faster than A on a new connection over HTTP/1.1"),
        "{}",
        c.summary
    );
    assert!(c.summary.contains("most of it in wait"), "{}", c.summary);
    assert!(
        c.caveats
            .iter()
            .any(|s| s.contains(&format!("/delay/{DELAY_MS}; B measured"))),
        "{:?}",
        c.caveats
    );
    // The other way round, A is the faster.
    let (_, back) = compared(addr, &fast, &slow).await;
    assert!(back.comparison.summary.starts_with("A is faster than B"));

    // A result against itself: nothing differs.
    let (_, same) = compared(addr, &fast, &fast).await;
    assert_eq!(
        same.comparison.kind,
        ComparisonKind::NoDifference,
        "{}",
        same.comparison.summary
    );
    assert!(same.comparison.caveats.is_empty());

    // An error page is never compared, however fast it came back.
    let bad = finished(addr, &target.https_url("/status/502")).await;
    let (_, error) = compared(addr, &slow, &bad).await;
    assert_eq!(error.comparison.kind, ComparisonKind::NotComparable);
    assert!(
        error
            .comparison
            .summary
            .contains("B has no successful attempt")
            && error.comparison.summary.contains("502"),
        "{}",
        error.comparison.summary
    );

    // A running probe has nothing final to compare.
    let running = create_probe(
        addr,
        FROM,
        &probe_body(&target.https_url("/delay/3000"), &["h1"], 1),
    )
    .await;
    let early = http(
        addr,
        FROM,
        Method::GET,
        &format!("/api/v1/compare/{slow}/{running}"),
        None,
    )
    .await;
    assert_eq!(early.status, StatusCode::CONFLICT, "{}", early.text());
    assert_eq!(early.code(), "still_running");
    assert!(early.text().contains(&running));

    // Unknown ids and malformed paths are JSON 404s.
    for path in [
        format!("/api/v1/compare/{slow}/zzzzzzzzzzzz"),
        format!("/api/v1/compare/{slow}"),
        format!("/api/v1/compare/{slow}/{fast}/more"),
        format!("/api/v1/compare/{slow}/..%2F..%2Fetc"),
    ] {
        let answer = http(addr, FROM, Method::GET, &path, None).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(answer.code(), "not_found", "{path}");
    }

    // The shared page: the whole comparison in the shell (as the API's JSON gives it, drawn by
    // the Leptos component `pages::compare`) and the preview tags, before any script runs.
    let page = http(
        addr,
        FROM,
        Method::GET,
        &format!("/compare/{slow}/{fast}"),
        None,
    )
    .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text());
    let html = page.text();
    let summary = both
        .comparison
        .summary
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let shown: String = summary.chars().take(120).collect();
    assert!(html.contains(&shown), "{html}");
    for part in [
        "<section id=\"comparison\" aria-label=\"Results compared\" data-title=\"Comparison: ",
        "<table class=\"diff-table\">",
        "<section data-side=\"b\" aria-labelledby=\"vantage-title-b\" class=\"vantage-group\">",
    ] {
        assert!(html.contains(part), "{part} in {html}");
    }
    assert!(
        !html.contains("rel=\"preload\""),
        "nothing to read first: {html}"
    );
    assert!(
        html.contains(&format!("/compare/{slow}/{fast}\" />")),
        "{html}"
    );
    assert!(!html.contains("Where does the time go?"));
    // The same drawing as HTML alone, for a page a static host served.
    let view = http(
        addr,
        FROM,
        Method::GET,
        &format!("/api/v1/compare/{slow}/{fast}/view"),
        None,
    )
    .await;
    assert_eq!(view.status, StatusCode::OK, "{}", view.text());
    assert_eq!(
        view.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(
        view.text().starts_with("<section id=\"comparison\""),
        "{}",
        view.text()
    );
    assert!(html.contains(&view.text()), "the page holds the view");
    let missing = http(
        addr,
        FROM,
        Method::GET,
        &format!("/api/v1/compare/{slow}/zzzzzzzzzzzz/view"),
        None,
    )
    .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.code(), "not_found");
    // An unknown one gets the plain shell, and the app says what is wrong.
    let unknown = http(
        addr,
        FROM,
        Method::GET,
        &format!("/compare/{slow}/zzzzzzzzzzzz"),
        None,
    )
    .await;
    assert_eq!(unknown.text(), INDEX);
}

#[tokio::test]
async fn the_cli_compares_permalinks_ids_and_files_as_the_api_does() {
    let Setup {
        target,
        server,
        slow,
        fast,
        _dirs,
    } = setup().await;
    let addr = server.addr;
    let base = format!("http://{addr}");
    let (_, api) = compared(addr, &slow, &fast).await;

    // A permalink and an id on --server; the JSON is the API's comparison, computed here.
    let args = |extra: &[&str]| -> Vec<String> {
        let mut all = vec![
            "compare".to_owned(),
            format!("{base}/r/{slow}"),
            fast.clone(),
        ];
        all.extend(["--server".to_owned(), base.clone()]);
        all.extend(extra.iter().map(|s| (*s).to_owned()));
        all
    };
    let (code, out, err) = h123(args(&["-o", "json"])).await;
    assert_eq!(code, 0, "{err}");
    let json: h123_shared::compare::Comparison = serde_json::from_str(&out).unwrap();
    assert_eq!(json, api.comparison);
    let (code, out, err) = h123(args(&[])).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("B is faster than A on a new connection over HTTP/1.1"),
        "{out}"
    );
    assert!(out.contains("HTTP/2 · new connection"), "{out}");
    assert!(out.contains("B faster by"), "{out}");
    // B faster: no regression. Swapped, B is the slower: exit 3 with the gate.
    let (code, _, _) = h123(args(&["--fail-if-slower"])).await;
    assert_eq!(code, 0);
    let swapped = vec![
        "compare".to_owned(),
        fast.clone(),
        slow.clone(),
        "--server".to_owned(),
        base.clone(),
        "--fail-if-slower".to_owned(),
    ];
    let (code, out, _) = h123(swapped).await;
    assert_eq!(code, 3, "{out}");
    assert!(out.starts_with("A is faster than B"), "{out}");

    // Files: a record as the API serves it, and a result as `h123 probe -o json` writes it.
    let files = tempfile::tempdir().unwrap();
    let (a_file, b_file) = (files.path().join("a.json"), files.path().join("b.json"));
    std::fs::write(&a_file, serde_json::to_vec(&api.a).unwrap()).unwrap();
    std::fs::write(&b_file, serde_json::to_vec(&api.b.result).unwrap()).unwrap();
    let (code, out, err) = h123(vec![
        "compare".to_owned(),
        a_file.display().to_string(),
        b_file.display().to_string(),
        "-o".to_owned(),
        "json".to_owned(),
    ])
    .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        serde_json::from_str::<h123_shared::compare::Comparison>(&out).unwrap(),
        api.comparison
    );

    // Bad input: one readable line and exit 2; a server that is not there: exit 1.
    let running = create_probe(
        addr,
        FROM,
        &probe_body(&target.https_url("/delay/3000"), &["h1"], 1),
    )
    .await;
    std::fs::write(files.path().join("junk.json"), "{\"not\": \"a result\"}").unwrap();
    for (given, server, code, says) in [
        ("nope.json".to_owned(), None, 2, "neither a file"),
        (fast.clone(), None, 2, "--server"),
        (
            files.path().join("junk.json").display().to_string(),
            None,
            2,
            "not an h123 result",
        ),
        (
            "zzzzzzzzzzzz".to_owned(),
            Some(base.clone()),
            2,
            "not_found",
        ),
        (running.clone(), Some(base.clone()), 2, "still running"),
        (
            fast.clone(),
            Some("http://127.0.0.1:9".to_owned()),
            1,
            "127.0.0.1:9",
        ),
    ] {
        let mut all = vec![
            "compare".to_owned(),
            a_file.display().to_string(),
            given.clone(),
        ];
        if let Some(server) = server {
            all.extend(["--server".to_owned(), server]);
        }
        let (got, out, err) = h123(all).await;
        assert_eq!(got, code, "{given}: {err}");
        assert!(out.is_empty(), "{given}: {out}");
        assert_eq!(err.lines().count(), 1, "{given}: {err}");
        assert!(
            err.starts_with("h123: ") && err.contains(says),
            "{given}: {err}"
        );
    }
}
