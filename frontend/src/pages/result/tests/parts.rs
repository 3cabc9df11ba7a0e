//! The result's parts, on fixture results: what each part says, and that text from a target or
//! a server (a refusal's reason, a finding's words) stays text.

use super::super::{comparison, facts, findings, streams, waterfall};
use crate::pages::render;
use h123_shared::analysis::analyze;
use h123_shared::fixture::{failed, fresh, result, reused, run};
use h123_shared::live::AttemptKey;
use h123_shared::table::comparison_table;
use h123_shared::waterfall::{label_stride, layout};
use h123_shared::{FailureKind, Micros, Phase, ProbeResult, Protocol};

/// HTTP/1.1 and HTTP/2, three attempts each (a new connection, then two reused), HTTP/3 skipped
/// for a reason written by a hostile target.
pub(in crate::pages) fn two_protocols() -> ProbeResult {
    let attempts = || {
        vec![
            fresh(1, 900, 1_500, 3_000, 9_000),
            reused(2, 8_000),
            reused(3, 8_500),
        ]
    };
    let mut h3 = run(Protocol::H3, Vec::new());
    h3.skipped = Some("<script>alert(1)</script> not advertised".into());
    let mut r = result(vec![
        run(Protocol::H1, attempts()),
        run(Protocol::H2, attempts()),
        h3,
    ]);
    r.options.protocols = vec![Protocol::H1, Protocol::H2, Protocol::H3];
    r
}

/// HTTP/2's third attempt, still waiting for its first byte.
pub(in crate::pages) fn waiting_on_h2_3() -> [(AttemptKey, Option<Phase>); 1] {
    [(
        AttemptKey {
            protocol: Protocol::H2,
            attempt: 3,
            hop: 0,
        },
        Some(Phase::Wait),
    )]
}

