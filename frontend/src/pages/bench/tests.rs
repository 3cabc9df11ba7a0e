//! The bench page's markup on fixture records: what each state draws, with the words, classes,
//! ids and text alternatives the page's stylesheet, script and tests rely on; and text from a
//! record (the URL, a failure's reason) stays text.

use super::*;
use crate::pages::render;
use h123_shared::api::{BenchRecord, ProbeStatus};
use h123_shared::bench::words::description;
use h123_shared::bench::{BenchOptions, BenchProgress, BenchRun, LatencySummary, PercentilePoint};
use h123_shared::markup::escape;
use h123_shared::sweep::{Sweep, SweepStep};
use h123_shared::{Failure, FailureKind, Micros, Phase, Protocol};

/// A run of `protocol` with `requests` in a second, its latency around `p50_us`.
fn run(protocol: Protocol, requests: u64, p50_us: u64) -> BenchRun {
    let latency = LatencySummary {
        count: requests,
        min: Micros(p50_us / 2),
        mean: Micros(p50_us),
        p50: Micros(p50_us),
        p90: Micros(p50_us * 2),
        p99: Micros(p50_us * 3),
        p999: Micros(p50_us * 4),
        max: Micros(p50_us * 5),
        ..LatencySummary::default()
    };
    BenchRun {
        elapsed_us: Micros(1_000_000),
        requests,
        successes: requests,
        connections_opened: 4,
        latency: latency.clone(),
        ttfb: latency,
        latency_percentiles: [50.0, 90.0, 99.0, 100.0]
            .iter()
            .enumerate()
            .map(|(i, &percentile)| PercentilePoint {
                percentile,
                value: Micros(p50_us * (i as u64 + 1)),
            })
            .collect(),
        ..BenchRun::new(protocol)
    }
}

/// A bench of `url` over HTTP/1.1, /2 and /3 (HTTP/3 could not start, for a hostile reason).
fn options(url: &str) -> BenchOptions {
    BenchOptions {
        url: url.into(),
        protocols: vec![Protocol::H1, Protocol::H2, Protocol::H3],
        concurrency: 4,
        duration_ms: Some(1_000),
        ..BenchOptions::default()
    }
}

/// A finished bench of `url`.
fn done(url: &str) -> BenchRecord {
    let options = options(url);
    let mut h3 = BenchRun::new(Protocol::H3);
    h3.failure = Some(Failure {
        phase: Phase::Quic,
        kind: FailureKind::Timeout,
        message: "<b>silent</b> UDP".into(),
    });
    let result = BenchResult {
        runs: vec![
            run(Protocol::H1, 1_000, 2_000),
            run(Protocol::H2, 2_000, 1_000),
            h3,
        ],
        ..BenchResult::new(options.clone(), 1_700_000_000_000)
    };
    BenchRecord {
        id: "benchABC1234".into(),
        status: ProbeStatus::Done,
        created_at_unix_ms: 1_700_000_000_000,
        finished_at_unix_ms: Some(1_700_000_004_000),
        options,
        progress: None,
        result: Some(result),
        steps: Vec::new(),
        cancel_reason: None,
    }
}

/// A sweep over `rtt=0,40ms` with `finished` of its steps done, in state `status`.
fn sweep(status: ProbeStatus, finished: usize) -> BenchRecord {
    let mut record = done("https://t.test/");
    record.options.sweep = Some(Sweep::parse("rtt=0,40ms").unwrap());
    record.options.protocols = vec![Protocol::H1, Protocol::H2];
    record.status = status;
    record.result = None;
    record.steps = [0, 40]
        .into_iter()
        .take(finished)
        .map(|value| SweepStep {
            value,
            result: BenchResult {
                runs: vec![
                    run(Protocol::H1, 1_000, 2_000),
                    run(Protocol::H2, 900, 2_200),
                ],
                ..BenchResult::new(record.options.clone(), 0)
            },
        })
        .collect();
    record
}

