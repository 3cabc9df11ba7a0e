//! Shared helpers of the server tests: a test target, server state allowing
//! only it, requests through `oneshot` or a real socket, SSE parsing, and
//! the real `h123 serve` binary as a child process.

use axum::body::Body;
use axum::http::{Method, Request, Response, StatusCode};
use bytes::Bytes;
use h123::probe::guard::{AllowedTarget, ConnectPolicy};
use h123::probe::tls::TrustSettings;
use h123::server::target_guard::TargetGuard;
use h123::server::{AppState, ServerConfig};
use h123::store::SharedStore;
use h123::store::sqlite::SqliteStore;
use h123_target::{TargetConfig, TestTarget};
use http_body_util::BodyExt;
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tower::ServiceExt;

/// Serialises the tests that measure or load the machine (comparisons with
/// curl, fairness under load, benches): on two cores, a concurrent one would
/// disturb another's timings.
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Subdomains of one registrable domain (`h123.test`) that resolve to loopback, as a
/// wildcard's would: the monitors' per-site cap counts them as one.
pub const WILDCARD_NAMES: [&str; 4] = [
    "a1.wild.h123.test",
    "a2.wild.h123.test",
    "b.a3.wild.h123.test",
    "a4.wild.h123.test",
];

/// Names of four registrable domains that resolve to one address (loopback), as anyone's
/// names can: the monitors' per-site cap counts that address's runs for them all.
pub const ONE_ADDRESS_NAMES: [&str; 4] = [
    "www.h123-one.test",
    "h123-two.test",
    "a.h123-three.test",
    "h123-four.test",
];

/// The test target, with extra DNS names for the guard and monitor cap tests.
pub async fn target() -> TestTarget {
    let localhost = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let wildcard = WILDCARD_NAMES
        .iter()
        .chain(&ONE_ADDRESS_NAMES)
        .map(|name| (name.to_string(), localhost));
    let config = TargetConfig {
        dns_records: wildcard
            .chain([
                ("target.h123.test".to_owned(), localhost),
                ("evil.h123.test".to_owned(), localhost),
                ("v6.h123.test".to_owned(), "::1".parse().expect("ip")),
                ("dual.h123.test".to_owned(), localhost),
                ("dual.h123.test".to_owned(), "::1".parse().expect("ip")),
                (
                    "rebind.h123.test".to_owned(),
                    "10.0.0.5".parse().expect("ip"),
                ),
                (
                    "meta.h123.test".to_owned(),
                    "169.254.169.254".parse().expect("ip"),
                ),
            ])
            .collect(),
        ..TargetConfig::default()
    };
    TestTarget::start(config).await.expect("test target starts")
}

/// Only the target's HTTPS address may be reached.
pub fn allowed(target: &TestTarget) -> Vec<AllowedTarget> {
    vec![AllowedTarget {
        ip: target.https_addr.ip(),
        port: Some(target.https_addr.port()),
    }]
}

/// A config whose probes reach only the target's HTTPS port and use its DNS server and CA.
pub fn config(target: &TestTarget) -> ServerConfig {
    ServerConfig {
        guard: TargetGuard {
            policy: ConnectPolicy::only(allowed(target)),
        },
        dns_server: Some(target.dns_addr),
        trust: TrustSettings::from_ca_file(target.ca_file()).expect("CA file"),
        // Generous limits: the tests of the limits set their own.
        rate: h123::server::limit::RateConfig {
            burst: 1000,
            per_minute: 100_000,
        },
        per_client_probes: 100,
        // Tests make many probes from one client; the egress tests set their own.
        client_bytes_per_minute: 1 << 40,
        server_bytes_per_minute: 1 << 40,
        read_rate: h123::server::limit::RateConfig {
            burst: 10_000,
            per_minute: 1_000_000,
        },
        light_rate: h123::server::limit::RateConfig {
            burst: 10_000,
            per_minute: 1_000_000,
        },
        max_streams_per_client: 1000,
        ..ServerConfig::default()
    }
}

/// Server state over a fresh SQLite file in `dir`.
pub fn state(config: ServerConfig, dir: &tempfile::TempDir) -> AppState {
    let store = SqliteStore::open(&dir.path().join("h123.sqlite")).expect("store opens");
    AppState::new(config, SharedStore::new(store))
}

