//! Browser tests: the web UI in headless Chromium against a real `h123 serve` and the loopback test target.
//!
//! Needs the built UI in `dist/` (scripts/build-web), the release `h123` binary next to this
//! test's target directory (or `H123_BIN`), and Debian's `chromium` + `chromium-driver`.
//! When any is missing the test says so and passes, unless `H123_BROWSER_TESTS=1` (set by
//! scripts/test) makes them required. Screenshots go to `test-artifacts/`. The tests take
//! turns: each runs its own server, chromedriver and Chromium (and one runs a bench).

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use h123_shared::api::{BenchRecord, ProbeRecord};
use h123_shared::format::{count, ms, rate};
use h123_shared::waterfall::layout;
use h123_target::{H3Mode, TargetConfig, TestTarget};
use serde_json::{Value, json};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Slow enough (9 attempts of 300 ms) that live progress is observable.
const TARGET_PATH: &str = "/delay/300";

/// Kills a child process when dropped.
pub(crate) struct Killed(pub(crate) Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// A TCP port free on 127.0.0.1 at the moment of asking.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// `target/<profile>/h123`, next to this test binary (`target/<profile>/deps/browser-…`).
pub(crate) fn h123_binary() -> Option<PathBuf> {
    if let Ok(bin) = std::env::var("H123_BIN") {
        return Some(PathBuf::from(bin));
    }
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("h123");
    bin.is_file().then_some(bin)
}

/// What is missing to run the browser tests, if anything.
fn missing() -> Option<String> {
    if !workspace().join("dist/index.html").is_file() {
        return Some("dist/index.html (run scripts/build-web)".into());
    }
    if h123_binary().is_none() {
        return Some("the h123 binary (cargo build --release -p h123)".into());
    }
    ["chromium", "chromedriver"]
        .into_iter()
        .find(|tool| {
            Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_err()
        })
        .map(|tool| format!("{tool} (apt-get install chromium chromium-driver)"))
}

async fn wait_for_port(addr: SocketAddr) {
    for _ in 0..200 {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on {addr}");
}

/// Starts `h123 serve` for the test target on a free port, with a fresh database and `extra` flags.
pub(crate) async fn serve_with(
    target: &TestTarget,
    db_dir: &Path,
    extra: &[&str],
) -> (Killed, String) {
    serve_root(target, db_dir, &workspace().join("dist"), extra).await
}

/// Like [`serve_with`], serving the web UI from `web_root`.
async fn serve_root(
    target: &TestTarget,
    db_dir: &Path,
    web_root: &Path,
    extra: &[&str],
) -> (Killed, String) {
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let child = Command::new(h123_binary().unwrap())
        .arg("serve")
        .args(["--listen", &addr.to_string()])
        .arg("--db")
        .arg(db_dir.join("h123.sqlite"))
        .arg("--web-root")
        .arg(web_root)
        .arg("--cacert")
        .arg(target.ca_file())
        .args(["--allow-target", &target.https_addr.to_string()])
        .args(extra)
        .stdout(Stdio::null())
        .spawn()
        .expect("start h123 serve");
    let child = Killed(child);
    wait_for_port(addr).await;
    (child, format!("http://{addr}"))
}

/// Starts chromedriver on a free port.
pub(crate) async fn chromedriver() -> (Killed, String) {
    let port = free_port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let child = Killed(child);
    wait_for_port(format!("127.0.0.1:{port}").parse().unwrap()).await;
    (child, format!("http://127.0.0.1:{port}"))
}

/// A browser test's world: its turn (browser tests run one at a time, on two cores), the target,
/// `h123 serve` for it on a fresh database, and chromedriver.
pub(crate) struct Stage {
    /// The test target.
    pub(crate) target: TestTarget,
    /// The database's and the browser profiles' folder.
    pub(crate) tmp: tempfile::TempDir,
    /// The server's address, `http://127.0.0.1:PORT`.
    pub(crate) base: String,
    /// chromedriver's address.
    pub(crate) driver: String,
    _driver: Killed,
    _server: Killed,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

impl Stage {
    /// Starts the target with `config` and the server with `extra` flags; `None` when the browser
    /// tests are skipped here (see [`unavailable`]).
    pub(crate) async fn start(config: TargetConfig, extra: &[&str]) -> Option<Stage> {
        if unavailable() {
            return None;
        }
        let turn = crate::support::SERIAL.lock().await;
        let target = TestTarget::start(config).await.expect("target");
        let tmp = tempfile::tempdir().expect("temp dir");
        let (server, base) = serve_with(&target, tmp.path(), extra).await;
        let (driver_process, driver) = chromedriver().await;
        Some(Stage {
            target,
            tmp,
            base,
            driver,
            _driver: driver_process,
            _server: server,
            _turn: turn,
        })
    }

    /// A Chromium session with a fresh profile in the folder `profile`.
    pub(crate) async fn browser(&self, profile: &str) -> Client {
        browser(&self.driver, &self.tmp.path().join(profile)).await
    }
}

/// A headless Chromium session with a fresh profile in `profile`.
pub(crate) async fn browser(driver: &str, profile: &Path) -> Client {
    browser_with(driver, profile, &[]).await
}

/// Like [`browser`], with `extra` command-line switches.
pub(crate) async fn browser_with(driver: &str, profile: &Path, extra: &[String]) -> Client {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--window-size=1280,900",
    ]
    .into_iter()
    .map(str::to_string)
    .chain([format!("--user-data-dir={}", profile.display())])
    .chain(extra.iter().cloned())
    .collect::<Vec<_>>();
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": "/usr/bin/chromium", "args": args },
        "goog:loggingPrefs": { "browser": "ALL" },
    });
    let Value::Object(caps) = caps else {
        unreachable!()
    };
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(driver)
        .await
        .expect("WebDriver session")
}

/// A chromedriver extension command: a POST of `body` to `session/{id}/{path}`
/// (`goog/cdp/execute` for a DevTools command, `se/log` for the console).
#[derive(Debug)]
struct DriverPost {
    path: &'static str,
    body: Value,
}

impl WebDriverCompatibleCommand for DriverPost {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/{}",
            session.unwrap_or_default(),
            self.path
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.body.to_string()))
    }
}

/// A Chrome DevTools command, through chromedriver.
fn cdp(body: Value) -> DriverPost {
    DriverPost {
        path: "goog/cdp/execute",
        body,
    }
}

