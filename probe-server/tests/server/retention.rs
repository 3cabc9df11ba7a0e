//! Retention: with a size budget the server's periodic task deletes finished
//! probes (the real `h123 serve`) older than its floor, and says on `/metrics` when what is
//! newer keeps the database over its cap; without one nothing is deleted.

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::api::{ProbeCreated, ProbeRecord, ProbeStatus};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

const CLIENT_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

async fn finished_probe(addr: SocketAddr, url: &str) -> String {
    let body = probe_body(url, &["h1"], 1);
    let answer = http(addr, CLIENT_IP, Method::POST, "/api/v1/probes", Some(&body)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let id = serde_json::from_slice::<ProbeCreated>(&answer.body)
        .unwrap()
        .id;
    for _ in 0..200 {
        let answer = http(
            addr,
            CLIENT_IP,
            Method::GET,
            &format!("/api/v1/probes/{id}"),
            None,
        )
        .await;
        let record: ProbeRecord = serde_json::from_slice(&answer.body).unwrap();
        if record.status == ProbeStatus::Done {
            return id;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("probe {id} did not finish");
}

async fn status_of(addr: SocketAddr, id: &str) -> StatusCode {
    http(
        addr,
        CLIENT_IP,
        Method::GET,
        &format!("/api/v1/probes/{id}"),
        None,
    )
    .await
    .status
}

#[tokio::test]
async fn a_size_budget_deletes_finished_probes_and_no_budget_keeps_them() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let pruned = ServerProcess::start(
        &target,
        &dir.path().join("pruned.sqlite"),
        &[
            "--max-db-bytes",
            "1",
            "--keep-records-secs",
            "0",
            "--prune-interval-secs",
            "1",
        ],
    )
    .await;
    let id = finished_probe(pruned.addr, &target.https_url("/")).await;
    let mut gone = false;
    for _ in 0..40 {
        if status_of(pruned.addr, &id).await == StatusCode::NOT_FOUND {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the finished probe was pruned within the interval");

    // With the default floor a probe just made stays, and the server says the cap is not met.
    let floored = ServerProcess::start(
        &target,
        &dir.path().join("floored.sqlite"),
        &["--max-db-bytes", "1", "--prune-interval-secs", "1"],
    )
    .await;
    let id = finished_probe(floored.addr, &target.https_url("/")).await;
    let mut said = String::new();
    for _ in 0..40 {
        let metrics = http(floored.addr, CLIENT_IP, Method::GET, "/metrics", None).await;
        said = metrics.text();
        if said.contains("h123_db_over_cap 1") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(said.contains("h123_db_over_cap 1"), "{said}");
    assert_eq!(status_of(floored.addr, &id).await, StatusCode::OK);

    let kept = ServerProcess::start(&target, &dir.path().join("kept.sqlite"), &[]).await;
    let id = finished_probe(kept.addr, &target.https_url("/")).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        status_of(kept.addr, &id).await,
        StatusCode::OK,
        "kept forever"
    );
}
