//! Agents keep the server's rules: a real `h123 agent --allow-private`
//! refuses a redirect into its own network that the server's rules do not
//! allow (and follows it when they do), and a hostile agent's events and
//! result are held to the probe it was asked for and to the record's cap.

use crate::agent::{FROM, NEAR_TOKEN, as_agent, start_agent, until_online};
use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::api::{ProbeEvent, ProbeRecord, ProbeStatus};
use h123_shared::timeline::{TimedEvent, TraceEvent};
use h123_shared::{Micros, ProbeOptions, ProbeResult, Protocol, ProtocolRun};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback-only HTTP service answering every request `200 secret`; how
/// many connections it took.
async fn loopback_service() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\nconnection: close\r\n\r\nsecret",
                    )
                    .await;
            });
        }
    });
    (addr, hits)
}

/// `h123 agent --allow-private` named `near` for the server at `server`.
fn open_agent(server: SocketAddr, target: &h123_target::TestTarget) -> tokio::process::Child {
    let args = [
        "agent",
        "--server",
        &format!("http://{server}"),
        "--name",
        "near",
        "--token",
        NEAR_TOKEN,
        "--cacert",
        &target.ca_file().display().to_string(),
        "--dns-server",
        &target.dns_addr.to_string(),
        "--allow-private",
    ];
    start_agent(args.iter().map(|s| s.to_string()).collect())
}

