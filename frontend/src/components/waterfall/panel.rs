//! One protocol's waterfall: axis, a row per attempt, a focusable bar per phase.

use super::{pct, tooltip};
use h123_shared::chain::ConnState;
use h123_shared::format::ms;
use h123_shared::live::AttemptKey;
use h123_shared::waterfall::{Bar, Row, Tick, Waterfall, label_stride};
use h123_shared::{Phase, Protocol};
use leptos::prelude::*;

/// The panel of one protocol.
#[component]
pub fn Panel(
    /// The protocol shown.
    protocol: Protocol,
    /// The whole layout (rows of every protocol).
    waterfall: Memo<Waterfall>,
    /// Attempts still running.
    running: Memo<Vec<(AttemptKey, Option<Phase>)>>,
    /// Where the hovered or focused bar's values are shown.
    readout: RwSignal<Option<String>>,
    /// Rows expected, so the panel keeps its height while they arrive.
    reserve: Memo<u32>,
    /// The axis's width in pixels.
    axis_px: RwSignal<u32>,
    /// Whether this is the chart's first panel, whose first bar is the chart's one tab stop.
    first: bool,
) -> impl IntoView {
    let rows = Memo::new(move |_| {
        waterfall.with(|w| {
            w.rows
                .iter()
                .filter(|r| r.protocol == protocol)
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    let ticks = Memo::new(move |_| waterfall.with(|w| w.ticks.clone()));
    let skipped = move || {
        waterfall.with(|w| {
            w.skipped
                .iter()
                .find(|s| s.protocol == protocol)
                .map(|s| (s.stopped, s.reason.clone()))
        })
    };
    view! {
        <section
            class="wf-panel"
            data-protocol=protocol.as_str()
            style=move || format!("--reserve-rows: {}", reserve.get())
        >
            <h3>{protocol.http_version()}</h3>
            <Axis ticks axis_px />
            <ol class="wf-rows">
                {move || {
                    let ticks = ticks.get();
                    rows.get()
                        .into_iter()
                        .enumerate()
                        .map(|(i, row)| {
                            let live = running
                                .with(|r| {
                                    r.iter()
                                        .find(|(k, _)| {
                                            k.protocol == row.protocol && k.attempt == row.attempt
                                        })
                                        .map(|(_, open)| *open)
                                });
                            let entry = first && i == 0;
                            view! { <AttemptRow row live ticks=ticks.clone() readout entry /> }
                        })
                        .collect_view()
                }}
            </ol>
            {move || {
                skipped()
                    .map(|(stopped, reason)| {
                        let lead = if stopped { "Stopped: " } else { "Not measured: " };
                        view! { <p class="wf-skipped">{lead} {reason}</p> }
                    })
            }}
        </section>
    }
}

/// The time axis labels, above the rows: as many as fit the axis's width without overlapping.
#[component]
fn Axis(ticks: Memo<Vec<Tick>>, axis_px: RwSignal<u32>) -> impl IntoView {
    view! {
        <div class="wf-axis" aria-hidden="true">
            <span></span>
            <span class="wf-ticks">
                {move || {
                    let ticks = ticks.get();
                    let stride = label_stride(&ticks, f64::from(axis_px.get()));
                    ticks
                        .into_iter()
                        .step_by(stride)
                        .map(|t| view! { <span style=format!("left: {}", pct(t.x))>{t.label}</span> })
                        .collect_view()
                }}
            </span>
            <span></span>
        </div>
    }
}

/// One attempt: label, track with bars, total.
#[component]
fn AttemptRow(
    row: Row,
    /// `Some(open phase)` while the attempt runs.
    live: Option<Option<Phase>>,
    ticks: Vec<Tick>,
    readout: RwSignal<Option<String>>,
    /// Whether its first bar is the chart's tab stop.
    entry: bool,
) -> impl IntoView {
    let who = format!("{} attempt {}", row.protocol.http_version(), row.attempt);
    let redirects = match row.redirects {
        0 => String::new(),
        1 => ", 1 redirect".to_string(),
        n => format!(", {n} redirects"),
    };
    let track_label = format!(
        "{who}{redirects}, {}{}{}: total {}",
        row.state.phrase().trim_start_matches("a "),
        if row.zero_rtt { " with 0-RTT" } else { "" },
        if row.failed { ", failed" } else { "" },
        ms(row.total_us)
    );
    let resumed = row.state == ConnState::Resumed;
    let status = match live {
        Some(Some(phase)) => Some(format!("{}…", phase.as_str())),
        Some(None) => Some("running…".to_string()),
        None => None,
    };
    view! {
        <li
            class="wf-row"
            class:reused=row.reused
            class:failed=row.failed
            class:live=live.is_some()
            class:clipped=row.clipped
            data-attempt=row.attempt
            data-redirects=row.redirects
        >
            <span class="wf-label">
                {format!("#{}", row.attempt)}
                {row.reused.then(|| view! { <span class="tag tag-reused" title="ran on a reused connection">"reused"</span> })}
                {(resumed && !row.zero_rtt).then(|| view! { <span class="tag tag-resumed" title="a new connection that resumed the TLS session">"resumed"</span> })}
                {row.zero_rtt.then(|| view! { <span class="tag tag-resumed" title="resumed, and the request went in 0-RTT data">"0-RTT"</span> })}
                {(row.redirects > 0).then(|| view! { <span class="tag tag-redirect" title="redirect hops, end to end">{format!("{}↪", row.redirects)}</span> })}
                {row.moved.is_some().then(|| view! { <span class="tag tag-redirect" title="the connection moved to a new address mid-response (the dashed line)">"moved"</span> })}
                {row.failed.then(|| view! { <span class="tag tag-failed">"failed"</span> })}
            </span>
            <svg class="wf-track" role="group" aria-label=track_label>
                {ticks
                    .iter()
                    .map(|t| {
                        view! { <line class="grid" x1=pct(t.x) x2=pct(t.x) y1="0" y2="100%"></line> }
                    })
                    .collect_view()}
                {row
                    .bars
                    .into_iter()
                    .enumerate()
                    .map(|(i, bar)| {
                        let tab_stop = entry && i == 0;
                        view! { <PhaseBar bar who=who.clone() readout tab_stop /> }
                    })
                    .collect_view()}
                {row
                    .hop_starts
                    .iter()
                    .map(|x| view! { <line class="hop" x1=pct(*x) x2=pct(*x) y1="1" y2="23"></line> })
                    .collect_view()}
                {row.moved.map(|x| view! { <line class="moved" x1=pct(x) x2=pct(x) y1="0" y2="24"></line> })}
            </svg>
            <span class="wf-total">{status.unwrap_or_else(|| ms(row.total_us))}</span>
        </li>
    }
}

/// One phase: coloured, patterned, focusable (a tab stop only when `tab_stop`; the arrow keys
/// reach the others), with its exact times in a tooltip.
#[component]
fn PhaseBar(
    bar: Bar,
    who: String,
    readout: RwSignal<Option<String>>,
    tab_stop: bool,
) -> impl IntoView {
    let name = bar.phase.as_str();
    let hop = if bar.hop > 0 {
        format!(" hop {}", bar.hop)
    } else {
        String::new()
    };
    let text = format!(
        "{who}{hop}: {name} {} (from {} to {})",
        ms(bar.end_us.saturating_sub(bar.start_us)),
        ms(bar.start_us),
        ms(bar.end_us)
    );
    let show = {
        let text = text.clone();
        move |ev: &web_sys::Event| {
            tooltip::show(ev, &text);
            readout.set(Some(text.clone()));
        }
    };
    let show_on_focus = show.clone();
    let hide = move |ev: &web_sys::Event| {
        tooltip::hide(ev);
        readout.set(None);
    };
    view! {
        <g
            class=format!("bar phase-{name}")
            data-phase=name
            tabindex=if tab_stop { "0" } else { "-1" }
            role="img"
            aria-label=text
            on:mouseenter=move |ev| show(&ev)
            on:focus=move |ev| show_on_focus(&ev)
            on:mouseleave=move |ev| hide(&ev)
            on:blur=move |ev| hide(&ev)
        >
            <rect class="fill" x=pct(bar.x) width=pct(bar.width) y="4" height="16"></rect>
            <rect fill=format!("url(#pat-{name})") x=pct(bar.x) width=pct(bar.width) y="4" height="16"></rect>
        </g>
    }
}