/// How often `needle` occurs in `haystack`.
pub(in crate::pages) fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn the_panels_have_one_tab_stop_a_row_per_attempt_and_a_bar_per_phase() {
    let r = two_protocols();
    let w = layout(&r);
    let panels = waterfall::Panels {
        options: &r.options,
        running: &[],
        h3: None,
        reserve: 3,
        axis_px: 600,
    };
    let bars: usize = w.rows.iter().map(|row| row.bars.len()).sum();
    let html = render(|| panels.view(&w));
    assert_eq!(
        count(&html, r#"class="wf-panel""#),
        3,
        "a panel per protocol"
    );
    assert_eq!(count(&html, " data-redirects="), 6, "a row per attempt");
    assert_eq!(count(&html, " class=\"bar "), bars, "a bar per phase");
    assert_eq!(count(&html, r#"tabindex="0""#), 1, "one tab stop");
    assert_eq!(count(&html, r#"tabindex="-1""#), bars - 1);
    assert_eq!(count(&html, r#" class="tag tag-reused""#), 4);
    assert!(
        html.contains("aria-label=\"HTTP/1.1 attempt 1: dns 0.90 ms (from 0.00 ms to 0.90 ms)\""),
        "{html}"
    );
    assert!(
        html.contains("Not measured: &lt;script&gt;alert(1)&lt;/script&gt; not advertised"),
        "a skipped protocol's reason is text"
    );
    assert!(!html.contains("<script>"));
}

#[test]
fn a_running_attempt_shows_its_open_phase_instead_of_a_total() {
    let r = two_protocols();
    let running = waiting_on_h2_3();
    let panels = waterfall::Panels {
        options: &r.options,
        running: &running,
        h3: None,
        reserve: 3,
        axis_px: 600,
    };
    let html = render(|| panels.view(&layout(&r)));
    assert_eq!(count(&html, " live"), 1, "{html}");
    assert_eq!(count(&html, r#"<span class="wf-total">"#), 6, "{html}");
    assert_eq!(
        count(&html, "…</span>"),
        1,
        "only the running total says it goes on"
    );
    assert!(
        html.contains(r#"data-open="wait" data-since-us=""#),
        "the open phase's start, for the page to tick on: {html}"
    );
    assert!(html.contains(r#" data-limit-ms="10000""#));
    assert!(
        html.contains(
            r#"<p data-attempt="3" class="wf-waiting">#3 wait <span class="wf-elapsed">"#
        )
    );
    assert!(
        html.contains(
            "</span>: waiting for the server's first byte over HTTP/2; giving up after 10 s</p>"
        ),
        "{html}"
    );
}

#[test]
fn a_narrow_axis_hides_the_labels_it_has_no_room_for() {
    let w = layout(&two_protocols());
    let wide = render(|| waterfall::axis(&w.ticks, 2_000.0));
    let narrow = render(|| waterfall::axis(&w.ticks, 120.0));
    let labels = |html: &str| count(html, " style=\"left: ");
    let hidden = |html: &str| count(html, "<span hidden ");
    assert_eq!(labels(&wide), w.ticks.len());
    assert_eq!(hidden(&wide), 0);
    assert_eq!(labels(&narrow), w.ticks.len(), "every label is drawn");
    let stride = label_stride(&w.ticks, 120.0);
    let intervals = w.ticks.len() - 1;
    assert!(stride > 1, "{narrow}");
    assert_eq!(hidden(&narrow), intervals - intervals / stride, "{narrow}");
    let (first, last) = (&w.ticks[0], &w.ticks[intervals]);
    assert!(narrow.contains(&format!(
        r#"<span style="left: 0.0000%;">{}</span>"#,
        first.label
    )));
    assert!(narrow.contains(&format!(
        r#"<span style="left: 100.0000%;">{}</span>"#,
        last.label
    )));
}

#[test]
fn the_table_has_a_column_per_phase_that_occurs_and_a_row_per_attempt() {
    let html = render(|| waterfall::table(&layout(&two_protocols())));
    assert_eq!(count(&html, r#"<th scope="row">"#), 6);
    assert!(html.contains(r#"<th scope="col">dns</th>"#));
    assert!(
        !html.contains(r#"<th scope="col">proxy</th>"#),
        "no proxy phase occurred"
    );
}

#[test]
fn the_comparison_names_a_leader_only_beyond_the_noise_and_says_why_a_column_is_empty() {
    let r = two_protocols();
    let html = render(|| comparison::comparison(&comparison_table(&r)));
    assert!(html.contains(r#"<tr class="unmeasured-row">"#), "{html}");
    assert!(
        html.contains("&lt;script&gt;"),
        "the reason is text: {html}"
    );
    assert!(!html.contains("<script>"));
    // The two protocols' attempts are identical: no leader, no gap.
    assert!(!html.contains("fastest</span>"), "{html}");
    assert!(!html.contains(r#"<span class="gap">+"#), "{html}");
}

#[test]
fn findings_say_when_there_is_no_analysis_nothing_to_say_or_what_was_found() {
    assert!(render(|| findings::findings(None)).contains("The server sent no analysis"));
    let mut r = result(vec![run(
        Protocol::H1,
        vec![failed(
            fresh(1, 900, 1_500, 3_000, 9_000),
            Phase::Tls,
            FailureKind::Timeout,
        )],
    )]);
    r.options.protocols = vec![Protocol::H1];
    let mut analysis = analyze(&r);
    assert!(!analysis.findings.is_empty(), "a failed probe has findings");
    analysis.findings[0].title = "<img src=x onerror=alert(1)>".into();
    let html = render(|| findings::findings(Some(&analysis)));
    assert_eq!(
        count(&html, " class=\"finding severity-"),
        analysis.findings.len()
    );
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!html.contains("<img"));
    analysis.findings.clear();
    assert!(render(|| findings::findings(Some(&analysis))).contains("Nothing stands out"));
}

#[test]
fn facts_have_a_card_per_protocol_that_ran_and_the_http3_discovery() {
    let html = render(|| facts::facts(&two_protocols()));
    assert_eq!(count(&html, r#"<article class="card">"#), 2, "{html}");
    assert_eq!(count(&html, r#"<article class="card h3-status">"#), 1);
    assert!(
        !html.contains("addresses"),
        "one address each: no address table"
    );
}

#[test]
fn requests_at_once_are_drawn_only_when_the_probe_sent_them() {
    assert!(streams::streams(&two_protocols()).is_none());
}

#[test]
fn every_phase_has_a_swatch_and_a_pattern_its_bars_refer_to() {
    let head = render(|| waterfall::head("t", "Waterfalls".to_owned()));
    assert_eq!(count(&head, "<li "), Phase::ALL.len());
    for phase in Phase::ALL {
        let pattern = format!(r#"id="pat-{}""#, phase.as_str());
        assert!(head.contains(&pattern), "{pattern}");
        assert!(head.contains(&format!("url(#pat-{})", phase.as_str())));
    }
}

#[test]
fn the_label_column_holds_the_widest_rows_tags() {
    let mut w = layout(&two_protocols());
    assert_eq!(waterfall::label_rem(&w.rows), None, "\"#2 reused\" fits");
    w.rows[1].redirects = 2;
    assert_eq!(waterfall::label_rem(&w.rows), Some(7.0), "\"#2 reused 2↪\"");
    let html = render(|| waterfall::section(&two_protocols(), &[], Micros(20_000), None));
    assert!(
        html.contains(r#"<div class="wf-panels">"#),
        "no width of its own"
    );
}
