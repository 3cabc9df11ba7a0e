//! Each route class flooded on the real `h123 serve`, from one client and from four (distinct
//! loopback source addresses): the flood is refused (429 or 503, or 401 for agents without a
//! token) while `/healthz`, asked every 20 ms from another address over a new connection, still
//! answers within 50 ms (the median; the figures are printed). And the cost of live views:
//! sixty drawn streams against sixty JSON streams of the same long probe (printed).

use crate::support::*;
use axum::http::{Method, StatusCode};
use bytes::Bytes;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The address `/healthz` is asked from, apart from every flooding client.
const HEALTH_FROM: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 99));

/// Flooding client `c` of `clients` (each flood its own addresses, so no bucket carries over).
fn client(clients: u8, c: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, clients, 10 + c))
}

/// `/healthz`'s latencies in milliseconds, asked every 20 ms until `stop`, from a thread and
/// runtime of its own (so the flooding clients' tasks do not delay the asking).
pub(crate) fn health_samples(
    server: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<Vec<f64>> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let samples = runtime.block_on(async {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let started = h123::probe::trace::now();
                let answer = http(server, HEALTH_FROM, Method::GET, "/healthz", None).await;
                samples.push(started.elapsed().as_secs_f64() * 1000.0);
                assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            samples
        });
        let _ = sender.send(samples);
    });
    tokio::spawn(async move { receiver.await.expect("health sampler") })
}

/// The statuses one flood got, per client.
struct Flood {
    statuses: Vec<Vec<StatusCode>>,
    health_ms: Vec<f64>,
}

impl Flood {
    /// Checks that every client was refused (by `refusals`), nothing else failed on the
    /// server's side, and `/healthz` kept answering; prints the figures.
    fn check(mut self, class: &str, refusals: &[StatusCode]) {
        let clients = self.statuses.len();
        let all: Vec<StatusCode> = self.statuses.concat();
        let count = |s: StatusCode| all.iter().filter(|&&x| x == s).count();
        self.health_ms.sort_by(f64::total_cmp);
        let median = percentile(&self.health_ms, 50.0);
        println!(
            "{class}, {clients} client(s): {} requests, {} 2xx, {} 429, {} 503, {} 401; \
             /healthz n={} median={median:.2} ms p90={:.2} ms max={:.2} ms",
            all.len(),
            all.iter().filter(|s| s.is_success()).count(),
            count(StatusCode::TOO_MANY_REQUESTS),
            count(StatusCode::SERVICE_UNAVAILABLE),
            count(StatusCode::UNAUTHORIZED),
            self.health_ms.len(),
            percentile(&self.health_ms, 90.0),
            self.health_ms.last().copied().unwrap_or(f64::NAN),
        );
        for (c, statuses) in self.statuses.iter().enumerate() {
            assert!(
                statuses.iter().any(|s| refusals.contains(s)),
                "{class}: client {c} of {clients} was never refused: {statuses:?}"
            );
        }
        assert!(
            all.iter()
                .all(|s| !s.is_server_error() || *s == StatusCode::SERVICE_UNAVAILABLE),
            "{class}: {all:?}"
        );
        assert!(self.health_ms.len() >= 3, "{class}: too few health samples");
        assert!(median < 50.0, "{class}: /healthz median {median:.2} ms");
    }
}

/// How long each flood lasts at least.
const FLOOD_TIME: Duration = Duration::from_secs(1);

