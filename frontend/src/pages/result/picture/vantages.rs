//! The waterfall picture of a probe measured from several vantages: a labelled group per
//! vantage (`<g class="vantage" data-vantage="NAME">`), in the record's order, every group on
//! one time axis (`shared::waterfall::vantages`); a vantage without a result shows its problem in
//! its place. The cross-vantage findings close the picture.

use super::{FAILED, INK, ROW_H, TOP, WIDTH, axis, draw_rows, frame, legend, line, skipped_lines};
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::vantage::{Vantage, VantageRun, findings};
use h123_shared::waterfall::vantages::{VantageGroup, layout};
use leptos::prelude::*;

/// The height of a group's heading line.
const HEADING_H: f64 = 26.0;

/// `record`'s vantages as a picture.
pub fn picture(record: &ProbeRecord) -> impl IntoView + use<> {
    let laid = layout(&record.vantages);
    let mut y = TOP;
    let mut groups = Vec::new();
    for (i, (group, run)) in laid.groups.iter().zip(&record.vantages).enumerate() {
        let (drawn, below) = draw_group(group, run, i > 0, y);
        groups.push(drawn);
        y = below;
    }
    let plot_bottom = y;
    let mut closing = Vec::new();
    if record.status != ProbeStatus::Running {
        y += 8.0;
        for finding in findings(&record.vantages) {
            closing.push(text_block(&finding.title, y, INK, true));
            y += 20.0;
        }
    }
    let height = y + 12.0 + 12.0 + 20.0;
    let what = format!(
        "{} vantage(s) · {}",
        record.vantages.len(),
        record.status.as_str()
    );
    frame(
        record,
        height,
        &what,
        view! {
            {axis(&laid.ticks, plot_bottom)}
            {groups}
            {closing}
            {legend(y + 12.0)}
        },
    )
}

/// One vantage's group from `top` down: its heading (name, label, outcome), its rows or its
/// problem, its skipped protocols and its verdict; with the `y` under it.
fn draw_group(
    group: &VantageGroup,
    run: &VantageRun,
    rule: bool,
    top: f64,
) -> (impl IntoView + use<>, f64) {
    let heading = heading(&group.vantage);
    let analysis = run.result.as_ref().and_then(|r| r.analysis.as_ref());
    let state = match (analysis, &run.result) {
        (Some(a), _) => a.outcome.label(),
        (None, None) if group.problem.is_some() => "no result",
        (None, _) => "running",
    };
    let text_y = top + HEADING_H / 2.0 + 5.0;
    let mut y = top + HEADING_H;
    let mut body = Vec::new();
    if group.rows.is_empty() {
        let (text, fill) = match &group.problem {
            Some(problem) => (format!("no result: {problem}"), FAILED),
            None => ("no attempt finished yet".to_owned(), "#6b7280"),
        };
        body.push(text_block(&text, y, fill, false).into_any());
        y += 20.0;
    } else {
        body.push(draw_rows(&group.rows, y).into_any());
        y += ROW_H * group.rows.len() as f64;
        if let Some(problem) = &group.problem {
            body.push(text_block(problem, y, FAILED, false).into_any());
            y += 20.0;
        }
    }
    let (skipped, below) = skipped_lines(&group.skipped, y + 15.0);
    y = below - 15.0;
    let verdict = analysis.map(|a| {
        let drawn = text_block(&a.verdict.summary, y, INK, false);
        y += 20.0;
        drawn
    });
    let rule =
        rule.then(|| view! { <line x1="16" y1=top x2=WIDTH - 16.0 y2=top stroke=INK></line> });
    let view = view! {
        <g class="vantage" data-vantage=group.vantage.name.clone()>
            <title>{heading.clone()}</title>
            {rule}
            <text class="vantage-name" x="16" y=text_y font-size="14" font-weight="bold" fill=INK>{heading}</text>
            <text x=WIDTH - 16.0 y=text_y text-anchor="end" fill="#4b5563">{state}</text>
            {body}
            {skipped}
            {verdict}
        </g>
    };
    (view, y + 6.0)
}

/// A vantage's heading: its name, and its label after a dot when it has one.
fn heading(vantage: &Vantage) -> String {
    match &vantage.label {
        Some(label) => format!("{} · {label}", vantage.name),
        None => vantage.name.clone(),
    }
}

