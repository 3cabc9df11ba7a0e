//! Monitors across a crash and a restart, with the real `h123 serve`: SIGKILLed while monitor
//! runs are in flight, every slot before the kill has a point after the restart (a run, a
//! missed stretch, or `cancelled` for the runs in flight); and after a stop longer than the
//! monitors' interval, their late slots do not all run in the first seconds of the restart.
//!
//! `cargo test --release -p h123 --test server monitor_restart -- --nocapture --test-threads=1`
//! prints the figures (`H123_SERVE_BIN` measures another build).

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::monitor::first_slot;
use serde_json::json;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

const FROM: &str = "127.0.0.1";

/// Monitors every second allowed, made as fast as the test likes, any number of runs a minute
/// at the test target.
const FLAGS: &[&str] = &[
    "--rate-burst",
    "100000",
    "--rate-per-minute",
    "100000",
    "--monitor-min-interval",
    "1s",
    "--max-monitor-runs-per-host-minute",
    "100000",
];

/// A stored point: slot, state, missed stretch length, started, detail.
#[derive(Clone, Debug)]
struct Row {
    slot: u64,
    state: String,
    missed: u64,
    started: u64,
    detail: Option<String>,
}

/// A stored monitor: first slot, interval, next slot.
struct Stored {
    first: u64,
    every: u64,
    next: u64,
}

/// Creates a monitor of `url` over HTTP/1.1 every `every` on the server at `addr`; its id.
async fn create(addr: std::net::SocketAddr, url: &str, every: &str) -> String {
    let body = json!({
        "url": url,
        "protocols": ["h1"],
        "every": every,
        "options": {"repeat": 1, "rounds": 1, "timeout_ms": 8000},
    });
    let made = http(
        addr,
        FROM.parse::<IpAddr>().unwrap(),
        Method::POST,
        "/api/v1/monitors",
        Some(&body.to_string()),
    )
    .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    made.json()["monitor"]["id"].as_str().unwrap().to_owned()
}

/// The monitors and their points as the database holds them now.
fn read(db: &Path) -> (BTreeMap<String, Stored>, BTreeMap<String, Vec<Row>>) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut monitors = BTreeMap::new();
    let mut statement = conn
        .prepare("SELECT id, created_at_unix_ms, spec, next_slot_unix_ms FROM monitors")
        .unwrap();
    let rows = statement
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (id, created, spec, next) = row.unwrap();
        let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
        let every = spec["every_ms"].as_u64().expect("every_ms");
        let first = first_slot(&id, created as u64, every);
        monitors.insert(
            id,
            Stored {
                first,
                every,
                next: next as u64,
            },
        );
    }
    let mut points: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let mut statement = conn
        .prepare(
            "SELECT monitor_id, slot_unix_ms, state, missed, started_unix_ms, detail \
             FROM monitor_points ORDER BY slot_unix_ms",
        )
        .unwrap();
    let rows = statement
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Row {
                    slot: r.get::<_, i64>(1)? as u64,
                    state: r.get(2)?,
                    missed: r.get::<_, i64>(3)? as u64,
                    started: r.get::<_, i64>(4)? as u64,
                    detail: r.get(5)?,
                },
            ))
        })
        .unwrap();
    for row in rows {
        let (id, row) = row.unwrap();
        points.entry(id).or_default().push(row);
    }
    (monitors, points)
}

/// The state each slot of `monitor` before `until` holds among `points` (a missed stretch
/// covering its slots); a slot with no point is `None`.
fn slots(monitor: &Stored, points: &[Row], until: u64) -> Vec<(u64, Option<String>)> {
    let mut covered: BTreeMap<u64, String> = BTreeMap::new();
    for point in points {
        let count = if point.state == "missed" {
            point.missed
        } else {
            1
        };
        for n in 0..count {
            covered
                .entry(point.slot + n * monitor.every)
                .or_insert_with(|| point.state.clone());
        }
    }
    (0..)
        .map(|n| monitor.first + n * monitor.every)
        .take_while(|slot| *slot < until)
        .map(|slot| (slot, covered.get(&slot).cloned()))
        .collect()
}

