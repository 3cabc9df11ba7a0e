//! The exports of a probe across vantages, end to end: a real `h123 serve`
//! with a real `h123 agent` and a configured agent that never runs, one
//! probe over h1/h2/h3 from the server, the agent and the missing one. Its
//! HAR has a page per vantage and protocol that passes the HAR 1.2
//! validator, its SVG a labelled group per vantage on one axis (the missing
//! one saying why), and `h123 probe --server --from -o har --junit` prints
//! the API's HAR byte for byte and writes a valid JUnit file.

use crate::agent::{FROM, NEAR_TOKEN, start_near, until_online};
use crate::ci_gates::{assert_valid_junit, xpath};
use crate::cli::assert_valid_har;
use crate::support::*;
use axum::http::Method;
use h123_shared::api::ProbeStatus;
use std::time::Duration;

const GONE_TOKEN: &str = "gone-token-0123456789";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn har_svg_and_cli_exports_show_each_vantage() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let near = format!("near={NEAR_TOKEN}");
    let gone = format!("gone={GONE_TOKEN}");
    let lease = Duration::from_millis(1500);
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.sqlite"),
        &[
            "--agent",
            &near,
            "--agent",
            &gone,
            "--agent-lease-ms",
            &lease.as_millis().to_string(),
        ],
    )
    .await;
    let _near = start_near(server.addr, &target);
    until_online(server.addr, &["near"]).await;
    let url = format!(
        "https://target.h123.test:{}/delay/5",
        target.https_addr.port()
    );
    let mut body: serde_json::Value =
        serde_json::from_str(&probe_body(&url, &["h1", "h2", "h3"], 2)).unwrap();
    body["vantages"] = serde_json::json!(["server", "near", "gone"]);
    let id = create_probe(server.addr, FROM, &body.to_string()).await;
    let record = probe_done(server.addr, FROM, &id).await;
    assert_eq!(record.status, ProbeStatus::Done);
    let problem = record.vantages[2]
        .problem
        .clone()
        .expect("the agent that never ran has a problem");
    assert!(problem.contains("gone"), "{problem}");
    for run in &record.vantages[..2] {
        let result = run.result.as_ref().expect("a result");
        assert!(
            result
                .runs
                .iter()
                .flat_map(|r| &r.attempts)
                .all(|a| a.failure.is_none()),
            "{}: every attempt worked",
            run.vantage.name
        );
    }

    // HAR: a page per vantage and protocol, each entry on its vantage's page.
    let har = http(
        server.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}/har"),
        None,
    )
    .await;
    assert_eq!(har.status, 200, "{}", har.text());
    let doc = har.json();
    let log = &doc["log"];
    let pages: Vec<&str> = log["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        pages,
        [
            "server/h1",
            "server/h2",
            "server/h3",
            "near/h1",
            "near/h2",
            "near/h3"
        ]
    );
    assert_eq!(
        log["pages"][3]["title"],
        format!("near (near label) · HTTP/1.1 {url}")
    );
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 12, "2 attempts x 3 protocols x 2 vantages");
    for page in &pages {
        let (vantage, protocol) = page.split_once('/').unwrap();
        let on_page: Vec<&serde_json::Value> =
            entries.iter().filter(|e| e["pageref"] == *page).collect();
        assert_eq!(on_page.len(), 2, "{page}");
        for e in on_page {
            assert_eq!(e["_vantage"], vantage, "{e}");
            assert_eq!(e["_protocol"], protocol, "{e}");
            assert!(
                e["connection"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{vantage}-{protocol}-")),
                "{e}"
            );
        }
    }
    let parts = log["_vantages"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[2]["problem"], problem.as_str());
    assert_eq!(parts[2]["pages"], serde_json::json!([]));
    assert_eq!(parts[1]["outcome"], "done");
    assert_eq!(log["_matrix"].as_array().unwrap().len(), 3);
    assert_valid_har(&har.body);

    // SVG: a labelled group per vantage, in order, under one axis.
    let svg = http(
        server.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{id}/waterfall.svg"),
        None,
    )
    .await;
    assert_eq!(svg.status, 200);
    assert_eq!(svg.header("content-type"), Some("image/svg+xml"));
    let svg = svg.text();
    let starts: Vec<usize> = ["server", "near", "gone"]
        .iter()
        .map(|name| {
            svg.find(&format!(r#"<g data-vantage="{name}" class="vantage">"#))
                .unwrap_or_else(|| panic!("no group for {name}: {svg}"))
        })
        .collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    let group = |i: usize| {
        let from = starts[i];
        &svg[from..from + svg[from..].find("</g>").unwrap()]
    };
    for i in 0..2 {
        for row in [
            "h1 #1",
            "h1 #2 (reused)",
            "h2 #1",
            "h2 #2 (reused)",
            "h3 #1",
            "h3 #2 (reused)",
        ] {
            assert!(
                group(i).contains(&format!(">{row}</text>")),
                "{row} in {}",
                group(i)
            );
        }
    }
    assert!(group(1).contains("near · near label"), "{}", group(1));
    assert!(
        group(2).contains(&format!("no result: {problem}")),
        "{}",
        group(2)
    );
    assert!(!group(2).contains("<rect"), "no bars without a result");
    assert_eq!(
        svg.matches(r##"fill="#6b7280">0</text>"##).count(),
        1,
        "one time axis for every group"
    );

    // The CLI as a client: -o har prints the API's HAR, --junit a suite per vantage and protocol.
    let junit = dir.path().join("vantages.xml");
    let cli = tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"))
        .args([
            "probe",
            "--server",
            &format!("http://{}", server.addr),
            "--from",
            "server,near",
            "-n",
            "2",
            "--rounds",
            "1",
            "-o",
            "har",
            "--junit",
            junit.to_str().unwrap(),
            &url,
        ])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&cli.stderr);
    assert!(cli.status.success(), "{stderr}");
    let cli_id = stderr
        .trim()
        .rsplit("/r/")
        .next()
        .expect("the permalink on stderr")
        .to_owned();
    let api = http(
        server.addr,
        FROM,
        Method::GET,
        &format!("/api/v1/probes/{cli_id}/har"),
        None,
    )
    .await;
    assert_eq!(api.status, 200, "{stderr}");
    let mut expected = api.body.to_vec();
    expected.push(b'\n');
    assert!(cli.stdout == expected, "the CLI's HAR is the API's");
    let cli_har: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(cli_har["log"]["pages"].as_array().unwrap().len(), 6);
    assert_valid_junit(&junit);
    assert_eq!(xpath(&junit, "count(//testsuite)"), "6");
    assert_eq!(
        xpath(&junit, "string(//testsuite[4]/@name)"),
        "near · HTTP/1.1"
    );
    assert_eq!(
        xpath(
            &junit,
            "string(//testsuite[4]/properties/property[@name='vantage']/@value)"
        ),
        "near"
    );
    assert_eq!(xpath(&junit, "string(/testsuites/@tests)"), "12");
    assert_eq!(xpath(&junit, "string(/testsuites/@failures)"), "0");
    assert_eq!(
        xpath(&junit, "string(//testsuite[4]/testcase[1]/@classname)"),
        "h123.near.h1.attempts"
    );

    // A curl command has no vantage: refused in one line.
    let curl = tokio::process::Command::new(env!("CARGO_BIN_EXE_h123"))
        .args([
            "probe",
            "--server",
            &format!("http://{}", server.addr),
            "--from",
            "near",
            "-o",
            "curl",
            &url,
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(curl.status.code(), Some(2));
    let said = String::from_utf8_lossy(&curl.stderr);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains("curl") && said.contains("vantage"), "{said}");
}