/// [`line`] in a block whose top is `top` (20 high).
fn text_block(text: &str, top: f64, fill: &'static str, bold: bool) -> impl IntoView + use<> {
    line(text, top + 15.0, fill, bold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::render_picture;
    use h123_shared::fixture;
    use h123_shared::{ProbeOptions, ProbeResult, Protocol};

    fn attempt(total_us: u64) -> h123_shared::Attempt {
        serde_json::from_value(serde_json::json!({
            "attempt": 1, "hop": 0, "url": "https://e.test/", "started_at_unix_ms": 1,
            "phases": {
                "total": {"start_us": 0, "end_us": total_us},
                "wait": {"start_us": 0, "end_us": total_us}
            },
            "ttfb_source": "transport_read",
            "response": {"status": 200, "http_version": "HTTP/2", "headers": [], "body_bytes": 0, "truncated": false}
        }))
        .expect("an attempt")
    }

    fn result(name: &str, total_us: u64) -> ProbeResult {
        let options = ProbeOptions {
            url: "https://e.test/".into(),
            protocols: vec![Protocol::H2],
            ..ProbeOptions::default()
        };
        let mut result = ProbeResult::empty(options, 0, Some(Vantage::named(name)));
        result.runs = vec![h123_shared::ProtocolRun {
            emulated: None,
            streams: None,
            protocol: Protocol::H2,
            skipped: None,
            not_offered: None,
            stopped: None,
            cut_short: None,
            discovery: None,
            other_addresses: Vec::new(),
            attempts: vec![attempt(total_us)],
        }];
        h123_shared::analysis::analyzed(result)
    }

    fn record(vantages: Vec<VantageRun>) -> ProbeRecord {
        let own = vantages[0].result.clone().expect("a first result");
        ProbeRecord {
            created_at_unix_ms: 0,
            vantages,
            ..fixture::record("abc", ProbeStatus::Done, own)
        }
    }

    #[test]
    fn groups_in_order_on_one_axis_and_a_missing_vantage_says_why() {
        let record = record(vec![
            VantageRun {
                vantage: Vantage {
                    name: "near".into(),
                    label: Some("Near <by>".into()),
                    tags: Vec::new(),
                },
                result: Some(result("near", 10_000)),
                problem: None,
            },
            VantageRun {
                vantage: Vantage::named("far"),
                result: Some(result("far", 50_000)),
                problem: None,
            },
            VantageRun {
                vantage: Vantage::named("gone"),
                result: None,
                problem: Some("agent gone stopped answering".into()),
            },
        ]);
        let svg = render_picture(|| picture(&record));
        let near = svg
            .find(r#"<g data-vantage="near" class="vantage">"#)
            .expect(&svg);
        let far = svg
            .find(r#"<g data-vantage="far" class="vantage">"#)
            .expect(&svg);
        let gone = svg
            .find(r#"<g data-vantage="gone" class="vantage">"#)
            .expect(&svg);
        assert!(near < far && far < gone);
        assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());
        assert!(svg.contains("near · Near &lt;by&gt;"), "labels are escaped");
        assert!(svg.contains("3 vantage(s) · done · probe abc"), "{svg}");
        // One axis, fitted to far's 50 ms (10 ms ticks), so near's 10 ms bar is a fifth of far's.
        assert!(svg.contains(">50 ms</text>"), "{svg}");
        assert_eq!(svg.matches(r##"fill="#6b7280">0</text>"##).count(), 1);
        let wait_widths: Vec<f64> = svg
            .match_indices(&format!(
                r#"fill="{}" rx="2"><title>"#,
                h123_shared::palette::fill(h123_shared::Phase::Wait)
            ))
            .map(|(at, _)| {
                let before = &svg[..at];
                let w = before.rfind("width=\"").unwrap() + 7;
                before[w..].split('"').next().unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(wait_widths.len(), 2);
        assert!(
            (wait_widths[1] / wait_widths[0] - 5.0).abs() < 0.01,
            "{wait_widths:?}"
        );
        let gone_part = &svg[gone..];
        assert!(
            gone_part.contains("no result: agent gone stopped answering"),
            "{gone_part}"
        );
        assert!(!gone_part[..gone_part.find("</g>").unwrap()].contains("<rect"));
        assert!(svg.trim_end().ends_with("</svg>"));
    }
}
