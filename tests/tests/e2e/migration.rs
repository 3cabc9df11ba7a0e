//! Connection migration against the real target: an HTTP/3 connection moved
//! mid-body to a new port, or to another local address, keeps its response
//! and takes the next request; against a server that refuses migration the
//! move is a failed attempt with its reason, not a crash; HTTP/1.1 and
//! HTTP/2 show what a new connection costs instead.

use crate::support::{SERIAL, probe, run};
use h123_shared::migration::{Migrate, Migration};
use h123_shared::{Attempt, Phase, ProbeResult, Protocol, diagnosis};
use h123_target::{H3Mode, TargetConfig, TestTarget};

/// 200,000 bytes over 400 ms, in steps of about 10 ms: a move after the
/// first bytes lands mid-body.
const DRIP: &str = "/drip/200000/400";

async fn moved_probe(target: &TestTarget, to: &str) -> ProbeResult {
    probe(target, |o| {
        o.url = target.https_url(DRIP);
        o.repeat = 2;
        o.phase_timeout_ms = 1_500;
        o.migrate = Some(to.parse().unwrap());
    })
    .await
}

fn port(addr: &str) -> u16 {
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

fn first_move(result: &ProbeResult) -> (&Attempt, &Migration) {
    let h3 = run(result, Protocol::H3);
    let first = &h3.attempts[0];
    println!("{:?}", first.migration);
    (first, first.migration.as_ref().expect("attempt 1 moved"))
}

fn assert_survived(result: &ProbeResult) {
    let (first, moved) = first_move(result);
    assert!(first.failure.is_none(), "{:?}", first.failure);
    assert!(moved.survived);
    let body = first.response.as_ref().unwrap().body_bytes;
    assert_eq!(
        body, 200_000,
        "the whole body arrived on the moved connection"
    );
    assert!(
        moved.after_bytes > 0 && moved.after_bytes < body,
        "moved mid-body: after {} of {body} bytes",
        moved.after_bytes
    );
    assert!(moved.answered_after_us.is_some());
    assert!(
        moved.path_challenges >= 1,
        "the server checked the new path"
    );
    assert!(moved.path_responses >= 1, "and the client answered");
    let receive = first.phases.receive.unwrap();
    assert!(receive.start_us <= moved.at_us && moved.at_us <= receive.end_us);
    // The next request goes over the moved connection, from its new address.
    let second = &run(result, Protocol::H3).attempts[1];
    assert!(second.failure.is_none(), "{:?}", second.failure);
    let conn = second.connection.as_ref().unwrap();
    assert!(conn.reused, "the moved connection took the next request");
    assert_eq!(conn.local_addr.as_deref(), Some(moved.to_addr.as_str()));
    assert!(second.migration.is_none(), "a connection moves once");
    for protocol in [Protocol::H1, Protocol::H2] {
        assert!(
            run(result, protocol)
                .attempts
                .iter()
                .all(|a| a.migration.is_none())
        );
    }
    let lines = h123_shared::migration::lines(result);
    println!("{}", lines.join("\n"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("HTTP/2 cannot move a connection"))
    );
    assert!(lines.iter().any(|l| l.contains("the connection survived")));
    let findings = diagnosis::diagnose(result);
    assert!(findings.iter().any(|f| f.id == "h3_migration_survived"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http3_connection_moved_to_a_new_port_keeps_its_response() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = moved_probe(&target, "port").await;
    assert_survived(&result);
    let (_, moved) = first_move(&result);
    assert_eq!(moved.to, Migrate::Port);
    assert_ne!(port(&moved.from_addr), port(&moved.to_addr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http3_connection_moved_to_another_address_keeps_its_response() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = moved_probe(&target, "127.0.0.2").await;
    assert_survived(&result);
    let (_, moved) = first_move(&result);
    assert!(moved.to_addr.starts_with("127.0.0.2:"), "{}", moved.to_addr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_migration_leaves_a_failed_attempt_that_says_why() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig {
        h3: H3Mode::ServeWithoutMigration,
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let result = moved_probe(&target, "port").await;
    let (first, moved) = first_move(&result);
    assert!(!moved.survived);
    assert_eq!(
        moved.answered_after_us, None,
        "nothing came back on the new path"
    );
    let failure = first.failure.as_ref().expect("the response stopped");
    assert_eq!(failure.phase, Phase::Receive);
    assert!(
        failure
            .message
            .contains("nothing came back on the new path"),
        "{}",
        failure.message
    );
    // The lost connection is not reused: the next attempt opens its own.
    let second = &run(&result, Protocol::H3).attempts[1];
    assert!(!second.connection.as_ref().unwrap().reused);
    for protocol in [Protocol::H1, Protocol::H2] {
        assert!(
            run(&result, protocol)
                .attempts
                .iter()
                .all(|a| a.failure.is_none())
        );
    }
    let findings = diagnosis::diagnose(&result);
    let lost = findings
        .iter()
        .find(|f| f.id == "h3_migration_failed")
        .expect("the lost connection is explained");
    println!("{}\n{}", lost.title, lost.next_step);
    assert!(lost.next_step.contains("connection ID"));
}
