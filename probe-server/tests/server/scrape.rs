//! `GET /probe`, blackbox_exporter's scrape contract: its answers and refusals, then a real
//! Prometheus (Debian's) scraping it with blackbox's relabelling, beside Debian's
//! blackbox_exporter probing the same target, the two read back through Prometheus' query API
//! and compared name for name. `scripts/test` installs both.

use crate::support::*;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use h123::server::ServerConfig;
use h123::server::limit::RateConfig;
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test]
async fn a_scrape_answers_as_blackbox_does_and_for_every_protocol() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let url = target.https_url("/");
    let compare = call(
        &state,
        get(&format!("/probe?module=compare&target={url}")),
        CLIENT,
    )
    .await;
    assert_eq!(compare.status, StatusCode::OK, "{}", compare.text());
    assert_eq!(
        compare.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = compare.text();
    for series in [
        "probe_success",
        "probe_http_status_code",
        "probe_http_ssl",
        "probe_http_redirects",
    ] {
        assert!(value(&text, series).is_some(), "{series} in\n{text}");
    }
    assert_eq!(value(&text, "probe_success"), Some(1.0));
    assert_eq!(value(&text, "probe_http_version"), Some(2.0), "{text}");
    assert!(value(&text, "probe_ssl_earliest_cert_expiry").is_some_and(|t| t > 1.7e9));
    assert!(text.contains("probe_tls_version_info{version=\"TLS 1.3\"} 1"));
    for protocol in ["h1", "h2", "h3"] {
        assert_eq!(
            value(
                &text,
                &format!("h123_protocol_success{{protocol=\"{protocol}\"}}")
            ),
            Some(1.0),
            "{text}"
        );
    }
    assert!(text.contains("h123_phase_seconds{protocol=\"h3\",connection=\"new\",phase=\"quic\"}"));
    assert!(
        text.contains("h123_phase_seconds{protocol=\"h1\",connection=\"reused\",phase=\"wait\"}")
    );
    assert!(text.contains("h123_h3_discovery{outcome=\"ok\"} 1"));
    assert!(text.contains("h123_verdict{kind="), "{text}");

    let h3 = call(
        &state,
        get(&format!("/probe?module=h3&target={url}")),
        CLIENT,
    )
    .await;
    let text = h3.text();
    assert_eq!(value(&text, "probe_http_version"), Some(3.0), "{text}");
    assert_eq!(
        value(&text, "probe_http_duration_seconds{phase=\"connect\"}"),
        Some(0.0),
        "QUIC's handshake is tls"
    );
    assert!(!text.contains("protocol=\"h1\""), "h3 alone: {text}");

    let debug = call(
        &state,
        get(&format!("/probe?module=h2&debug=true&target={url}")),
        CLIENT,
    )
    .await
    .text();
    assert!(
        debug.starts_with("Logs for the probe:\nHTTP/2 attempt 1"),
        "{debug}"
    );
    assert!(debug.contains("Metrics that would have been returned:\n# HELP probe_success"));
    assert!(debug.contains("Module configuration:\nname: h2"));

    // A failed probe is a result: success 0, the status it got.
    let missing = call(
        &state,
        get(&format!(
            "/probe?module=h1&target={}",
            target.https_url("/status/503")
        )),
        CLIENT,
    )
    .await
    .text();
    assert_eq!(value(&missing, "probe_success"), Some(0.0), "{missing}");
    assert_eq!(value(&missing, "probe_http_status_code"), Some(503.0));
}

