//! The waterfalls: per protocol an axis, a row per attempt and a bar per phase (focusable: the
//! first bar of the first panel is the chart's one tab stop, the arrow keys reach the others),
//! and the chart's text alternative, a table of every attempt's phases; and the section holding
//! them with its legend and readout. The island [`WaterfallChart`] gives them hover, focus, keys
//! and fitted axes (as the result page's script, the `h123-result` bundle, does by these classes
//! and `data-` attributes).

use crate::islands::WaterfallChart;
use h123_shared::chain::ConnState;
use h123_shared::format::ms;
use h123_shared::live::AttemptKey;
use h123_shared::live::waiting::Waiting;
use h123_shared::waterfall::{Bar, Row, Tick, Waterfall, label_stride, layout_on};
use h123_shared::{H3Discovery, Micros, Phase, ProbeOptions, ProbeResult, Protocol};
use leptos::prelude::*;

/// The axis width, in CSS pixels, the labels are thinned to where the real one is not known (a
/// page drawn on the server); the browser thins them again on its own.
pub const DEFAULT_AXIS_PX: u32 = 280;

/// The waterfalls of `result` as their section, on an axis showing `span` (`fitted_span` over
/// every result sharing it, and the browser's measurement), with `running` attempts live: the
/// head (heading, legend, fill patterns), a skip link to the table, the panels, the tooltip, the
/// readout and the table. For one vantage among several, named `vantage`, the section has no head
/// of its own: the vantage group's heading names it and the groups' head holds the legend.
pub fn section(
    result: &ProbeResult,
    running: &[(AttemptKey, Option<Phase>)],
    span: Micros,
    vantage: Option<&str>,
) -> impl IntoView + use<> {
    let waterfall = layout_on(result, span);
    let h3 = result
        .runs
        .iter()
        .find(|r| r.protocol == Protocol::H3)
        .and_then(|r| r.discovery.as_ref());
    let panels = Panels {
        options: &result.options,
        running,
        h3,
        reserve: result.options.attempts().max(1),
        axis_px: DEFAULT_AXIS_PX,
    };
    let labelled_by = match vantage {
        None => "waterfalls-title".to_owned(),
        Some(name) => format!("vantage-title-{name}"),
    };
    let head = vantage
        .is_none()
        .then(|| head("waterfalls-title", "Waterfalls".to_owned()));
    let style = label_rem(&waterfall.rows).map(|rem| format!("--label-w: {rem}rem"));
    let drawn = panels.view(&waterfall);
    view! {
        <section class="waterfalls" aria-labelledby=labelled_by>
            {head}
            <WaterfallChart>
                <a class="skip-link" href="#">"Skip the chart to its table"</a>
                <div class="wf-panels" style=style>{drawn}</div>
            </WaterfallChart>
            <details class="wf-table">
                <summary>"Waterfall as a table"</summary>
                <div class="table-scroll">{table(&waterfall)}</div>
            </details>
        </section>
    }
}

/// A section of waterfalls' head: its heading `title` (with id `title_id`) beside the legend, then
/// the hidden SVG holding the fill patterns every bar refers to.
pub fn head(title_id: &'static str, title: String) -> impl IntoView + use<> {
    view! {
        <div class="section-head">
            <h2 id=title_id>{title}</h2>
            <ul class="legend" aria-label="Phases">{legend()}</ul>
        </div>
        <svg class="pattern-defs" aria-hidden="true" width="0" height="0">{patterns()}</svg>
    }
}

/// One pattern per phase (wait stays solid), referenced as `url(#pat-<phase>)`.
fn patterns() -> impl IntoView + use<> {
    view! {
        <defs>
            <pattern id="pat-dns" width="6" height="6" patternUnits="userSpaceOnUse"><circle cx="3" cy="3" r="1.3"></circle></pattern>
            <pattern id="pat-connect" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,7 L7,-1"></path></pattern>
            <pattern id="pat-proxy" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0,3 H6 M3,0 V6"></path></pattern>
            <pattern id="pat-tls" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,-1 L7,7"></path></pattern>
            <pattern id="pat-quic" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,7 L7,-1 M-1,-1 L7,7"></path></pattern>
            <pattern id="pat-send" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0,3 H6"></path></pattern>
            <pattern id="pat-wait" width="6" height="6" patternUnits="userSpaceOnUse"></pattern>
            <pattern id="pat-receive" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M3,0 V6"></path></pattern>
        </defs>
    }
}

/// The legend's items: a swatch per phase, as drawn in the bars (colour and pattern), with the
/// phase's name, and its meaning on hover.
fn legend() -> impl IntoView + use<> {
    Phase::ALL
        .into_iter()
        .map(|phase| {
            let name = phase.as_str();
            view! {
                <li title=phase.meaning()>
                    <svg class="swatch" width="18" height="12" aria-hidden="true">
                        <rect class=format!("fill phase-{name}") width="18" height="12"></rect>
                        <rect fill=format!("url(#pat-{name})") width="18" height="12"></rect>
                    </svg>
                    {name}
                </li>
            }
        })
        .collect_view()
}