/// At least `requests` requests (`method` on `path`, with `json`) from each of `clients`
/// clients, and for at least [`FLOOD_TIME`], by 4 workers per client, each with a kept-alive
/// connection, while `/healthz` is sampled.
async fn flood(
    server: &ServerProcess,
    clients: u8,
    requests: usize,
    method: Method,
    path: &str,
    json: Option<&str>,
) -> Flood {
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let health = health_samples(addr, stop.clone());
    let mut per_client = Vec::new();
    for c in 0..clients {
        let from = client(clients, c);
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (method, path) = (method.clone(), path.to_owned());
                let json = json.map(str::to_owned);
                tokio::spawn(async move {
                    let started = h123::probe::trace::now();
                    let mut statuses = Vec::new();
                    let mut sender = connect(addr, from).await;
                    while statuses.len() < requests / 4 || started.elapsed() < FLOOD_TIME {
                        if sender.ready().await.is_err() {
                            sender = connect(addr, from).await;
                        }
                        let body = Bytes::from(json.clone().unwrap_or_default());
                        let request = hyper::Request::builder()
                            .method(method.clone())
                            .uri(&path)
                            .header("host", addr.to_string())
                            .header("content-type", "application/json")
                            .body(http_body_util::Full::new(body))
                            .expect("request");
                        let response = sender.send_request(request).await.expect("an answer");
                        statuses.push(response.status());
                        // Read the whole answer, as a client does, before the next request.
                        let _ = http_body_util::BodyExt::collect(response.into_body()).await;
                    }
                    statuses
                })
            })
            .collect();
        per_client.push(workers);
    }
    let mut statuses = Vec::new();
    for workers in per_client {
        let mut mine = Vec::new();
        for worker in workers {
            mine.extend(worker.await.expect("worker"));
        }
        statuses.push(mine);
    }
    stop.store(true, Ordering::Relaxed);
    Flood {
        statuses,
        health_ms: health.await.expect("health sampler"),
    }
}

/// An HTTP/1.1 connection to `server` from source address `from`.
pub(crate) async fn connect(
    server: std::net::SocketAddr,
    from: IpAddr,
) -> hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>> {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(std::net::SocketAddr::new(from, 0))
        .expect("bind");
    let stream = socket.connect(server).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .expect("handshake");
    tokio::spawn(connection);
    sender
}