/// A finished response: status, headers and the whole body.
pub struct Answer {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: axum::http::HeaderMap,
    /// Body.
    pub body: Bytes,
}

impl Answer {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The error code of an error answer.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// Reads a whole response into an [`Answer`].
pub async fn collect(response: Response<Body>) -> Answer {
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    Answer {
        status,
        headers,
        body,
    }
}

/// Sends a request through the router (no socket), as client `from`.
pub async fn call(state: &AppState, request: Request<Body>, from: IpAddr) -> Answer {
    let mut request = request;
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(SocketAddr::new(from, 40000)));
    let response = h123::api::app(state.clone())
        .oneshot(request)
        .await
        .expect("infallible");
    collect(response).await
}

/// Starts a probe of `body` as client `from` and follows its event stream to
/// the end: its id and the record the `done` event carries.
pub async fn probe_to_the_end(
    state: &AppState,
    body: &str,
    from: IpAddr,
) -> (String, h123_shared::api::ProbeRecord) {
    let created = call(state, post_json("/api/v1/probes", body), from).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_owned();
    let events = call(state, get(&format!("/api/v1/probes/{id}/events")), from).await;
    let events = parse_sse(&events.text());
    let record = serde_json::from_value(events.last().expect("done").data.clone()).unwrap();
    (id, record)
}

/// A GET request.
pub fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).expect("request")
}

/// A JSON POST request.
pub fn post_json(path: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method(Method::POST)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .expect("request")
}

/// The default client address of oneshot tests.
pub const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 9));

/// One Server-Sent Event.
#[derive(Debug, Clone, PartialEq)]
pub struct Sse {
    /// `event:` name.
    pub event: String,
    /// `id:`, if any.
    pub id: Option<String>,
    /// `data:` parsed as JSON.
    pub data: Value,
}

/// Parses a whole event-stream body (comments and keep-alives skipped).
pub fn parse_sse(text: &str) -> Vec<Sse> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = "message".to_owned();
            let mut id = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("id:") {
                    id = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            (!data.is_empty()).then(|| Sse {
                event,
                id,
                data: serde_json::from_str(&data).expect("event data is JSON"),
            })
        })
        .collect()
}

