//! `h123 probe` in CI against the loopback test target: every exit code provoked for real
//! (and their precedence), SLO gates met and breached, and the JUnit report validated by
//! xmllint against the Jenkins JUnit schema, hostile strings included.

use h123_target::{H3Mode, TargetConfig, TestTarget};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the real `h123` binary.
fn h123(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_h123"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("h123 runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `xmllint` (scripts/test installs it: libxml2-utils); a missing tool fails the test.
fn xmllint(args: &[&str]) -> Output {
    Command::new("xmllint")
        .args(args)
        .output()
        .expect("xmllint is installed (scripts/test installs libxml2-utils)")
}

/// The vendored Jenkins JUnit schema.
fn schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/junit/jenkins-junit-10.xsd")
}

/// Validates a JUnit file against the schema, failing the test with xmllint's words.
pub(crate) fn assert_valid_junit(file: &Path) {
    let schema = schema();
    let check = xmllint(&[
        "--noout",
        "--schema",
        schema.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert!(
        check.status.success(),
        "JUnit rejected: {}{}",
        text(&check.stdout),
        text(&check.stderr)
    );
}

/// An XPath expression's value in a file, as xmllint reads it (entities decoded).
pub(crate) fn xpath(file: &Path, expr: &str) -> String {
    let out = xmllint(&["--xpath", expr, file.to_str().unwrap()]);
    assert!(out.status.success(), "{expr}: {}", text(&out.stderr));
    let value = text(&out.stdout);
    // xmllint ends its answer with a newline of its own.
    value.strip_suffix('\n').unwrap_or(&value).to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_exit_code_names_what_went_wrong() {
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let ca = target.ca_file().to_str().unwrap().to_owned();
    let wrong_ca = target.wrong_ca_file().to_str().unwrap().to_owned();
    let dns = target.dns_addr.to_string();
    let url = |path: &str| target.https_url(path);
    // (arguments after the URL's CA, expected code, why)
    let cases: Vec<(Vec<String>, i32, &str)> = vec![
        (
            vec![url("/delay/5"), "--slo".into(), "total=5s".into()],
            0,
            "success",
        ),
        (
            vec![url("/delay/50"), "--slo".into(), "ttfb=40ms".into()],
            3,
            "a 50 ms wait breaches ttfb=40ms",
        ),
        (vec![url("/status/404")], 4, "4xx"),
        (vec![url("/status/503")], 5, "5xx"),
        (
            vec![url("/close-mid-body/100000")],
            6,
            "failed reading the response",
        ),
        (
            vec![format!("https://{}/", target.refused_addr)],
            8,
            "connect refused",
        ),
        (
            vec![
                "https://no-such-name.h123.test/".into(),
                "--dns-server".into(),
                dns,
            ],
            9,
            "unknown name",
        ),
        (
            vec![url("/status/404"), "--slo".into(), "total=1us".into()],
            4,
            "4xx outranks a breached SLO",
        ),
        (
            vec![url("/status/503"), "--slo".into(), "total=1us".into()],
            5,
            "5xx outranks a breached SLO",
        ),
    ];
    let wrong_trust = vec![url("/")];
    tokio::task::spawn_blocking(move || {
        let runs = cases
            .iter()
            .map(|(args, code, what)| (&ca, args, *code, *what))
            .chain([(
                &wrong_ca,
                &wrong_trust,
                7,
                "TLS and QUIC fail on the wrong CA",
            )]);
        for (trust, args, code, what) in runs {
            let mut all: Vec<&str> = vec!["probe", "-n", "2", "--rounds", "1", "--cacert", trust];
            all.extend(args.iter().map(String::as_str));
            let output = h123(&all);
            assert_eq!(
                output.status.code(),
                Some(code),
                "{what}: {all:?}\n{}{}",
                text(&output.stdout),
                text(&output.stderr)
            );
        }
    })
    .await
    .unwrap();
}

/// A failure outranks an HTTP error: HTTP/1.1 and HTTP/2 answer 503 while HTTP/3 meets a
/// silent UDP port and fails in the QUIC handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_outranks_an_http_error() {
    let config = TargetConfig {
        h3: H3Mode::BlockUdp,
        ..TargetConfig::default()
    };
    let target = TestTarget::start(config).await.unwrap();
    let url = target.https_url("/status/503");
    let ca = target.ca_file().to_str().unwrap().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        h123(&[
            "probe",
            &url,
            "--cacert",
            &ca,
            "-n",
            "1",
            "--rounds",
            "1",
            "--h3-direct",
            "--phase-timeout",
            "0.5",
        ])
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(7), "{}", text(&output.stdout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slo_gates_are_reported_in_text_json_and_a_valid_junit_file() {
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let url = target.https_url("/delay/50");
    let ca = target.ca_file().to_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("h123.xml");
    let file = junit.to_str().unwrap().to_owned();
    let (report, json) = tokio::task::spawn_blocking(move || {
        let gates = ["--slo", "total=5s,ttfb=40ms", "--slo", "h2:tls.max=5s"];
        let common = [
            "probe",
            url.as_str(),
            "--cacert",
            ca.as_str(),
            "-n",
            "3",
            "--rounds",
            "1",
        ];
        let report = h123(&[&common[..], &gates, &["--junit", file.as_str()]].concat());
        let json = h123(&[&common[..], &gates, &["-o", "json"]].concat());
        (report, json)
    })
    .await
    .unwrap();
    assert_eq!(report.status.code(), Some(3), "{}", text(&report.stderr));
    let out = text(&report.stdout);
    let section = &out[out.find("\nSLO: breached (3 of 7 checks)").expect(&out)..];
    for protocol in ["HTTP/1.1", "HTTP/2", "HTTP/3"] {
        for gate in ["total.median <= 5.00 s", "ttfb.median <= 40.0 ms"] {
            let line = section
                .lines()
                .find(|l| l.contains(protocol) && l.contains(gate))
                .unwrap_or_else(|| panic!("no {protocol} {gate} in {section}"));
            let judged = if gate.starts_with("ttfb") {
                "BREACHED"
            } else {
                "met"
            };
            assert!(line.trim_start().starts_with(judged), "{line}");
            assert!(
                line.contains("median") && line.contains("of 3 attempts"),
                "{line}"
            );
        }
    }
    assert!(section.contains("h2:tls.max <= 5.00 s: max"), "{section}");

    assert_eq!(json.status.code(), Some(3));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["slo"]["met"], false);
    let checks = value["slo"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 7);
    for check in checks.iter().filter(|c| c["gate"]["metric"] == "ttfb") {
        assert_eq!(check["judgement"], "breached");
        assert!(check["measured_us"].as_u64().unwrap() >= 50_000, "{check}");
    }

    assert_valid_junit(&junit);
    assert_eq!(xpath(&junit, "count(//testsuite)"), "3");
    assert_eq!(xpath(&junit, "string(/testsuites/@tests)"), "16");
    assert_eq!(xpath(&junit, "string(/testsuites/@failures)"), "3");
    assert_eq!(xpath(&junit, "count(//failure[@type='slo'])"), "3");
    assert_eq!(
        xpath(
            &junit,
            "string(//testsuite[@name='HTTP/2']/properties/property[@name='url']/@value)"
        ),
        target.https_url("/delay/50")
    );
    let time: f64 = xpath(
        &junit,
        "string(//testsuite[@name='HTTP/1.1']/testcase[1]/@time)",
    )
    .parse()
    .unwrap();
    assert!((0.05..5.0).contains(&time), "seconds, not ms: {time}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junit_reports_failures_http_errors_and_skipped_protocols() {
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let refused = format!("https://{}/", target.refused_addr);
    let not_found = target.http_url("/status/404");
    let dir = tempfile::tempdir().unwrap();
    let (failed, errors) = (dir.path().join("failed.xml"), dir.path().join("404.xml"));
    let files = (failed.clone(), errors.clone());
    let (failed_run, error_run) = tokio::task::spawn_blocking(move || {
        let failed = h123(&[
            "probe", &refused, "--proto", "h1", "-n", "1", "--rounds", "1", "-o", "junit",
        ]);
        std::fs::write(&files.0, &failed.stdout).unwrap();
        // Plain HTTP: HTTP/3 is not advertised, so it is skipped.
        let errors = h123(&[
            "probe",
            &not_found,
            "-n",
            "2",
            "--rounds",
            "1",
            "--slo",
            "total=5s",
            "--junit",
            files.1.to_str().unwrap(),
        ]);
        (failed, errors)
    })
    .await
    .unwrap();
    assert_eq!(failed_run.status.code(), Some(8));
    assert_valid_junit(&failed);
    let message = xpath(&failed, "string(//testcase[1]/failure/@message)");
    assert!(
        message.starts_with("failed in connect (refused): "),
        "{message}"
    );
    assert_eq!(
        xpath(&failed, "string(//testcase[1]/failure/@type)"),
        "connect"
    );

    assert_eq!(error_run.status.code(), Some(4));
    assert_valid_junit(&errors);
    assert_eq!(
        xpath(&errors, "count(//failure[@type='http_status'])"),
        "4",
        "two 404s over HTTP/1.1 and two over HTTP/2"
    );
    assert_eq!(
        xpath(&errors, "count(//failure[@type='slo'])"),
        "2",
        "an HTTP error never meets a gate"
    );
    let h3 = "//testsuite[@name='HTTP/3']";
    assert_eq!(xpath(&errors, &format!("string({h3}/@skipped)")), "2");
    assert!(
        xpath(
            &errors,
            &format!("string({h3}/testcase[1]/skipped/@message)")
        )
        .contains("not advertised")
    );
}

/// Strings from the command line and from the target (a redirect's `Location`) come back
/// out of the XML exactly as the JSON record has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junit_escapes_hostile_strings() {
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let hostile = format!("{}?a=1&b='x'&c=]]>\"<", target.https_url("/status/200"));
    let encoded: String = hostile
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let url = target.https_url(&format!("/redirect-to?q=<&amp;'\"&url={encoded}"));
    let ca = target.ca_file().to_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("hostile.xml");
    let file = junit.to_str().unwrap().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        h123(&[
            "probe", &url, "--cacert", &ca, "--proto", "h1", "-n", "1", "--rounds", "1", "-L",
            "-o", "json", "--junit", &file,
        ])
    })
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let record: h123_shared::ProbeResult = serde_json::from_slice(&output.stdout).unwrap();
    let hops = &record.runs[0].attempts;
    assert_eq!(hops.len(), 2, "the redirect was followed");
    // The URL parser percent-encodes `'`, `"`, `<` and `>` in the query; `&` and `]]` stay.
    assert!(hops[1].url.contains("&c=]]"), "{}", hops[1].url);
    assert!(
        record.options.url.contains("&amp;"),
        "{}",
        record.options.url
    );
    assert_valid_junit(&junit);
    assert_eq!(
        xpath(&junit, "string(//property[@name='url']/@value)"),
        record.options.url,
        "an entity-like `&amp;` stays text"
    );
    let out = xpath(&junit, "string(//testcase[1]/system-out)");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!("hop 0: {} -> 302", hops[0].url)),
        "{out}"
    );
    assert!(
        lines[1].starts_with(&format!("hop 1: {} -> 200", hops[1].url)),
        "{out}"
    );
}