/// The `near` vantage's result of a one-attempt HTTP/1.1 probe of the
/// target's redirect to `service`, run by an `--allow-private` agent for a
/// server started with `extra` flags.
async fn redirected_by_agent(
    target: &h123_target::TestTarget,
    service: SocketAddr,
    extra: &[&str],
) -> ProbeResult {
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let mut flags = vec!["--agent", near.as_str()];
    flags.extend_from_slice(extra);
    let server = ServerProcess::start(target, &dir.path().join("h123.sqlite"), &flags).await;
    let _agent = open_agent(server.addr, target);
    until_online(server.addr, &["near"]).await;
    let to = format!("http%3A%2F%2F{service}%2F");
    let body = serde_json::json!({
        "url": target.https_url(&format!("/redirect-to?url={to}")),
        "protocols": ["h1"],
        "rounds": 1, "repeat": 1,
        "follow_redirects": true,
        "vantages": ["near"],
    });
    let id = create_probe(server.addr, FROM, &body.to_string()).await;
    let record = probe_done(server.addr, FROM, &id).await;
    let near = record
        .vantages
        .into_iter()
        .next()
        .expect("the near vantage");
    near.result
        .unwrap_or_else(|| panic!("no result: {:?}", near.problem))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_agent_keeps_the_server_s_rules_on_a_redirect_into_its_network() {
    let target = target().await;
    let (service, hits) = loopback_service().await;

    // The server allows only the target: the agent, open to its own network, refuses the hop.
    let result = redirected_by_agent(&target, service, &[]).await;
    let hops = &result.runs[0].attempts;
    assert_eq!(hops.len(), 2, "{hops:#?}");
    assert_eq!(hops[0].response.as_ref().map(|r| r.status), Some(302));
    let failure = hops[1]
        .failure
        .as_ref()
        .expect("the hop into the network failed");
    assert_eq!(failure.kind.as_str(), "blocked", "{failure:?}");
    assert!(
        failure.message.contains("127.0.0.1 is a loopback address"),
        "{failure:?}"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the loopback service was never reached"
    );
    eprintln!("refused: {}", failure.message);

    // The server allows that service too: the agent follows the redirect.
    let allowed = service.to_string();
    let result = redirected_by_agent(&target, service, &["--allow-target", &allowed]).await;
    let hops = &result.runs[0].attempts;
    assert_eq!(hops.len(), 2, "{hops:#?}");
    assert_eq!(
        hops[1].response.as_ref().map(|r| r.status),
        Some(200),
        "{:?}",
        hops[1].failure
    );
    assert!(hits.load(Ordering::SeqCst) >= 1);
}

/// A phase event of attempt `attempt` over `protocol`.
fn phase(protocol: Protocol, attempt: u32) -> ProbeEvent {
    ProbeEvent::Phase {
        protocol,
        attempt,
        hop: 0,
        event: TimedEvent {
            event: TraceEvent::DnsStart,
            at: Micros(0),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_agent_s_events_and_result_are_held_to_the_probe_and_the_cap() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.sqlite"),
        &["--agent", &near],
    )
    .await;
    let body = serde_json::json!({
        "url": target.https_url("/"),
        "protocols": ["h1"],
        "rounds": 1, "repeat": 1,
        "vantages": ["near"],
    });
    let id = create_probe(server.addr, FROM, &body.to_string()).await;
    let version = env!("CARGO_PKG_VERSION");
    let (status, job) = as_agent(
        server.addr,
        NEAR_TOKEN,
        version,
        "/api/v1/agent/claim",
        r#"{"name":"near"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{job}");
    // The job carries the server's rules.
    assert_eq!(job["rules"]["only_allowed_targets"], true, "{job}");
    assert_eq!(
        job["rules"]["allow_targets"],
        serde_json::json!([target.https_addr.to_string()])
    );
    let job_id = job["job_id"].as_str().unwrap().to_owned();

    // 4,000 events: attempts the probe never asked for, a protocol it did not ask for,
    // and the one asked-for attempt's phases over and over.
    let events: Vec<ProbeEvent> = (0..4000u32)
        .map(|i| match i % 4 {
            0 => phase(Protocol::H3, 1),
            1 => phase(Protocol::H1, 1),
            _ => phase(Protocol::H1, i + 2),
        })
        .collect();
    let (status, said) = as_agent(
        server.addr,
        NEAR_TOKEN,
        version,
        &format!("/api/v1/agent/jobs/{job_id}/events"),
        &serde_json::to_string(&events).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{said}");
    let view = http(
        server.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}/view"),
        None,
    )
    .await;
    let rows = view.text().matches(r#" data-redirects=""#).count();
    assert!(rows <= 1, "{rows} rows for a probe of one attempt");
    eprintln!(
        "4,000 events: {rows} row(s), a page of {} bytes",
        view.body.len()
    );

    // A result within the probe's shape but bloated past the vantage's share.
    let options: ProbeOptions = serde_json::from_value(job["options"].clone()).unwrap();
    let mut result = ProbeResult::empty(options, 0, None);
    result.runs.push(ProtocolRun {
        stopped: Some("y".repeat(1_000_000)),
        ..ProtocolRun::empty(Protocol::H1)
    });
    let (status, said) = as_agent(
        server.addr,
        NEAR_TOKEN,
        version,
        &format!("/api/v1/agent/jobs/{job_id}/result"),
        &serde_json::json!({ "result": result }).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{said}");
    let stored = loop {
        let answer = http(
            server.addr,
            FROM,
            Method::GET,
            &format!("/api/v1/probes/{id}"),
            None,
        )
        .await;
        let record: ProbeRecord = serde_json::from_slice(&answer.body).unwrap();
        if record.status != ProbeStatus::Running {
            break answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(
        stored.body.len() <= 1024 * 1024,
        "a record of {} bytes, over the 1 MiB cap",
        stored.body.len()
    );
    let record: ProbeRecord = serde_json::from_slice(&stored.body).unwrap();
    let problem = record.vantages[0].problem.as_deref().unwrap_or_default();
    assert!(
        problem.starts_with("agent near: its result was refused:")
            && problem.contains("over this vantage's share of the record's size cap"),
        "{problem}"
    );
    eprintln!("record: {} bytes; near: {problem}", stored.body.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_with_a_token_under_the_server_s_minimum_stops_at_once() {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"))
        .args([
            "agent",
            "--server",
            "http://127.0.0.1:9",
            "--name",
            "near",
            "--token",
            "short",
        ])
        .env_remove("H123_AGENT_TOKEN")
        .output();
    let output = tokio::time::timeout(std::time::Duration::from_secs(10), output)
        .await
        .expect("the agent exits instead of retrying")
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(
        said.starts_with("h123 agent: --token must be at least 16 printable ASCII characters"),
        "{said}"
    );
    assert!(!said.contains("short"), "the token is not printed: {said}");
}
