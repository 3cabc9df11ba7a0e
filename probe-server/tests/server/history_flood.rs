//! The monitor-page flood against a long history (issue 54): a public monitor every 60 s on
//! three protocols with 30 days (or `H123_FLOOD_DAYS`, e.g. 400) of points written straight
//! into the store, then one client with 8 kept-alive connections asking for its page, status
//! page, status and series for 10 s while `/healthz` is asked from another address. Prints the
//! server's CPU time, RSS and `/healthz` median. Re-runnable: each run makes its own database.
//! `H123_FLOOD_DAYS=400 cargo test --release -p h123 --test server -- --ignored history_flood --nocapture`
//! (`H123_SERVE_BIN` measures another build; `H123_FLOOD_ARGS` adds flags to `h123 serve`, e.g.
//! `--read-rate-burst 100000 --read-rate-per-minute 6000000` so that every request is a page).

use crate::flood::{connect, health_samples};
use crate::support::*;
use axum::http::StatusCode;
use bytes::Bytes;
use h123::store::SharedStore;
use h123::store::monitor_rows::StoredMonitor;
use h123::store::sqlite::SqliteStore;
use h123_shared::monitor::{Figures, Monitor, MonitorPoint, MonitorRequest, PointState};
use h123_shared::{Micros, Protocol};
use serde_json::json;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The monitor's interval.
const EVERY_MS: u64 = 60_000;

/// The flooding client's address.
const FLOODER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 54, 10));

/// Writes monitor `id` with `days` of runs every minute (three protocols; one run in 40 with a
/// failed HTTP/3, one in 25 over its threshold, a missed stretch of ten slots every day) into
/// the SQLite database at `db`.
pub async fn long_history(db: &std::path::Path, id: &str, days: u64, now: u64) {
    let store = SharedStore::new(SqliteStore::open(db).expect("store opens"));
    let request: MonitorRequest = serde_json::from_value(json!({
        "url": "https://target.h123.test/", "every": "1m", "visibility": "public",
        "thresholds": {"total": "300ms"}
    }))
    .unwrap();
    let runs = days * 24 * 60;
    let first = now - runs * EVERY_MS;
    store
        .insert_monitor(StoredMonitor {
            monitor: Monitor {
                id: id.to_owned(),
                created_at_unix_ms: first,
                spec: request.spec(1000).unwrap(),
                paused: true,
                next_slot_unix_ms: now + EVERY_MS,
            },
            owner_hash: None,
            client: None,
            alert_secret: None,
            alert_state: Default::default(),
        })
        .await
        .unwrap();
    let mut batch = Vec::new();
    for run in 0..runs {
        let slot = first + run * EVERY_MS;
        if run % 1440 == 700 {
            batch.push(h123_shared::monitor::missed_point(slot, 10));
        }
        if run % 1440 >= 700 && run % 1440 < 710 {
            continue;
        }
        for (i, protocol) in Protocol::ALL.into_iter().enumerate() {
            let ms = 40 + (run * 7 + i as u64 * 13) % 50 + if run % 25 == 3 { 300 } else { 0 };
            let failed = protocol == Protocol::H3 && run % 40 == 7;
            batch.push(MonitorPoint {
                slot_unix_ms: slot,
                started_unix_ms: slot + 120,
                vantage: String::new(),
                protocol: Some(protocol),
                state: if failed {
                    PointState::Failed
                } else {
                    PointState::Ok
                },
                missed: 0,
                probe_id: Some(format!("p{run:011}{i}")),
                status: (!failed).then_some(200),
                figures: match failed {
                    true => Figures::default(),
                    false => Figures {
                        dns: Some(Micros(800 + run % 300)),
                        connect: Some(Micros(1000 + i as u64 * 90)),
                        tls: Some(Micros(3000 + (run % 11) * 100)),
                        ttfb: Some(Micros(ms * 800)),
                        total: Some(Micros(ms * 1000)),
                        reused_total: Some(Micros(ms * 400)),
                    },
                },
                breached: match ms > 300 && !failed {
                    true => vec!["total.median <= 300 ms".to_owned()],
                    false => Vec::new(),
                },
                detail: failed.then(|| "quic: timed out".to_owned()),
            });
        }
        if batch.len() >= 6000 {
            store
                .add_points(id.to_owned(), std::mem::take(&mut batch))
                .await
                .unwrap();
        }
    }
    store.add_points(id.to_owned(), batch).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "prints figures; run with --ignored --nocapture (H123_FLOOD_DAYS, H123_SERVE_BIN)"]
