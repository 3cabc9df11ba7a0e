//! `h123 serve --db postgres://...` end to end: the real binary on a
//! throwaway PostgreSQL cluster serves probes over h1, h2 and h3, a record
//! survives a restart, two servers on one database read each other's
//! permalinks and lists (and draw each other's running probes), a client's creation rate holds
//! across them, and a probe another instance finished ends its stream with the stored record.
//! Skipped when PostgreSQL is not installed,
//! required when `H123_POSTGRES_TESTS=1`.

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_target::postgres::PgCluster;
use std::net::{IpAddr, SocketAddr};

const FROM: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// Creates a public probe of `url` on `server` and follows its events to the end.
async fn probe_to_the_end(server: SocketAddr, url: &str, protocols: &[&str]) -> ProbeRecord {
    let mut body: serde_json::Value = serde_json::from_str(&probe_body(url, protocols, 2)).unwrap();
    body["visibility"] = "public".into();
    let id = create_probe(server, FROM, &body.to_string()).await;
    probe_done(server, FROM, &id).await
}

async fn serve(
    target: &h123_target::TestTarget,
    url: &str,
    dir: &std::path::Path,
) -> ServerProcess {
    ServerProcess::start_with_db(target, url.as_ref(), dir, &[]).await
}

/// Two instances of `h123 serve` on one fresh database, the target they probe, and their
/// directory (kept while they run).
struct Instances {
    target: h123_target::TestTarget,
    a: ServerProcess,
    b: ServerProcess,
    _dir: tempfile::TempDir,
}

/// Two instances started with `extra`; `None` when PostgreSQL is not installed.
async fn two_instances(extra: &[&str]) -> Option<Instances> {
    let url = PgCluster::shared()?.create_database().unwrap();
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = tokio::join!(
        ServerProcess::start_with_db(&target, url.as_ref(), dir.path(), extra),
        ServerProcess::start_with_db(&target, url.as_ref(), dir.path(), extra)
    );
    Some(Instances {
        target,
        a,
        b,
        _dir: dir,
    })
}

#[tokio::test]
async fn serve_on_postgres_probes_over_h1_h2_h3_and_keeps_records_across_a_restart() {
    let Some(cluster) = PgCluster::shared() else {
        return;
    };
    let url = cluster.create_database().unwrap();
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut server = serve(&target, &url, dir.path()).await;
    let health = http(server.addr, FROM, Method::GET, "/healthz", None).await;
    assert_eq!(health.status, StatusCode::OK);
    assert_eq!(health.json()["store"], "postgres");
    let instance = health.json()["instance"].as_str().unwrap().to_owned();

    let record = probe_to_the_end(
        server.addr,
        &target.https_url("/delay/5"),
        &["h1", "h2", "h3"],
    )
    .await;
    assert_eq!(record.status, ProbeStatus::Done);
    assert_eq!(record.result.runs.len(), 3);
    for run in &record.result.runs {
        assert_eq!(run.attempts.len(), 2, "{:?}", run.protocol);
        assert!(run.attempts.iter().all(|a| a.failure.is_none()), "{run:?}");
    }
    assert_eq!(stored_record(server.addr, FROM, &record.id).await, record);

    // SIGKILL, then a new server process on the same database.
    server.child.start_kill().unwrap();
    server.child.wait().await.unwrap();
    let server = serve(&target, &url, dir.path()).await;
    let health = http(server.addr, FROM, Method::GET, "/healthz", None).await;
    assert_ne!(
        health.json()["instance"].as_str().unwrap(),
        instance,
        "a new instance id"
    );
    assert_eq!(
        stored_record(server.addr, FROM, &record.id).await,
        record,
        "the record survived"
    );
    let list = http(server.addr, FROM, Method::GET, "/api/v1/probes", None).await;
    assert_eq!(list.json()["items"][0]["id"], record.id.as_str());
}

#[tokio::test]
async fn two_servers_on_one_database_read_each_others_permalinks() {
    let Some(Instances { target, a, b, _dir }) = two_instances(&[]).await else {
        return;
    };
    let on_a = probe_to_the_end(a.addr, &target.https_url("/"), &["h2"]).await;
    let on_b = probe_to_the_end(b.addr, &target.https_url("/"), &["h1"]).await;
    assert_eq!(stored_record(b.addr, FROM, &on_a.id).await, on_a);
    assert_eq!(stored_record(a.addr, FROM, &on_b.id).await, on_b);
    for server in [a.addr, b.addr] {
        let har = http(
            server,
            FROM,
            Method::GET,
            &format!("/api/v1/probes/{}/har", on_a.id),
            None,
        )
        .await;
        assert_eq!(har.status, StatusCode::OK);
        let list = http(server, FROM, Method::GET, "/api/v1/probes", None).await;
        let ids: Vec<String> = list.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["id"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            ids,
            [on_b.id.as_str(), on_a.id.as_str()],
            "newest first, on either server"
        );
    }
    // The finished events stream of a probe run elsewhere is replayed from the store.
    let replay = http(
        b.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{}/events", on_a.id),
        None,
    )
    .await;
    let events = parse_sse(&replay.text());
    assert_eq!(events.last().map(|e| e.event.as_str()), Some("done"));
}