/// `words` as a view writes text: `&`, `<` and `>` escaped.
fn text(words: &str) -> String {
    words
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `record`'s page as the server sends it.
fn page(record: &BenchRecord) -> String {
    render(|| bench_page(record))
}

#[test]
fn a_finished_bench_shows_its_summary_actions_table_chart_and_caveats() {
    let record = done("https://t.test/?a=<x>");
    let drawn = page(&record);
    assert!(drawn.starts_with(r#"<div id="bench" data-id="benchABC1234" data-status="done" data-title="Load comparison of https://t.test/?a=&lt;x&gt;: done">"#), "{drawn}");
    assert!(drawn.ends_with("</div>"));
    assert!(
        !drawn.contains("<x>") && !drawn.contains("<b>"),
        "text stays text: {drawn}"
    );
    // The summary line: kind, target, status, set-up and a time the page rewrites.
    assert!(drawn.contains(r#"<h1 class="target">https://t.test/?a=&lt;x&gt;</h1>"#));
    assert!(drawn.contains(r#"<span role="status" class="status done">done</span> GET · HTTP/1.1, HTTP/2, HTTP/3 · 4 in flight · 1 s per protocol · warm (reused connections) · <leptos-island data-component="LocalTime_"#), "{drawn}");
    // The time: in UTC, its island's child (no props: those would ship a JSON reader), which
    // the island writes on the reader's clock.
    assert!(drawn.contains(r#"<span class="local-time"><leptos-children><time datetime="2023-11-14T22:13Z" data-unix-ms="1700000000000">2023-11-14 22:13 UTC</time></leptos-children></span></leptos-island>"#), "{drawn}");
    assert!(
        !drawn.contains("data-props"),
        "no island takes props: {drawn}"
    );
    // The actions: the copy button, its text, the JSON on the API's base.
    assert!(drawn.contains(
        r#"<nav aria-label="Bench actions" class="actions"><leptos-island data-component="CopyPermalink_"#
    ));
    assert!(drawn.contains(
        r#"<button type="button" data-action="copy" data-copy="permalink">Copy permalink</button>"#
    ));
    assert!(drawn.contains(
        r#"<pre data-text="permalink"><leptos-children>/b/benchABC1234</leptos-children></pre>"#
    ));
    assert!(drawn.contains(r#"href="/api/v1/benches/benchABC1234" data-api="/api/v1/benches/benchABC1234" download="h123-bench-benchABC1234.json" class="button">Download JSON</a>"#), "{drawn}");
    // The table: a column per protocol, the best marked, a dash for the run that did not run.
    assert!(drawn.contains(r#"<th scope="col" class="proto proto-h3">HTTP/3</th>"#));
    let rps = r#"<tr data-metric="rps"><th scope="row">Requests/s</th><td data-protocol="h1"><span class="value">1,000</span>"#;
    assert!(drawn.contains(rps), "{drawn}");
    assert!(drawn.contains(r#"<td data-protocol="h2" class="fastest"><span class="value">2,000</span><span class="gap best">best</span>"#), "{drawn}");
    assert!(drawn.contains(r#"<td data-protocol="h3"><span class="value">–</span>"#));
    assert_eq!(drawn.matches("class=\"fastest\"").count(), 1, "{drawn}");
    assert!(!drawn.contains(r#"class="""#), "no empty class: {drawn}");
    assert!(drawn.contains(r#"<tr data-metric="latency-p50"><th scope="row">Latency p50</th><td data-protocol="h1"><span class="value">2.00 ms</span>"#), "{drawn}");
    assert!(
        !drawn.contains("data-metric=\"send-rate\""),
        "no fixed rate"
    );
    assert!(
        drawn.contains(
            r#"<p class="run-failure">HTTP/3 did not run: &lt;b&gt;silent&lt;/b&gt; UDP</p>"#
        ),
        "{drawn}"
    );
    // The chart: the shared geometry, named by its description, and its table.
    let result = record.result.as_ref().unwrap();
    let label = escape(&h123_shared::bench_chart::describe(result));
    assert!(
        drawn.contains(&format!(
            r#"role="img" aria-label="{label}" class="bench-chart">"#
        )),
        "{drawn}"
    );
    for line in h123_shared::bench_chart::chart(result, Default::default()).lines {
        let p = line.protocol.as_str();
        assert!(
            drawn.contains(&format!(r#"<path data-protocol="{p}" d="{}""#, line.path)),
            "{p}"
        );
    }
    assert_eq!(drawn.matches("<path ").count(), 2, "HTTP/3 has no line");
    assert!(drawn.contains(r#"<details class="chart-table"><summary>Chart as a table</summary>"#));
    assert!(drawn.contains(r#"<th scope="row">max</th>"#));
    // The caveats, and no network note on the real path alone.
    for caveat in h123_shared::bench::caveats(result) {
        assert!(
            drawn.contains(&format!("<li>{}</li>", text(&caveat))),
            "{caveat}"
        );
    }
    assert!(!drawn.contains("network-note") && !drawn.contains("bench-progress"));
    assert_eq!(
        description(&record),
        "Requests per second: HTTP/1.1 1,000 · HTTP/2 2,000 · HTTP/3 did not run."
    );
}

#[test]
fn a_running_bench_shows_its_progress_and_no_figures() {
    let mut record = done("https://t.test/");
    record.status = ProbeStatus::Running;
    record.result = None;
    record.progress = Some(BenchProgress {
        protocol: Some(Protocol::H2),
        protocols_done: 1,
        warming_up: false,
        requests: 1_200,
        errors: 3,
        elapsed_ms: 500,
    });
    let drawn = page(&record);
    assert!(drawn.contains(
        r#"data-status="running" data-title="Load comparison of https://t.test/: measuring…""#
    ));
    assert!(drawn.contains(r#"<span role="status" class="status running">measuring…</span>"#));
    assert!(drawn.contains(r#"<section aria-label="Progress" class="bench-progress"><progress max="1" value="0.500"></progress><p role="status" aria-live="polite" class="progress-text">HTTP/2 (2 of 3) measuring: 1,200 requests, 3 errors, 0.5 s of 1 s</p><p class="hint">Protocols run one after another"#), "{drawn}");
    assert!(
        !drawn.contains("bench-table") && !drawn.contains("caveats"),
        "{drawn}"
    );
    assert_eq!(description(&record), "Running: the load is being measured.");
    record.progress = None;
    assert!(page(&record).contains(">Opening connections…</p>"));
}

#[test]
fn a_cancelled_bench_says_it_has_no_figures() {
    let mut record = done("https://t.test/");
    record.status = ProbeStatus::Cancelled;
    record.result = None;
    let drawn = page(&record);
    assert!(drawn.contains(&format!(
        r#"<p role="status" class="pending-note">{BENCH_CANCELLED}</p>"#
    )));
    assert!(drawn.contains(r#"<span role="status" class="status cancelled">cancelled</span>"#));
    assert!(!drawn.contains("bench-table"));
}

#[test]
fn a_sweep_grows_its_decay_chart_and_says_its_notes_once_finished() {
    let running = sweep(ProbeStatus::Running, 0);
    let drawn = page(&running);
    assert!(
        !drawn.contains("decay-chart"),
        "no chart before a step ended"
    );
    assert!(
        drawn.contains(">Opening connections…</p><p class=\"hint\">Steps run one after another"),
        "{drawn}"
    );
    let mut running = sweep(ProbeStatus::Running, 1);
    running.progress = Some(BenchProgress {
        protocol: Some(Protocol::H1),
        protocols_done: 2,
        ..BenchProgress::default()
    });
    let drawn = page(&running);
    assert!(drawn.contains(">Step 2 of 2 (40 ms): HTTP/1.1 (1 of 2) measuring: 0 requests, 0 errors, 0.0 s of 1 s</p>"), "{drawn}");
    assert!(drawn.contains(r#"aria-label="Requests per second by added round-trip time on a logarithmic scale, 1 of 2 steps measured, one line per protocol""#), "{drawn}");
    assert!(drawn.contains(r#"<a href="/api/v1/benches/benchABC1234/decay.svg" data-api="/api/v1/benches/benchABC1234/decay.svg" download="h123-decay-benchABC1234.svg" class="button">Download SVG</a>"#), "{drawn}");
    assert!(!drawn.contains("caveats"), "notes once finished: {drawn}");

    let finished = sweep(ProbeStatus::Done, 2);
    let drawn = page(&finished);
    let result = finished.sweep_result().unwrap();
    assert!(drawn.contains("2 of 2 steps measured"));
    assert_eq!(
        drawn.matches(r#"<tr><th scope="row">"#).count(),
        2,
        "a row per step"
    );
    for line in h123_shared::sweep::network_lines(&result) {
        assert!(drawn.contains(&format!("<p>{}</p>", text(&line))), "{line}");
    }
    for caveat in h123_shared::sweep::caveats(&result) {
        assert!(
            drawn.contains(&format!("<li>{}</li>", text(&caveat))),
            "{caveat}"
        );
    }
    assert!(!drawn.contains("bench-progress") && !drawn.contains("pending-note"));
    assert_eq!(
        description(&finished),
        "A sweep over rtt=0,40ms: 2 of 2 steps measured."
    );

    let stopped = page(&sweep(ProbeStatus::Cancelled, 1));
    assert!(stopped.contains(SWEEP_CANCELLED) && stopped.contains("decay-chart"));
}

#[test]
fn the_decay_plot_says_its_scale_and_draws_the_model_on_top() {
    let result = sweep(ProbeStatus::Done, 2).sweep_result().unwrap();
    let c = h123_shared::sweep::chart::chart(&result, Default::default());
    assert!(c.has_model());
    let svg = render(|| decay::plot(&c, "added round-trip time"));
    assert!(svg.contains(">requests per second (log scale)<"), "{svg}");
    assert!(svg.contains(">added round-trip time<"));
    let measured = svg.find("class=\"line measured proto-h1\"").unwrap();
    let model = svg.find("class=\"line model proto-h1\"").unwrap();
    assert!(
        model > measured,
        "the model is drawn over the measured line"
    );
    assert!(svg.contains(&format!(
        "stroke=\"{}\"",
        h123_shared::sweep::chart::MODEL_COLOUR
    )));
    assert_eq!(svg.matches("class=\"mark model").count(), 2, "{svg}");
}

#[test]
fn the_decay_picture_is_a_standalone_svg_of_the_same_plot() {
    let mut finished = sweep(ProbeStatus::Done, 2);
    finished.options.url = "https://t.test/?a=<b>&c".into();
    let result = finished.sweep_result().unwrap();
    let picture = crate::pages::render_picture(|| decay::picture(&result));
    assert!(
        picture.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 720 396" width="720" height="396""#),
        "{picture}"
    );
    assert!(picture.ends_with("</svg>\n"));
    assert!(
        !picture.contains("<!"),
        "no hydration markers in XML: {picture}"
    );
    assert!(picture.contains("<title>Requests per second (log scale) by added round-trip time: GET https://t.test/?a=&lt;b&gt;&amp;c</title>"), "{picture}");
    assert!(picture.contains(">model: closed-loop ceiling (Little's law)</text>"));
    // The page's plot, whole, inside the picture.
    let c = h123_shared::sweep::chart::chart(
        &result,
        h123_shared::bench_chart::Frame {
            top: 56.0,
            height: 396.0,
            ..Default::default()
        },
    );
    let plot = render(|| decay::plot(&c, "added round-trip time")).replace("<!>", "");
    assert!(picture.contains(&plot), "{picture}");
}
