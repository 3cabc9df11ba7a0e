//! `h123 probe --server URL`: the CLI as a client of a real `h123 serve`.
//! What it prints is what the server measured and stored (the permalink's
//! record), its exit code follows the result as a local probe's does, and a
//! refusal or an unreachable server is one readable line.

use crate::support::*;
use axum::http::Method;
use h123_shared::ProbeResult;
use h123_shared::api::ProbeRecord;
use std::net::{IpAddr, Ipv4Addr};
use std::process::Output;

/// Runs the h123 binary with `args` off the async runtime.
async fn h123(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_h123"))
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("H123_SERVER")
            .output()
            .expect("h123 runs")
    })
    .await
    .expect("h123 joined")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_prints_what_the_server_measured_with_its_permalink() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(&target, &dir.path().join("h123.sqlite"), &[]).await;
    let base = format!("http://{}", server.addr);
    let url = target.https_url("/delay/5");
    let args = |extra: &[&str]| -> Vec<String> {
        ["probe", "--server", &base]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };

    let output = h123(args(&[
        &url, "--proto", "h1,h2", "-n", "2", "--rounds", "1", "-o", "json",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let printed: ProbeResult = serde_json::from_slice(&output.stdout).expect("a JSON result");
    assert_eq!(printed.runs.len(), 2);
    assert!(
        printed
            .runs
            .iter()
            .flat_map(|r| &r.attempts)
            .all(|a| a.failure.is_none() && a.response.as_ref().is_some_and(|r| r.status == 200))
    );
    assert!(
        printed.analysis.is_some(),
        "the server's analysis comes along"
    );
    let said = stderr(&output);
    let id = said
        .trim()
        .rsplit("/r/")
        .next()
        .filter(|_| said.contains(&format!("measured by {base}: {base}/r/")))
        .unwrap_or_else(|| panic!("no permalink in: {said}"))
        .to_owned();
    let stored = http(
        server.addr,
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        Method::GET,
        &format!("/api/v1/probes/{id}"),
        None,
    )
    .await;
    let record: ProbeRecord = serde_json::from_slice(&stored.body).expect("the record");
    assert_eq!(record.result, printed, "the CLI printed the stored result");

    // Exit codes follow the result: a 503 from the target exits 5.
    let output = h123(args(&[
        &target.https_url("/status/503"),
        "--proto",
        "h2",
        "-n",
        "1",
        "--rounds",
        "1",
    ]))
    .await;
    assert_eq!(output.status.code(), Some(5), "{}", stderr(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("503"));

    // The server's policy applies: a private address is refused, in one line, exit 2.
    let output = h123(args(&["https://10.1.1.1/"])).await;
    assert_eq!(output.status.code(), Some(2));
    let said = stderr(&output);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with("h123: the server refused the probe: ")
            && said.contains("(blocked_target)"),
        "{said}"
    );

    // Options about this machine's side do not travel: refused before anything is sent.
    let output = h123(args(&[&url, "--proxy", "http://127.0.0.1:3128"])).await;
    assert_eq!(output.status.code(), Some(2));

    // No server there: one line, exit 1.
    let output = h123(vec![
        "probe".into(),
        "--server".into(),
        "http://127.0.0.1:1".into(),
        url.clone(),
    ])
    .await;
    assert_eq!(output.status.code(), Some(1));
    let said = stderr(&output);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with("h123: cannot reach http://127.0.0.1:1/"),
        "{said}"
    );
}
