//! `h123 watch` against the loopback target, through the real binary (next
//! to this test's target directory, or `H123_BIN`): a line per run for h1,
//! h2 and h3 with sparklines and a summary, NDJSON whose slots and start
//! times keep the schedule, `--fail-on-breach` stopping at the first breached
//! run, and a bad `--every` refused in one line.

use crate::browser::h123_binary;
use crate::support::SERIAL;
use h123_shared::ProbeResult;
use h123_target::{TargetConfig, TestTarget};
use serde_json::Value;
use std::process::Output;

/// Runs `h123 watch ARGS` to its end.
async fn watch(args: &[&str]) -> Output {
    tokio::process::Command::new(
        h123_binary().expect("the h123 binary (cargo build --release -p h123)"),
    )
    .arg("watch")
    .args(args)
    .env("NO_COLOR", "1")
    .env_remove("SSLKEYLOGFILE")
    .output()
    .await
    .expect("h123 runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A run's line: it starts with its time, `HH:MM:SS`.
fn is_run_line(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 8
        && b[..8].iter().enumerate().all(|(i, c)| {
            if i % 3 == 2 {
                *c == b':'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// The sparkline bars in a line.
fn bars(line: &str) -> usize {
    line.chars().filter(|c| ('▁'..='█').contains(c)).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_prints_a_line_per_run_for_each_protocol_and_a_summary() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let url = target.https_url("/");
    let output = watch(&[&url, "--every", "1s", "--count", "3", "-k"]).await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let legend = stdout.lines().nth(1).unwrap_or_default();
    assert!(
        legend.starts_with("UTC ") && legend.contains("h3  dns conn quic ttfb  tot trend"),
        "{stdout}"
    );
    let runs: Vec<&str> = stdout.lines().filter(|l| is_run_line(l)).collect();
    assert_eq!(runs.len(), 3, "{stdout}");
    for (i, line) in runs.iter().enumerate() {
        for protocol in ["  h1 ", "  h2 ", "  h3 "] {
            assert!(line.contains(protocol), "{line}");
        }
        // Every protocol answered: its sparkline has a bar per run so far.
        assert_eq!(bars(line), 3 * (i + 1), "{stdout}");
        assert!(!line.contains("missed"), "{stdout}");
    }
    assert!(stdout.contains("\n3 runs, started "), "{stdout}");
    for protocol in ["h1", "h2", "h3"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("  {protocol}  ")))
            .unwrap_or_else(|| panic!("a summary row for {protocol}: {stdout}"));
        assert!(row.contains("0 of 3") && row.contains(" ms"), "{row}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_lines_keep_the_schedule() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let url = target.https_url("/");
    let output = watch(&[&url, "--every", "1s", "--count", "3", "-k", "-o", "json"]).await;
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    let mut runs = Vec::new();
    for line in &lines {
        let value: Value = serde_json::from_str(line).expect("one JSON object per line");
        let result: ProbeResult = serde_json::from_value(value.clone()).expect("a probe result");
        assert_eq!(result.runs.len(), 3, "{line}");
        assert!(result.analysis.is_some(), "analyzed");
        runs.push((
            value["slot"].as_u64().expect("slot"),
            value["missed_slots"].as_u64().expect("missed_slots"),
            result.started_at_unix_ms,
        ));
    }
    assert_eq!(runs[0].0, 0, "{runs:?}");
    for pair in runs.windows(2) {
        let ((slot, missed, _), (next, _, _)) = (pair[0], pair[1]);
        assert_eq!(next, slot + 1 + missed, "{runs:?}");
    }
    // Each run starts in its slot, `slot` seconds after the first: generous
    // bounds, since a start waits for a timer and the run's first clock read.
    let (_, _, first) = runs[0];
    for &(slot, _, started) in &runs[1..] {
        let late_ms = started as i64 - first as i64 - slot as i64 * 1000;
        assert!(
            (-300..=600).contains(&late_ms),
            "slot {slot}: {late_ms} ms off, {runs:?}"
        );
    }
    assert!(
        stderr.contains("3 runs, started "),
        "summary on stderr: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_on_breach_stops_after_the_first_breached_run() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    // Every answer waits 5 ms: no total can meet 1 ms.
    let url = target.https_url("/delay/5");
    let output = watch(&[
        &url,
        "--every",
        "1s",
        "--count",
        "3",
        "-k",
        "--slo",
        "total=1ms",
        "--fail-on-breach",
    ])
    .await;
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    let runs: Vec<&str> = stdout.lines().filter(|l| is_run_line(l)).collect();
    assert_eq!(runs.len(), 1, "{stdout}");
    assert!(
        runs[0].ends_with("SLO breached: total.median (h1 h2 h3)"),
        "{stdout}"
    );
}

#[tokio::test]
async fn a_bad_every_is_one_line_and_exit_2() {
    for every in ["500ms", "soon"] {
        let output = watch(&["https://127.0.0.1:9/", "--every", every]).await;
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("h123: invalid value '{every}' for '--every")),
            "{stderr}"
        );
        assert!(output.stdout.is_empty());
    }
}
