//! A monitor's pages in headless Chromium against `h123 serve --monitor-min-interval 1s`: a public
//! monitor of the target made through the API runs every second; its page (`/m/{id}`) is drawn
//! by the server with no WebAssembly, a chart per metric with a line per protocol in the page's
//! colours (light and dark), a point per run linking to that run's result page, breaches marked
//! against the threshold, each chart's table as its text alternative; its status page shows
//! uptime per protocol and badges that load; at 390 px nothing scrolls sideways. Screenshots go
//! to `docs/monitor-desktop-light.png` and `docs/status-desktop-light.png`.

use crate::browser::{Stage, assert_fits_a_phone, color_scheme, screenshots, until, workspace};
use fantoccini::{Client, Locator};
use h123_target::TargetConfig;
use serde_json::{Value, json};

/// `fetch(path, init)` in the page, answering `[status, body text]`.
async fn fetch(client: &Client, path: &str, init: Value) -> (u64, String) {
    let script = "const [path, init, done] = arguments; \
        fetch(path, init).then(async r => done([r.status, await r.text()]));";
    let answer = client
        .execute_async(script, vec![json!(path), init])
        .await
        .expect("fetch");
    (
        answer[0].as_u64().unwrap(),
        answer[1].as_str().unwrap().to_owned(),
    )
}

/// The drawn charts: per chart its lines' classes and stroke colours, its linked points, breach
/// marks and table rows; and whether any WebAssembly was fetched.
const CHARTS: &str = r#"
return { charts: [...document.querySelectorAll('svg.monitor-chart')].map(svg => ({
    lines: [...svg.querySelectorAll('path.chart-line')].map(p => [p.getAttribute('class'), getComputedStyle(p).stroke]),
    links: [...svg.querySelectorAll('a')].map(a => a.getAttribute('href')),
    breaches: svg.querySelectorAll('circle.chart-breach').length,
    rows: svg.closest('section').querySelectorAll('.chart-table tbody tr').length })),
  wasm: performance.getEntriesByType('resource').some(r => r.name.endsWith('.wasm')),
  title: document.title };
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_monitor_page_charts_every_run_and_its_status_page_shows_uptime_and_badges() {
    let flags = ["--monitor-min-interval", "1s"];
    let Some(stage) = Stage::start(TargetConfig::default(), &flags).await else {
        return;
    };
    let client = stage.browser("monitor").await;
    crate::browser::open_home(&client, &stage.base).await;
    let body = json!({
        "url": stage.target.https_url("/delay/20"),
        "protocols": ["h2", "h3"],
        "every": "1s",
        "options": {"repeat": 2, "rounds": 1},
        "thresholds": {"total": "5ms"},
        "visibility": "public",
    });
    let init = json!({"method": "POST", "headers": {"content-type": "application/json"}, "body": body.to_string()});
    let (status, created) = fetch(&client, "/api/v1/monitors", init).await;
    assert_eq!(status, 201, "{created}");
    let id = serde_json::from_str::<Value>(&created).unwrap()["monitor"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut runs = 0;
    for _ in 0..60 {
        let (_, text) = fetch(&client, &format!("/api/v1/monitors/{id}/status"), json!({})).await;
        let status: Value = serde_json::from_str(&text).unwrap();
        runs = status["rows"]
            .as_array()
            .and_then(|rows| {
                rows.iter()
                    .map(|r| r["windows"][0]["runs"].as_u64().unwrap())
                    .min()
            })
            .unwrap_or(0);
        if runs >= 4 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(runs >= 4, "the monitor ran: {runs} runs");

    client
        .goto(&format!("{}/m/{id}?range=1h", stage.base))
        .await
        .expect("monitor page");
    until(
        &client,
        "return document.querySelectorAll('svg.monitor-chart').length === 6;",
        10,
    )
    .await;
    let drawn = client.execute(CHARTS, vec![]).await.unwrap();
    assert_eq!(
        drawn["wasm"], false,
        "the server draws the page whole: {drawn}"
    );
    assert!(
        drawn["title"]
            .as_str()
            .unwrap()
            .starts_with("h123 monitor: https://"),
        "{drawn}"
    );
    let charts = drawn["charts"].as_array().unwrap();
    let total = &charts[0];
    let lines: Vec<(String, String)> = serde_json::from_value(total["lines"].clone()).unwrap();
    assert_eq!(
        lines,
        [
            ("chart-line h2".to_owned(), "rgb(213, 94, 0)".to_owned()),
            ("chart-line h3".to_owned(), "rgb(0, 158, 115)".to_owned())
        ],
        "a line per protocol in the page's colours"
    );
    // A point per protocol and bucket (30 s at 1 h), each linking its slowest run.
    let links: Vec<String> = serde_json::from_value(total["links"].clone()).unwrap();
    let rows = total["rows"].as_u64().unwrap() as usize;
    assert!(rows >= 1, "{drawn}");
    assert!(
        links.len() >= 2 && links.len() <= 2 * rows,
        "{links:?}, {rows} rows"
    );
    assert!(links.iter().all(|l| l.starts_with("/r/")), "{links:?}");
    assert_eq!(
        total["breaches"].as_u64().unwrap() as usize,
        links.len(),
        "every run is over a 5 ms median (the target waits 20 ms)"
    );

    color_scheme(&client, "dark").await;
    let dark = client.execute(CHARTS, vec![]).await.unwrap();
    assert_eq!(
        dark["charts"][0]["lines"][1][1], "rgb(46, 196, 160)",
        "the dark scheme's HTTP/3 colour"
    );
    color_scheme(&client, "light").await;

    screenshots(&client, "monitor").await;
    assert_fits_a_phone(&client).await;
    client.set_window_size(1280, 900).await.expect("resize");

    // A point opens its run's result.
    let first = client
        .find(Locator::Css("svg.monitor-chart a"))
        .await
        .expect("a point");
    let href = first.attr("href").await.unwrap().unwrap();
    client
        .goto(&format!("{}{href}", stage.base))
        .await
        .expect("result page");
    until(&client, "return !!document.querySelector('.verdict');", 20).await;

    client
        .goto(&format!("{}/m/{id}/status", stage.base))
        .await
        .expect("status page");
    let status = until(
        &client,
        "const rows = [...document.querySelectorAll('table.monitor-status tbody tr')]; \
         const badges = [...document.querySelectorAll('.monitor-badges img')]; \
         return rows.length && badges.every(b => b.complete) \
           ? [rows.map(r => r.dataset.protocol), badges.map(b => b.naturalWidth > 0), \
              [...document.querySelectorAll('thead th')].map(th => th.textContent)] : null;",
        10,
    )
    .await;
    assert_eq!(status[0], json!(["h2", "h3"]), "{status}");
    assert_eq!(status[1], json!([true, true]), "the badges load: {status}");
    assert!(status[2].to_string().contains("Uptime 30d"), "{status}");
    screenshots(&client, "status").await;
    for page in ["monitor", "status"] {
        std::fs::copy(
            workspace().join(format!("test-artifacts/{page}-desktop-light.png")),
            workspace().join(format!("docs/{page}-desktop-light.png")),
        )
        .expect("docs screenshot");
    }
    client.close().await.unwrap();
}