pub(crate) async fn color_scheme(client: &Client, scheme: &str) {
    client
        .issue_cmd(cdp(json!({
            "cmd": "Emulation.setEmulatedMedia",
            "params": { "features": [{ "name": "prefers-color-scheme", "value": scheme }] },
        })))
        .await
        .expect("emulate color scheme");
}

/// Puts the browser's pages on the clock of `zone` (an IANA name, e.g. "Asia/Kolkata").
pub(crate) async fn timezone(client: &Client, zone: &str) {
    client
        .issue_cmd(cdp(json!({
            "cmd": "Emulation.setTimezoneOverride",
            "params": { "timezoneId": zone },
        })))
        .await
        .expect("emulate time zone");
}

/// Whether the browser tests must be skipped here (saying why); with `H123_BROWSER_TESTS` set,
/// a missing piece fails the test instead.
pub(crate) fn unavailable() -> bool {
    let Some(what) = missing() else {
        return false;
    };
    assert!(
        std::env::var("H123_BROWSER_TESTS").is_err(),
        "browser tests required but missing: {what}"
    );
    eprintln!("skipping the browser tests: missing {what}");
    true
}

/// What a script returns once it is something other than null/false, trying for `secs`.
pub(crate) async fn within(client: &Client, script: &str, secs: u64) -> Option<Value> {
    for _ in 0..secs * 20 {
        let v = client.execute(script, vec![]).await.expect("script");
        if !v.is_null() && v != Value::Bool(false) {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// Runs a script until it returns something other than null/false, or panics after `secs`
/// showing the page's state.
pub(crate) async fn until(client: &Client, script: &str, secs: u64) -> Value {
    match within(client, script, secs).await {
        Some(v) => v,
        None => panic!(
            "timed out waiting for: {script}\n{}",
            page_state(client).await
        ),
    }
}

/// Whether the home page's script has adopted the forms the server drew (`perf::APP`).
const ADOPTED: &str = "return performance.getEntriesByName('h123:app').length ? true : null;";

/// Opens the home page at `base` and waits until its script has adopted the forms the server
/// drew, so the fields found next have their behaviour.
pub(crate) async fn open_home(client: &Client, base: &str) {
    client.goto(base).await.expect("home");
    until(client, ADOPTED, 30).await;
}

/// From the home page at `base`: types `url`, ticks the advanced option `#option`, and starts the
/// probe; returns its id once its page opens.
pub(crate) async fn probe_with_option(
    client: &Client,
    base: &str,
    url: &str,
    option: &str,
) -> String {
    crate::browser::open_home(client, base).await;
    client
        .wait()
        .for_element(Locator::Css("#url"))
        .await
        .expect("the URL field")
        .send_keys(url)
        .await
        .unwrap();
    for toggle in ["details.advanced summary", option] {
        client
            .find(Locator::Css(toggle))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }
    submit_probe(client).await
}

/// Starts the bench the form describes and returns its id once its page opens.
pub(crate) async fn submit_bench(client: &Client) -> String {
    submit_and_open(client, ".bench-form button[type=submit]", "b").await
}

/// Submits the form and returns the new probe's id, once the page is at its permalink.
pub(crate) async fn submit_probe(client: &Client) -> String {
    submit_and_open(client, "button[type=submit]", "r").await
}

/// Clicks `button` and returns the id in the `/{route}/{id}` page it opens.
async fn submit_and_open(client: &Client, button: &str, route: &str) -> String {
    client
        .find(Locator::Css(button))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let script = format!(
        "const m = location.pathname.match(/^\\/{route}\\/(.+)$/); return m ? m[1] : null;"
    );
    until(client, &script, 10)
        .await
        .as_str()
        .unwrap()
        .to_string()
}

/// The page's address, the start of its body and the browser's console, for a failure message.
pub(crate) async fn page_state(client: &Client) -> String {
    let page = client
        .execute(
            "return location.href + '\\n' + document.body.innerHTML.slice(0, 2000);",
            vec![],
        )
        .await
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .unwrap_or_else(|e| format!("(page unreadable: {e})"));
    let console = client
        .issue_cmd(DriverPost {
            path: "se/log",
            body: json!({ "type": "browser" }),
        })
        .await
        .map(|log| log.to_string())
        .unwrap_or_else(|e| format!("(console unreadable: {e})"));
    format!("page: {page}\nconsole: {console}")
}

/// The waterfalls as drawn: per panel, per row, every bar's phase, x and width (percent).
const DRAWN: &str = r#"
return [...document.querySelectorAll('.wf-panel')].map(p => ({
  protocol: p.dataset.protocol,
  rows: [...p.querySelectorAll('.wf-row')].map(r => ({
    attempt: +r.dataset.attempt,
    reused: r.classList.contains('reused'),
    bars: [...r.querySelectorAll('.bar')].map(b => {
      const rect = b.querySelector('rect.fill');
      return { phase: b.dataset.phase, x: parseFloat(rect.getAttribute('x')),
               width: parseFloat(rect.getAttribute('width')),
               label: b.getAttribute('aria-label'), focusable: b.getAttribute('tabindex') !== null };
    }),
  })),
}));
"#;

/// Creates a probe of `options` with the page's own `fetch` (its origin, its cookies) and
/// returns its id.
pub(crate) async fn create_probe_from_page(client: &Client, options: Value) -> String {
    let script = "const done = arguments[1]; fetch('/api/v1/probes', {method: 'POST', \
                  headers: {'content-type': 'application/json'}, body: JSON.stringify(arguments[0])}) \
                  .then(r => r.json()).then(j => done(j.id));";
    let id = client
        .execute_async(script, vec![options])
        .await
        .expect("create");
    id.as_str().expect("id").to_string()
}

/// The record as the API serves it, fetched by the page's own origin.
pub(crate) async fn api_record(client: &Client, id: &str) -> ProbeRecord {
    let script = format!(
        "const done = arguments[0]; fetch('/api/v1/probes/{id}').then(r => r.text()).then(done);"
    );
    let text = client.execute_async(&script, vec![]).await.expect("fetch");
    serde_json::from_str(text.as_str().expect("text")).expect("record JSON")
}

/// Checks the drawn waterfalls against the layout of the API's record.
fn assert_matches_api(drawn: &Value, record: &ProbeRecord) {
    let w = layout(&record.result);
    let panels = drawn.as_array().expect("panels");
    assert_eq!(panels.len(), record.options.protocols.len());
    for (panel, protocol) in panels.iter().zip(&record.options.protocols) {
        assert_eq!(panel["protocol"], protocol.as_str());
        let rows: Vec<_> = w.rows.iter().filter(|r| r.protocol == *protocol).collect();
        let drawn_rows = panel["rows"].as_array().expect("rows");
        assert_eq!(drawn_rows.len(), rows.len(), "{protocol}: rows");
        for (d, row) in drawn_rows.iter().zip(rows) {
            assert_eq!(d["attempt"], row.attempt);
            assert_eq!(d["reused"], row.reused);
            let bars = d["bars"].as_array().expect("bars");
            assert_eq!(bars.len(), row.bars.len(), "{}: bars", row.label);
            for (b, bar) in bars.iter().zip(&row.bars) {
                assert_eq!(b["phase"], bar.phase.as_str());
                assert_eq!(b["focusable"], true);
                let width = b["width"].as_f64().unwrap();
                let x = b["x"].as_f64().unwrap();
                assert!(
                    (width - bar.width * 100.0).abs() < 1e-3,
                    "{}: width",
                    row.label
                );
                assert!((x - bar.x * 100.0).abs() < 1e-3, "{}: x", row.label);
                assert!(b["label"].as_str().unwrap().contains(bar.phase.as_str()));
            }
        }
    }
}

/// Checks one group's drawn panels (`[{protocol, rows: [[phase, x %, width %], ...]}]`, as the
/// vantage and comparison pages' scripts read them) against `shared`'s layout of `result` on an
/// axis fitted to `span`; `who` names the group in a failure.
pub(crate) fn assert_panels_on_axis(
    drawn: &Value,
    result: &h123_shared::ProbeResult,
    span: h123_shared::Micros,
    who: &str,
) {
    let w = h123_shared::waterfall::layout_on(result, span);
    let protocols = &result.options.protocols;
    let panels = drawn.as_array().expect("panels");
    assert_eq!(panels.len(), protocols.len(), "{who}");
    for (panel, protocol) in panels.iter().zip(protocols) {
        assert_eq!(panel["protocol"], protocol.as_str());
        let rows: Vec<_> = w.rows.iter().filter(|r| r.protocol == *protocol).collect();
        let drawn_rows = panel["rows"].as_array().expect("rows");
        assert_eq!(drawn_rows.len(), rows.len(), "{who} {protocol}: rows");
        for (d, row) in drawn_rows.iter().zip(rows) {
            let bars = d.as_array().expect("bars");
            assert_eq!(bars.len(), row.bars.len(), "{who}: {}", row.label);
            for (b, bar) in bars.iter().zip(&row.bars) {
                assert_eq!(b[0], bar.phase.as_str());
                let at = |i: usize| b[i].as_f64().expect("a number");
                assert!(
                    (at(1) - bar.x * 100.0).abs() < 1e-3,
                    "{who}: {} x",
                    row.label
                );
                assert!(
                    (at(2) - bar.width * 100.0).abs() < 1e-3,
                    "{who}: {} width",
                    row.label
                );
            }
        }
    }
}

pub(crate) async fn screenshot(client: &Client, name: &str) {
    let dir = workspace().join("test-artifacts");
    std::fs::create_dir_all(&dir).expect("test-artifacts/");
    let png = client.screenshot().await.expect("screenshot");
    std::fs::write(dir.join(format!("{name}.png")), png).expect("write screenshot");
}

/// Asserts the current page does not scroll sideways at 390 px wide (the window is left so).
pub(crate) async fn assert_fits_a_phone(client: &Client) {
    client.set_window_size(390, 900).await.expect("resize");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let overflow = client
        .execute(
            "return document.documentElement.scrollWidth > document.documentElement.clientWidth;",
            vec![],
        )
        .await
        .expect("page width");
    assert_eq!(
        overflow, false,
        "the page does not scroll sideways at 390 px"
    );
}

/// Full-page screenshots of the current page: desktop and 390 px wide, light and dark.
pub(crate) async fn screenshots(client: &Client, page: &str) {
    for (width, size) in [(1280, "desktop"), (390, "390px")] {
        client.set_window_size(width, 900).await.expect("resize");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let height = client
            .execute("return document.documentElement.scrollHeight;", vec![])
            .await
            .expect("page height")
            .as_u64()
            .unwrap_or(900)
            .clamp(600, 4000) as u32;
        client.set_window_size(width, height).await.expect("resize");
        for scheme in ["light", "dark"] {
            color_scheme(client, scheme).await;
            tokio::time::sleep(Duration::from_millis(150)).await;
            screenshot(client, &format!("{page}-{size}-{scheme}")).await;
        }
    }
    color_scheme(client, "light").await;
    client.set_window_size(1280, 900).await.expect("resize");
}

/// `performance.measure` of the time from the result JSON to painted waterfalls, in ms.
async fn paint_ms(client: &Client) -> f64 {
    until(
        client,
        "const m = performance.getEntriesByName('h123:json-to-paint'); return m.length ? m[0].duration : null;",
        10,
    )
    .await
    .as_f64()
    .expect("duration")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_ui_end_to_end() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let (target, base) = (&stage.target, stage.base.clone());
    let client = stage.browser("profile-1").await;

    // Home page: the form checks the URL as it is typed.
    crate::browser::open_home(&client, &base).await;
    let url_field = client
        .wait()
        .for_element(Locator::Css("#url"))
        .await
        .expect("URL field");
    // This server measures public addresses only (the test target is allowed by name), and says so.
    until(
        &client,
        "return document.getElementById('url-reason').textContent === \
         'http or https; this server only measures public addresses.' || null;",
        10,
    )
    .await;
    url_field.send_keys("ftp://example.com/").await.unwrap();
    let reason = client.find(Locator::Css("#url-reason")).await.unwrap();
    assert!(reason.text().await.unwrap().contains("Only http and https"));
    assert_eq!(
        reason.attr("class").await.unwrap().as_deref(),
        Some("field-note error")
    );
    client
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        client.current_url().await.unwrap().path(),
        "/",
        "a bad URL is not submitted"
    );
    screenshots(&client, "home").await;

    // A private address is refused by the server, with the reason and what to do.
    url_field.clear().await.unwrap();
    url_field.send_keys("https://10.255.255.1/").await.unwrap();
    client
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let blocked = until(
        &client,
        "const p = document.querySelector('.problem'); return p ? [p.dataset.code, p.querySelector('h1').textContent] : null;",
        10,
    )
    .await;
    assert_eq!(blocked[0], "blocked_target");
    assert_eq!(blocked[1], "This target cannot be measured from here");
    screenshots(&client, "blocked").await;

    // Submit a real probe and watch it fill in.
    url_field.clear().await.unwrap();
    url_field
        .send_keys(&target.https_url(TARGET_PATH))
        .await
        .unwrap();
    let id = submit_probe(&client).await;
    let live_rows = until(
        &client,
        "const running = document.querySelector('.status.running');
         const rows = document.querySelectorAll('.wf-row').length;
         return running && rows > 0 ? rows : null;",
        20,
    )
    .await;
    eprintln!("live: {live_rows} rows drawn while the probe was running");
    // A bar that has the keyboard keeps it when the live view is drawn again.
    client
        .execute(
            "window.h123Drawn = document.getElementById('result'); \
             document.querySelector('#result .bar').focus();",
            vec![],
        )
        .await
        .unwrap();
    let redrawn = "const a = document.activeElement; \
                   return document.getElementById('result') === window.h123Drawn ? null \
                   : a.matches('#result .bar') ? 'kept' : `lost to ${a.outerHTML.slice(0, 80)}`;";
    let kept = until(&client, redrawn, 30).await;
    assert_eq!(kept, json!("kept"), "the focus survives a redraw");
    until(
        &client,
        "return !!document.querySelector('.status.done');",
        60,
    )
    .await;

    let record = api_record(&client, &id).await;
    let rows = layout(&record.result).rows.len();
    assert!(
        live_rows.as_u64().unwrap() < rows as u64 || rows == 0,
        "progress was seen before the end"
    );
    let drawn = client.execute(DRAWN, vec![]).await.unwrap();
    assert_matches_api(&drawn, &record);
    // The verdict on the page is the record's, computed once in shared.
    let analysis = record
        .result
        .analysis
        .as_ref()
        .expect("a finished record has its analysis");
    let verdict = client
        .execute(
            "return document.querySelector('.verdict-summary').textContent;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(verdict, analysis.verdict.summary.as_str());
    eprintln!("verdict: {verdict}");
    assert_eq!(
        record.options.protocols.len(),
        3,
        "h1, h2 and h3 by default"
    );
    let live_paint = paint_ms(&client).await;

    // Exact values on keyboard focus, not only on hover.
    client
        .execute("document.querySelector('.wf-row .bar').focus();", vec![])
        .await
        .unwrap();
    let readout = until(
        &client,
        "const t = document.querySelector('.wf-readout').textContent; return t.includes('(from ') ? t : null;",
        5,
    )
    .await;
    eprintln!("focused bar: {readout}");
    screenshots(&client, "result").await;

    // The permalink, in a fresh profile, shows the same figures.
    let fresh = stage.browser("profile-2").await;
    fresh.goto(&format!("{base}/r/{id}")).await.unwrap();
    until(
        &fresh,
        "return !!document.querySelector('.status.done');",
        20,
    )
    .await;
    let again = fresh.execute(DRAWN, vec![]).await.unwrap();
    assert_eq!(again, drawn, "the permalink draws the same waterfalls");
    let permalink_paint = paint_ms(&fresh).await;
    eprintln!(
        "result JSON to painted waterfalls: {live_paint:.1} ms (live, SSE done event), \
         {permalink_paint:.1} ms (permalink, GET)"
    );

    // The home page lists it among the recent results; this server runs no
    // benches, so it offers no load comparison form.
    // The list is read once per visit: a visit that raced the record's
    // store write is retried, and the list's text is shown if it never lists it.
    let listed = format!("return !!document.querySelector('.recent-list a[href=\"/r/{id}\"]');");
    let mut found = false;
    for _ in 0..3 {
        open_home(&client, &base).await;
        if within(&client, &listed, 5).await.is_some() {
            found = true;
            break;
        }
    }
    assert!(
        found,
        "{id} not in the recent list: {}",
        page_state(&client).await
    );
    // Its line says how it went and gives the verdict the result page heads it with.
    let line = client
        .execute(
            &format!(
                "const li = document.querySelector('.recent-list a[href=\"/r/{id}\"]').closest('li'); \
                 const v = li.querySelector('.recent-verdict'); \
                 return [li.querySelector('.status').textContent, v ? v.textContent : null];"
            ),
            vec![],
        )
        .await
        .unwrap();
    let (outcome, listed_verdict) = h123_shared::api::list_line(&record);
    let expected = h123_shared::api::ProbeSummary {
        id: record.id.clone(),
        url: record.options.url.clone(),
        protocols: record.options.protocols.clone(),
        status: record.status,
        created_at_unix_ms: record.created_at_unix_ms,
        visibility: record.options.visibility,
        outcome,
        verdict: listed_verdict.clone(),
    };
    assert_eq!(line[0], expected.badge().0, "the line's status: {line}");
    assert_eq!(
        line[1],
        json!(listed_verdict.expect("a finished line has a verdict")),
        "the line's verdict is the result page's"
    );
    assert!(
        analysis
            .verdict
            .summary
            .starts_with(line[1].as_str().unwrap().trim_end_matches('…')),
        "{line}"
    );
    eprintln!("recent line: {line}");
    let config = client
        .execute_async(
            "const done = arguments[0]; fetch('/api/v1/config').then(r => r.json()).then(done);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(config["bench_enabled"], false);
    assert!(
        client.find(Locator::Css(".bench-form")).await.is_err(),
        "no bench form when benches are off"
    );
    assert!(
        client
            .find(Locator::Css(".vantage-picker:not([hidden])"))
            .await
            .is_err(),
        "no vantage picker on a server without agents"
    );

    // Error pages: an unknown id.
    fresh.goto(&format!("{base}/r/no-such-id")).await.unwrap();
    let problem = fresh
        .wait()
        .for_element(Locator::Css(".problem h1"))
        .await
        .expect("problem page");
    assert_eq!(problem.text().await.unwrap(), "No result with this id");
    screenshots(&fresh, "unknown-id").await;

    fresh.close().await.unwrap();
    client.close().await.unwrap();
}

/// The bench table as drawn: per `data-metric` row, per protocol, the shown value.
const BENCH_TABLE: &str = r#"
const rows = {};
for (const tr of document.querySelectorAll('.bench-table tbody tr')) {
  rows[tr.dataset.metric] = Object.fromEntries([...tr.querySelectorAll('td')].map(
    td => [td.dataset.protocol, td.querySelector('.value').textContent]));
}
return rows;
"#;

/// The chart as drawn: its accessible name and each line's protocol and path.
const BENCH_CHART: &str = r#"
const svg = document.querySelector('svg.bench-chart');
return { role: svg.getAttribute('role'), label: svg.getAttribute('aria-label'),
         lines: [...svg.querySelectorAll('path.line')].map(p => ({
           protocol: p.dataset.protocol, d: p.getAttribute('d') })) };
"#;

/// Whether the result's row labels and its comparison fit: the labels whose tags are cut, how
/// many tags there are, the protocol columns' widths, and whether the table's box scrolls.
const FITS: &str = r#"
const labels = [...document.querySelectorAll('.wf-panels .wf-label')];
const table = document.querySelector('.comparison .table-scroll');
return {
  cut: labels.filter(l => l.scrollWidth > l.clientWidth).map(l => l.textContent),
  tags: document.querySelectorAll('.wf-panels .wf-label .tag').length,
  columns: [...table.querySelectorAll('thead th')].slice(1).map(th => th.getBoundingClientRect().width),
  table_scrolls: table.scrollWidth > table.clientWidth,
};
"#;

/// The answer on the page: a redirect chain drawn as one row with its hop boundaries and its
/// tags whole at every width, HTTP/3 advertised but silent keeping its column in the comparison
/// with the reason (a column as wide as the others, on screen at 390 px), the outcome badge and
/// the verdict as the API computed them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_end_to_end() {
    let config = TargetConfig {
        h3: H3Mode::BlockUdp,
        ..TargetConfig::default()
    };
    let Some(stage) = Stage::start(config, &[]).await else {
        return;
    };
    let (target, base) = (&stage.target, stage.base.clone());
    let client = stage.browser("profile").await;
    crate::browser::open_home(&client, &base).await;
    let options = json!({
        "url": target.https_url("/redirect/2"),
        "follow_redirects": true,
        "repeat": 3, "rounds": 1,
        "phase_timeout_ms": 1000,
    });
    let id = create_probe_from_page(&client, options).await;
    client.goto(&format!("{base}/r/{id}")).await.unwrap();
    until(
        &client,
        "return !!document.querySelector('.verdict-summary');",
        30,
    )
    .await;
    let record = api_record(&client, &id).await;
    let analysis = record.result.analysis.as_ref().expect("analysis");

    let badge = client
        .execute(
            "return document.querySelector('.summary .status').textContent;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(badge, analysis.outcome.label());
    let verdict = client
        .execute(
            "return document.querySelector('.verdict-summary').textContent;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(verdict, analysis.verdict.summary.as_str());

    // h1 and h2: three rows each, every one a chain of two redirects with two hop boundaries.
    let chains = client
        .execute(
            "return [...document.querySelectorAll('.wf-panel[data-protocol=h1] .wf-row, .wf-panel[data-protocol=h2] .wf-row')] \
             .map(r => [+r.dataset.redirects, r.querySelectorAll('line.hop').length]);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        chains,
        json!([[2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [2, 2]])
    );

    // HTTP/3 was tried once, and keeps its column saying why it has no figures.
    let h3_rows = client
        .execute(
            "return document.querySelectorAll('.wf-panel[data-protocol=h3] .wf-row').length;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(h3_rows, json!(1));
    let unmeasured = client
        .execute(
            "const c = document.querySelector('.comparison td.unmeasured'); return c ? c.textContent : null;",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        unmeasured
            .as_str()
            .is_some_and(|t| t.contains("failed in quic")),
        "{unmeasured}"
    );
    let findings = client
        .execute(
            "return [...document.querySelectorAll('.finding')].map(f => f.dataset.id);",
            vec![],
        )
        .await
        .unwrap();
    for id in ["h3_udp_silent", "redirect_cost"] {
        assert!(
            findings.as_array().unwrap().iter().any(|f| f == id),
            "{id} in {findings}"
        );
    }
    // At every width every row's tags show whole ("#2 reused 2↪", never "reused…"), and the
    // comparison's protocol columns are equally wide and all on screen: HTTP/3's reason wraps
    // in its own column.
    for width in [1280, 390] {
        client.set_window_size(width, 900).await.expect("resize");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let fit = client.execute(FITS, vec![]).await.unwrap();
        assert_eq!(fit["cut"], json!([]), "{width} px: labels cut: {fit}");
        assert!(
            fit["tags"].as_u64().unwrap() >= 3,
            "{width} px: the reused rows' tags: {fit}"
        );
        let columns: Vec<f64> = serde_json::from_value(fit["columns"].clone()).unwrap();
        assert_eq!(columns.len(), 3, "{fit}");
        assert!(
            columns.iter().all(|w| (w - columns[0]).abs() <= 1.0),
            "{width} px: the protocol columns are as wide as each other: {fit}"
        );
        assert_eq!(
            fit["table_scrolls"], false,
            "{width} px: no protocol column past the scroll edge: {fit}"
        );
    }
    assert_fits_a_phone(&client).await;
    client.set_window_size(1280, 900).await.expect("resize");
    eprintln!("answer page: {badge} · {verdict}");
    screenshots(&client, "answer").await;
    client.close().await.unwrap();
}

/// The bench page at a narrow width: whether the page scrolls sideways, and for the chart's and
/// the table's boxes whether they scroll, their `overflow-x`, and whether the content fits.
const NARROW_BENCH: &str = r#"
const box = sel => { const e = document.querySelector(sel); const s = getComputedStyle(e);
  return { scrolls: e.scrollWidth > e.clientWidth, fits: e.scrollWidth <= e.clientWidth,
           overflow: s.overflowX }; };
const hint = document.querySelector('.scroll-hint');
return { page_overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
         chart: box('.chart-scroll'), table: box('.bench-table .table-scroll'),
         hint: !!hint && hint.getBoundingClientRect().height > 0 };
"#;

/// The two forms of the home page, told apart: their kind, heading and top border colour.
const FORMS: &str = "return ['.probe-form', '.bench-form'].map(f => { const e = document.querySelector(f);     return [e.querySelector('.kind').textContent, e.querySelector('h2').textContent,             getComputedStyle(e).borderTopColor]; });";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_page_end_to_end() {
    if unavailable() {
        return;
    }
    // Each runs a server, chromedriver and Chromium: alone, on two cores.
    let _turn = crate::support::SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default())
        .await
        .expect("target");
    let tmp = tempfile::tempdir().expect("temp dir");
    let https = target.https_addr.to_string();
    let (_server, base) = serve_with(
        &target,
        tmp.path(),
        &[
            "--enable-bench",
            "--bench-target",
            &https,
            "--allow-network",
        ],
    )
    .await;
    let (_driver, driver) = chromedriver().await;
    let client = browser(&driver, &tmp.path().join("profile-1")).await;

    // The home page offers the load comparison form, since this server runs benches.
    crate::browser::open_home(&client, &base).await;
    let url_field = client
        .wait()
        .for_element(Locator::Css("#bench-url"))
        .await
        .expect("bench form");
    // It says what this server may load, and its example is one of those.
    assert_eq!(
        url_field.attr("placeholder").await.unwrap().as_deref(),
        Some(format!("https://{https}/").as_str())
    );
    let hint = client
        .find(Locator::Css("#bench-title + .hint"))
        .await
        .expect("bench hint")
        .text()
        .await
        .unwrap();
    assert!(
        hint.contains(&format!("one bench at a time: {https}.")),
        "{hint}"
    );
    screenshot(&client, "home-bench-desktop-light").await;
    let forms = client.execute(FORMS, vec![]).await.unwrap();
    for i in 0..3 {
        assert_ne!(forms[0][i], forms[1][i], "the forms differ: {forms}");
    }
    url_field
        .send_keys(&target.https_url("/bytes/2000"))
        .await
        .unwrap();
    for (field, value) in [("#bench-duration", "1"), ("#bench-concurrency", "4")] {
        let input = client.find(Locator::Css(field)).await.unwrap();
        input.clear().await.unwrap();
        input.send_keys(value).await.unwrap();
    }
    let id = submit_bench(&client).await;
    let progress = until(
        &client,
        "const p = document.querySelector('.progress-text'); \
         return p ? p.textContent : (document.querySelector('.bench-table') ? 'done already' : null);",
        10,
    )
    .await;
    eprintln!("progress while running: {progress}");
    screenshot(&client, "bench-running-desktop-light").await;
    until(
        &client,
        "return !!document.querySelector('.bench-table');",
        60,
    )
    .await;

    // The table shows the API's figures; the chart has one line per protocol.
    let script = format!(
        "const done = arguments[0]; fetch('/api/v1/benches/{id}').then(r => r.text()).then(done);"
    );
    let text = client.execute_async(&script, vec![]).await.expect("fetch");
    let record: BenchRecord =
        serde_json::from_str(text.as_str().expect("text")).expect("bench JSON");
    let result = record.result.expect("a done bench has a result");
    assert_eq!(result.runs.len(), 3, "h1, h2 and h3 by default");
    let table = client.execute(BENCH_TABLE, vec![]).await.unwrap();
    for run in &result.runs {
        let p = run.protocol.as_str();
        assert!(run.requests > 0, "{p}: requests");
        assert_eq!(
            table["rps"][p],
            rate(run.requests_per_sec()).as_str(),
            "{p}: requests/s as the API says"
        );
        assert_eq!(table["requests"][p], count(run.requests).as_str());
        assert_eq!(table["latency-p50"][p], ms(run.latency.p50).as_str());
    }
    let chart = client.execute(BENCH_CHART, vec![]).await.unwrap();
    assert_eq!(chart["role"], "img");
    assert!(
        chart["label"]
            .as_str()
            .unwrap()
            .starts_with("Latency by percentile"),
        "{chart}"
    );
    let lines = chart["lines"].as_array().unwrap();
    let drawn: Vec<&str> = lines
        .iter()
        .map(|l| l["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(drawn, ["h1", "h2", "h3"], "one path per protocol");
    let expected = h123_shared::bench_chart::chart(&result, Default::default());
    for (line, want) in lines.iter().zip(&expected.lines) {
        assert_eq!(line["d"], want.path.as_str(), "the shared geometry, drawn");
    }
    let caveats = client
        .execute(
            "return [...document.querySelectorAll('.caveats li')].map(li => li.textContent);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        caveats,
        serde_json::to_value(h123_shared::bench::caveats(&result)).unwrap()
    );
    screenshots(&client, "bench").await;
    assert_eq!(
        client
            .execute("return document.title;", vec![])
            .await
            .unwrap(),
        format!("Load comparison of {}: done · h123", record.options.url)
    );

    // At 390 px the chart and the table scroll inside their boxes, the chart saying so; the
    // page itself does not scroll sideways.
    client.set_window_size(390, 900).await.expect("resize");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let narrow = client.execute(NARROW_BENCH, vec![]).await.unwrap();
    assert_eq!(narrow["page_overflow"], false, "{narrow}");
    assert_eq!(narrow["chart"]["scrolls"], true, "{narrow}");
    assert_eq!(narrow["chart"]["overflow"], "auto", "{narrow}");
    assert_eq!(narrow["table"]["overflow"], "auto", "{narrow}");
    assert!(
        narrow["table"]["fits"] == true || narrow["table"]["scrolls"] == true,
        "{narrow}"
    );
    assert_eq!(narrow["hint"], true, "the scroll hint shows: {narrow}");
    client.set_window_size(1280, 900).await.expect("resize");

    // The permalink, in a fresh profile, draws the same table.
    let fresh = browser(&driver, &tmp.path().join("profile-2")).await;
    fresh.goto(&format!("{base}/b/{id}")).await.unwrap();
    until(
        &fresh,
        "return !!document.querySelector('.bench-table');",
        20,
    )
    .await;
    assert_eq!(fresh.execute(BENCH_TABLE, vec![]).await.unwrap(), table);
    // Its script has adopted it: the permalink written whole, and the copy button says what it did.
    fresh
        .find(Locator::Css("#bench [data-action=copy]"))
        .await
        .expect("the copy button")
        .click()
        .await
        .unwrap();
    let copied = until(
        &fresh,
        "const note = document.querySelector('#bench .actions .note').textContent; \
         return note ? [document.querySelector('#bench pre[data-text=permalink]').textContent, note] : null;",
        5,
    )
    .await;
    assert_eq!(copied[0], format!("{base}/b/{id}"), "{copied}");
    assert!(
        copied[1].as_str().unwrap().contains("Permalink"),
        "{copied}"
    );
    assert_eq!(
        fresh.execute(NETWORK_NOTE, vec![]).await.unwrap(),
        serde_json::json!([]),
        "the real path alone: no network note"
    );

    // A bench through an emulated network says which, and how each protocol met it.
    let started = fresh
        .execute_async(
            "const done = arguments[1]; fetch('/api/v1/benches', {method: 'POST', \
             headers: {'content-type': 'application/json'}, body: JSON.stringify({url: arguments[0], \
             duration_ms: 1000, concurrency: 4, network: 'rtt=20ms'})}).then(r => r.json()).then(j => done(j.id));",
            vec![target.https_url("/").into()],
        )
        .await
        .expect("bench started");
    let emulated = started.as_str().expect("an id");
    fresh.goto(&format!("{base}/b/{emulated}")).await.unwrap();
    until(
        &fresh,
        "return !!document.querySelector('.bench-table');",
        60,
    )
    .await;
    let text = fresh
        .execute_async(
            &format!("const done = arguments[0]; fetch('/api/v1/benches/{emulated}').then(r => r.text()).then(done);"),
            vec![],
        )
        .await
        .expect("fetch");
    let record: BenchRecord = serde_json::from_str(text.as_str().unwrap()).unwrap();
    let result = record.result.expect("done");
    let expected = h123_shared::network::describe(
        result.options.network.as_ref(),
        result
            .runs
            .iter()
            .map(|r| (r.protocol, r.emulated.as_ref())),
    );
    assert_eq!(expected[0], "Emulated network: rtt=20ms");
    assert_eq!(
        fresh.execute(NETWORK_NOTE, vec![]).await.unwrap(),
        serde_json::to_value(&expected).unwrap(),
        "the page says what the record says"
    );

    // An unknown bench id is a problem page, not a blank one.
    fresh.goto(&format!("{base}/b/no-such-id")).await.unwrap();
    let problem = fresh
        .wait()
        .for_element(Locator::Css(".problem h1"))
        .await
        .expect("problem page");
    assert_eq!(
        problem.text().await.unwrap(),
        "No load comparison with this id"
    );
    let next = fresh
        .find(Locator::Css(".problem p"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!next.contains("/r/"), "{next}");

    fresh.close().await.unwrap();
    client.close().await.unwrap();
}

/// Records, from the first script of every document, when the probe form (`#url`) first appears.
const FORM_READY: &str = "window.h123Ready = {}; new MutationObserver(() => { \
    for (const [page, sel] of [['home', '#url'], ['compare', '.verdict[data-kind]'], ['bench', '.bench-table'], ['not found', '.problem']]) \
    { if (!(page in window.h123Ready) && document.querySelector(sel)) window.h123Ready[page] = performance.now(); } }) \
    .observe(document, { childList: true, subtree: true });";

/// First contentful paint, and when the page was ready (ms from navigation start, at the
/// earliest its first paint): the form for the home page (drawn by the server, usable before the
/// wasm: what is typed stays and a submit is made once the page's script adopts it); for a permalink,
/// its server-drawn waterfalls painted with the page's script attached (hover, keys, copy); for a
/// comparison its server-drawn answer with the page's script attached; for a bench its server-drawn
/// table with the page's script attached; for a path no page knows its problem section with its
/// islands hydrated (or, from a server before Leptos, drawn by the home bundle); the bytes
/// transferred; when the page's wasm had arrived; and when the page's script had adopted the
/// drawn page (`h123:app`: home, comparison, bench, not found).
const PAINT_FIGURES: &str = "\
const fcp = performance.getEntriesByName('first-contentful-paint'); \
const drawn = performance.getEntriesByName('h123:waterfall-painted'); \
const found = arguments[0] === 'permalink' ? (drawn.length ? drawn[0].startTime : null) \
  : ((window.h123Ready ?? {})[arguments[0]] ?? null); \
const app = performance.getEntriesByName('h123:app'); \
const attached = ['compare', 'bench', 'not found'].includes(arguments[0]) ? (app.length ? app[0].startTime : null) : 0; \
const ready = found === null || attached === null || !fcp.length ? null \
  : Math.max(found, fcp[0].startTime, attached); \
if (ready === null || (arguments[0] === 'home' && !app.length)) return null; \
const resources = performance.getEntriesByType('resource'); \
const bytes = resources.concat(performance.getEntriesByType('navigation')) \
  .reduce((n, e) => n + e.transferSize, 0); \
const wasm = resources.find(e => e.name.endsWith('.wasm')); \
return [fcp[0].startTime, ready, bytes, wasm ? wasm.responseEnd : null, app.length ? app[0].startTime : null];";

/// First contentful paint and ready time of the home page, a finished result's permalink, a
/// comparison of two results, a finished bench's page and the page for a path no page knows on
/// the slow 4G profile (1.6 Mbps down, 750 kbps up, 150 ms RTT, 4x CPU slowdown), cold cache,
/// through Chromium's emulation. Printed, never asserted: a timing on a shared machine.
/// `H123_PAINT_WEB_ROOT` measures another build (say, an older `dist/`) on the same server, and
/// `H123_BIN` another server (say, an older one with that `dist/`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_4g_first_paint_and_ready() {
    if unavailable() {
        return;
    }
    // Each runs a server, chromedriver and Chromium: alone, on two cores.
    let _turn = crate::support::SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default())
        .await
        .expect("target");
    let tmp = tempfile::tempdir().expect("temp dir");
    let web_root = std::env::var_os("H123_PAINT_WEB_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("dist"));
    let https = target.https_addr.to_string();
    let (_server, base) = serve_root(
        &target,
        tmp.path(),
        &web_root,
        &["--enable-bench", "--bench-target", &https],
    )
    .await;
    let (_driver, driver) = chromedriver().await;
    let client = browser(&driver, &tmp.path().join("profile")).await;

    // Two finished results and a finished bench to open, made at full speed.
    client.goto(&base).await.expect("home");
    let mut ids = Vec::new();
    for repeat in [3, 2] {
        let options = json!({ "url": target.https_url("/"), "protocols": ["h1", "h2"], "repeat": repeat, "rounds": 1 });
        ids.push(create_probe_from_page(&client, options).await);
    }
    let bench = client
        .execute_async(
            "const done = arguments[1]; fetch('/api/v1/benches', {method: 'POST', \
             headers: {'content-type': 'application/json'}, body: JSON.stringify({url: arguments[0], \
             duration_ms: 1000, concurrency: 2})}).then(r => r.json()).then(j => done(j.id));",
            vec![target.https_url("/").into()],
        )
        .await
        .expect("bench started");
    let bench = bench.as_str().expect("bench id").to_string();
    let finished = |path: String| {
        format!(
            "const done = arguments[0]; fetch('{path}').then(r => r.json()) \
             .then(r => done(r.status !== 'running' && r.status !== 'queued'));"
        )
    };
    for path in [
        format!("/api/v1/probes/{}", ids[0]),
        format!("/api/v1/probes/{}", ids[1]),
        format!("/api/v1/benches/{bench}"),
    ] {
        let mut done = false;
        for _ in 0..600 {
            done = client
                .execute_async(&finished(path.clone()), vec![])
                .await
                .expect("status")
                == json!(true);
            if done {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(done, "{path} finishes within 60 s");
    }

    for (cmd, params) in [
        ("Network.enable", json!({})),
        ("Network.setCacheDisabled", json!({ "cacheDisabled": true })),
        (
            "Network.emulateNetworkConditions",
            json!({ "offline": false, "latency": 150,
                    "downloadThroughput": 1_600_000 / 8, "uploadThroughput": 750_000 / 8 }),
        ),
        ("Emulation.setCPUThrottlingRate", json!({ "rate": 4 })),
        (
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": FORM_READY }),
        ),
    ] {
        client
            .issue_cmd(cdp(json!({ "cmd": cmd, "params": params })))
            .await
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    for (page, path) in [
        ("home", "/".to_owned()),
        ("permalink", format!("/r/{}", ids[0])),
        ("compare", format!("/compare/{}/{}", ids[0], ids[1])),
        ("bench", format!("/b/{bench}")),
        ("not found", "/no/such/page".to_owned()),
    ] {
        client.goto(&format!("{base}{path}")).await.expect("page");
        let mut figures = Value::Null;
        for _ in 0..300 {
            figures = client
                .execute(PAINT_FIGURES, vec![json!(page)])
                .await
                .expect("figures");
            if !figures.is_null() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            !figures.is_null(),
            "{page}: no paint or ready figure within 30 s\n{}",
            page_state(&client).await
        );
        let ms = |i: usize| figures[i].as_f64().unwrap_or_default();
        let app = match figures[4].as_f64() {
            Some(app) => format!("; its script adopted the page at {app:.0} ms"),
            None => String::new(),
        };
        eprintln!(
            "slow 4G ({}): {page}: first contentful paint {:.0} ms, ready {:.0} ms, {} bytes \
             transferred; the wasm arrived at {:.0} ms{app}",
            web_root.display(),
            ms(0),
            ms(1),
            figures[2],
            ms(3),
        );
    }
    client.close().await.unwrap();
}

/// The home page's form, drawn by the server, works before its wasm has arrived (on a link so
/// slow the wasm takes seconds): what is typed there stays when the page's script adopts the form
/// in place, focus and caret included, and a submit made there is made once the script has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_form_works_before_the_wasm() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let target = &stage.target;
    // A slow link to the server: about 4 s for the home page's wasm, its page and stylesheet in
    // well under one.
    let server: SocketAddr = stage.base["http://".len()..].parse().unwrap();
    let link = h123_target::slow_link::SlowLink::paced(server, 30_000)
        .await
        .expect("slow link");
    let base = format!("http://{}", link.addr);
    let client = stage.browser("profile").await;
    for (cmd, params) in [
        ("Network.enable", json!({})),
        ("Network.setCacheDisabled", json!({ "cacheDisabled": true })),
    ] {
        client
            .issue_cmd(cdp(json!({ "cmd": cmd, "params": params })))
            .await
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    }
    const DRAWN: &str = "return !!document.querySelector('#shell form.probe-form[data-drawn]');";

    // Typed before the wasm, kept after it: the value, the focus and the caret.
    client.goto(&base).await.expect("home");
    assert_eq!(client.execute(DRAWN, vec![]).await.unwrap(), json!(true));
    assert_eq!(
        client
            .execute("return document.activeElement.id;", vec![])
            .await
            .unwrap(),
        json!("url"),
        "the drawn URL field has the keyboard"
    );
    let url = target.https_url("/");
    let field = client.find(Locator::Css("#shell #url")).await.unwrap();
    field.send_keys(&url[..10]).await.unwrap();
    assert_eq!(
        client.execute(DRAWN, vec![]).await.unwrap(),
        json!(true),
        "typed before the script adopted the form"
    );
    until(&client, ADOPTED, 60).await;
    assert_eq!(
        client.execute(DRAWN, vec![]).await.unwrap(),
        json!(false),
        "adopted: the loader holds back no more submits"
    );
    let state = client
        .execute(
            "const u = document.getElementById('url'); \
             return [u.value, document.activeElement.id, u.selectionStart];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(state, json!([&url[..10], "url", 10]));
    // The form goes on from there (its check follows what was typed).
    client
        .find(Locator::Css("#url"))
        .await
        .unwrap()
        .send_keys(&url[10..])
        .await
        .unwrap();
    until(
        &client,
        "return document.getElementById('url-reason').textContent === 'Ready to measure.' || null;",
        10,
    )
    .await;

    // Submitted before the wasm: the script starts the probe once it has adopted the form.
    client.goto(&base).await.expect("home");
    let field = client.find(Locator::Css("#shell #url")).await.unwrap();
    field.send_keys(&url).await.unwrap();
    client
        .find(Locator::Css("#shell label.toggle input[value=h3]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    client
        .find(Locator::Css("#shell button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert_eq!(
        client.execute(DRAWN, vec![]).await.unwrap(),
        json!(true),
        "submitted before the script adopted the form"
    );
    let id = until(
        &client,
        "const m = location.pathname.match(/^\\/r\\/(.+)$/); return m ? m[1] : null;",
        60,
    )
    .await;
    let id = id.as_str().unwrap();
    let record = client
        .execute_async(
            &format!("const done = arguments[0]; fetch('/api/v1/probes/{id}').then(r => r.json()).then(done);"),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(record["options"]["url"], json!(url));
    assert_eq!(
        record["options"]["protocols"],
        json!(["h1", "h2"]),
        "the box unticked before the script came stays unticked"
    );
    client.close().await.unwrap();
}

/// The lines of the page's network note, if any.
const NETWORK_NOTE: &str = "return [...document.querySelectorAll('aside[aria-label=\"Emulated network\"] p')].map(p => p.textContent);";