/// Sends one HTTP/1.1 request over a new TCP connection from source address `from`.
pub async fn http(
    server: SocketAddr,
    from: IpAddr,
    method: Method,
    path: &str,
    json: Option<&str>,
) -> Answer {
    try_http(server, from, method, path, json)
        .await
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Creates a probe from `json` on the real server at `server`, as `from`,
/// and returns its id (anything but `202` fails the test).
pub async fn create_probe(server: SocketAddr, from: IpAddr, json: &str) -> String {
    let created = http(server, from, Method::POST, "/api/v1/probes", Some(json)).await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
    created.json()["id"].as_str().expect("id").to_owned()
}

/// Probe `id`'s record as the real server at `server` serves it to `from` (anything but `200`
/// fails the test).
pub async fn stored_record(
    server: SocketAddr,
    from: IpAddr,
    id: &str,
) -> h123_shared::api::ProbeRecord {
    let path = format!("/api/v1/probes/{id}");
    let answer = http(server, from, Method::GET, &path, None).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    serde_json::from_value(answer.json()).expect("record")
}

/// Follows probe `id`'s event stream on the real server at `server` to its
/// `done` event and returns the record that carries.
pub async fn probe_done(
    server: SocketAddr,
    from: IpAddr,
    id: &str,
) -> h123_shared::api::ProbeRecord {
    let events = events_until_done(server, from, id).await;
    serde_json::from_value(events.last().expect("events").data.clone()).expect("record")
}

/// Every event of probe `id`'s stream, which ends with `done`.
pub async fn events_until_done(server: SocketAddr, from: IpAddr, id: &str) -> Vec<Sse> {
    let stream = http(
        server,
        from,
        Method::GET,
        &format!("/api/v1/probes/{id}/events"),
        None,
    )
    .await;
    let events = parse_sse(&stream.text());
    let done = events.last().expect("events");
    assert_eq!(done.event, "done", "{events:?}");
    events
}

/// Like [`http`], but a connection or protocol error is returned, not a panic.
pub async fn try_http(
    server: SocketAddr,
    from: IpAddr,
    method: Method,
    path: &str,
    json: Option<&str>,
) -> Result<Answer, String> {
    let socket = tokio::net::TcpSocket::new_v4().map_err(|e| e.to_string())?;
    socket
        .bind(SocketAddr::new(from, 0))
        .map_err(|e| format!("bind {from}: {e}"))?;
    let stream = socket.connect(server).await.map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("host", server.to_string());
    let body = match json {
        Some(j) => {
            builder = builder.header("content-type", "application/json");
            http_body_util::Full::new(Bytes::from(j.to_owned()))
        }
        None => http_body_util::Full::new(Bytes::new()),
    };
    let request = builder.body(body).map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok(Answer {
        status,
        headers,
        body,
    })
}

/// `h123 serve` running as a child process.
pub struct ServerProcess {
    /// The child.
    pub child: tokio::process::Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Starts `h123 serve` on a free port with `db` and the target allowed, plus `extra` flags.
    pub async fn start(target: &TestTarget, db: &std::path::Path, extra: &[&str]) -> Self {
        let no_ui = db.parent().expect("db folder").join("no-ui");
        Self::start_with(target, db.as_os_str(), &no_ui, extra).await
    }

    /// Starts `h123 serve` as [`ServerProcess::start`] does, serving the web UI from `web_root`.
    pub async fn start_with_web_root(
        target: &TestTarget,
        db: &std::path::Path,
        web_root: &std::path::Path,
        extra: &[&str],
    ) -> Self {
        Self::start_with(target, db.as_os_str(), web_root, extra).await
    }

    /// Starts `h123 serve` as [`ServerProcess::start`] does with `--db db` (a
    /// path or a `postgres://` URL), no web UI (`folder`/no-ui).
    pub async fn start_with_db(
        target: &TestTarget,
        db: &std::ffi::OsStr,
        folder: &std::path::Path,
        extra: &[&str],
    ) -> Self {
        Self::start_with(target, db, &folder.join("no-ui"), extra).await
    }

    /// Starts `h123 serve` on a free port with `--db db`, the web UI from
    /// `web_root`, the target allowed, plus `extra` flags.
    async fn start_with(
        target: &TestTarget,
        db: &std::ffi::OsStr,
        web_root: &std::path::Path,
        extra: &[&str],
    ) -> Self {
        // `H123_SERVE_BIN` measures another build (a figure's "before").
        let binary =
            std::env::var_os("H123_SERVE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_h123").into());
        let mut command = tokio::process::Command::new(binary);
        command
            .arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--db")
            .arg(db)
            .arg("--only-allowed-targets")
            .arg("--allow-target")
            .arg(target.https_addr.to_string())
            .arg("--dns-server")
            .arg(target.dns_addr.to_string())
            .arg("--cacert")
            .arg(target.ca_file())
            .arg("--web-root")
            .arg(web_root)
            // Tests make many probes from one client, and many at once.
            .arg("--client-bytes-per-minute")
            .arg((1u64 << 40).to_string())
            .arg("--server-bytes-per-minute")
            .arg((1u64 << 40).to_string())
            .args(extra)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("h123 serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let addr = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.expect("stderr line") {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().expect("address");
                    return addr.parse::<SocketAddr>().expect("socket address");
                }
            }
            panic!("h123 serve exited before listening");
        })
        .await
        .expect("h123 serve listens within 20 s");
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[server] {line}");
            }
        });
        ServerProcess { child, addr }
    }

    /// CPU time the server has used so far (user and system), from `/proc`.
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        cpu_time_of(self.child.id()?)
    }

    /// Peak resident memory of the server (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let pid = self.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }
}

/// The options JSON of a probe of `url` over `protocols`, `repeat` times.
pub fn probe_body(url: &str, protocols: &[&str], repeat: u32) -> String {
    serde_json::json!({
        "url": url,
        "protocols": protocols,
        "repeat": repeat,
        "rounds": 1,
        "timeout_ms": 5000,
        "phase_timeout_ms": 3000,
    })
    .to_string()
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// The CPU time (user and system) process `pid` has used so far.
pub fn cpu_time_of(pid: u32) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command (which may hold spaces): utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux reports them in USER_HZ, 100 per second.
    Some(std::time::Duration::from_millis(ticks * 10))
}
