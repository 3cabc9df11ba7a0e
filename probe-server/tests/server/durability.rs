//! Durability: the real `h123 serve` is SIGKILLed while clients create probes;
//! after a restart on the same database, every acknowledged probe is there
//! (finished ones unchanged, unfinished ones cancelled) and SQLite's
//! integrity check passes.

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::api::{ProbeRecord, ProbeStatus};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const GENEROUS: &[&str] = &[
    "--rate-burst",
    "100000",
    "--rate-per-minute",
    "100000",
    "--per-client-probes",
    "1000",
    "--read-rate-burst",
    "100000",
    "--read-rate-per-minute",
    "100000",
    "--max-streams-per-client",
    "1000",
];

#[derive(Default)]
struct Seen {
    /// Ids answered 202.
    accepted: Vec<String>,
    /// Final records the clients saw (status done) before the kill.
    finished: HashMap<String, ProbeRecord>,
}

#[tokio::test]
async fn sigkill_mid_stream_loses_no_acknowledged_probe() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data/h123.sqlite");
    let mut server = ServerProcess::start(&target, &db, GENEROUS).await;
    let addr = server.addr;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let from: IpAddr = "127.0.0.1".parse().unwrap();
    let mut clients = Vec::new();
    for client in 0..6u64 {
        let seen = seen.clone();
        let url = target.https_url(&format!("/delay/{}", 5 + client * 7));
        clients.push(tokio::spawn(async move {
            // Until the server dies under it.
            loop {
                let body = probe_body(&url, &["h1", "h2"], 2);
                let Ok(answer) =
                    try_http(addr, from, Method::POST, "/api/v1/probes", Some(&body)).await
                else {
                    return;
                };
                assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
                let id = answer.json()["id"].as_str().unwrap().to_owned();
                seen.lock().unwrap().accepted.push(id.clone());
                let path = format!("/api/v1/probes/{id}/events");
                let Ok(stream) = try_http(addr, from, Method::GET, &path, None).await else {
                    return;
                };
                let events = parse_sse(&stream.text());
                if let Some(done) = events.last().filter(|e| e.event == "done") {
                    let record: ProbeRecord = serde_json::from_value(done.data.clone()).unwrap();
                    assert_eq!(record.status, ProbeStatus::Done);
                    seen.lock().unwrap().finished.insert(id, record);
                }
            }
        }));
    }
    // Until some probes finished (seconds; longer on a busy machine).
    for _ in 0..300 {
        if seen.lock().unwrap().finished.len() >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // SIGKILL: no chance to flush or clean up anything.
    server.child.start_kill().unwrap();
    let status = server.child.wait().await.unwrap();
    assert!(!status.success());
    for client in clients {
        client
            .await
            .expect("a client saw only 202s and finished records");
    }
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert!(
        seen.finished.len() >= 5,
        "the clients finished {} probes",
        seen.finished.len()
    );
    println!(
        "killed with {} probes acknowledged, {} seen finished",
        seen.accepted.len(),
        seen.finished.len()
    );

    let mut server = ServerProcess::start(&target, &db, GENEROUS).await;
    let mut cancelled = 0;
    for id in &seen.accepted {
        let answer = http(
            server.addr,
            from,
            Method::GET,
            &format!("/api/v1/probes/{id}"),
            None,
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::OK,
            "acknowledged probe {id} survives"
        );
        let record: ProbeRecord = serde_json::from_slice(&answer.body).unwrap();
        match seen.finished.get(id) {
            Some(finished) => assert_eq!(&record, finished, "{id} is unchanged"),
            None => {
                assert_ne!(record.status, ProbeStatus::Running, "nothing stays running");
                if record.status == ProbeStatus::Cancelled {
                    cancelled += 1;
                }
            }
        }
    }
    println!(
        "after restart: all {} readable, {cancelled} cancelled",
        seen.accepted.len()
    );
    server.child.start_kill().unwrap();
    let _ = server.child.wait().await;
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let running: i64 = conn
        .query_row(
            "SELECT count(*) FROM probes WHERE status = 'running'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(running, 0);
}

#[tokio::test]
async fn sigterm_lets_probes_finish_or_stores_them_cancelled() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h123.sqlite");
    let mut server = ServerProcess::start(&target, &db, &["--shutdown-grace-secs", "1"]).await;
    let from: IpAddr = "127.0.0.1".parse().unwrap();
    let mut ids = Vec::new();
    for delay in [300, 5000] {
        let body = probe_body(&target.https_url(&format!("/delay/{delay}")), &["h1"], 1);
        let answer = http(
            server.addr,
            from,
            Method::POST,
            "/api/v1/probes",
            Some(&body),
        )
        .await;
        assert_eq!(answer.status, StatusCode::ACCEPTED);
        ids.push(answer.json()["id"].as_str().unwrap().to_owned());
    }
    // An event stream open across the shutdown ends with `done`.
    let addr = server.addr;
    let path = format!("/api/v1/probes/{}/events", ids[1]);
    let stream = tokio::spawn(async move { http(addr, from, Method::GET, &path, None).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let pid = server.child.id().expect("pid").to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::time::timeout(Duration::from_secs(15), server.child.wait())
        .await
        .expect("h123 serve stops within the grace period")
        .unwrap();
    assert!(status.success(), "clean exit: {status}");
    let events = parse_sse(&stream.await.unwrap().text());
    let last = events.last().expect("a done event");
    assert_eq!(last.event, "done");
    assert_eq!(last.data["status"], "cancelled");
    // Read the file directly: the server itself stored both outcomes.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let status_of = |id: &str| -> String {
        conn.query_row("SELECT status FROM probes WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap()
    };
    assert_eq!(
        status_of(&ids[0]),
        "done",
        "the short probe finished in the grace period"
    );
    assert_eq!(
        status_of(&ids[1]),
        "cancelled",
        "the long one was stored as cancelled"
    );
}
