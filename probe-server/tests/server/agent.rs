//! `h123 agent` end to end: a real `h123 serve` and real agents on loopback.
//! One agent reaches the target directly, the other through a relay that
//! delays every packet each way, so one probe from the server and both
//! agents shows the relay's round trips at that vantage only; wrong tokens
//! and old versions are refused; an agent killed mid-probe leaves its part
//! failed with a reason once its lease ran out.

use crate::support::*;
use axum::http::{Method, StatusCode};
use bytes::Bytes;
use h123_shared::api::{ProbeRecord, ProbeStatus, VantageList};
use h123_shared::{ProbeResult, Protocol};
use h123_target::relay::Relay;
use http_body_util::BodyExt as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

pub const FROM: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
pub const NEAR_TOKEN: &str = "near-token-0123456789";
pub const FAR_TOKEN: &str = "far-token-0123456789";
/// The relay's hold, each way.
pub const DELAY: Duration = Duration::from_millis(20);

/// The agent flags for a server at `server`: `name` with `token`, resolving
/// through `dns` and allowed to dial only `target`.
pub fn agent_args(
    server: SocketAddr,
    name: &str,
    token: &str,
    ca: &std::path::Path,
    dns: SocketAddr,
    target: SocketAddr,
) -> Vec<String> {
    [
        "agent",
        "--server",
        &format!("http://{server}"),
        "--name",
        name,
        "--token",
        token,
        "--label",
        &format!("{name} label"),
        "--tags",
        "test,loopback",
        "--cacert",
        &ca.display().to_string(),
        "--dns-server",
        &dns.to_string(),
        "--only-allowed-targets",
        "--allow-target",
        &target.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `h123 agent` running as a child process, its lines echoed.
pub fn start_agent(args: Vec<String>) -> tokio::process::Child {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"))
        .args(args)
        .env_remove("H123_AGENT_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("h123 agent starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("[agent] {line}");
        }
    });
    child
}

/// Agent `near` for the server at `server`, reaching `target` directly.
pub fn start_near(server: SocketAddr, target: &h123_target::TestTarget) -> tokio::process::Child {
    start_agent(agent_args(
        server,
        "near",
        NEAR_TOKEN,
        target.ca_file(),
        target.dns_addr,
        target.https_addr,
    ))
}

/// Agent `far` for the server at `server`, reaching `target` through `relay`.
pub fn start_far(
    server: SocketAddr,
    target: &h123_target::TestTarget,
    relay: &Relay,
) -> tokio::process::Child {
    start_agent(agent_args(
        server,
        "far",
        FAR_TOKEN,
        target.ca_file(),
        relay.dns_addr,
        relay.addr,
    ))
}

