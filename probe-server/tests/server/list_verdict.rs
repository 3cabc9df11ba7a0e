//! The recent-results list says how each probe went and what its verdict is, from the columns
//! stored when it finished (never whole records): the real `h123 serve` settles real probes
//! against the test target (one that answers, one that answers only 404s, one whose attempts
//! fail, one still running when listed), and every line carries exactly what its record says.
//! On SQLite, and on PostgreSQL (skipped when it is not installed, required when
//! `H123_POSTGRES_TESTS=1`).

use crate::support::*;
use axum::http::{Method, StatusCode};
use h123_shared::api::{ProbeList, ProbeStatus, ProbeSummary, list_line};
use h123_target::postgres::PgCluster;
use std::net::{IpAddr, SocketAddr};

const FROM: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// Starts a public probe of `url` over `protocols`, `repeat` times, on `server`; its id.
async fn start(server: SocketAddr, url: &str, protocols: &[&str], repeat: u32) -> String {
    let mut body: serde_json::Value =
        serde_json::from_str(&probe_body(url, protocols, repeat)).unwrap();
    body["visibility"] = "public".into();
    create_probe(server, FROM, &body.to_string()).await
}

/// The list's line of probe `id`, as `server` lists it.
async fn line(server: SocketAddr, id: &str) -> ProbeSummary {
    let answer = http(server, FROM, Method::GET, "/api/v1/probes?limit=50", None).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text());
    let list: ProbeList = serde_json::from_value(answer.json()).unwrap();
    list.items
        .into_iter()
        .find(|item| item.id == id)
        .unwrap_or_else(|| panic!("{id} is listed"))
}

/// Probe `id`'s line carries its record's verdict (the result page's headline) and says
/// `badge`; returns the verdict.
async fn listed_as_recorded(server: SocketAddr, id: &str, badge: &str) -> String {
    let record = stored_record(server, FROM, id).await;
    assert_eq!(record.status, ProbeStatus::Done, "{id} finished");
    let headline = record
        .result
        .analysis
        .as_ref()
        .expect("a finished record has its analysis")
        .verdict
        .summary
        .clone();
    let line = line(server, id).await;
    assert_eq!((line.outcome, line.verdict.clone()), list_line(&record));
    let verdict = line.verdict.clone().expect("a finished line has a verdict");
    assert!(
        headline.starts_with(verdict.trim_end_matches('…')),
        "the list's verdict is the page's: {verdict:?} / {headline:?}"
    );
    assert_eq!(line.badge().0, badge, "{id}: {line:?}");
    verdict
}

async fn lines_carry_their_records_verdicts(server: SocketAddr, target: &h123_target::TestTarget) {
    // Still running when listed: no verdict yet, and not called a success.
    let slow = start(server, &target.https_url("/delay/1500"), &["h2"], 1).await;
    let running = line(server, &slow).await;
    assert_eq!(running.status, ProbeStatus::Running);
    assert_eq!((running.outcome, running.verdict.as_deref()), (None, None));
    assert_eq!(running.badge().0, "measuring…");

    let ok = start(server, &target.https_url("/"), &["h1", "h2"], 4).await;
    let not_found = start(server, &target.https_url("/status/404"), &["h1", "h2"], 2).await;
    let broken = start(
        server,
        &target.https_url("/close-mid-body/4000"),
        &["h2"],
        2,
    )
    .await;
    for id in [&ok, &not_found, &broken, &slow] {
        probe_done(server, FROM, id).await;
    }
    listed_as_recorded(server, &ok, "done").await;
    let verdict = listed_as_recorded(server, &not_found, "HTTP error").await;
    assert!(
        verdict.contains("every answer was an HTTP error"),
        "{verdict}"
    );
    let verdict = listed_as_recorded(server, &broken, "failed").await;
    assert!(
        verdict.starts_with("Nothing to compare: every attempt failed"),
        "{verdict}"
    );
    // Settled now: the line changed with its record.
    listed_as_recorded(server, &slow, "done").await;
}

#[tokio::test]
async fn sqlite_lists_each_probes_verdict_as_its_record_has_it() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&target, &dir.path().join("db.sqlite"), &[]).await;
    lines_carry_their_records_verdicts(server.addr, &target).await;
}

#[tokio::test]
async fn postgres_lists_each_probes_verdict_as_its_record_has_it() {
    let Some(cluster) = PgCluster::shared() else {
        return;
    };
    let url = cluster.create_database().unwrap();
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with_db(&target, url.as_ref(), dir.path(), &[]).await;
    lines_carry_their_records_verdicts(server.addr, &target).await;
}
