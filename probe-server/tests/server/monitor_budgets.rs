//! Monitors' requests and deliveries budgeted, counted at real loopback servers: many monitors
//! of one site, spread over its subdomains, or of many sites at one address, start at most the
//! site's (or the address's) runs a minute (the rest missed, saying why); a
//! flapping target's notifications cost a failing receiver a few POSTs, then none while it
//! rests, and a healthy one a POST per change; a silent receiver holds one socket at a time
//! and only until it is rested.
//!
//! `cargo test --release -p h123 --test server monitor_budgets -- --nocapture --test-threads=1`
//! prints the figures.

use crate::support::*;
use axum::http::StatusCode;
use h123::probe::guard::{AllowedTarget, ConnectPolicy};
use h123::server::{AppState, MonitorLimits, ServerConfig};
use h123_shared::monitor::PointState;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A plain HTTP/1.1 server on loopback that counts connections and requests and answers every
/// request `status`; when `flap`, every second connection is closed before a byte is read.
struct Counting {
    addr: SocketAddr,
    requests: Arc<AtomicUsize>,
}

impl Counting {
    async fn start(status: u16, flap: bool) -> Counting {
        use hyper::service::service_fn;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        tokio::spawn(async move {
            let mut connections = 0usize;
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                connections += 1;
                if flap && connections.is_multiple_of(2) {
                    drop(socket);
                    continue;
                }
                let counted = counted.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |_: hyper::Request<hyper::body::Incoming>| {
                        counted.fetch_add(1, Ordering::SeqCst);
                        async move {
                            Ok::<_, std::convert::Infallible>(
                                hyper::Response::builder()
                                    .status(status)
                                    .body(http_body_util::Full::new(bytes::Bytes::from_static(
                                        b"ok",
                                    )))
                                    .unwrap(),
                            )
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Counting { addr, requests }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// A receiver that accepts and never answers: how many connections it took, and the most open
/// at once (a connection is open until the server closes it).
struct Silent {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    most_open: Arc<AtomicUsize>,
}

impl Silent {
    async fn start() -> Silent {
        use tokio::io::AsyncReadExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let most_open = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(AtomicUsize::new(0));
        let (taken, most) = (accepted.clone(), most_open.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                taken.fetch_add(1, Ordering::SeqCst);
                let now_open = open.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now_open, Ordering::SeqCst);
                let open = open.clone();
                tokio::spawn(async move {
                    let mut sink = [0u8; 4096];
                    while matches!(socket.read(&mut sink).await, Ok(n) if n > 0) {}
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Silent {
            addr,
            accepted,
            most_open,
        }
    }
}

/// A server whose probes and notifications reach only `addrs`, monitors every second allowed,
/// at most `per_host` runs a minute at one site.
fn budget_config(
    target: &h123_target::TestTarget,
    addrs: &[SocketAddr],
    per_host: u64,
) -> ServerConfig {
    let mut config = config(target);
    config.guard.policy = ConnectPolicy::only(
        addrs
            .iter()
            .map(|addr| AllowedTarget {
                ip: addr.ip(),
                port: Some(addr.port()),
            })
            .collect(),
    );
    config.monitors = MonitorLimits {
        max_total: 100,
        per_owner: 100,
        per_client: 100,
        min_every_ms: 1000,
        bytes_per_minute: 1 << 40,
        runs_per_host_minute: per_host,
        ..MonitorLimits::default()
    };
    config
}

/// A monitor of `url` over HTTP/1.1 every second, one request a run, firing at the first
/// failed run, notifying `alerts`.
fn every_second(url: &str, alerts: &[Value]) -> Value {
    json!({
        "url": url,
        "protocols": ["h1"],
        "every": "1s",
        "options": {"repeat": 1, "rounds": 1, "timeout_ms": 3000, "phase_timeout_ms": 2000},
        "alerting": {"after": 1},
        "alerts": alerts,
    })
}

async fn create(state: &AppState, body: &Value) -> String {
    let made = call(
        state,
        post_json("/api/v1/monitors", &body.to_string()),
        CLIENT,
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    made.json()["monitor"]["id"].as_str().unwrap().to_owned()
}

/// The value of series `name` (with its labels) on `/metrics`, checking that no monitor of
/// `ids` is named there (none is public).
async fn metric(state: &AppState, name: &str, ids: &[String]) -> u64 {
    let text = call(state, get("/metrics"), CLIENT).await.text();
    for id in ids {
        assert!(!text.contains(id.as_str()), "{id} on /metrics");
    }
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("{name} on /metrics: {text}"))
        .parse()
        .unwrap()
}

fn seconds_since(started: u64) -> f64 {
    (h123::probe::trace::unix_ms() - started) as f64 / 1000.0
}

/// How many monitors every second the cap tests make, and the runs a minute a site gets.
const MONITORS: usize = 20;
const PER_HOST: u64 = 10;

/// [`MONITORS`] monitors every second of `names` (cycled), each resolving to one origin, at a
/// server allowing [`PER_HOST`] runs a minute a site, for 8 s: the origin gets no more
/// requests than one site's bucket allows, and every other slot is missed, saying whose runs
/// are spent, each counted once on `/metrics`. The site each missed point names.
async fn monitors_capped_at_one_site(names: &[&str], what: &str) -> Vec<String> {
    let target = target().await;
    let origin = Counting::start(200, false).await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(budget_config(&target, &[origin.addr], PER_HOST), &dir);
    h123::server::schedule::spawn(state.clone());
    let port = origin.addr.port();
    let started = h123::probe::trace::unix_ms();
    let mut ids = Vec::new();
    for name in names.iter().cycle().take(MONITORS) {
        let url = format!("http://{name}:{port}/");
        ids.push(create(&state, &every_second(&url, &[])).await);
    }
    tokio::time::sleep(Duration::from_secs(4)).await;
    let capped_early = metric(&state, CAPPED, &ids).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let elapsed = seconds_since(started);
    let requests = origin.requests();
    state.shutdown(Duration::from_secs(5)).await;
    let capped = metric(&state, CAPPED, &ids).await;

    let mut sites = Vec::new();
    for id in &ids {
        for point in state
            .store
            .points(id.clone(), 0, u64::MAX / 2, None)
            .await
            .unwrap()
        {
            if point.state == PointState::Missed {
                let site = point
                    .detail
                    .as_deref()
                    .and_then(|detail| detail.strip_prefix("the monitors' runs at "))
                    .and_then(|rest| {
                        rest.strip_suffix(&format!(
                            " are spent: at most {PER_HOST} a minute at one site"
                        ))
                    });
                sites.push(site.unwrap_or_else(|| panic!("{point:?}")).to_owned());
            }
        }
    }
    let missed = sites.len() as u64;
    // The bucket: its ten at once, then ten a minute (one more for a run the shutdown let end).
    let allowed = PER_HOST as f64 * (1.0 + elapsed / 60.0) + 1.0;
    println!(
        "{MONITORS} monitors every second at {what} for {elapsed:.1} s: {requests} requests \
         (uncapped, about {:.0}); {missed} slots missed for the site's runs a minute",
        MONITORS as f64 * elapsed
    );
    assert!(
        requests as f64 <= allowed,
        "{requests} requests in {elapsed:.1} s; the cap allows {allowed:.1}"
    );
    assert!(requests >= 5, "the cap's runs ran: {requests}");
    assert!(missed > 20, "the rest were missed, saying why: {missed}");
    println!("{CAPPED}: {capped_early} after 4 s, {capped} at the end");
    assert!(
        0 < capped_early && capped_early < capped,
        "the counter grows: {capped_early}, then {capped}"
    );
    assert_eq!(capped, missed, "every capped slot counted once");
    sites
}

#[tokio::test]
async fn many_monitors_of_one_sites_subdomains_start_at_most_its_runs_a_minute() {
    // A wildcard's subdomains, each resolving to the one origin: one site, one cap.
    let what = format!("{} subdomains of one site", WILDCARD_NAMES.len());
    let sites = monitors_capped_at_one_site(&WILDCARD_NAMES, &what).await;
    assert!(sites.iter().all(|site| site == "h123.test"), "{sites:?}");
}

#[tokio::test]
async fn many_monitors_of_names_at_one_address_start_at_most_its_runs_a_minute() {
    // Four registrable domains, each with its own cap by name, all resolving to 127.0.0.1:
    // the address's cap holds them all.
    let what = format!("{} sites at one address", ONE_ADDRESS_NAMES.len());
    let sites = monitors_capped_at_one_site(&ONE_ADDRESS_NAMES, &what).await;
    assert!(sites.iter().any(|site| site == "127.0.0.1"), "{sites:?}");
    let named: Vec<String> = ONE_ADDRESS_NAMES
        .iter()
        .map(|name| h123::server::host_runs::site_of(&format!("http://{name}/")))
        .collect();
    assert!(
        sites
            .iter()
            .all(|site| site == "127.0.0.1" || named.contains(site)),
        "{sites:?}"
    );
}

const CAPPED: &str = "h123_monitor_slots_capped_total";

#[tokio::test]
async fn a_flapping_target_costs_a_failing_receiver_a_few_posts_and_a_healthy_one_a_post_a_change()
{
    let target = target().await;
    let (origin, other_origin) = (
        Counting::start(200, true).await,
        Counting::start(200, true).await,
    );
    let failing = Counting::start(500, false).await;
    let healthy = Counting::start(204, false).await;
    let dir = tempfile::tempdir().unwrap();
    let config = budget_config(
        &target,
        &[origin.addr, other_origin.addr, failing.addr, healthy.addr],
        1_000_000,
    );
    let state = state(config, &dir);
    h123::server::schedule::spawn(state.clone());
    // Five webhooks at one public URL's paths: the audit's 25 POSTs a run.
    let alerts: Vec<Value> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|path| json!({"webhook": format!("http://{}/{path}", failing.addr)}))
        .collect();
    let hooked = create(
        &state,
        &every_second(&format!("http://{}/", origin.addr), &alerts),
    )
    .await;
    // And a monitor flapping the same way whose one webhook works.
    let works = [json!({"webhook": format!("http://{}/ok", healthy.addr)})];
    let id = create(
        &state,
        &every_second(&format!("http://{}/", other_origin.addr), &works),
    )
    .await;
    let started = h123::probe::trace::unix_ms();
    tokio::time::sleep(Duration::from_secs(12)).await;
    let elapsed = seconds_since(started);
    let (posts, delivered) = (failing.requests(), healthy.requests());
    let runs = state
        .store
        .points(id.clone(), 0, u64::MAX / 2, None)
        .await
        .unwrap()
        .iter()
        .filter(|p| p.protocol.is_some())
        .count();
    state.shutdown(Duration::from_secs(5)).await;
    let resting = metric(
        &state,
        "h123_deliveries_skipped_total{reason=\"receiver_resting\"}",
        &[hooked.clone(), id.clone()],
    )
    .await;
    let log = state.store.deliveries(hooked, 1000).await.unwrap();
    let skipped = log
        .iter()
        .filter(|t| {
            t.outcome
                .starts_with("skipped: its last 3 tries failed, so this server rests it until ")
        })
        .count();
    println!(
        "targets flapping every run for {elapsed:.1} s ({runs} runs): the failing receiver of \
         five webhooks got {posts} POSTs (before: 5 webhooks x 5 tries a change), {skipped} \
         tries skipped while it rests; the healthy one {delivered} (a POST a change)"
    );
    assert!(runs >= 6, "{runs} runs");
    assert!(
        posts <= h123::server::delivery_budget::FAILURES_TO_REST as usize,
        "one try at a time, rested after three failures: {posts} POSTs"
    );
    assert!(skipped > 0, "the log says why: {log:?}");
    assert_eq!(resting, skipped as u64, "/metrics counts each skipped try");
    // Each change once: firing and resolved in turn, no more than the runs made.
    assert!(
        delivered >= runs / 2 && delivered <= runs + 1,
        "{delivered} POSTs for {runs} runs"
    );
}

#[tokio::test]
async fn a_silent_receiver_holds_one_socket_at_a_time_until_it_is_rested() {
    let target = target().await;
    let origin = Counting::start(200, true).await;
    let silent = Silent::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = budget_config(&target, &[origin.addr, silent.addr], 1_000_000);
    let state = state(config, &dir);
    h123::server::schedule::spawn(state.clone());
    // The audit's 10 monitors, each with five webhooks at the silent receiver.
    let alerts: Vec<Value> = (0..5)
        .map(|n| json!({"webhook": format!("http://{}/{n}", silent.addr)}))
        .collect();
    let url = format!("http://{}/", origin.addr);
    for _ in 0..10 {
        create(&state, &every_second(&url, &alerts)).await;
    }
    // Three tries of 5 s each rest it; a little more to see nothing follows.
    tokio::time::sleep(Duration::from_secs(22)).await;
    let (accepted, most_open) = (
        silent.accepted.load(Ordering::SeqCst),
        silent.most_open.load(Ordering::SeqCst),
    );
    state.shutdown(Duration::from_secs(5)).await;
    println!(
        "10 flapping monitors x 5 webhooks at a silent receiver for 22 s: {accepted} \
         connections, at most {most_open} open at once (before: 250 held)"
    );
    // One try at a time (two for the moment one closes as the next opens).
    assert!(most_open <= 2, "{most_open} open at once");
    assert!(
        accepted <= h123::server::delivery_budget::FAILURES_TO_REST as usize,
        "rested after three silent tries: {accepted} connections"
    );
    assert!(accepted >= 1, "it was tried");
}
