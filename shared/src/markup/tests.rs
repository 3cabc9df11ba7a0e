//! The result's parts as markup, on fixture results: what each part says, and that text from a
//! target or a server (a refusal's reason, a finding's words) stays text.

use super::{comparison, facts, findings, streams, waterfall};
use crate::analysis::analyze;
use crate::fixture::{failed, fresh, result, reused, run};
use crate::live::AttemptKey;
use crate::table::comparison_table;
use crate::waterfall::{label_stride, layout};
use crate::{FailureKind, Phase, ProbeResult, Protocol};

/// HTTP/1.1 and HTTP/2, three attempts each (a new connection, then two reused), HTTP/3 skipped
/// for a reason written by a hostile target.
pub(super) fn two_protocols() -> ProbeResult {
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
pub(super) fn waiting_on_h2_3() -> [(AttemptKey, Option<Phase>); 1] {
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
pub(super) fn count(haystack: &str, needle: &str) -> usize {
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
    let html = panels.markup(&w);
    assert_eq!(
        count(&html, r#"class="wf-panel""#),
        3,
        "a panel per protocol"
    );
    assert_eq!(count(&html, "<li class=\"wf-row"), 6, "a row per attempt");
    let bars: usize = w.rows.iter().map(|row| row.bars.len()).sum();
    assert_eq!(count(&html, "<g class=\"bar "), bars, "a bar per phase");
    assert_eq!(count(&html, r#"tabindex="0""#), 1, "one tab stop");
    assert_eq!(count(&html, r#"tabindex="-1""#), bars - 1);
    assert_eq!(count(&html, r#"<span class="tag tag-reused""#), 4);
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
    let html = panels.markup(&layout(&r));
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
            r#"<p class="wf-waiting" data-attempt="3">#3 wait <span class="wf-elapsed">"#
        )
    );
    assert!(
        html.contains(
            "</span>: waiting for the server&#39;s first byte over HTTP/2; giving up after 10 s</p>"
        ),
        "{html}"
    );
}

#[test]
fn a_narrow_axis_hides_the_labels_it_has_no_room_for() {
    let w = layout(&two_protocols());
    let (mut wide, mut narrow) = (String::new(), String::new());
    waterfall::axis(&mut wide, &w.ticks, 2_000.0);
    waterfall::axis(&mut narrow, &w.ticks, 120.0);
    let labels = |html: &str| count(html, "<span style=");
    let hidden = |html: &str| count(html, "\" hidden>");
    assert_eq!(labels(&wide), w.ticks.len());
    assert_eq!(hidden(&wide), 0);
    assert_eq!(labels(&narrow), w.ticks.len(), "every label is drawn");
    let stride = label_stride(&w.ticks, 120.0);
    let intervals = w.ticks.len() - 1;
    assert!(stride > 1, "{narrow}");
    assert_eq!(hidden(&narrow), intervals - intervals / stride, "{narrow}");
    let (first, last) = (&w.ticks[0], &w.ticks[intervals]);
    assert!(narrow.contains(&format!(
        r#"<span style="left: 0.0000%">{}</span>"#,
        first.label
    )));
    assert!(narrow.contains(&format!(
        r#"<span style="left: 100.0000%">{}</span>"#,
        last.label
    )));
}

#[test]
fn the_table_has_a_column_per_phase_that_occurs_and_a_row_per_attempt() {
    let html = waterfall::table(&layout(&two_protocols()));
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
    let html = comparison::comparison(&comparison_table(&r));
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
    assert!(findings::findings(None).contains("The server sent no analysis"));
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
    let html = findings::findings(Some(&analysis));
    assert_eq!(
        count(&html, "<li class=\"finding severity-"),
        analysis.findings.len()
    );
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!html.contains("<img"));
    analysis.findings.clear();
    assert!(findings::findings(Some(&analysis)).contains("Nothing stands out"));
}

#[test]
fn facts_have_a_card_per_protocol_that_ran_and_the_http3_discovery() {
    let html = facts::facts(&two_protocols());
    assert_eq!(count(&html, r#"<article class="card">"#), 2, "{html}");
    assert_eq!(count(&html, r#"<article class="card h3-status">"#), 1);
    assert!(
        !html.contains("addresses"),
        "one address each: no address table"
    );
}

#[test]
fn requests_at_once_are_drawn_only_when_the_probe_sent_them() {
    assert_eq!(streams::streams(&two_protocols()), None);
}

#[test]
fn every_phase_has_a_swatch_and_a_pattern_its_bars_refer_to() {
    let legend = waterfall::legend();
    assert_eq!(count(&legend, "<li "), Phase::ALL.len());
    for phase in Phase::ALL {
        let pattern = format!(r#"id="pat-{}""#, phase.as_str());
        assert!(waterfall::PATTERNS.contains(&pattern), "{pattern}");
        assert!(legend.contains(&format!("url(#pat-{})", phase.as_str())));
    }
}

#[test]
fn the_label_column_holds_the_widest_rows_tags() {
    let mut w = layout(&two_protocols());
    assert_eq!(waterfall::label_rem(&w.rows), None, "\"#2 reused\" fits");
    w.rows[1].redirects = 2;
    assert_eq!(waterfall::label_rem(&w.rows), Some(7.0), "\"#2 reused 2↪\"");
    let html = waterfall::section(&two_protocols(), &[], crate::Micros(20_000), None);
    assert!(
        html.contains(r#"<div class="wf-panels">"#),
        "no width of its own"
    );
}
