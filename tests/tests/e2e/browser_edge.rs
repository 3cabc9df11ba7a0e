//! The web UI from the edge, in headless Chromium: the built bundle served by a plain static
//! file server (tower-http's `ServeDir`, not h123) on one origin, its `h123-config.js` pointing
//! at `h123 serve` on another. With `--cors-origin` naming the UI's origin, a probe typed in the
//! form runs end to end: every API call, the live stream included, goes to the probe server, and
//! the export links point there. A server that does not list the origin is unreachable for the
//! page, which says so. Needs what `browser` needs.

use crate::browser::{
    browser, chromedriver, serve_with, submit_probe, unavailable, until, workspace,
};
use fantoccini::{Client, Locator};
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_target::{TargetConfig, TestTarget};
use std::path::Path;
use tower_http::services::{ServeDir, ServeFile};

/// Copies the built UI (not its precompressed twins) into `dir`, pointed at the API at `api`.
fn bundle_for(dir: &Path, api: &str) {
    for entry in std::fs::read_dir(workspace().join("dist")).expect("dist") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_file() && !name.ends_with(".br") && !name.ends_with(".gz") {
            std::fs::copy(&path, dir.join(&name)).expect("copy");
        }
    }
    std::fs::write(
        dir.join("h123-config.js"),
        format!("window.h123 = {{ api: \"{api}\" }};\n"),
    )
    .expect("config");
}

/// Serves `dir` as a static host does (unknown paths get `index.html`); returns its origin.
async fn static_host(dir: &Path) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let files = ServeDir::new(dir).fallback(ServeFile::new(dir.join("index.html")));
    tokio::spawn(async move {
        axum::serve(listener, axum::Router::new().fallback_service(files))
            .await
            .unwrap();
    });
    origin
}

/// Probe `id`'s record, fetched by the page from the API at `api` (a cross-origin read).
async fn api_base_record(client: &Client, api: &str, id: &str) -> ProbeRecord {
    let script = format!(
        "const done = arguments[0]; fetch('{api}/api/v1/probes/{id}').then(r => r.text()).then(done);"
    );
    let text = client.execute_async(&script, vec![]).await.expect("fetch");
    serde_json::from_str(text.as_str().expect("text")).expect("record JSON")
}

/// Types `url` into the home page's form at `origin`.
async fn fill_form(client: &Client, origin: &str, url: &str) {
    crate::browser::open_home(client, origin).await;
    client
        .wait()
        .for_element(Locator::Css("#url"))
        .await
        .expect("URL field")
        .send_keys(url)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_on_a_static_host_talks_to_a_probe_server_elsewhere() {
    if unavailable() {
        return;
    }
    let _turn = crate::support::SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default())
        .await
        .expect("target");
    let tmp = tempfile::tempdir().expect("temp dir");
    let (ui_dir, closed_dir) = (tmp.path().join("ui"), tmp.path().join("closed-ui"));
    std::fs::create_dir_all(&ui_dir).unwrap();
    std::fs::create_dir_all(&closed_dir).unwrap();
    // The static host serves files as they are on disk, so it starts first: the server that
    // lists its origin starts next, and the bundle, pointed at that server, is written last.
    let ui_origin = static_host(&ui_dir).await;
    let (_api, api) = serve_with(
        &target,
        &tmp.path().join("open"),
        &["--cors-origin", &ui_origin],
    )
    .await;
    bundle_for(&ui_dir, &api);

    let (_driver, driver) = chromedriver().await;
    let client = browser(&driver, &tmp.path().join("profile")).await;
    fill_form(&client, &ui_origin, &target.https_url("/delay/50")).await;
    let id = submit_probe(&client).await;
    until(
        &client,
        "return !!document.querySelector('.verdict-summary');",
        30,
    )
    .await;
    let record = api_base_record(&client, &api, &id).await;
    assert_eq!(record.status, ProbeStatus::Done);
    let verdict = client
        .execute(
            "return document.querySelector('.verdict-summary').textContent;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        verdict,
        record
            .result
            .analysis
            .as_ref()
            .expect("analysis")
            .verdict
            .summary
            .as_str()
    );
    // Every API call left for the probe server; none asked the static host.
    let called = client
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('/api/'));",
            vec![],
        )
        .await
        .unwrap();
    let called: Vec<String> = serde_json::from_value(called).unwrap();
    assert!(
        called
            .iter()
            .any(|n| n == &format!("{api}/api/v1/probes/{id}/view/events")),
        "{called:?}"
    );
    assert!(called.iter().all(|n| n.starts_with(&api)), "{called:?}");
    let har = client
        .execute(
            "return document.querySelector('a[href$=\"/har\"]').href;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(har, format!("{api}/api/v1/probes/{id}/har").as_str());

    // A comparison on the static host: the islands bundle draws the API's view of it, links on
    // the API, and hydrates its islands.
    client
        .goto(&format!("{ui_origin}/compare/{id}/{id}"))
        .await
        .expect("compare");
    let summary = until(
        &client,
        "const s = document.querySelector('[aria-labelledby=compare-title] .verdict-summary'); \
         return s && performance.getEntriesByName('h123:app').length ? s.textContent : null;",
        30,
    )
    .await;
    let script = format!(
        "const done = arguments[0]; fetch('{api}/api/v1/compare/{id}/{id}').then(r => r.json()).then(j => done(j.comparison.summary));"
    );
    let expected = client.execute_async(&script, vec![]).await.expect("fetch");
    assert_eq!(summary, expected);
    let page = client
        .execute(
            "return [document.title.startsWith('Comparison: '), \
             document.querySelector('a[download$=\".json\"]').href, \
             performance.getEntriesByType('resource').map(e => e.name).filter(n => n.endsWith('.wasm'))];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        page,
        serde_json::json!([
            true,
            format!("{api}/api/v1/compare/{id}/{id}"),
            [format!("{ui_origin}/h123-islands_bg.wasm")]
        ])
    );
    client
        .execute("document.querySelector('.wf-panels .bar').focus();", vec![])
        .await
        .unwrap();
    until(
        &client,
        "return document.querySelector('.wf-readout').textContent.includes('(from ');",
        5,
    )
    .await;

    // A server that does not list the UI's origin: the browser withholds its answers, so the
    // page cannot fetch its forms and says why at once.
    let (_closed, closed) = serve_with(&target, &tmp.path().join("closed"), &[]).await;
    bundle_for(&closed_dir, &closed);
    let closed_origin = static_host(&closed_dir).await;
    client.goto(&closed_origin).await.expect("home");
    let said = until(
        &client,
        "const p = document.querySelector('.problem'); return p ? p.textContent : null;",
        10,
    )
    .await;
    assert!(
        said.as_str()
            .unwrap_or_default()
            .contains("Cannot reach the h123 server"),
        "{said}"
    );
    assert_eq!(
        client
            .execute("return document.title;", vec![])
            .await
            .unwrap(),
        "Cannot reach the h123 server · h123"
    );
    // A comparison there: the islands bundle draws the same problem page.
    client
        .goto(&format!("{closed_origin}/compare/{id}/{id}"))
        .await
        .expect("compare");
    let said = until(
        &client,
        "const p = document.querySelector('.problem h1'); return p ? [p.textContent, document.title] : null;",
        10,
    )
    .await;
    assert_eq!(
        said,
        serde_json::json!([
            "Cannot reach the h123 server",
            "Cannot reach the h123 server · h123"
        ])
    );
    client.close().await.ok();
}