#[tokio::test]
async fn sigkill_with_monitor_runs_in_flight_leaves_every_slot_a_point() {
    let _serial = SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/h123.sqlite");
    let mut server = ServerProcess::start(&target, &db, FLAGS).await;
    // Runs of 1.5 s every 2 s: most of them are in flight at any moment.
    let url = target.https_url("/delay/1500");
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(create(server.addr, &url, "2s").await);
    }
    // Until some runs ended and some are under way.
    let mut in_flight = Vec::new();
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, points) = read(&db);
        let ran = points
            .values()
            .flatten()
            .filter(|p| p.state == "ok")
            .count();
        in_flight = points
            .iter()
            .flat_map(|(id, rows)| {
                rows.iter()
                    .filter(|p| p.state == "running")
                    .map(move |p| (id.clone(), p.slot))
            })
            .collect();
        if ran >= 8 && in_flight.len() >= 3 {
            break;
        }
    }
    server.child.start_kill().unwrap();
    let _ = server.child.wait().await;
    assert!(in_flight.len() >= 3, "runs in flight: {in_flight:?}");
    let (before, _) = read(&db);

    let mut server = ServerProcess::start(&target, &db, FLAGS).await;
    let (_, points) = read(&db);
    server.child.start_kill().unwrap();
    let _ = server.child.wait().await;

    let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
    let mut slots_in_all = 0;
    for (id, monitor) in &before {
        let rows = points.get(id).map(Vec::as_slice).unwrap_or_default();
        for (slot, state) in slots(monitor, rows, monitor.next) {
            let state = state.unwrap_or_else(|| panic!("monitor {id}'s slot {slot} has no point"));
            assert_ne!(state, "running", "{id} slot {slot} still running");
            *by_state.entry(state).or_default() += 1;
            slots_in_all += 1;
        }
    }
    let mut cancelled = 0;
    for (id, slot) in &in_flight {
        let rows: Vec<&Row> = points[id].iter().filter(|p| p.slot == *slot).collect();
        // A run may have ended in the moment between the look and the kill.
        if rows.iter().any(|p| p.state == "cancelled") {
            assert_eq!(rows.len(), 1, "one point for the slot: {rows:?}");
            assert_eq!(
                rows[0].detail.as_deref(),
                Some("the server stopped during this run")
            );
            cancelled += 1;
        }
    }
    println!(
        "SIGKILL with {} monitor runs in flight (8 monitors, 1.5 s runs every 2 s): after the \
         restart {slots_in_all} slots, every one a point, by state {by_state:?}; {cancelled} of \
         the {} in flight read cancelled",
        in_flight.len(),
        in_flight.len()
    );
    assert!(
        cancelled + 1 >= in_flight.len(),
        "the runs in flight read cancelled: {cancelled} of {}",
        in_flight.len()
    );
    assert!(by_state.get("ok").copied().unwrap_or(0) >= 8);
}

#[tokio::test]
async fn late_slots_after_a_restart_spread_instead_of_all_running_at_once() {
    let _serial = SERIAL.lock().await;
    const MONITORS: usize = 40;
    const EVERY_MS: u64 = 10_000;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/h123.sqlite");
    let mut server = ServerProcess::start(&target, &db, FLAGS).await;
    let url = target.https_url("/delay/5");
    for _ in 0..MONITORS {
        create(server.addr, &url, "10s").await;
    }
    server.child.start_kill().unwrap();
    let _ = server.child.wait().await;
    // Down for longer than an interval: every monitor's latest slot falls due meanwhile.
    tokio::time::sleep(Duration::from_millis(EVERY_MS + 2_000)).await;
    let (before, _) = read(&db);
    let mut server = ServerProcess::start(&target, &db, FLAGS).await;
    let up = h123::probe::trace::unix_ms();
    tokio::time::sleep(Duration::from_millis(EVERY_MS + 2_000)).await;
    server.child.start_kill().unwrap();
    let _ = server.child.wait().await;
    let (_, points) = read(&db);

    // Runs of slots that fell due while the server was down, by when they started.
    let late: Vec<u64> = points
        .values()
        .flatten()
        .filter(|p| p.state == "ok" && p.slot < up && p.started + 500 >= up)
        .map(|p| p.started.saturating_sub(up))
        .collect();
    let first_3s = late.iter().filter(|ms| **ms < 3_000).count();
    let any_first_3s = points
        .values()
        .flatten()
        .filter(|p| p.state == "ok" && p.started + 500 >= up && p.started < up + 3_000)
        .count();
    let missed: Vec<&Row> = points
        .values()
        .flatten()
        .filter(|p| p.state == "missed")
        .collect();
    println!(
        "{MONITORS} monitors every 10 s, down {} s: {} late slots ran after the restart, {first_3s} \
         of them in the first 3 s (runs of any slot then: {any_first_3s}); {} missed points",
        (EVERY_MS + 2_000) / 1000,
        late.len(),
        missed.len()
    );
    for point in &missed {
        assert!(point.detail.is_some(), "a missed point says why: {point:?}");
    }
    // Every slot before the restart has a point.
    for (id, monitor) in &before {
        let rows = points.get(id).map(Vec::as_slice).unwrap_or_default();
        for (slot, state) in slots(monitor, rows, up - EVERY_MS) {
            assert!(state.is_some(), "monitor {id}'s slot {slot} has no point");
        }
    }
    assert!(
        first_3s <= MONITORS / 2,
        "{first_3s} of {MONITORS} late slots ran in the first 3 s"
    );
    assert!(!late.is_empty(), "late slots still run, spread");
}