/// Waits until `GET /api/v1/vantages` shows every agent of `names` online.
pub async fn until_online(server: SocketAddr, names: &[&str]) -> VantageList {
    for _ in 0..200 {
        let answer = http(server, FROM, Method::GET, "/api/v1/vantages", None).await;
        let list: VantageList = serde_json::from_slice(&answer.body).expect("vantages");
        if names.iter().all(|name| {
            list.items
                .iter()
                .any(|v| v.vantage.name == *name && v.online)
        }) {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("agents {names:?} never came online");
}

/// POSTs `body` to `path` as an agent with `token` and `version`.
pub async fn as_agent(
    server: SocketAddr,
    token: &str,
    version: &str,
    path: &str,
    body: &str,
) -> (StatusCode, serde_json::Value) {
    let stream = tokio::net::TcpStream::connect(server)
        .await
        .expect("connect");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .expect("handshake");
    tokio::spawn(connection);
    let request = http::Request::post(path)
        .header("host", server.to_string())
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {token}"))
        .header("h123-agent-version", version)
        .body(http_body_util::Full::new(Bytes::from(body.to_owned())))
        .expect("request");
    let answer = sender.send_request(request).await.expect("answer");
    let status = answer.status();
    let bytes = answer.into_body().collect().await.expect("body").to_bytes();
    let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    (status, json)
}

/// The shortest phase `pick` chooses over a protocol's attempts that have it, in ms: the attempt
/// a busy machine disturbed least.
pub fn fastest_ms(
    result: &ProbeResult,
    protocol: Protocol,
    pick: fn(&h123_shared::Phases) -> Option<h123_shared::Span>,
) -> f64 {
    let run = result
        .runs
        .iter()
        .find(|r| r.protocol == protocol)
        .unwrap_or_else(|| panic!("no {protocol:?} run"));
    let values: Vec<f64> = run
        .attempts
        .iter()
        .filter_map(|a| pick(&a.phases))
        .map(|span| span.duration().0 as f64 / 1000.0)
        .collect();
    assert!(!values.is_empty(), "{protocol:?} has no such phase");
    values.into_iter().fold(f64::INFINITY, f64::min)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_probe_from_the_server_and_two_agents_shows_each_place() {
    let target = target().await;
    let relay = Relay::start(
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
        target.https_addr,
        DELAY,
        &["target.h123.test"],
    )
    .await
    .expect("relay");
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let far = format!("far={FAR_TOKEN}");
    // The far agent dials the relay: the server's rules, which agents keep, allow it too.
    let relayed = relay.addr.to_string();
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.sqlite"),
        &[
            "--agent",
            &near,
            "--agent",
            &far,
            "--allow-target",
            &relayed,
        ],
    )
    .await;
    let _near = start_near(server.addr, &target);
    let _far = start_far(server.addr, &target, &relay);
    let listed = until_online(server.addr, &["near", "far"]).await;
    let names: Vec<&str> = listed
        .items
        .iter()
        .map(|v| v.vantage.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["server", "far", "near"],
        "the server first, then agents by name"
    );
    let far_info = &listed.items[1];
    assert_eq!(far_info.vantage.label.as_deref(), Some("far label"));
    assert_eq!(far_info.vantage.tags, ["test", "loopback"]);
    assert_eq!(far_info.version.as_deref(), Some(env!("CARGO_PKG_VERSION")));

    let url = format!(
        "https://target.h123.test:{}/delay/5",
        target.https_addr.port()
    );
    let mut body: serde_json::Value =
        serde_json::from_str(&probe_body(&url, &["h1", "h2", "h3"], 3)).unwrap();
    body["vantages"] = serde_json::json!(["server", "near", "far"]);
    let id = create_probe(server.addr, FROM, &body.to_string()).await;
    let stream = http(
        server.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}/events"),
        None,
    )
    .await;
    let events = parse_sse(&stream.text());
    let done = events.last().expect("events");
    assert_eq!(done.event, "done", "{events:?}");
    for vantage in ["server", "near", "far"] {
        let attempts = events
            .iter()
            .filter(|e| e.event == "attempt" && e.data["vantage"] == vantage)
            .count();
        assert_eq!(attempts, 9, "{vantage}: 3 attempts of 3 protocols, live");
        assert!(
            events
                .iter()
                .any(|e| e.event == "phase" && e.data["vantage"] == vantage),
            "{vantage}'s phase events are streamed"
        );
    }
    let record: ProbeRecord = serde_json::from_value(done.data.clone()).unwrap();
    assert_eq!(record.status, ProbeStatus::Done);
    let runs: Vec<&str> = record
        .vantages
        .iter()
        .map(|r| r.vantage.name.as_str())
        .collect();
    assert_eq!(runs, ["server", "near", "far"]);
    let result_of = |name: &str| {
        let run = record
            .vantages
            .iter()
            .find(|r| r.vantage.name == name)
            .unwrap();
        assert_eq!(run.problem, None, "{name}");
        let result = run
            .result
            .clone()
            .unwrap_or_else(|| panic!("{name} has a result"));
        assert_eq!(result.vantage.as_ref().map(|v| v.name.as_str()), Some(name));
        assert!(result.analysis.is_some(), "{name} is analyzed");
        let outcome = result.analysis.as_ref().unwrap();
        assert!(
            result
                .runs
                .iter()
                .flat_map(|r| &r.attempts)
                .all(|a| a.failure.is_none()),
            "{name}: every attempt worked: {outcome:?}"
        );
        assert_eq!(result.runs.len(), 3, "{name}");
        result
    };
    let own = result_of("server");
    assert_eq!(record.result, own, "`result` stays the server's own");
    let near = result_of("near");
    let far = result_of("far");
    assert_eq!(
        far.vantage.as_ref().unwrap().label.as_deref(),
        Some("far label")
    );

    // Every round trip through the relay is 2 x DELAY longer: the first
    // byte's wait on every protocol, and the handshake (TLS 1.3 and QUIC: one
    // round trip each) of every new connection. The relay's sleeps make 2D a
    // floor no relayed attempt can beat, however busy the machine; and the
    // attempts it disturbed least on each side (the fastest) differ by about
    // 2D: at most 2D + 15 ms (4D + 15 for the handshake, its flights larger).
    let two_d = 2.0 * DELAY.as_secs_f64() * 1000.0;
    for protocol in [Protocol::H1, Protocol::H2, Protocol::H3] {
        let wait_near = fastest_ms(&near, protocol, |p| p.wait);
        let wait_far = fastest_ms(&far, protocol, |p| p.wait);
        let setup = |p: &h123_shared::Phases| p.tls.or(p.quic);
        let setup_near = fastest_ms(&near, protocol, setup);
        let setup_far = fastest_ms(&far, protocol, setup);
        eprintln!(
            "{protocol:?}: wait near {wait_near:.2} ms, far {wait_far:.2} ms; handshake near {setup_near:.2} ms, far {setup_far:.2} ms (2D = {two_d} ms)"
        );
        assert!(
            wait_far >= two_d && wait_far - wait_near <= two_d + 15.0,
            "{protocol:?}: the relayed wait {wait_far:.2} ms against {wait_near:.2} ms, not about {two_d} ms more"
        );
        assert!(
            setup_far >= two_d && setup_far - setup_near <= 2.0 * two_d + 15.0,
            "{protocol:?}: the relayed handshake {setup_far:.2} ms against {setup_near:.2} ms"
        );
    }

    let stored = http(
        server.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}"),
        None,
    )
    .await;
    let stored: ProbeRecord = serde_json::from_slice(&stored.body).unwrap();
    assert_eq!(stored, record, "the stored record is the streamed one");

    // The CLI as a client: one group per vantage, then the matrix.
    let cli = |from: &'static str| {
        let server = format!("http://{}", server.addr);
        let url = url.clone();
        async move {
            tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"))
                .args([
                    "probe", "--server", &server, "--from", from, "-n", "2", "--rounds", "1", &url,
                ])
                .output()
                .await
                .unwrap()
        }
    };
    let output = cli("near,far").await;
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let near_at = text.find("=== from near").expect(&text);
    let far_at = text.find("=== from far").expect(&text);
    let across = text.find("=== across vantages").expect(&text);
    assert!(near_at < far_at && far_at < across, "{text}");
    assert!(
        !text.contains("=== from server"),
        "only the vantages asked for: {text}"
    );
    let output = cli("near,nowhere").await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown_vantage") || stderr.contains("nowhere"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_across_vantages_keeps_within_the_one_size_cap() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.sqlite"),
        &["--agent", &near],
    )
    .await;
    let _near = start_near(server.addr, &target);
    until_online(server.addr, &["near"]).await;
    // Each vantage alone would fill the whole cap: a redirect loop of hops
    // with 56 KB of headers each, 10 attempts per protocol.
    let body = serde_json::json!({
        "url": format!("https://target.h123.test:{}/headers/14/4000?loop", target.https_addr.port()),
        "protocols": ["h1", "h2", "h3"],
        "repeat": 10, "rounds": 1,
        "follow_redirects": true,
        "max_redirects": 10,
        "vantages": ["server", "near"],
    });
    let id = create_probe(server.addr, FROM, &body.to_string()).await;
    let events = events_until_done(server.addr, FROM, &id).await;
    let stored = http(
        server.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}"),
        None,
    )
    .await;
    assert!(
        stored.body.len() <= 1024 * 1024,
        "a record of {} bytes, over the 1 MiB cap",
        stored.body.len()
    );
    let record: ProbeRecord = serde_json::from_slice(&stored.body).unwrap();
    assert_eq!(record.status, ProbeStatus::Done);
    for run in &record.vantages {
        let name = run.vantage.name.as_str();
        let result = run
            .result
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: a result"));
        let cut: Vec<&str> = result
            .runs
            .iter()
            .filter_map(|r| r.cut_short.as_deref())
            .collect();
        assert!(
            cut.iter().any(|c| c
                .contains("this vantage's share of the record's size cap (341 KiB of 1024 KiB)")),
            "{name}: {cut:?}"
        );
        for protocol_run in &result.runs {
            let protocol = serde_json::to_value(protocol_run.protocol).unwrap();
            let live = events
                .iter()
                .filter(|e| {
                    e.event == "attempt"
                        && e.data["vantage"] == name
                        && e.data["protocol"] == protocol
                })
                .count();
            assert_eq!(
                live,
                protocol_run.attempts.len(),
                "{name} {protocol}: the live attempts are the kept ones"
            );
        }
        eprintln!(
            "{name}: {} attempts kept, {} bytes",
            result.runs.iter().map(|r| r.attempts.len()).sum::<usize>(),
            serde_json::to_vec(result).unwrap().len()
        );
    }
    eprintln!("record: {} bytes", stored.body.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_tokens_and_old_versions_are_refused_and_get_no_job() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.sqlite"),
        &["--agent", &near],
    )
    .await;
    let url = target.https_url("/delay/5");
    let mut body: serde_json::Value = serde_json::from_str(&probe_body(&url, &["h1"], 1)).unwrap();
    body["vantages"] = serde_json::json!(["near"]);
    let id = create_probe(server.addr, FROM, &body.to_string()).await;
    let version = env!("CARGO_PKG_VERSION");
    let claim = r#"{"name":"near"}"#;

    let (status, json) = as_agent(
        server.addr,
        "not-the-token-0123456789",
        version,
        "/api/v1/agent/claim",
        claim,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{json}");
    assert_eq!(json["error"]["code"], "unauthorized");

    let (status, json) = as_agent(
        server.addr,
        NEAR_TOKEN,
        "0.0.1",
        "/api/v1/agent/claim",
        claim,
    )
    .await;
    assert_eq!(status, StatusCode::UPGRADE_REQUIRED, "{json}");
    assert_eq!(json["error"]["code"], "agent_version_unsupported");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("0.0.1") && message.contains(version),
        "both versions named: {message}"
    );

    // Another agent's name with this token is not this agent.
    let (status, _) = as_agent(
        server.addr,
        NEAR_TOKEN,
        version,
        "/api/v1/agent/claim",
        r#"{"name":"far"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // None of that handed the job out: the right token gets it now.
    let (status, job) = as_agent(
        server.addr,
        NEAR_TOKEN,
        version,
        "/api/v1/agent/claim",
        claim,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{job}");
    assert_eq!(job["probe_id"], id.as_str());

    // A real agent with a wrong token stops at once with one line.
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"))
        .args(agent_args(
            server.addr,
            "near",
            "not-the-token-0123456789",
            target.ca_file(),
            target.dns_addr,
            target.https_addr,
        ))
        .env_remove("H123_AGENT_TOKEN")
        .output();
    let output = tokio::time::timeout(Duration::from_secs(20), output)
        .await
        .expect("the agent exits")
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    let last = said.trim().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("h123 agent: the server refused this agent:")
            && last.contains("(unauthorized)"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_killed_mid_probe_leaves_its_part_failed_within_the_lease() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let lease = Duration::from_millis(1500);
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.sqlite"),
        &[
            "--agent",
            &near,
            "--agent-lease-ms",
            &lease.as_millis().to_string(),
        ],
    )
    .await;
    let mut agent = start_near(server.addr, &target);
    until_online(server.addr, &["near"]).await;
    let url = target.https_url("/delay/20000");
    let body = serde_json::json!({
        "url": url,
        "protocols": ["h1"],
        "timeout_ms": 25_000,
        "vantages": ["near"],
    });
    let id = create_probe(server.addr, FROM, &body.to_string()).await;
    // Wait until the agent has begun: its first phase events make a partial result.
    let mut begun = false;
    for _ in 0..200 {
        let answer = http(
            server.addr,
            FROM,
            Method::GET,
            &format!("/api/v1/probes/{id}"),
            None,
        )
        .await;
        let record: ProbeRecord = serde_json::from_slice(&answer.body).unwrap();
        let near = record
            .vantages
            .iter()
            .find(|r| r.vantage.name == "near")
            .unwrap();
        if near.result.is_some() {
            begun = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        begun,
        "the agent took the job and streamed its first events"
    );
    agent.kill().await.expect("agent killed");
    let killed = h123_target::clock::now();
    let record = loop {
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
            break record;
        }
        assert!(
            // Two leases and the sweeper's tick, with room for a busy machine.
            h123_target::clock::now() - killed < lease * 3 + Duration::from_secs(8),
            "the job still runs {:?} after its agent died",
            h123_target::clock::now() - killed
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let took = h123_target::clock::now() - killed;
    eprintln!("the dead agent's part failed {took:?} after the kill (lease {lease:?})");
    let near = record
        .vantages
        .iter()
        .find(|r| r.vantage.name == "near")
        .unwrap();
    assert_eq!(
        near.problem.as_deref(),
        Some("agent near stopped answering")
    );
    assert!(took >= lease, "not before its lease ran out: {took:?}");
    assert_eq!(record.status, ProbeStatus::Done, "nothing is left running");
    assert_eq!(record.vantages.len(), 1);
}