#[tokio::test]
async fn a_scrape_is_refused_with_a_reason_and_bounded_per_client() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(
        ServerConfig {
            scrape_rate: RateConfig {
                burst: 2,
                per_minute: 1,
            },
            ..config(&target)
        },
        &dir,
    );
    let refused = |path: &str| {
        let (state, path) = (state.clone(), path.to_owned());
        async move { call(&state, get(&path), CLIENT).await }
    };
    // A stranger's page (an <img> or a no-cors fetch on another site) starts nothing, before
    // any limit counts it; a same-site page and Prometheus (no fetch metadata) still scrape.
    let from_page = |site: &'static str| {
        Request::get(format!("/probe?module=h1&target={}", target.https_url("/")))
            .header("sec-fetch-site", site)
            .header("sec-fetch-dest", "image")
            .body(Body::empty())
            .unwrap()
    };
    let cross = call(&state, from_page("cross-site"), CLIENT).await;
    assert_eq!(cross.status, StatusCode::FORBIDDEN, "{}", cross.text());
    assert_eq!(cross.code(), "cross_site");
    assert!(
        cross.text().contains("Prometheus and scripts"),
        "{}",
        cross.text()
    );
    let own = call(
        &state,
        from_page("same-origin"),
        IpAddr::from([127, 0, 0, 78]),
    )
    .await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.text());
    let no_target = refused("/probe?module=h1").await;
    assert_eq!(no_target.status, StatusCode::BAD_REQUEST);
    assert!(no_target.text().contains("the target parameter is missing"));
    let unknown = refused("/probe?module=icmp&target=example.com").await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(
        unknown.text().contains("unknown module \\\"icmp\\\""),
        "{}",
        unknown.text()
    );
    // The scrape rate: two used above, the third refused before any probe.
    let limited = refused(&format!(
        "/probe?module=h1&target={}",
        target.https_url("/")
    ))
    .await;
    assert_eq!(
        limited.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        limited.text()
    );
    assert!(limited.header("retry-after").is_some());
    // The safety policy: another client, a target the server may not reach.
    let blocked = call(
        &state,
        get("/probe?module=h1&target=https://10.0.0.5/"),
        IpAddr::from([127, 0, 0, 77]),
    )
    .await;
    assert_eq!(blocked.status, StatusCode::FORBIDDEN, "{}", blocked.text());
    assert_eq!(blocked.code(), "blocked_target");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A child process killed when the test ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(program: &str, args: &[String]) -> Running {
    assert!(
        Path::new(program).exists(),
        "{program} is not installed: scripts/test installs it (apt-get install prometheus prometheus-blackbox-exporter)"
    );
    Running(
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts"),
    )
}

/// One scrape job in blackbox's relabelling: `target` becomes `?target=`, the exporter the address.
fn job(name: &str, exporter: SocketAddr, module: &str, target: &str) -> String {
    format!(
        "  - job_name: {name}\n    metrics_path: /probe\n    params:\n      module: [{module}]\n    \
         static_configs:\n      - targets: ['{target}']\n    relabel_configs:\n      \
         - source_labels: [__address__]\n        target_label: __param_target\n      \
         - source_labels: [__param_target]\n        target_label: instance\n      \
         - target_label: __address__\n        replacement: '{exporter}'\n"
    )
}

