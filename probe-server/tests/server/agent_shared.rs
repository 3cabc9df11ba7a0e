//! Agents and several `h123 serve` instances on one PostgreSQL database: the
//! job queue is shared, so agents may ask any instance for work. A probe
//! accepted by one instance is run by agents that ask another; the database
//! holds its jobs sealed; a PostgreSQL restart is survived by servers and
//! agents alike. Skipped when PostgreSQL is not installed, required when
//! `H123_POSTGRES_TESTS=1`.

use crate::agent::{
    DELAY, FAR_TOKEN, FROM, NEAR_TOKEN, fastest_ms, start_far, start_near, until_online,
};
use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::Protocol;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_target::postgres::PgCluster;
use h123_target::relay::Relay;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

const IDLE_TOKEN: &str = "idle-token-0123456789";
const SECRET: &str = "Bearer sealed-secret-4711";

async fn pg_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("test connection");
    tokio::spawn(connection);
    client
}

/// Rows of `table` about probe `id`.
async fn rows_of(client: &tokio_postgres::Client, table: &str, id: &str) -> i64 {
    client
        .query_one(
            &format!("SELECT count(*) FROM {table} WHERE probe_id = $1"),
            &[&id],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_asking_one_instance_run_a_probe_another_accepted() {
    let Some(cluster) = PgCluster::shared() else {
        return;
    };
    let db = cluster.create_database().unwrap();
    let target = target().await;
    let relay = Relay::start(
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)),
        target.https_addr,
        DELAY,
        &["target.h123.test"],
    )
    .await
    .expect("relay");
    let dir = tempfile::tempdir().unwrap();
    let (near, far, idle) = (
        format!("near={NEAR_TOKEN}"),
        format!("far={FAR_TOKEN}"),
        format!("idle={IDLE_TOKEN}"),
    );
    // The far agent dials the relay: the server's rules, which agents keep, allow it too.
    let relayed = relay.addr.to_string();
    let flags = [
        "--agent",
        &near,
        "--agent",
        &far,
        "--agent",
        &idle,
        "--agent-lease-ms",
        "2000",
        "--allow-target",
        &relayed,
    ];
    let a = ServerProcess::start_with_db(&target, db.as_ref(), &dir.path().join("a"), &flags).await;
    let b = ServerProcess::start_with_db(&target, db.as_ref(), &dir.path().join("b"), &flags).await;
    // Both agents ask instance B only; the probe goes to instance A.
    let _near = start_near(b.addr, &target);
    let _far = start_far(b.addr, &target, &relay);
    until_online(b.addr, &["near", "far"]).await;

    let url = format!(
        "https://target.h123.test:{}/delay/5",
        target.https_addr.port()
    );
    let mut body: serde_json::Value =
        serde_json::from_str(&probe_body(&url, &["h1", "h2", "h3"], 3)).unwrap();
    body["vantages"] = serde_json::json!(["server", "near", "far", "idle"]);
    body["headers"] = serde_json::json!([{"name": "authorization", "value": SECRET}]);
    let id = create_probe(a.addr, FROM, &body.to_string()).await;

    // Idle's job waits in the queue (its agent never runs): the database has
    // its options sealed, neither the credential nor even the URL readable.
    let pg = pg_client(&db).await;
    let sealed: Vec<Vec<u8>> = pg
        .query(
            "SELECT sealed_options FROM agent_jobs WHERE probe_id = $1",
            &[&id],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(!sealed.is_empty(), "the jobs are in the shared queue");
    for blob in &sealed {
        for plain in [SECRET.as_bytes(), b"target.h123.test"] {
            assert!(
                !blob.windows(plain.len()).any(|w| w == plain),
                "a job's options are readable in the database"
            );
        }
    }

    // Read at B while A runs it: the partial record holds the attempts A has
    // published, each in its vantage's result (idle's job keeps it running 2 s).
    let partial = until_partial_at(b.addr, &id).await;
    assert_eq!(partial.status, ProbeStatus::Running);
    let vantages: Vec<&str> = partial
        .vantages
        .iter()
        .map(|r| r.vantage.name.as_str())
        .collect();
    assert_eq!(vantages, ["server", "near", "far", "idle"]);

    // Followed live at B: the events A takes in and publishes, each tagged.
    let (stream, whole) = sse_text(b.addr, format!("/api/v1/probes/{id}/events"), None).await;
    assert!(whole);
    let events = parse_sse(&stream);
    let done = events.last().expect("events");
    assert_eq!(done.event, "done", "{events:?}");
    for vantage in ["server", "near", "far"] {
        let attempts = events
            .iter()
            .filter(|e| e.event == "attempt" && e.data["vantage"] == vantage)
            .count();
        assert_eq!(
            attempts, 9,
            "{vantage}: 3 attempts of 3 protocols, live at B"
        );
        assert!(
            events
                .iter()
                .any(|e| e.event == "phase" && e.data["vantage"] == vantage),
            "{vantage}'s phase events reach B"
        );
    }
    let ids: Vec<usize> = events
        .iter()
        .filter_map(|e| e.id.as_deref().map(|id| id.parse().unwrap()))
        .collect();
    assert_eq!(
        ids,
        (0..ids.len()).collect::<Vec<_>>(),
        "every index once, in order"
    );
    let record: ProbeRecord = serde_json::from_value(done.data.clone()).unwrap();
    assert_eq!(record.status, ProbeStatus::Done);
    let names: Vec<&str> = record
        .vantages
        .iter()
        .map(|r| r.vantage.name.as_str())
        .collect();
    assert_eq!(names, ["server", "near", "far", "idle"]);
    let run = |name: &str| {
        record
            .vantages
            .iter()
            .find(|r| r.vantage.name == name)
            .unwrap()
    };
    let idle_problem = run("idle").problem.clone().unwrap_or_default();
    assert!(
        idle_problem.starts_with("agent idle did not take the probe within 2 s"),
        "{idle_problem}"
    );
    let result_of = |name: &str| {
        let run = run(name);
        assert_eq!(run.problem, None, "{name}");
        let result = run.result.clone().expect("a result");
        let attempts: Vec<_> = result.runs.iter().flat_map(|r| &r.attempts).collect();
        assert_eq!(attempts.len(), 9, "{name}: 3 attempts of 3 protocols");
        assert!(attempts.iter().all(|a| a.failure.is_none()), "{name}");
        result
    };
    let near = result_of("near");
    let far = result_of("far");
    let two_d = 2.0 * DELAY.as_secs_f64() * 1000.0;
    // The relay's 2D is a floor no relayed wait can beat; the least disturbed waits differ by
    // about 2D (at most 2D + 15 ms), however busy the machine.
    for protocol in [Protocol::H1, Protocol::H2, Protocol::H3] {
        let (wait_far, wait_near) = (
            fastest_ms(&far, protocol, |p| p.wait),
            fastest_ms(&near, protocol, |p| p.wait),
        );
        eprintln!(
            "{protocol:?}: the relayed agent waits {wait_far:.2} ms, the other {wait_near:.2} ms (2D = {two_d} ms)"
        );
        assert!(
            wait_far >= two_d && wait_far - wait_near <= two_d + 15.0,
            "{protocol:?}: {wait_far:.2} ms against {wait_near:.2} ms"
        );
    }

    // The permalink reads the same on the other instance; the queue is empty.
    let on_b = http(
        b.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}"),
        None,
    )
    .await;
    assert_eq!(on_b.status, StatusCode::OK);
    let on_b: ProbeRecord = serde_json::from_slice(&on_b.body).unwrap();
    assert_eq!(on_b, record);
    assert!(
        !on_b.options.headers[0].value.contains("sealed-secret"),
        "the record is redacted"
    );
    assert_eq!(rows_of(&pg, "agent_jobs", &id).await, 0);
    assert_eq!(rows_of(&pg, "agent_posts", &id).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_and_agents_recover_from_a_postgresql_restart() {
    if PgCluster::shared().is_none() {
        return;
    }
    let cluster = PgCluster::start().expect("a cluster of this test's own");
    let db = cluster.create_database().unwrap();
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let server = ServerProcess::start_with_db(
        &target,
        db.as_ref(),
        dir.path(),
        &["--agent", &near, "--agent-lease-ms", "10000"],
    )
    .await;
    let _agent = start_near(server.addr, &target);
    until_online(server.addr, &["near"]).await;
    let mut body: serde_json::Value =
        serde_json::from_str(&probe_body(&target.https_url("/"), &["h2"], 1)).unwrap();
    body["vantages"] = serde_json::json!(["server", "near"]);
    let probe = |server| {
        let body = body.to_string();
        async move {
            let id = create_probe(server, FROM, &body).await;
            let record = probe_done(server, FROM, &id).await;
            assert_eq!(record.status, ProbeStatus::Done);
            for run in &record.vantages {
                assert_eq!(run.problem, None, "{}", run.vantage.name);
                assert!(run.result.is_some(), "{}", run.vantage.name);
            }
        }
    };
    probe(server.addr).await;

    cluster.stop();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let down = http(
        server.addr,
        FROM,
        Method::POST,
        "/api/v1/probes",
        Some(&body.to_string()),
    )
    .await;
    assert_eq!(
        down.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        down.text()
    );
    cluster.start_again().expect("PostgreSQL starts again");
    let back = h123_target::clock::now();
    // The same server and agent processes carry on once the database is back.
    loop {
        let answer = http(
            server.addr,
            FROM,
            Method::GET,
            "/api/v1/probes?limit=1",
            None,
        )
        .await;
        if answer.status == StatusCode::OK {
            break;
        }
        assert!(
            h123_target::clock::now() - back < Duration::from_secs(20),
            "the server still fails: {}",
            answer.text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    probe(server.addr).await;
    eprintln!(
        "a probe from the server and the agent finished {:?} after PostgreSQL came back",
        h123_target::clock::now() - back
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_killed_mid_probe_leaves_its_stream_and_record_to_another() {
    let Some(cluster) = PgCluster::shared() else {
        return;
    };
    let db = cluster.create_database().unwrap();
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let lease = Duration::from_millis(3000);
    let flags = ["--instance-lease-ms", "3000"];
    let mut a =
        ServerProcess::start_with_db(&target, db.as_ref(), &dir.path().join("a"), &flags).await;
    let b = ServerProcess::start_with_db(&target, db.as_ref(), &dir.path().join("b"), &flags).await;
    let mut body: serde_json::Value =
        serde_json::from_str(&probe_body(&target.https_url("/delay/20000"), &["h1"], 1)).unwrap();
    body["timeout_ms"] = 25_000.into();
    body["phase_timeout_ms"] = 25_000.into();
    let id = create_probe(a.addr, FROM, &body.to_string()).await;
    let events = format!("/api/v1/probes/{id}/events");
    // A client following at A, and one following at B (A's events, relayed).
    let at_a = tokio::spawn(sse_text(a.addr, events.clone(), None));
    let at_b = tokio::spawn(sse_text(b.addr, events.clone(), None));
    // The request is sent and waits for its answer: kill A then.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    a.child.kill().await.expect("instance A killed");
    let killed = h123_target::clock::now();

    let (at_b, whole) = at_b.await.unwrap();
    let took = h123_target::clock::now() - killed;
    assert!(whole, "B's stream ends normally");
    let seen_at_b = parse_sse(&at_b);
    let done = seen_at_b.last().expect("events at B");
    assert_eq!(done.event, "done", "{seen_at_b:?}");
    let phases = seen_at_b.iter().filter(|e| e.event == "phase").count();
    assert!(
        phases >= 3,
        "A's phase events reached B live: {seen_at_b:?}"
    );
    let record: ProbeRecord = serde_json::from_value(done.data.clone()).unwrap();
    assert_eq!(record.status, ProbeStatus::Cancelled);
    let reason = record.cancel_reason.clone().unwrap_or_default();
    assert!(
        reason.contains("stopped: no heartbeat for over 3 s"),
        "{reason}"
    );
    eprintln!("B's stream ended {took:?} after instance A was killed (lease {lease:?})");
    assert!(took >= lease - Duration::from_millis(1000), "{took:?}");

    // A's client lost its stream mid-way; it resumes at B where it stopped.
    let (at_a, whole) = at_a.await.unwrap();
    assert!(!whole, "A's stream broke");
    let seen_at_a = parse_sse(&at_a);
    assert!(seen_at_a.iter().all(|e| e.event != "done"), "{seen_at_a:?}");
    let last_id = seen_at_a
        .iter()
        .filter_map(|e| e.id.clone())
        .next_back()
        .expect("an event id");
    let (resumed, _) = sse_text(b.addr, events.clone(), Some(last_id.clone())).await;
    let resumed = parse_sse(&resumed);
    let first: usize = resumed[0]
        .id
        .as_deref()
        .map_or(usize::MAX, |id| id.parse().unwrap());
    let last: usize = last_id.parse().unwrap();
    assert!(
        first == last + 1 || resumed.len() == 1,
        "resumed after {last}: {resumed:?}"
    );
    assert_eq!(
        resumed.last().map(|e| e.event.as_str()),
        Some("done"),
        "{resumed:?}"
    );
    let stored = http(
        b.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}"),
        None,
    )
    .await;
    let stored: ProbeRecord = serde_json::from_slice(&stored.body).unwrap();
    assert_eq!(stored, record, "the record stays, finished, readable at B");
}

/// The text of an event stream at `path` (resuming after `last_event_id`)
/// up to its end, and whether it ended normally (`false`: the connection broke).
/// Probe `id`'s record as `server` reads it while running, once it holds an
/// attempt from the server's own vantage and one from an agent.
async fn until_partial_at(server: SocketAddr, id: &str) -> ProbeRecord {
    let attempts = |result: Option<&h123_shared::ProbeResult>| {
        result.map_or(0, |r| {
            r.runs.iter().map(|run| run.attempts.len()).sum::<usize>()
        })
    };
    for _ in 0..200 {
        let answer = http(
            server,
            FROM,
            Method::GET,
            &format!("/api/v1/probes/{id}"),
            None,
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK);
        let record: ProbeRecord = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(
            record.status,
            ProbeStatus::Running,
            "finished before a partial read"
        );
        let at = |name: &str| {
            attempts(
                record
                    .vantages
                    .iter()
                    .find(|r| r.vantage.name == name)
                    .and_then(|r| r.result.as_ref()),
            )
        };
        if attempts(Some(&record.result)) > 0 && at("near") + at("far") > 0 {
            assert!(at("idle") == 0, "idle never ran");
            return record;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no partial record at the other instance within 5 s");
}

async fn sse_text(
    server: std::net::SocketAddr,
    path: String,
    last_event_id: Option<String>,
) -> (String, bool) {
    use http_body_util::BodyExt as _;
    let stream = tokio::net::TcpStream::connect(server)
        .await
        .expect("connect");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .expect("handshake");
    tokio::spawn(connection);
    let mut request = http::Request::get(path).header("host", server.to_string());
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    let request = request
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .expect("request");
    let mut body = sender
        .send_request(request)
        .await
        .expect("answer")
        .into_body();
    let mut text = Vec::new();
    loop {
        match body.frame().await {
            None => return (String::from_utf8_lossy(&text).into_owned(), true),
            Some(Err(_)) => return (String::from_utf8_lossy(&text).into_owned(), false),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    text.extend_from_slice(&data);
                }
            }
        }
    }
}