async fn history_flood_of_a_monitors_pages() {
    let _serial = SERIAL.lock().await;
    let days: u64 = std::env::var("H123_FLOOD_DAYS")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(30);
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let id = "floodmonitor";
    let now = h123::probe::trace::unix_ms();
    let took = h123::probe::trace::now();
    long_history(&db, id, days, now).await;
    println!(
        "{days} days of points written in {:.1} s",
        took.elapsed().as_secs_f64()
    );
    let extra = std::env::var("H123_FLOOD_ARGS").unwrap_or_default();
    let extra: Vec<&str> = extra.split_whitespace().collect();
    let server = ServerProcess::start(&target, &db, &extra).await;
    let paths = [
        format!("/m/{id}"),
        format!("/m/{id}/status"),
        format!("/api/v1/monitors/{id}/status"),
        format!("/m/{id}?range=30d"),
        format!(
            "/api/v1/monitors/{id}/series?from={}&to={now}",
            now - days * 24 * 3600 * 1000
        ),
    ];
    let quiet = IpAddr::V4(Ipv4Addr::new(127, 0, 54, 20));
    for path in &paths {
        let took = h123::probe::trace::now();
        let answer = http(server.addr, quiet, axum::http::Method::GET, path, None).await;
        println!(
            "one {path}: {} in {:.1} ms, {} bytes",
            answer.status,
            took.elapsed().as_secs_f64() * 1000.0,
            answer.body.len()
        );
    }
    let rss_before = server.peak_rss_kib().unwrap_or(0);
    let cpu_before = server.cpu_time().expect("cpu time");
    let stop = Arc::new(AtomicBool::new(false));
    let health = health_samples(server.addr, stop.clone());
    let addr = server.addr;
    let paths = Arc::new(paths);
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let paths = paths.clone();
            tokio::spawn(async move {
                let started = h123::probe::trace::now();
                let mut statuses = Vec::new();
                let mut sender = connect(addr, FLOODER).await;
                let mut n = w;
                while started.elapsed() < Duration::from_secs(10) {
                    if sender.ready().await.is_err() {
                        sender = connect(addr, FLOODER).await;
                    }
                    let request = hyper::Request::builder()
                        .uri(&paths[n % paths.len()])
                        .header("host", addr.to_string())
                        .body(http_body_util::Full::new(Bytes::new()))
                        .expect("request");
                    n += 1;
                    let Ok(response) = sender.send_request(request).await else {
                        continue;
                    };
                    statuses.push(response.status());
                    let _ = http_body_util::BodyExt::collect(response.into_body()).await;
                }
                statuses
            })
        })
        .collect();
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    for worker in workers {
        for status in worker.await.expect("worker") {
            *statuses.entry(status.as_u16()).or_default() += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let cpu = server.cpu_time().expect("cpu time") - cpu_before;
    let mut health = health.await.expect("health sampler");
    health.sort_by(f64::total_cmp);
    println!(
        "flood of {days} days, 1 client x 8 connections for 10 s: answers {statuses:?}; \
         server CPU {:.1} s; peak RSS {} MB before, {} MB after; /healthz n={} median {:.2} ms, \
         p90 {:.2} ms, max {:.2} ms",
        cpu.as_secs_f64(),
        rss_before / 1024,
        server.peak_rss_kib().unwrap_or(0) / 1024,
        health.len(),
        percentile(&health, 50.0),
        percentile(&health, 90.0),
        health.last().copied().unwrap_or(f64::NAN),
    );
    assert!(statuses.contains_key(&StatusCode::OK.as_u16()));
}