/// Prometheus' answer to the instant query `query`, once it has one (up to 60 s).
async fn query(prometheus: SocketAddr, query: &str) -> Vec<Value> {
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let path = format!("/api/v1/query?query={encoded}");
    for _ in 0..120 {
        let answer = try_http(prometheus, CLIENT, Method::GET, &path, None).await;
        // Until it is ready, Prometheus answers 503 in plain text: ask again.
        if let Ok(answer) = answer
            && answer.status.is_success()
            && let Some(found) = answer.json()["data"]["result"].as_array()
            && !found.is_empty()
        {
            return found.clone();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("Prometheus has nothing for {query}");
}

/// The metric names of `job`'s `probe_*` series, and each one's value by name.
async fn probe_series(prometheus: SocketAddr, job: &str) -> Vec<(String, Value)> {
    query(
        prometheus,
        &format!("{{job=\"{job}\",__name__=~\"probe_.*\"}}"),
    )
    .await
    .into_iter()
    .map(|s| {
        let name = s["metric"]["__name__"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (name, s["metric"].clone())
    })
    .collect()
}

async fn scalar(prometheus: SocketAddr, q: &str) -> f64 {
    let found = query(prometheus, q).await;
    found[0]["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{q}: {found:?}"))
}

#[tokio::test]
async fn prometheus_scrapes_h123_as_it_scrapes_blackbox_exporter() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&target, &dir.path().join("h123.sqlite"), &[]).await;
    let url = format!("https://127.0.0.1:{}/", target.https_addr.port());

    let blackbox: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let blackbox_config = dir.path().join("blackbox.yml");
    std::fs::write(
        &blackbox_config,
        format!(
            "modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n    http:\n      \
             preferred_ip_protocol: ip4\n      tls_config:\n        ca_file: {}\n",
            target.ca_file().display()
        ),
    )
    .unwrap();
    let _blackbox = start(
        "/usr/bin/prometheus-blackbox-exporter",
        &[
            format!("--config.file={}", blackbox_config.display()),
            format!("--web.listen-address={blackbox}"),
        ],
    );

    let prometheus: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let scrapes = dir.path().join("prometheus.yml");
    std::fs::write(
        &scrapes,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n{}{}{}{}  \
             - job_name: h123_metrics\n    static_configs:\n      - targets: ['{}']\n",
            job("h123_compare", server.addr, "compare", &url),
            job("h123_h3", server.addr, "h3", &url),
            job("h123_http_2xx", server.addr, "http_2xx", &url),
            job("blackbox", blackbox, "http_2xx", &url),
            server.addr
        ),
    )
    .unwrap();
    let _prometheus = start(
        "/usr/bin/prometheus",
        &[
            format!("--config.file={}", scrapes.display()),
            format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()),
            format!("--web.listen-address={prometheus}"),
        ],
    );

    for job in ["h123_compare", "h123_h3", "h123_http_2xx", "blackbox"] {
        let success = scalar(prometheus, &format!("probe_success{{job=\"{job}\"}}")).await;
        assert_eq!(success, 1.0, "{job}");
    }
    assert_eq!(scalar(prometheus, "up{job=\"h123_metrics\"}").await, 1.0);
    // One scrape, every protocol.
    for protocol in ["h1", "h2", "h3"] {
        let q = format!(
            "h123_phase_seconds{{job=\"h123_compare\",protocol=\"{protocol}\",connection=\"new\",phase=\"total\"}}"
        );
        assert!(scalar(prometheus, &q).await > 0.0, "{q}");
    }
    assert_eq!(
        scalar(prometheus, "probe_http_version{job=\"h123_h3\"}").await,
        3.0
    );

    // Name for name: every series blackbox writes, h123 writes, with the same labels.
    let theirs = probe_series(prometheus, "blackbox").await;
    let ours = probe_series(prometheus, "h123_http_2xx").await;
    let labels = |series: &[(String, Value)]| -> BTreeSet<String> {
        series
            .iter()
            .map(|(name, metric)| {
                let mut keys: Vec<String> = metric
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| !["__name__", "job", "instance"].contains(&k.as_str()))
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect();
                keys.sort();
                format!("{name}{{{}}}", keys.join(","))
            })
            .collect()
    };
    let (theirs_labelled, ours_labelled) = (labels(&theirs), labels(&ours));
    let missing: Vec<&String> = theirs_labelled
        .iter()
        .filter(|s| !ours_labelled.contains(*s))
        .collect();
    println!("blackbox_exporter's series: {theirs_labelled:?}");
    println!("h123's http_2xx series: {ours_labelled:?}");
    assert!(
        missing.is_empty(),
        "blackbox writes, h123 does not: {missing:?}"
    );
    // And the facts agree where they are facts, not timings.
    for series in [
        "probe_http_status_code",
        "probe_http_version",
        "probe_http_ssl",
        "probe_http_redirects",
        "probe_ip_protocol",
        "probe_ip_addr_hash",
        "probe_http_content_length",
        "probe_ssl_earliest_cert_expiry",
    ] {
        let theirs = scalar(prometheus, &format!("{series}{{job=\"blackbox\"}}")).await;
        let ours = scalar(prometheus, &format!("{series}{{job=\"h123_http_2xx\"}}")).await;
        assert_eq!(theirs, ours, "{series}");
    }
}

#[tokio::test]
async fn a_module_from_a_blackbox_style_file_decides_success() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("modules.yml");
    std::fs::write(
        &file,
        "modules:\n  maintenance:\n    prober: http\n    timeout: 3s\n    http:\n      \
         valid_status_codes: [503]\n      valid_http_versions: [\"HTTP/1.1\"]\n      \
         fail_if_not_ssl: true\n",
    )
    .unwrap();
    let limits = h123::server::server_limits();
    let config = ServerConfig {
        modules: h123::server::modules_file::load(&file, &limits).unwrap(),
        ..config(&target)
    };
    let state = state(config, &dir);
    let scrape = |path: String| {
        let state = state.clone();
        async move { call(&state, get(&path), CLIENT).await.text() }
    };
    let of = |path: &str, extra: &str| {
        format!(
            "/probe?module=maintenance{extra}&target={}",
            target.https_url(path)
        )
    };
    let down = scrape(of("/status/503", "")).await;
    assert_eq!(
        value(&down, "probe_success"),
        Some(1.0),
        "503 expected: {down}"
    );
    assert_eq!(value(&down, "probe_http_version"), Some(1.1), "{down}");
    let up = scrape(of("/", "")).await;
    assert_eq!(
        value(&up, "probe_success"),
        Some(0.0),
        "200 is not listed: {up}"
    );
    let debug = scrape(of("/", "&debug=true")).await;
    assert!(
        debug.contains("timeout: 3000 ms"),
        "the module's 3 s, under Prometheus' default 10 s less the offset: {debug}"
    );
}

