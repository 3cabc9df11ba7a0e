//! One protocol's waterfall: axis, a row per attempt, a focusable bar per phase.

use super::pct;
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
                .map(|s| s.reason.clone())
        })
    };
    view! {
        <section
            class="wf-panel"
            data-protocol=protocol.as_str()
            style=move || format!("--reserve-rows: {}", reserve.get())
        >
            <h3>{protocol.http_version()}</h3>
            <Axis ticks />
            <ol class="wf-rows">
                {move || {
                    let ticks = ticks.get();
                    rows.get()
                        .into_iter()
                        .map(|row| {
                            let live = running
                                .with(|r| {
                                    r.iter()
                                        .find(|(k, _)| {
                                            k.protocol == row.protocol && k.attempt == row.attempt
                                                && k.hop == row.hop
                                        })
                                        .map(|(_, open)| *open)
                                });
                            view! { <AttemptRow row live ticks=ticks.clone() readout /> }
                        })
                        .collect_view()
                }}
            </ol>
            {move || skipped().map(|reason| view! { <p class="wf-skipped">"Not measured: " {reason}</p> })}
        </section>
    }
}

/// The time axis labels, above the rows.
#[component]
fn Axis(ticks: Memo<Vec<Tick>>) -> impl IntoView {
    view! {
        <div class="wf-axis" aria-hidden="true">
            <span></span>
            <span class="wf-ticks">
                {move || {
                    let ticks = ticks.get();
                    let stride = label_stride(ticks.len().saturating_sub(1));
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
) -> impl IntoView {
    let who = match row.hop {
        0 => format!("{} attempt {}", row.protocol.http_version(), row.attempt),
        hop => format!(
            "{} attempt {} redirect hop {hop}",
            row.protocol.http_version(),
            row.attempt
        ),
    };
    let track_label = format!(
        "{who}{}{}: total {}",
        if row.reused {
            ", reused connection"
        } else {
            ", new connection"
        },
        if row.failed { ", failed" } else { "" },
        ms(row.total_us)
    );
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
            data-attempt=row.attempt
            data-hop=row.hop
        >
            <span class="wf-label">
                {format!("#{}", row.attempt)}
                {(row.hop > 0).then(|| format!(" hop {}", row.hop))}
                {row.reused.then(|| view! { <span class="tag tag-reused" title="ran on a reused connection">"reused"</span> })}
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
                    .map(|bar| view! { <PhaseBar bar who=who.clone() readout /> })
                    .collect_view()}
            </svg>
            <span class="wf-total">{status.unwrap_or_else(|| ms(row.total_us))}</span>
        </li>
    }
}

/// One phase: coloured, patterned, focusable, with its exact times.
#[component]
fn PhaseBar(bar: Bar, who: String, readout: RwSignal<Option<String>>) -> impl IntoView {
    let name = bar.phase.as_str();
    let text = format!(
        "{who}: {name} {} (from {} to {})",
        ms(bar.end_us.saturating_sub(bar.start_us)),
        ms(bar.start_us),
        ms(bar.end_us)
    );
    let show = {
        let text = text.clone();
        move || readout.set(Some(text.clone()))
    };
    let show_on_focus = show.clone();
    view! {
        <g
            class=format!("bar phase-{name}")
            data-phase=name
            tabindex="0"
            role="img"
            aria-label=text
            on:mouseenter=move |_| show()
            on:focus=move |_| show_on_focus()
            on:mouseleave=move |_| readout.set(None)
            on:blur=move |_| readout.set(None)
        >
            <rect class="fill" x=pct(bar.x) width=pct(bar.width) y="4" height="16"></rect>
            <rect fill=format!("url(#pat-{name})") x=pct(bar.x) width=pct(bar.width) y="4" height="16"></rect>
        </g>
    }
}