/// An axis fraction as an SVG/CSS percentage.
pub fn pct(fraction: f64) -> String {
    format!("{:.4}%", fraction * 100.0)
}

/// What the panels draw beyond the layout.
pub(super) struct Panels<'a> {
    /// The probe's options: its protocols, in the order of their panels, and the limits a
    /// running phase is under.
    pub(super) options: &'a ProbeOptions,
    /// Attempts still running, with their open phase.
    pub(super) running: &'a [(AttemptKey, Option<Phase>)],
    /// What HTTP/3's discovery found, once known: the endpoint a running QUIC phase waits on.
    pub(super) h3: Option<&'a H3Discovery>,
    /// Rows expected per panel, so a panel keeps its height while they arrive.
    pub(super) reserve: u32,
    /// The axis's width in pixels, for the labels that fit it.
    pub(super) axis_px: u32,
}

impl Panels<'_> {
    /// Every protocol's panel.
    pub(super) fn view(&self, waterfall: &Waterfall) -> impl IntoView + use<> {
        self.options
            .protocols
            .iter()
            .enumerate()
            .map(|(i, protocol)| self.panel(waterfall, *protocol, i == 0))
            .collect_view()
    }

    /// One protocol's panel; `first`: its first bar is the chart's tab stop.
    fn panel(
        &self,
        waterfall: &Waterfall,
        protocol: Protocol,
        first: bool,
    ) -> impl IntoView + use<> {
        let mut rows = Vec::new();
        let mut waits = Vec::new();
        let protocol_rows = waterfall.rows.iter().filter(|r| r.protocol == protocol);
        for (i, row) in protocol_rows.enumerate() {
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
                waits.push(waiting_note(row, w));
            }
            let live = live.map(|_| waiting.as_ref());
            rows.push(attempt_row(row, live, waterfall, first && i == 0));
        }
        let skipped = waterfall
            .skipped
            .iter()
            .find(|s| s.protocol == protocol)
            .map(|skipped| {
                let lead = if skipped.stopped {
                    "Stopped: "
                } else {
                    "Not measured: "
                };
                view! { <p class="wf-skipped">{format!("{lead}{}", skipped.reason)}</p> }
            });
        view! {
            <section class="wf-panel" data-protocol=protocol.as_str() style=format!("--reserve-rows: {}", self.reserve)>
                <h3>{protocol.http_version()}</h3>
                {axis(&waterfall.ticks, f64::from(self.axis_px))}
                <ol class="wf-rows">{rows}</ol>
                {waits}
                {skipped}
            </section>
        }
    }
}

/// The time axis's labels, above the rows: every tick's, those beyond what fits `axis_px` without
/// overlapping (every tick off [`label_stride`]'s stride) `hidden`, so a page that knows its real
/// width can thin them again from the same spans.
pub fn axis(ticks: &[Tick], axis_px: f64) -> impl IntoView + use<> {
    let stride = label_stride(ticks, axis_px);
    let labels = ticks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let hidden = i % stride != 0;
            view! { <span style=format!("left: {}", pct(t.x)) hidden=hidden>{t.label.clone()}</span> }
        })
        .collect_view();
    view! {
        <div class="wf-axis" aria-hidden="true"><span></span><span class="wf-ticks">{labels}</span><span></span></div>
    }
}

/// A track's vertical grid line per tick.
pub fn grid(ticks: &[Tick]) -> impl IntoView + use<> {
    ticks
        .iter()
        .map(|t| vertical("grid", t.x, "0", "100%"))
        .collect_view()
}

/// A vertical line of class `class` at the axis fraction `x`, from `y1` to `y2`.
fn vertical(
    class: &'static str,
    x: f64,
    y1: &'static str,
    y2: &'static str,
) -> impl IntoView + use<> {
    let x = pct(x);
    view! { <line class=class x1=x.clone() x2=x y1=y1 y2=y2></line> }
}

/// A phase's two rectangles, its colour and its pattern, at the axis fractions `x` and `width`.
pub fn phase_rects(phase: Phase, x: f64, width: f64) -> impl IntoView + use<> {
    let (name, x, width) = (phase.as_str(), pct(x), pct(width));
    view! {
        <rect class="fill" x=x.clone() width=width.clone() y="4" height="16"></rect>
        <rect fill=format!("url(#pat-{name})") x=x width=width y="4" height="16"></rect>
    }
}

/// What a running attempt's open phase waits on, under its panel's rows: the attempt, the phase
/// and its elapsed time as drawn (`.wf-elapsed`, which the page ticks on), and the sentence
/// naming the limit.
fn waiting_note(row: &Row, waiting: &Waiting) -> impl IntoView + use<> {
    view! {
        <p class="wf-waiting" data-attempt=row.attempt>
            {format!("#{} {} ", row.attempt, waiting.phase.as_str())}
            <span class="wf-elapsed">{ms(waiting.elapsed(row.total_us))}</span>
            {format!(": {}", waiting.sentence)}
        </p>
    }
}