/// A finished probe's id, created by a client no flood uses.
async fn finished_probe(server: &ServerProcess, target: &h123_target::TestTarget) -> String {
    let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 98));
    let id = create_probe(
        server.addr,
        from,
        &probe_body(&target.https_url("/"), &["h1"], 1),
    )
    .await;
    probe_done(server.addr, from, &id).await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_light_requests_is_refused_while_health_answers() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--light-rate-burst", "40", "--light-rate-per-minute", "60"];
    let server = ServerProcess::start(&target, &dir.path().join("h.db"), &flags).await;
    for clients in [1, 4] {
        for path in ["/api/v1/config", "/api/openapi.json", "/metrics"] {
            let flood = flood(&server, clients, 80, Method::GET, path, None).await;
            flood.check(&format!("light {path}"), &[StatusCode::TOO_MANY_REQUESTS]);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_record_reads_is_refused_while_health_answers() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--read-rate-burst", "40", "--read-rate-per-minute", "60"];
    let server = ServerProcess::start(&target, &dir.path().join("h.db"), &flags).await;
    let (a, b) = (
        finished_probe(&server, &target).await,
        finished_probe(&server, &target).await,
    );
    let paths = [
        format!("/api/v1/probes/{a}"),
        format!("/api/v1/probes/{a}/har"),
        format!("/api/v1/probes/{a}/waterfall.svg"),
        format!("/api/v1/probes/{a}/view"),
        format!("/api/v1/compare/{a}/{b}"),
    ];
    for clients in [1, 4] {
        for path in &paths {
            let flood = flood(&server, clients, 60, Method::GET, path, None).await;
            flood.check(
                &format!("record {path}"),
                &[
                    StatusCode::TOO_MANY_REQUESTS,
                    StatusCode::SERVICE_UNAVAILABLE,
                ],
            );
        }
    }
}

/// A short bench on `server` of the target, once finished: its id.
async fn finished_bench(server: &ServerProcess, target: &h123_target::TestTarget) -> String {
    // Apart from every flooding client, so its reads leave their buckets whole.
    let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 98));
    let body = serde_json::json!({
        "url": target.https_url("/"), "protocols": ["h1"], "concurrency": 2, "duration_ms": 300,
    });
    let created = http(
        server.addr,
        from,
        Method::POST,
        "/api/v1/benches",
        Some(&body.to_string()),
    )
    .await;
    assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_owned();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let record = http(
            server.addr,
            from,
            Method::GET,
            &format!("/api/v1/benches/{id}"),
            None,
        )
        .await;
        if record.status == StatusCode::OK && record.json()["status"] != "running" {
            return id;
        }
    }
    panic!("the bench did not finish within 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_permalink_pages_is_refused_while_health_answers() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let web = dir.path().join("web");
    std::fs::create_dir(&web).unwrap();
    std::fs::write(
        web.join("index.html"),
        "<!doctype html><html><head><title>h123</title></head><body>\
         <!--h123:summary--><p>intro</p><!--/h123:summary--></body></html>",
    )
    .unwrap();
    let https = target.https_addr.to_string();
    let flags = [
        "--light-rate-burst",
        "60",
        "--light-rate-per-minute",
        "60",
        "--read-rate-burst",
        "20",
        "--read-rate-per-minute",
        "60",
        "--enable-bench",
        "--bench-target",
        &https,
    ];
    let server =
        ServerProcess::start_with_web_root(&target, &dir.path().join("h.db"), &web, &flags).await;
    let (a, b) = (
        finished_probe(&server, &target).await,
        finished_probe(&server, &target).await,
    );
    let bench = finished_bench(&server, &target).await;
    for clients in [1, 4] {
        for path in [
            format!("/r/{a}"),
            format!("/compare/{a}/{b}"),
            format!("/b/{bench}"),
        ] {
            let flood = flood(&server, clients, 80, Method::GET, &path, None).await;
            flood.check(&format!("page {path}"), &[StatusCode::TOO_MANY_REQUESTS]);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_creations_is_refused_while_health_answers() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--rate-burst", "3", "--rate-per-minute", "1"];
    let server = ServerProcess::start(&target, &dir.path().join("h.db"), &flags).await;
    let body = probe_body(&target.https_url("/"), &["h1"], 1);
    for clients in [1, 4] {
        let flood = flood(
            &server,
            clients,
            20,
            Method::POST,
            "/api/v1/probes",
            Some(&body),
        )
        .await;
        flood.check("create", &[StatusCode::TOO_MANY_REQUESTS]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_agent_posts_without_a_token_is_refused_while_health_answers() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--agent", "fra1=a-token-of-at-least-32-characters-here"];
    let server = ServerProcess::start(&target, &dir.path().join("h.db"), &flags).await;
    for clients in [1, 4] {
        let path = "/api/v1/agent/claim";
        let flood = flood(&server, clients, 200, Method::POST, path, Some("{}")).await;
        assert!(
            flood
                .statuses
                .concat()
                .iter()
                .all(|s| *s == StatusCode::UNAUTHORIZED)
        );
        flood.check("agent", &[StatusCode::UNAUTHORIZED]);
    }
}

/// An event stream held open: the connection and the response whose body is not read.
struct Held {
    _sender: hyper::client::conn::http1::SendRequest<http_body_util::Full<Bytes>>,
    _body: hyper::body::Incoming,
}

/// Opens `path` from `from` and, when it answers 200, keeps it open.
async fn open(
    server: std::net::SocketAddr,
    from: IpAddr,
    path: &str,
) -> (StatusCode, Option<Held>) {
    let mut sender = connect(server, from).await;
    let request = hyper::Request::get(path)
        .header("host", server.to_string())
        .body(http_body_util::Full::new(Bytes::new()))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status();
    let held = status.is_success().then(|| Held {
        _sender: sender,
        _body: response.into_body(),
    });
    (status, held)
}

/// The options of a probe that runs for several seconds (72 attempts of 150 ms).
fn long_probe(target: &h123_target::TestTarget) -> String {
    serde_json::json!({
        "url": target.https_url("/delay/150"),
        "protocols": ["h1", "h2", "h3"],
        "repeat": 6, "rounds": 4,
        "timeout_ms": 5000, "phase_timeout_ms": 3000,
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_streams_is_capped_per_client_and_in_all_while_health_answers() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--max-streams-per-client", "16", "--max-streams", "40"];
    let server = ServerProcess::start(&target, &dir.path().join("h.db"), &flags).await;
    let owner = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 98));
    let id = create_probe(server.addr, owner, &long_probe(&target)).await;
    for clients in [1u8, 4] {
        for kind in ["view/events", "events"] {
            let path = format!("/api/v1/probes/{id}/{kind}");
            let stop = Arc::new(AtomicBool::new(false));
            let health = health_samples(server.addr, stop.clone());
            let mut held = Vec::new();
            let mut statuses = vec![Vec::new(); usize::from(clients)];
            for _ in 0..20 {
                for c in 0..clients {
                    let (status, open) = open(server.addr, client(clients, c), &path).await;
                    statuses[usize::from(c)].push(status);
                    held.extend(open);
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            stop.store(true, Ordering::Relaxed);
            let flood = Flood {
                statuses,
                health_ms: health.await.expect("health sampler"),
            };
            let open_at_once = held.len();
            assert_eq!(open_at_once, if clients == 1 { 16 } else { 40 }, "{kind}");
            flood.check(
                &format!("stream {kind} ({open_at_once} open)"),
                &[
                    StatusCode::TOO_MANY_REQUESTS,
                    StatusCode::SERVICE_UNAVAILABLE,
                ],
            );
            drop(held);
            // The places come back once the server sees the connections closed.
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
}

/// The server's CPU time while `streams` streams of `kind` (15 from each address) read a
/// running probe's stream to its end.
async fn stream_cost(server: &ServerProcess, kind: &str, id: &str, streams: u8) -> Duration {
    let before = server.cpu_time().expect("cpu time");
    let readers: Vec<_> = (0..streams)
        .map(|n| {
            // 15 a client: under the default cap of 16, so an older build is measured alike.
            let from = IpAddr::V4(Ipv4Addr::new(127, 1, 0, 10 + n / 15));
            let (addr, path) = (server.addr, format!("/api/v1/probes/{id}/{kind}"));
            tokio::spawn(async move { http(addr, from, Method::GET, &path, None).await })
        })
        .collect();
    for reader in readers {
        let answer = reader.await.expect("reader");
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
        assert!(
            answer.text().contains("event: done"),
            "{kind} ends with done"
        );
    }
    server.cpu_time().expect("cpu time") - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "prints figures; run with --ignored --nocapture (H123_SERVE_BIN measures another build)"]
async fn sixty_live_views_cost_about_what_sixty_json_streams_do() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&target, &dir.path().join("h.db"), &[]).await;
    let owner = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 98));
    let mut figures = Vec::new();
    for (kind, streams) in [("events", 60), ("view/events", 60), ("view/events", 240)] {
        let id = create_probe(server.addr, owner, &long_probe(&target)).await;
        let took = h123::probe::trace::now();
        let stop = Arc::new(AtomicBool::new(false));
        let health = health_samples(server.addr, stop.clone());
        let cpu = stream_cost(&server, kind, &id, streams).await;
        let wall = took.elapsed();
        stop.store(true, Ordering::Relaxed);
        let mut health = health.await.expect("health sampler");
        health.sort_by(f64::total_cmp);
        println!(
            "{streams} {kind} streams of one long probe ({wall:.1?}): server CPU {:.2} s, \
             peak RSS {} KiB, /healthz median {:.2} ms, max {:.2} ms",
            cpu.as_secs_f64(),
            server.peak_rss_kib().unwrap_or(0),
            percentile(&health, 50.0),
            health.last().copied().unwrap_or(f64::NAN),
        );
        figures.push(cpu);
    }
    assert!(
        figures[1] < figures[0] * 3 + Duration::from_secs(1),
        "sixty views cost {:?} against {:?} for JSON",
        figures[1],
        figures[0]
    );
}