/// A module's headers can carry an operator's secret, and anyone who reaches `/probe` names the
/// target: they go only to the hosts the module lists. A listed host gets them; any other target
/// is refused before a packet leaves, saying why, and receives nothing.
#[tokio::test]
async fn a_modules_headers_go_only_to_the_targets_it_lists() {
    let target = target().await;
    // A plain HTTP/1.1 server that keeps each request's head.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let listed = listener.local_addr().unwrap();
    let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let kept = heads.clone();
    let _server = tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.ends_with(b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            kept.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).to_lowercase());
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("modules.yml");
    std::fs::write(
        &file,
        format!(
            "modules:\n  keyed:\n    targets: [\"{listed}\"]\n    protocols: [h1]\n    http:\n      \
             headers:\n        X-Key: s3cret\n"
        ),
    )
    .unwrap();
    let limits = h123::server::server_limits();
    let mut config = ServerConfig {
        modules: h123::server::modules_file::load(&file, &limits).unwrap(),
        ..config(&target)
    };
    let mut reachable = allowed(&target);
    reachable.push(h123::probe::guard::AllowedTarget {
        ip: listed.ip(),
        port: Some(listed.port()),
    });
    config.guard.policy = h123::probe::guard::ConnectPolicy::only(reachable);
    let state = state(config, &dir);

    let ok = call(
        &state,
        get(&format!("/probe?module=keyed&target=http://{listed}/")),
        CLIENT,
    )
    .await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text());
    assert_eq!(
        value(&ok.text(), "probe_success"),
        Some(1.0),
        "{}",
        ok.text()
    );
    assert_eq!(heads.lock().unwrap().len(), 1);
    assert!(
        heads.lock().unwrap()[0].contains("x-key: s3cret"),
        "{:?}",
        heads.lock().unwrap()
    );

    for other in [
        target.https_url("/"),
        format!("http://localhost:{}/", listed.port()),
    ] {
        let refused = call(
            &state,
            get(&format!("/probe?module=keyed&target={other}")),
            CLIENT,
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{other}");
        let body: Value = serde_json::from_str(&refused.text()).unwrap();
        assert_eq!(body["error"]["code"], "blocked_target", "{body}");
        assert_eq!(
            body["error"]["message"].as_str().unwrap_or_default(),
            format!("blocked target: module keyed sends its headers only to {listed}"),
            "{body}"
        );
    }
    assert_eq!(
        heads.lock().unwrap().len(),
        1,
        "nothing reached the listener by another name"
    );
}

/// A file the repository ships in `docs/prometheus/`.
fn shipped(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs/prometheus")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[tokio::test]
async fn the_shipped_scrape_configuration_and_dashboard_work_against_a_real_prometheus() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h123.sqlite");
    let server = ServerProcess::start(&target, &db, &["--monitor-min-interval", "1s"]).await;
    let url = format!("https://127.0.0.1:{}/", target.https_addr.port());
    // A monitor, for the panels of the server's own /metrics.
    let monitor = format!(r#"{{"url":"{url}","every":"1s","protocols":["h2"]}}"#);
    let made = http(
        server.addr,
        CLIENT,
        Method::POST,
        "/api/v1/monitors",
        Some(&monitor),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    // The shipped jobs as a user fills them in, scraped every second here.
    let scrapes = shipped("h123-scrape.yml")
        .replace("h123.example:8080", &server.addr.to_string())
        .replace("https://example.com/", &url)
        .replace("scrape_interval: 60s", "scrape_interval: 1s")
        .replace("scrape_timeout: 10s", "scrape_timeout: 1s");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(&config, scrapes).unwrap();
    let prometheus: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let _prometheus = start(
        "/usr/bin/prometheus",
        &[
            format!("--config.file={}", config.display()),
            format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()),
            format!("--web.listen-address={prometheus}"),
        ],
    );
    assert_eq!(query(prometheus, "up{job=\"h123\"}").await.len(), 1);
    // Every panel of the shipped dashboard has data for the shipped compare job.
    let dashboard: Value = serde_json::from_str(&shipped("h123-dashboard.json")).unwrap();
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(panels.len() >= 8, "{} panels", panels.len());
    for panel in panels {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"]
                .as_str()
                .expect("an expression")
                .replace("$job", "h123_compare")
                .replace("$instance", ".*")
                .replace("$monitor", ".*");
            let found = query(prometheus, &expr).await;
            println!("{}: {} series", panel["title"], found.len());
        }
    }
}