#[tokio::test]
async fn another_instance_draws_a_running_probe_from_its_published_events() {
    let Some(Instances { target, a, b, _dir }) = two_instances(&[]).await else {
        return;
    };
    let body = probe_body(&target.https_url("/delay/200"), &["h1", "h2"], 2);
    let id = create_probe(a.addr, FROM, &body).await;
    let view = format!("/api/v1/probes/{id}/view");
    let following = {
        let (path, on_b) = (format!("{view}/events"), b.addr);
        tokio::spawn(async move { http(on_b, FROM, Method::GET, &path, None).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let now = http(b.addr, FROM, Method::GET, &view, None).await;
    assert_eq!(now.status, StatusCode::OK);
    assert!(
        now.text().contains("data-status=\"running\""),
        "{}",
        now.text()
    );
    let stream = following.await.unwrap().text();
    let blocks: Vec<&str> = stream.split("\n\n").map(str::trim).collect();
    let named = |name: &str| {
        blocks
            .iter()
            .filter(|b| b.starts_with(&format!("event: {name}\n")))
            .count()
    };
    assert!(named("view") >= 1, "{blocks:?}");
    assert_eq!(named("done"), 1, "{blocks:?}");
    let last = blocks.iter().rev().find(|b| !b.is_empty()).unwrap();
    assert!(
        last.starts_with("event: done\n") && last.contains("data-status=\"done\""),
        "{last}"
    );
}

#[tokio::test]
async fn a_clients_creation_rate_holds_across_instances() {
    let limits = ["--rate-burst", "3", "--rate-per-minute", "1"];
    let Some(Instances { target, a, b, _dir }) = two_instances(&limits).await else {
        return;
    };
    let body = probe_body(&target.https_url("/"), &["h1"], 1);
    let create = |server: SocketAddr, from: IpAddr| {
        let body = body.clone();
        async move { http(server, from, Method::POST, "/api/v1/probes", Some(&body)).await }
    };
    // Three tokens in all, taken at either instance.
    for (n, server) in [a.addr, b.addr, a.addr].into_iter().enumerate() {
        let created = create(server, FROM).await;
        assert_eq!(created.status, StatusCode::ACCEPTED, "{}", created.text());
        assert_eq!(
            created.headers["ratelimit-remaining"].to_str().unwrap(),
            (2 - n).to_string(),
            "one bucket for both instances"
        );
    }
    for server in [b.addr, a.addr] {
        let refused = create(server, FROM).await;
        assert_eq!(
            refused.status,
            StatusCode::TOO_MANY_REQUESTS,
            "{}",
            refused.text()
        );
        assert_eq!(refused.code(), "rate_limited");
        let retry: u64 = refused.headers["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry), "Retry-After {retry}");
    }
    let other = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));
    let created = create(b.addr, other).await;
    assert_eq!(
        created.status,
        StatusCode::ACCEPTED,
        "another client has its own bucket"
    );
}

#[tokio::test]
async fn serve_refuses_a_malformed_or_unreachable_database_in_one_line() {
    let refused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = refused.local_addr().unwrap().port();
    drop(refused);
    let run = |db: String| {
        std::process::Command::new(env!("CARGO_BIN_EXE_h123"))
            .args(["serve", "--listen", "127.0.0.1:0", "--db", &db])
            .output()
            .unwrap()
    };
    let unreachable = run(format!("postgres://h123:SECRET@127.0.0.1:{port}/h123"));
    assert_eq!(unreachable.status.code(), Some(1));
    let said = String::from_utf8_lossy(&unreachable.stderr);
    assert_eq!(said.trim_end().lines().count(), 1, "{said}");
    assert!(said.contains("Connection refused"), "{said}");
    assert!(
        said.contains(&format!("h123:***@127.0.0.1:{port}/h123")),
        "{said}"
    );
    assert!(!said.contains("SECRET"), "{said}");
    let malformed = run("postgresql://h123@127.0.0.1:notaport/h123".to_owned());
    assert_eq!(malformed.status.code(), Some(2));
    let said = String::from_utf8_lossy(&malformed.stderr);
    assert!(said.contains("not a usable PostgreSQL URL"), "{said}");
}

#[tokio::test]
async fn a_probe_finished_by_another_instance_ends_its_live_stream_with_the_stored_record() {
    let Some(cluster) = PgCluster::shared() else {
        return;
    };
    let url = cluster.create_database().unwrap();
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = serve(&target, &url, dir.path()).await;
    let health = http(server.addr, FROM, Method::GET, "/healthz", None).await;
    let instance = health.json()["instance"].as_str().unwrap().to_owned();
    let body = probe_body(&target.https_url("/delay/1500"), &["h1"], 1);
    let created = http(
        server.addr,
        FROM,
        Method::POST,
        "/api/v1/probes",
        Some(&body),
    )
    .await;
    let id = created.json()["id"].as_str().unwrap().to_owned();
    let events_path = format!("/api/v1/probes/{id}/events");
    let stream =
        tokio::spawn(async move { http(server.addr, FROM, Method::GET, &events_path, None).await });

    // The server looks dead to a second instance (as after a long stall past
    // its lease), which finishes the running probe as cancelled.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let reaper = match url.parse().unwrap() {
        h123::store::location::DbLocation::Postgres(url) => {
            h123::store::postgres::PostgresStore::connect(&url, Default::default())
                .await
                .unwrap()
        }
        sqlite => panic!("{sqlite:?}"),
    };
    client
        .execute(
            "UPDATE instances SET heartbeat_at = now() - INTERVAL '1 hour' WHERE id = $1",
            &[&instance],
        )
        .await
        .unwrap();
    assert_eq!(reaper.cancel_running().await.unwrap(), 1);

    // When the server's probe ends, its final write finds the record
    // finished: its subscribers get the stored record, and so does a reader.
    let events = parse_sse(&stream.await.unwrap().text());
    let done = events.last().unwrap();
    assert_eq!(done.event, "done");
    let streamed: ProbeRecord = serde_json::from_value(done.data.clone()).unwrap();
    assert_eq!(streamed.status, ProbeStatus::Cancelled);
    assert!(
        streamed
            .cancel_reason
            .as_deref()
            .unwrap_or_default()
            .contains(&instance)
    );
    assert_eq!(stored_record(server.addr, FROM, &id).await, streamed);
}