/// One attempt: label and tags, track with bars, total (or, while it runs, its open phase's
/// elapsed time, with the phase's start, limit and the axis in `data-` attributes for the page
/// to grow it by).
fn attempt_row(
    row: &Row,
    live: Option<Option<&Waiting>>,
    waterfall: &Waterfall,
    entry: bool,
) -> impl IntoView + use<> {
    let who = format!("{} attempt {}", row.protocol.http_version(), row.attempt);
    let open = match live {
        Some(Some(w)) => Some(w),
        _ => None,
    };
    let class = format!(
        "wf-row{}{}{}{}",
        if row.reused { " reused" } else { "" },
        if row.failed { " failed" } else { "" },
        if live.is_some() { " live" } else { "" },
        if row.clipped { " clipped" } else { "" },
    );
    let redirects = match row.redirects {
        0 => String::new(),
        1 => ", 1 redirect".to_string(),
        n => format!(", {n} redirects"),
    };
    let label = format!(
        "{who}{redirects}, {}{}{}: total {}",
        row.state.phrase().trim_start_matches("a "),
        if row.zero_rtt { " with 0-RTT" } else { "" },
        if row.failed { ", failed" } else { "" },
        ms(row.total_us)
    );
    let bars = row
        .bars
        .iter()
        .enumerate()
        .map(|(i, bar)| phase_bar(bar, &who, entry && i == 0))
        .collect_view();
    let hops = row
        .hop_starts
        .iter()
        .map(|x| vertical("hop", *x, "1", "23"))
        .collect_view();
    let moved = row.moved.map(|x| vertical("moved", x, "0", "24"));
    let total = match live {
        Some(Some(w)) => format!("{}…", ms(w.elapsed(row.total_us))),
        Some(None) => "running…".to_string(),
        None => ms(row.total_us),
    };
    view! {
        <li
            class=class
            data-attempt=row.attempt
            data-redirects=row.redirects
            data-open=open.map(|w| w.phase.as_str())
            data-since-us=open.map(|w| w.since.0)
            data-now-us=open.map(|_| row.total_us.0)
            data-axis-us=open.map(|_| waterfall.axis_us.0)
            data-limit-ms=open.map(|w| w.limit_ms)
        >
            <span class="wf-label">{format!("#{}", row.attempt)}{tags(row)}</span>
            <svg class="wf-track" role="group" aria-label=label>
                {grid(&waterfall.ticks)}
                {bars}
                {hops}
                {moved}
            </svg>
            <span class="wf-total">{total}</span>
        </li>
    }
}

/// The tags after an attempt's number: how its connection came about, redirects, failure.
fn tags(row: &Row) -> impl IntoView + use<> {
    row_tags(row)
        .into_iter()
        .map(|(class, title, text)| {
            let title = (!title.is_empty()).then_some(title);
            view! { <span class=format!("tag {class}") title=title>{text}</span> }
        })
        .collect_view()
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

/// A phase's name, duration and times on the axis, as a bar's label or title says them:
/// "tls 3.00 ms (from 2.40 ms to 5.40 ms)".
pub fn phase_times(phase: Phase, start: Micros, end: Micros) -> String {
    format!(
        "{} {} (from {} to {})",
        phase.as_str(),
        ms(end.saturating_sub(start)),
        ms(start),
        ms(end)
    )
}

/// One phase: coloured, patterned, focusable (a tab stop only when `tab_stop`), its exact times
/// in its label (which the tooltip and the readout show).
fn phase_bar(bar: &Bar, who: &str, tab_stop: bool) -> impl IntoView + use<> {
    let name = bar.phase.as_str();
    let hop = if bar.hop > 0 {
        format!(" hop {}", bar.hop)
    } else {
        String::new()
    };
    let label = format!(
        "{who}{hop}: {}",
        phase_times(bar.phase, bar.start_us, bar.end_us)
    );
    view! {
        <g class=format!("bar phase-{name}") data-phase=name tabindex=if tab_stop { "0" } else { "-1" } role="img" aria-label=label>
            {phase_rects(bar.phase, bar.x, bar.width)}
        </g>
    }
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
pub fn table(waterfall: &Waterfall) -> impl IntoView + use<> {
    let phases = columns(waterfall);
    let heads = phases
        .iter()
        .map(|phase| view! { <th scope="col">{phase.as_str()}</th> })
        .collect_view();
    let rows = waterfall
        .rows
        .iter()
        .map(|row| {
            let cells = phases
                .iter()
                .map(|phase| {
                    let cell = row
                        .bars
                        .iter()
                        .find(|b| b.phase == *phase)
                        .map(|b| ms(b.end_us.saturating_sub(b.start_us)))
                        .unwrap_or_else(|| "–".into());
                    view! { <td>{cell}</td> }
                })
                .collect_view();
            view! {
                <tr><th scope="row">{row.label.clone()}</th>{cells}<td>{ms(row.total_us)}</td></tr>
            }
        })
        .collect_view();
    view! {
        <table>
            <thead><tr><th scope="col">"Attempt"</th>{heads}<th scope="col">"total"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
