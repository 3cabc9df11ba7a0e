//! The whole result view on fixture records: what a running, a finished and a cross-vantage
//! probe show, in which order, and that what a target or a user wrote stays text.

mod parts;

use super::ResultView;
use super::waterfall::{DEFAULT_AXIS_PX, pct};
use crate::pages::render;
use h123_shared::analysis::analyzed;
use h123_shared::api::{BROWSER_WINDOW_MS, ProbeRecord, ProbeStatus};
use h123_shared::browser::{BrowserAttempt, BrowserRun};
use h123_shared::fixture;
use h123_shared::live::AttemptKey;
use h123_shared::live::vantages::RunningAt;
use h123_shared::schema::{Header, Micros, Phase, ProbeOptions, ProbeResult};
use h123_shared::vantage::{Vantage, VantageRun};
use h123_shared::waterfall::{axis, fitted_span, label_stride};
use parts::{count, waiting_on_h2_3};

/// When the fixture records were created (2023-11-14 22:13 UTC).
const CREATED: u64 = 1_700_000_000_000;

/// The fixture of the parts' tests (HTTP/1.1 and HTTP/2 measured, HTTP/3 skipped for a reason
/// a hostile target wrote), analysed.
fn two_protocols() -> ProbeResult {
    analyzed(parts::two_protocols())
}

/// A record of `result` in `status` (a running one has no analysis yet).
fn record(status: ProbeStatus, mut result: ProbeResult) -> ProbeRecord {
    if status == ProbeStatus::Running {
        result.analysis = None;
    }
    ProbeRecord {
        created_at_unix_ms: CREATED,
        ..fixture::record("abc123def456", status, result)
    }
}

/// The page of `record` as stored, at `now_unix_ms`, with `running` attempts at its own vantage.
fn page(record: &ProbeRecord, running: &[(AttemptKey, Option<Phase>)], now_unix_ms: u64) -> String {
    let view = ResultView {
        record,
        shown: &record.result,
        running,
        runs: &record.vantages,
        running_at: &RunningAt::new(),
        now_unix_ms,
    };
    render(|| view.view())
}

/// Where `needle` first occurs in `html`.
fn at(html: &str, needle: &str) -> usize {
    html.find(needle)
        .unwrap_or_else(|| panic!("no {needle} in {html}"))
}

