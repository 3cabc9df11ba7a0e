//! A bench's page, `/b/{id}`, drawn by the server into `index.html`'s shell (the same markup
//! as `GET /api/v1/benches/{id}/view`) with its preview tags, running and finished, against the
//! real engine and target; an unknown id is the plain page as a 404, and its view a JSON 404.

use crate::bench_api::{bench_body, bench_config, create, finished};
use crate::support::*;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use h123_shared::api::BenchRecord;
use h123_shared::bench::words::description;
use h123_shared::markup::escape;
use tower::ServiceExt;

/// The shape of `dist/index.html`: the markers around the introduction, the loading line.
const INDEX: &str = "<!doctype html><html><head><title>h123</title></head><body><main>\
<!--h123:summary--><section class=\"intro\">Where does the time go?</section><!--/h123:summary-->\
<p class=\"loading\" role=\"status\">Loading h123…</p></main></body></html>";

/// `path` through `app` (the router with the web root) as the oneshot tests' client.
async fn page(app: &axum::Router, path: &str) -> Answer {
    let mut request = Request::get(path).body(Body::empty()).unwrap();
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(std::net::SocketAddr::new(
            CLIENT, 40000,
        )));
    collect(app.clone().oneshot(request).await.unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bench_page_is_drawn_by_the_server_as_its_view_is() {
    let _alone = SERIAL.lock().await;
    let target = target().await;
    let (dir, web) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(web.path().join("index.html"), INDEX).unwrap();
    let state = state(bench_config(&target), &dir);
    let app = h123::api::app_with_web_root(state.clone(), Some(web.path()));
    // A URL whose `&` HTML must escape.
    let url = target.https_url("/bytes/100?a=%3Cb%3E&b=1");
    let created = create(&state, &bench_body(&url, &["h1", "h2"], 600)).await;
    let path = format!("/b/{}", created.id);

    // While it runs: its progress in the page, and no figures.
    let running = page(&app, &path).await;
    assert_eq!(running.status, StatusCode::OK);
    let html = running.text();
    if html.contains("data-status=\"running\"") {
        assert!(html.contains("class=\"bench-progress\""), "{html}");
        assert!(html.contains("content=\"Running: the load is being measured.\""));
        assert!(!html.contains("bench-table"), "{html}");
    }

    let record: BenchRecord = finished(|| {
        let (state, json) = (state.clone(), created.links.self_.clone());
        async move {
            serde_json::from_slice(&call(&state, get(&json), CLIENT).await.body)
                .expect("BenchRecord")
        }
    })
    .await;
    let done = page(&app, &path).await;
    assert_eq!(done.status, StatusCode::OK);
    assert_eq!(done.header("cache-control"), Some("no-cache"));
    let html = done.text();
    let view = call(
        &state,
        get(&format!("{}/view", created.links.self_)),
        CLIENT,
    )
    .await;
    assert_eq!(view.status, StatusCode::OK);
    assert_eq!(
        view.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        view.text(),
        h123_frontend::pages::render(|| h123_frontend::pages::bench::bench_page(&record)),
        "the view is the page's component"
    );
    assert!(
        html.contains(&format!("<main>{}</main>", view.text())),
        "the bench replaces the introduction and the loading line: {html}"
    );
    assert!(
        html.contains("<html data-islands"),
        "an islands page: {html}"
    );
    let title = escape(&format!(
        "{} · h123",
        h123_shared::bench::words::title(&record)
    ));
    assert!(html.contains(&format!("<title>{title}</title>")), "{html}");
    assert!(html.contains("data-status=\"done\"") && html.contains("bench-table"));
    assert!(!html.contains("&b=1") && !html.contains("intro"), "{html}");
    let title = escape(&format!("h123: load comparison of {}", record.options.url));
    assert!(html.contains(&format!(
        "<meta property=\"og:title\" content=\"{title}\" />"
    )));
    let description = escape(&description(&record));
    assert!(
        description.starts_with("Requests per second: HTTP/1.1 "),
        "{description}"
    );
    assert!(html.contains(&format!(
        "<meta property=\"og:description\" content=\"{description}\" />"
    )));
    assert!(html.contains(&format!("<meta property=\"og:url\" content=\"{path}\" />")));
    assert!(!html.contains("og:image"), "a bench has no picture");

    // An unknown or malformed id: the plain page as a 404 (the page's script says so), and
    // a JSON 404 for its view.
    for unknown in ["/b/zzzzzzzzzzzz", "/b/no-such-id"] {
        let answer = page(&app, unknown).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{unknown}");
        assert_eq!(answer.text(), INDEX, "{unknown}");
    }
    let view = call(&state, get("/api/v1/benches/zzzzzzzzzzzz/view"), CLIENT).await;
    assert_eq!(view.status, StatusCode::NOT_FOUND);
    assert_eq!(view.code(), "not_found");
}
