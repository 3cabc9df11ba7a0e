//! Fair limits: four clients fill every running slot and queue more long
//! probes; a fifth client's one-attempt probe starts within one slot
//! turnover, ahead of the probes queued before it (the real `h123 serve`).

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::api::{ProbeCreated, ProbeRecord, ProbeStatus};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// How long each of the busy clients' probes holds its slot.
const LONG_MS: u64 = 2000;

fn from(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

async fn create(addr: SocketAddr, client: IpAddr, body: &str) -> String {
    let answer = http(addr, client, Method::POST, "/api/v1/probes", Some(body)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let created: ProbeCreated = serde_json::from_slice(&answer.body).expect("ProbeCreated");
    created.id
}

async fn finished(addr: SocketAddr, id: &str) -> ProbeRecord {
    for _ in 0..400 {
        let answer = http(
            addr,
            from(9),
            Method::GET,
            &format!("/api/v1/probes/{id}"),
            None,
        )
        .await;
        let record: ProbeRecord = serde_json::from_slice(&answer.body).expect("record");
        if record.status != ProbeStatus::Running {
            return record;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("probe {id} did not finish");
}

#[tokio::test]
async fn a_fifth_client_starts_within_one_slot_turnover() {
    let _alone = crate::support::SERIAL.lock().await;
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &target,
        &dir.path().join("db.sqlite"),
        &["--max-running", "4", "--per-client-probes", "3"],
    )
    .await;
    let addr = server.addr;
    let long = probe_body(&target.https_url(&format!("/delay/{LONG_MS}")), &["h1"], 1);
    // Four clients, three long probes each: 4 run, 8 wait.
    let mut busy = Vec::new();
    for round in 0..3 {
        for client in 2..=5 {
            busy.push((round, create(addr, from(client), &long).await));
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let quick = probe_body(&target.https_url("/delay/0"), &["h1"], 1);
    let newcomer = create(addr, from(6), &quick).await;
    let record = finished(addr, &newcomer).await;
    assert_eq!(record.status, ProbeStatus::Done);
    let waited = record.queued_ms.expect("queued_ms is recorded");
    let mut queued = Vec::new();
    for (round, id) in &busy {
        let r = finished(addr, id).await;
        queued.push((*round, r.queued_ms.expect("queued_ms")));
    }
    let last_round_max = queued
        .iter()
        .filter(|(round, _)| *round == 2)
        .map(|(_, ms)| *ms)
        .max()
        .unwrap();
    eprintln!(
        "newcomer waited {waited} ms for a slot (slot turnover {LONG_MS} ms); \
         busy clients' waits by round: {queued:?}"
    );
    assert!(
        waited <= LONG_MS + 1000,
        "the newcomer waited {waited} ms, more than one turnover"
    );
    assert!(
        last_round_max > waited + LONG_MS / 2,
        "probes queued before it waited longer ({last_round_max} ms vs {waited} ms)"
    );
    assert!(
        queued
            .iter()
            .filter(|(round, _)| *round == 0)
            .all(|(_, ms)| *ms < 500),
        "the first round started at once: {queued:?}"
    );
}

/// How long each hog's probe holds its slot in the reserve test.
const SLOW_MS: u64 = 3000;

/// Four clients start four slow probes each on the default 16 slots; a
/// fifth client's one-attempt probe: how long it waited for a slot.
async fn victims_wait(target: &h123_target::TestTarget, extra: &[&str]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(target, &dir.path().join("db.sqlite"), extra).await;
    let addr = server.addr;
    let slow = probe_body(&target.https_url(&format!("/delay/{SLOW_MS}")), &["h1"], 1);
    let mut hogs = Vec::new();
    for _ in 0..4 {
        for client in 2..=5 {
            hogs.push(create(addr, from(client), &slow).await);
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let quick = probe_body(&target.https_url("/delay/0"), &["h1"], 1);
    let victim = create(addr, from(6), &quick).await;
    let record = finished(addr, &victim).await;
    assert_eq!(record.status, ProbeStatus::Done);
    for id in &hogs {
        finished(addr, id).await;
    }
    record.queued_ms.expect("queued_ms is recorded")
}

#[tokio::test]
async fn a_newcomer_takes_a_reserved_slot_while_four_clients_hold_the_rest() {
    let _alone = crate::support::SERIAL.lock().await;
    let target = target().await;
    let before = victims_wait(&target, &["--reserved-slots", "0"]).await;
    let after = victims_wait(&target, &[]).await;
    eprintln!(
        "the fifth client's wait behind 4 x 4 probes of {SLOW_MS} ms: \
         {before} ms without reserved slots, {after} ms with the default 2"
    );
    assert!(
        before >= SLOW_MS / 2,
        "without a reserve it waits for a turnover: {before} ms"
    );
    assert!(
        after < 500,
        "with the reserve it starts at once: {after} ms"
    );
}