/// The value of the first attribute `name` in `html`, as written (escaped).
fn attribute<'a>(html: &'a str, name: &str) -> &'a str {
    let start = at(html, &format!(r#" {name}=""#)) + name.len() + 3;
    let end = start + html[start..].find('"').expect("a closing quote");
    &html[start..end]
}

/// `text` with the view's entities read back.
fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A browser measurement of two requests, the first on a new connection.
fn browser_run() -> BrowserRun {
    let attempt = |total: u64, reused: bool| BrowserAttempt {
        protocol: Some("h2".into()),
        total_us: Micros(total),
        reused: Some(reused),
        phases: Vec::new(),
        error: None,
    };
    BrowserRun {
        user_agent: "Mozilla/5.0 Chrome/131.0.0.0 Safari/537.36".into(),
        measured_at_unix_ms: CREATED + 60_000,
        attempts: vec![attempt(40_000, false), attempt(9_000, true)],
        finding: None,
    }
}

#[test]
fn a_running_probe_shows_its_live_rows_and_says_what_is_to_come() {
    let r = record(ProbeStatus::Running, two_protocols());
    let html = page(&r, &waiting_on_h2_3(), CREATED + 1_000);
    assert!(html.starts_with(r#"<div id="result" data-id="abc123def456" data-status="running" data-title="https://example.com/path?q=1: measuring…">"#), "{html}");
    assert!(html.ends_with("</div>"));
    assert!(html.contains(r#"<span role="status" class="status running">measuring…</span>"#));
    assert_eq!(count(&html, r#" class="wf-row reused live""#), 1, "{html}");
    assert!(html.contains("giving up after 10 s</p>"), "{html}");
    assert!(html.contains(
        r#"<p role="status" class="pending-note">Comparison, findings and facts appear when every attempt has finished.</p>"#
    ));
    assert!(
        html.contains(r#"<a href="/api/v1/probes/abc123def456" data-api="/api/v1/probes/abc123def456" download="h123-abc123def456.json" class="button partial">"#),
        "the JSON is partial while the probe runs"
    );
    for absent in [
        r#"class="verdict"#,
        r#"class="comparison""#,
        r#"class="findings""#,
        "compare-with",
        "measure-offer",
        "browser-group",
    ] {
        assert!(!html.contains(absent), "{absent} while running");
    }
    // In order: summary, actions, the texts to copy, the rerun's alert, the waterfalls, the note.
    let order = [
        r#"<section aria-label="Probe" class="summary">"#,
        r#"<nav aria-label="Result actions" class="actions">"#,
        r#"<details class="copy-texts">"#,
        r#"<div role="alert" hidden class="rerun-problem"></div>"#,
        r#"<section aria-labelledby="waterfalls-title" class="waterfalls">"#,
        r#"class="pending-note""#,
    ];
    let places: Vec<usize> = order.iter().map(|needle| at(&html, needle)).collect();
    assert!(places.is_sorted(), "{order:?} at {places:?}");
}

#[test]
fn a_finished_probe_shows_its_verdict_parts_the_hidden_offer_and_the_compare_form() {
    let r = record(ProbeStatus::Done, two_protocols());
    let html = page(&r, &[], CREATED + 1_000);
    let verdict = &r.result.analysis.as_ref().expect("analysed").verdict;
    assert!(html.contains(r#" data-status="done""#));
    assert!(html.contains(&format!(
        r#" data-title="https://example.com/path?q=1: {}""#,
        verdict.summary.replace('&', "&amp;").replace('"', "&quot;")
    )));
    assert!(!html.contains("pending-note"), "{html}");
    assert!(!html.contains("button partial"));
    assert_eq!(count(&html, r#"data-action="measure""#), 1);
    assert!(html.contains(
        r#"<section id="measure-offer" hidden data-url="https://example.com/path?q=1" data-method="GET" aria-labelledby="measure-title" class="measure-here">"#
    ), "{html}");
    let order = [
        r#"class="rerun-problem""#,
        r#"class="verdict "#,
        r#"<h2 id="verdict-title">Verdict</h2>"#,
        r#"class="waterfalls""#,
        r#"<section aria-labelledby="comparison-title" class="comparison"><h2 id="comparison-title">"#,
        r#"<section aria-labelledby="findings-title" class="findings"><h2 id="findings-title">"#,
        r#"<section aria-labelledby="facts-title" class="facts-section">"#,
        r#"id="measure-offer""#,
        r#"<form class="compare-with">"#,
    ];
    let places: Vec<usize> = order.iter().map(|needle| at(&html, needle)).collect();
    assert!(places.is_sorted(), "{order:?} at {places:?}");
    assert_eq!(count(&html, r#"<p class="rule">"#), 1, "the rule once");
    assert!(at(&html, r#"<p class="rule">"#) < at(&html, r#"class="waterfalls""#));
    assert!(html.contains(r#"<input id="compare-with" type="text""#));
    assert!(
        html.contains(
            r#"<span id="compare-with-problem" class="field-problem" role="alert"></span>"#
        )
    );
    assert!(html.contains(
        r#"<time datetime="2023-11-14T22:13Z" data-unix-ms="1700000000000">2023-11-14 22:13 UTC</time>"#
    ), "the summary's time");
}

#[test]
fn the_offer_is_gone_once_the_record_is_settled_and_the_browsers_group_takes_its_place() {
    let mut r = record(ProbeStatus::Done, two_protocols());
    let late = page(&r, &[], CREATED + BROWSER_WINDOW_MS + 1);
    assert!(!late.contains("measure-here"), "past the window: no offer");
    assert!(!late.contains("browser-group"));
    assert!(late.contains("compare-with"));

    r.browser = Some(browser_run());
    let html = page(&r, &[], CREATED + 1_000);
    assert!(!html.contains("measure-here"), "measured: no offer");
    assert!(html.contains(r#"<section aria-labelledby="browser-title" class="browser-group"><h2 id="browser-title">From the probe owner's browser <span class="vantage-tags">Chrome 131 · <leptos-island data-component="LocalTime_"#), "{html}");
    assert!(html.contains(r#"<time datetime="2023-11-14T22:14Z" data-unix-ms="1700000060000">2023-11-14 22:14 UTC</time></leptos-children></span></leptos-island></span></h2>"#), "{html}");
    let group = &html[at(&html, "browser-group")..];
    assert_eq!(count(group, "<li data-attempt="), 2, "a row per request");
    assert!(at(&html, "browser-group") < at(&html, "compare-with"));
    // The browser's 40 ms request is the longest: the common axis shows it, ticks and all.
    let (end, ticks) = axis(Micros(40_000));
    assert!(end >= Micros(40_000));
    assert_eq!(
        count(&html, r#"<span class="wf-ticks">"#),
        4,
        "three panels and the browser's"
    );
    let last = ticks.last().expect("ticks");
    assert!(html.contains(&format!(
        r#"<span style="left: 100.0000%;">{}</span>"#,
        last.label
    )));
}

#[test]
fn a_hostile_url_stays_text_in_the_title_the_summary_and_the_offer() {
    let mut result = two_protocols();
    result.options.url = r#"https://x.test/"><script>alert(1)</script>"#.into();
    let r = record(ProbeStatus::Done, result);
    let html = page(&r, &[], CREATED + 1_000);
    assert!(!html.contains("<script>"), "{html}");
    assert!(!html.contains(r#"x.test/">"#));
    // Text escapes `<`, `>` and `&`; an attribute value `"` too.
    let text = "https://x.test/\"&gt;&lt;script&gt;alert(1)&lt;/script&gt;";
    let attribute_value = "https://x.test/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;";
    assert!(html.contains(&format!(r#" data-title="{attribute_value}: "#)));
    assert!(html.contains(&format!(r#"<h1 class="target">{text}</h1>"#)));
    assert!(html.contains(&format!(r#" data-url="{attribute_value}""#)));
    assert_eq!(
        unescape(attribute(&html, "data-title")),
        format!(
            "{}: {}",
            r.options.url,
            r.result
                .analysis
                .as_ref()
                .expect("analysed")
                .verdict
                .summary
        )
    );
}

#[test]
fn the_actions_copy_download_and_run_again_by_their_data_attributes() {
    let r = record(ProbeStatus::Done, two_protocols());
    let html = page(&r, &[], CREATED + 1_000);
    assert!(html.contains(r#"<button type="button" data-action="copy" data-copy="permalink">Copy permalink</button><button type="button" data-action="copy" data-copy="curl">Copy curl command</button>"#));
    for (path, file, text) in [
        ("", "json", "JSON"),
        ("/har", "har", "HAR"),
        ("/waterfall.svg", "svg", "SVG"),
    ] {
        let api = format!("/api/v1/probes/abc123def456{path}");
        let link = format!(
            r#"<a href="{api}" data-api="{api}" download="h123-abc123def456.{file}" class="button">{text}</a>"#
        );
        assert!(html.contains(&link), "{link}");
    }
    assert!(html.contains(r#"<pre data-text="permalink">/r/abc123def456</pre>"#));
    let curl = &html[at(&html, r#"<pre data-text="curl">"#)..];
    let curl = &curl[..at(curl, "</pre>")];
    assert_eq!(count(curl, "curl "), 3, "a command per protocol: {curl}");
    assert_eq!(count(curl, "\n"), 2, "a line each");
    assert!(html.contains(r#"<span class="note" role="status"></span></nav>"#));
}

#[test]
fn run_again_carries_the_records_options_back_intact() {
    let mut result = two_protocols();
    result.options.headers = vec![Header {
        name: "x-quote".into(),
        value: r#"it's "<b>" & more"#.into(),
    }];
    result.options.vantages = vec!["server".into()];
    let r = record(ProbeStatus::Done, result);
    let html = page(&r, &[], CREATED + 1_000);
    let rerun = &html[at(&html, r#"data-action="rerun""#)..];
    let options: ProbeOptions =
        serde_json::from_str(&unescape(attribute(rerun, "data-options"))).expect("options");
    assert_eq!(options, r.options);
}

#[test]
fn every_axis_label_is_drawn_and_those_the_default_width_has_no_room_for_are_hidden() {
    let r = record(ProbeStatus::Done, two_protocols());
    let html = page(&r, &[], CREATED + 1_000);
    let (_, ticks) = axis(fitted_span([&r.result]));
    let stride = label_stride(&ticks, f64::from(DEFAULT_AXIS_PX));
    assert!(stride > 1, "the fixture's labels do not all fit");
    let mut labels = String::new();
    for (i, t) in ticks.iter().enumerate() {
        let hidden = if i % stride == 0 { "" } else { " hidden" };
        labels.push_str(&format!(
            r#"<span{hidden} style="left: {};">{}</span>"#,
            pct(t.x),
            t.label
        ));
    }
    let axis = format!(r#"<span class="wf-ticks">{labels}<!></span>"#);
    assert_eq!(count(&html, &axis), 3, "each panel's axis: {axis}");
}

#[test]
fn across_vantages_the_matrix_then_a_group_per_vantage() {
    let mut far = Vantage::named("fra1");
    far.label = Some("Frankfurt <DE>".into());
    far.tags = vec!["eu".into()];
    let mut r = record(ProbeStatus::Done, two_protocols());
    r.vantages = vec![
        VantageRun {
            vantage: Vantage::named("server"),
            result: Some(two_protocols()),
            problem: None,
        },
        VantageRun {
            vantage: far,
            result: Some(two_protocols()),
            problem: None,
        },
        VantageRun {
            vantage: Vantage::named("gone"),
            result: None,
            problem: Some("<b>offline</b>".into()),
        },
    ];
    let html = page(&r, &[], CREATED + 1_000);
    let order = [
        r#"<section aria-labelledby="matrix-title" class="comparison vantage-matrix">"#,
        r#"<section aria-labelledby="groups-title" class="vantage-groups"><div class="section-head"><h2 id="groups-title">From each vantage, on one time axis</h2><ul aria-label="Phases" class="legend">"#,
        r#"<section data-vantage="server" aria-labelledby="vantage-title-server" class="vantage-group"><h2 id="vantage-title-server">From server<!><span class="vantage-tags"> </span></h2>"#,
        r#"<section data-vantage="fra1" aria-labelledby="vantage-title-fra1" class="vantage-group"><h2 id="vantage-title-fra1">From Frankfurt &lt;DE&gt;<code class="vantage-name">fra1</code><span class="vantage-tags">eu</span></h2>"#,
        r#"<section data-vantage="gone" aria-labelledby="vantage-title-gone" class="vantage-group failed"><h2 id="vantage-title-gone">From gone<!><span class="vantage-tags"> </span></h2><p role="note" class="vantage-problem"><strong>No result from this vantage: </strong>&lt;b&gt;offline&lt;/b&gt;</p><!></section>"#,
        r#"<form class="compare-with">"#,
    ];
    let places: Vec<usize> = order.iter().map(|needle| at(&html, needle)).collect();
    assert!(places.is_sorted(), "{order:?} at {places:?}");
    assert_eq!(count(&html, r#"<h2 id="vantage-title-"#), 3);
    assert_eq!(
        count(&html, r#" class="verdict "#),
        2,
        "a verdict per vantage with a result"
    );
    assert_eq!(count(&html, r#"<p class="rule">"#), 1, "the rule once");
    assert!(at(&html, r#"<p class="rule">"#) < at(&html, "vantage-groups"));
    assert!(html.contains(r#"<section aria-labelledby="vantage-title-fra1" class="waterfalls">"#));
    assert_eq!(count(&html, r#" class="waterfalls""#), 2);
    assert_eq!(
        count(&html, r#" class="legend""#),
        1,
        "one legend for every group"
    );
    assert_eq!(
        count(&html[..at(&html, "vantage-groups")], r#"<tbody>"#),
        3,
        "a row group per vantage in the matrix"
    );
    assert!(
        !html.contains("verdict-title"),
        "no verdict of the page's own"
    );
    assert!(!html.contains("waterfalls-title"));

    r.status = ProbeStatus::Running;
    let running = page(&r, &[], CREATED + 1_000);
    assert!(running.contains(
        r#"<p role="status" class="pending-note">The matrix across vantages appears when every vantage has finished.</p>"#
    ));
    assert!(!running.contains("vantage-matrix"));
    assert!(
        !running.contains(r#" class="verdict "#),
        "verdicts wait for the end"
    );
    assert_eq!(count(&running, r#"<h2 id="vantage-title-"#), 3);
}

#[test]
fn nothing_to_compare_carries_no_rule() {
    use h123_shared::fixture::{failed, fresh, result, run};
    use h123_shared::{FailureKind, Protocol};
    let refused = |p| {
        run(
            p,
            vec![failed(
                fresh(1, 900, 1_500, 3_000, 9_000),
                Phase::Connect,
                FailureKind::Refused,
            )],
        )
    };
    let r = record(
        ProbeStatus::Done,
        analyzed(result(vec![refused(Protocol::H1), refused(Protocol::H2)])),
    );
    let html = page(&r, &[], CREATED + 1_000);
    assert!(html.contains("Nothing to compare"), "{html}");
    assert!(
        !html.contains("measure-offer"),
        "nothing reached the target: no offer to measure it from the browser"
    );
    assert_eq!(count(&html, r#"class="rule""#), 0, "{html}");
    assert!(
        !html.contains(r#"class="verdict-summary" title="#),
        "{html}"
    );
}
