//! The waterfalls as markup: per protocol an axis, a row per attempt and a bar per phase
//! (focusable: the first bar of the first panel is the chart's one tab stop, the arrow keys reach
//! the others), and the chart's text alternative, a table of every attempt's phases; and the
//! section holding them with its legend and readout. One element for the whole chart, redrawn
//! when the layout changes: far less wasm and far less for a page to build than a view per bar.

use super::{element, escape};
use crate::chain::ConnState;
use crate::format::ms;
use crate::live::AttemptKey;
use crate::live::waiting::Waiting;
use crate::waterfall::{Bar, Row, Tick, Waterfall, label_stride, layout_on};
use crate::{H3Discovery, Micros, Phase, ProbeOptions, ProbeResult, Protocol};
use std::fmt::Write as _;

/// One pattern per phase (wait stays solid), referenced as `url(#pat-<phase>)`.
pub const PATTERNS: &str = r#"<defs>
<pattern id="pat-dns" width="6" height="6" patternUnits="userSpaceOnUse"><circle cx="3" cy="3" r="1.3"/></pattern>
<pattern id="pat-connect" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,7 L7,-1"/></pattern>
<pattern id="pat-proxy" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0,3 H6 M3,0 V6"/></pattern>
<pattern id="pat-tls" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,-1 L7,7"/></pattern>
<pattern id="pat-quic" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,7 L7,-1 M-1,-1 L7,7"/></pattern>
<pattern id="pat-send" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0,3 H6"/></pattern>
<pattern id="pat-wait" width="6" height="6" patternUnits="userSpaceOnUse"></pattern>
<pattern id="pat-receive" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M3,0 V6"/></pattern>
</defs>"#;

/// What the readout under the waterfalls says while no bar is pointed at or focused.
pub const HINT: &str = "Hover or focus a bar for its exact times.";

/// The axis width, in CSS pixels, the labels are thinned to where the real one is not known (a
/// page drawn on the server); the browser thins them again on its own.
pub const DEFAULT_AXIS_PX: u32 = 280;

/// The waterfalls of `result` as their section, on an axis showing `span` (`waterfall::fitted_span`
/// over every result sharing it, and the browser's measurement), with `running` attempts live:
/// the head (heading, legend, fill patterns), a skip link to the table, the panels, the tooltip,
/// the readout and the table. For one vantage among several, named `vantage`, the section has no
/// head of its own: the vantage group's heading names it and the groups' head holds the legend.
pub fn section(
    result: &ProbeResult,
    running: &[(AttemptKey, Option<Phase>)],
    span: Micros,
    vantage: Option<&str>,
) -> String {
    let waterfall = layout_on(result, span);
    let panels = Panels {
        options: &result.options,
        running,
        h3: result
            .runs
            .iter()
            .find(|r| r.protocol == Protocol::H3)
            .and_then(|r| r.discovery.as_ref()),
        reserve: result.options.attempts().max(1),
        axis_px: DEFAULT_AXIS_PX,
    };
    let labelled_by = match vantage {
        None => "waterfalls-title".to_owned(),
        Some(name) => format!("vantage-title-{name}"),
    };
    let mut out = format!(
        r#"<section class="waterfalls" aria-labelledby="{}">"#,
        escape(&labelled_by)
    );
    if vantage.is_none() {
        head(&mut out, "waterfalls-title", "Waterfalls");
    }
    let _ = write!(
        out,
        r##"<a class="skip-link" href="#">Skip the chart to its table</a><div class="wf-panels"{}>{}</div><p class="wf-tooltip" aria-hidden="true" hidden></p><p class="wf-readout" aria-live="polite">{HINT}</p><details class="wf-table"><summary>Waterfall as a table</summary><div class="table-scroll">{}</div></details></section>"##,
        label_rem(&waterfall.rows)
            .map(|rem| format!(r#" style="--label-w: {rem}rem""#))
            .unwrap_or_default(),
        panels.markup(&waterfall),
        table(&waterfall)
    );
    out
}

/// A section of waterfalls' head: its heading `title` (with id `title_id`) beside the legend, then
/// the hidden SVG holding the fill patterns every bar refers to.
pub fn head(out: &mut String, title_id: &str, title: &str) {
    let _ = write!(
        out,
        r#"<div class="section-head"><h2 id="{}">{}</h2><ul class="legend" aria-label="Phases">{}</ul></div><svg class="pattern-defs" aria-hidden="true" width="0" height="0">{PATTERNS}</svg>"#,
        escape(title_id),
        escape(title),
        legend()
    );
}

/// The legend's items: a swatch per phase, as drawn in the bars (colour and pattern), with the
/// phase's name, and its meaning on hover.
pub fn legend() -> String {
    let mut out = String::new();
    for phase in Phase::ALL {
        let name = phase.as_str();
        let _ = write!(
            out,
            r#"<li title="{}"><svg class="swatch" width="18" height="12" aria-hidden="true"><rect class="fill phase-{name}" width="18" height="12"></rect><rect fill="url(#pat-{name})" width="18" height="12"></rect></svg>{name}</li>"#,
            escape(phase.meaning())
        );
    }
    out
}

/// An axis fraction as an SVG/CSS percentage.
pub fn pct(fraction: f64) -> String {
    format!("{:.4}%", fraction * 100.0)
}

/// What the panels draw beyond the layout.
pub struct Panels<'a> {
    /// The probe's options: its protocols, in the order of their panels, and the limits a
    /// running phase is under.
    pub options: &'a ProbeOptions,
    /// Attempts still running, with their open phase.
    pub running: &'a [(AttemptKey, Option<Phase>)],
    /// What HTTP/3's discovery found, once known: the endpoint a running QUIC phase waits on.
    pub h3: Option<&'a H3Discovery>,
    /// Rows expected per panel, so a panel keeps its height while they arrive.
    pub reserve: u32,
    /// The axis's width in pixels, for the labels that fit it.
    pub axis_px: u32,
}

impl Panels<'_> {
    /// Every protocol's panel.
    pub fn markup(&self, waterfall: &Waterfall) -> String {
        let mut out = String::new();
        for (i, protocol) in self.options.protocols.iter().enumerate() {
            self.panel(&mut out, waterfall, *protocol, i == 0);
        }
        out
    }

    /// One protocol's panel; `first`: its first bar is the chart's tab stop.
    fn panel(&self, out: &mut String, waterfall: &Waterfall, protocol: Protocol, first: bool) {
        let _ = write!(
            out,
            r#"<section class="wf-panel" data-protocol="{}" style="--reserve-rows: {}"><h3>{}</h3>"#,
            protocol.as_str(),
            self.reserve,
            protocol.http_version()
        );
        axis(out, &waterfall.ticks, f64::from(self.axis_px));
        out.push_str(r#"<ol class="wf-rows">"#);
        let rows = waterfall.rows.iter().filter(|r| r.protocol == protocol);
        let mut waits = String::new();
        for (i, row) in rows.enumerate() {
            let live = self
                .running
                .iter()
                .find(|(k, _)| k.protocol == row.protocol && k.attempt == row.attempt)
                .map(|(_, open)| *open);
            let waiting = live.flatten().map(|phase| {
                let since = row
                    .bars
                    .iter()
                    .rfind(|b| b.phase == phase)
                    .map_or(row.total_us, |b| b.start_us);
                Waiting::new(self.options, protocol, self.h3, phase, since)
            });
            if let Some(w) = &waiting {
                waiting_note(&mut waits, row, w);
            }
            let live = live.map(|_| waiting.as_ref());
            attempt_row(out, row, live, waterfall, first && i == 0);
        }
        out.push_str("</ol>");
        out.push_str(&waits);
        if let Some(skipped) = waterfall.skipped.iter().find(|s| s.protocol == protocol) {
            let lead = if skipped.stopped {
                "Stopped: "
            } else {
                "Not measured: "
            };
            element(
                out,
                "p",
                r#" class="wf-skipped""#,
                &format!("{lead}{}", skipped.reason),
            );
        }
        out.push_str("</section>");
    }
}

/// The time axis's labels, above the rows: every tick's, those beyond what fits `axis_px` without
/// overlapping (every tick off [`label_stride`]'s stride) `hidden`, so a page that knows its real
/// width can thin them again from the same spans.
pub fn axis(out: &mut String, ticks: &[Tick], axis_px: f64) {
    out.push_str(r#"<div class="wf-axis" aria-hidden="true"><span></span><span class="wf-ticks">"#);
    let stride = label_stride(ticks, axis_px);
    for (i, t) in ticks.iter().enumerate() {
        let hidden = if i % stride == 0 { "" } else { " hidden" };
        element(
            out,
            "span",
            &format!(r#" style="left: {}"{hidden}"#, pct(t.x)),
            &t.label,
        );
    }
    out.push_str("</span><span></span></div>");
}

/// A track's vertical grid line per tick.
pub fn grid(out: &mut String, ticks: &[Tick]) {
    for t in ticks {
        vertical(out, "grid", t.x, "0", "100%");
    }
}

/// A vertical line of class `class` at the axis fraction `x`, from `y1` to `y2`.
fn vertical(out: &mut String, class: &str, x: f64, y1: &str, y2: &str) {
    let x = pct(x);
    let _ = write!(
        out,
        r#"<line class="{class}" x1="{x}" x2="{x}" y1="{y1}" y2="{y2}"></line>"#
    );
}

/// A phase's two rectangles, its colour and its pattern, at the axis fractions `x` and `width`.
pub fn phase_rects(out: &mut String, phase: Phase, x: f64, width: f64) {
    let (name, x, width) = (phase.as_str(), pct(x), pct(width));
    let _ = write!(
        out,
        r#"<rect class="fill" x="{x}" width="{width}" y="4" height="16"></rect><rect fill="url(#pat-{name})" x="{x}" width="{width}" y="4" height="16"></rect>"#
    );
}

/// What a running attempt's open phase waits on, under its panel's rows: the attempt, the phase
/// and its elapsed time as drawn (`.wf-elapsed`, which the page ticks on), and the sentence
/// naming the limit.
fn waiting_note(out: &mut String, row: &Row, waiting: &Waiting) {
    let _ = write!(
        out,
        r#"<p class="wf-waiting" data-attempt="{}">#{} {} <span class="wf-elapsed">{}</span>: {}</p>"#,
        row.attempt,
        row.attempt,
        waiting.phase.as_str(),
        ms(waiting.elapsed(row.total_us)),
        escape(&waiting.sentence)
    );
}

/// One attempt: label and tags, track with bars, total (or, while it runs, its open phase's
/// elapsed time, with the phase's start, limit and the axis in `data-` attributes for the page
/// to grow it by).
fn attempt_row(
    out: &mut String,
    row: &Row,
    live: Option<Option<&Waiting>>,
    waterfall: &Waterfall,
    entry: bool,
) {
    let ticks = &waterfall.ticks;
    let who = format!("{} attempt {}", row.protocol.http_version(), row.attempt);
    let open = match live {
        Some(Some(w)) => format!(
            r#" data-open="{}" data-since-us="{}" data-now-us="{}" data-axis-us="{}" data-limit-ms="{}""#,
            w.phase.as_str(),
            w.since.0,
            row.total_us.0,
            waterfall.axis_us.0,
            w.limit_ms
        ),
        _ => String::new(),
    };
    let _ = write!(
        out,
        r#"<li class="wf-row{}{}{}{}" data-attempt="{}" data-redirects="{}"{open}><span class="wf-label">#{}"#,
        if row.reused { " reused" } else { "" },
        if row.failed { " failed" } else { "" },
        if live.is_some() { " live" } else { "" },
        if row.clipped { " clipped" } else { "" },
        row.attempt,
        row.redirects,
        row.attempt
    );
    tags(out, row);
    let redirects = match row.redirects {
        0 => String::new(),
        1 => ", 1 redirect".to_string(),
        n => format!(", {n} redirects"),
    };
    let _ = write!(
        out,
        r#"</span><svg class="wf-track" role="group" aria-label="{}">"#,
        escape(&format!(
            "{who}{redirects}, {}{}{}: total {}",
            row.state.phrase().trim_start_matches("a "),
            if row.zero_rtt { " with 0-RTT" } else { "" },
            if row.failed { ", failed" } else { "" },
            ms(row.total_us)
        ))
    );
    grid(out, ticks);
    for (i, bar) in row.bars.iter().enumerate() {
        phase_bar(out, bar, &who, entry && i == 0);
    }
    for x in &row.hop_starts {
        vertical(out, "hop", *x, "1", "23");
    }
    if let Some(x) = row.moved {
        vertical(out, "moved", x, "0", "24");
    }
    let total = match live {
        Some(Some(w)) => format!("{}…", ms(w.elapsed(row.total_us))),
        Some(None) => "running…".to_string(),
        None => ms(row.total_us),
    };
    out.push_str("</svg>");
    element(out, "span", r#" class="wf-total""#, &total);
    out.push_str("</li>");
}

/// The tags after an attempt's number: how its connection came about, redirects, failure.
fn tags(out: &mut String, row: &Row) {
    for (class, title, text) in row_tags(row) {
        let _ = write!(out, r#"<span class="tag {class}""#);
        if !title.is_empty() {
            let _ = write!(out, r#" title="{title}""#);
        }
        let _ = write!(out, ">{text}</span>");
    }
}

/// A row's tags as (class, title, text), in the order drawn.
fn row_tags(row: &Row) -> Vec<(&'static str, &'static str, String)> {
    let mut tags = Vec::new();
    if row.reused {
        tags.push(("tag-reused", "ran on a reused connection", "reused".into()));
    }
    if row.state == ConnState::Resumed && !row.zero_rtt {
        tags.push((
            "tag-resumed",
            "a new connection that resumed the TLS session",
            "resumed".into(),
        ));
    }
    if row.zero_rtt {
        tags.push((
            "tag-resumed",
            "resumed, and the request went in 0-RTT data",
            "0-RTT".into(),
        ));
    }
    if row.redirects > 0 {
        tags.push((
            "tag-redirect",
            "redirect hops, end to end",
            format!("{}↪", row.redirects),
        ));
    }
    if row.moved.is_some() {
        tags.push((
            "tag-redirect",
            "the connection moved to a new address mid-response (the dashed line)",
            "moved".into(),
        ));
    }
    if row.failed {
        tags.push(("tag-failed", "", "failed".into()));
    }
    tags
}

/// The stylesheet's label column (`--label-w`, rem) where no row needs more.
const LABEL_REM: f64 = 5.0;

/// The label column, in rem, that holds the widest of `rows`' labels (its number and tags) at the
/// stylesheet's sizes (number 0.85rem, tags 0.7rem with 0.3rem padding each side, 0.3rem apart,
/// a 1px border), each character taken at 0.62 em, wider than the page font's average: a label
/// is never cut ("reused…"). `None` when the stylesheet's own width holds every label.
pub fn label_rem(rows: &[Row]) -> Option<f64> {
    let chars = |text: &str| {
        text.chars()
            .map(|c| if c.is_ascii() { 1.0 } else { 1.4 })
            .sum::<f64>()
    };
    let widest = rows
        .iter()
        .map(|row| {
            let number = 0.85 * 0.62 * chars(&format!("#{}", row.attempt));
            let tags: f64 = row_tags(row)
                .iter()
                .map(|(_, _, text)| 0.7 * 0.62 * chars(text) + 0.6 + 0.3 + 0.125)
                .sum();
            number + tags
        })
        .fold(0.0, f64::max);
    (widest > LABEL_REM).then(|| (widest * 4.0).ceil() / 4.0 + 0.25)
}

/// One phase: coloured, patterned, focusable (a tab stop only when `tab_stop`), its exact times
/// in its label (which the tooltip and the readout show).
fn phase_bar(out: &mut String, bar: &Bar, who: &str, tab_stop: bool) {
    let name = bar.phase.as_str();
    let hop = if bar.hop > 0 {
        format!(" hop {}", bar.hop)
    } else {
        String::new()
    };
    let _ = write!(
        out,
        r#"<g class="bar phase-{name}" data-phase="{name}" tabindex="{}" role="img" aria-label="{}">"#,
        if tab_stop { "0" } else { "-1" },
        escape(&format!(
            "{who}{hop}: {name} {} (from {} to {})",
            ms(bar.end_us.saturating_sub(bar.start_us)),
            ms(bar.start_us),
            ms(bar.end_us)
        ))
    );
    phase_rects(out, bar.phase, bar.x, bar.width);
    out.push_str("</g>");
}

/// Phases that occur in any row, in timeline order.
fn columns(waterfall: &Waterfall) -> Vec<Phase> {
    Phase::ALL
        .into_iter()
        .filter(|p| {
            waterfall
                .rows
                .iter()
                .any(|r| r.bars.iter().any(|b| b.phase == *p))
        })
        .collect()
}

/// The chart's text alternative: a table with a column per phase that occurs, a row per attempt.
pub fn table(waterfall: &Waterfall) -> String {
    let phases = columns(waterfall);
    let mut out = String::from(r#"<table><thead><tr><th scope="col">Attempt</th>"#);
    for phase in &phases {
        element(&mut out, "th", r#" scope="col""#, phase.as_str());
    }
    out.push_str(r#"<th scope="col">total</th></tr></thead><tbody>"#);
    for row in &waterfall.rows {
        out.push_str("<tr>");
        element(&mut out, "th", r#" scope="row""#, &row.label);
        for phase in &phases {
            let cell = row
                .bars
                .iter()
                .find(|b| b.phase == *phase)
                .map(|b| ms(b.end_us.saturating_sub(b.start_us)))
                .unwrap_or_else(|| "–".into());
            element(&mut out, "td", "", &cell);
        }
        element(&mut out, "td", "", &ms(row.total_us));
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}
