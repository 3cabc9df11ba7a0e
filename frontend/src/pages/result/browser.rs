//! "From the probe owner's browser": the owner's own browser measurement beside the server's, on
//! the same time axis, what a browser hides, and the finding the server computed; or, before
//! there is one, the hidden offer to measure, which the page shows only to the browser that made
//! the probe.

use super::waterfall::{DEFAULT_AXIS_PX, axis, grid, pct, phase_rects, phase_times};
use crate::pages::parts::time;
use h123_shared::Micros;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::browser::{ATTEMPTS, BrowserRow, BrowserRun, rows};
use h123_shared::format::ms;
use h123_shared::waterfall::{self, Tick};
use leptos::prelude::*;

/// The browser's group: its rows on the axis showing `span` (the one the server's waterfalls
/// share with it), labels thinned to [`DEFAULT_AXIS_PX`].
pub fn group(run: &BrowserRun, span: Micros) -> impl IntoView + use<> {
    let (axis_us, ticks) = waterfall::axis(span);
    let finding = run.finding.as_ref().map(|finding| {
        let class = if finding.implausible {
            "browser-implausible"
        } else {
            "verdict-summary browser-finding"
        };
        let lines = finding
            .lines
            .iter()
            .map(|line| view! { <li>{line.clone()}</li> })
            .collect_view();
        view! {
            <p class=class>{finding.summary.clone()}</p>
            <ul class="browser-lines">{lines}</ul>
        }
    });
    let rows = rows(run, axis_us)
        .iter()
        .map(|row| row_view(row, &ticks))
        .collect_view();
    view! {
        <section class="browser-group" aria-labelledby="browser-title">
            <h2 id="browser-title">
                "From the probe owner's browser "
                <span class="vantage-tags">{format!("{} · ", run.browser_name())}{time(run.measured_at_unix_ms)}</span>
            </h2>
            {finding}
            <div class="wf-panel browser-panel">
                {axis(&ticks, f64::from(DEFAULT_AXIS_PX))}
                <ol class="wf-rows">{rows}</ol>
            </div>
            {notes(run)}
        </section>
    }
}

/// The offer to measure from this browser too, hidden (the page shows it to the browser that
/// made the probe), with the URL and method to measure in `data-url` and `data-method`: on a
/// record that has finished, got at least one answer (an HTTP error counts: its connection can be
/// timed; a target nothing reached would fail the browser's requests alike), holds no browser
/// measurement and may still receive one at `now_unix_ms`; else nothing.
pub fn offer(record: &ProbeRecord, now_unix_ms: u64) -> Option<impl IntoView + use<>> {
    let unreached = record
        .result
        .analysis
        .as_ref()
        .is_some_and(|a| a.counts.succeeded == 0 && a.counts.http_errors == 0);
    if record.status == ProbeStatus::Running
        || record.browser.is_some()
        || record.settled(now_unix_ms)
        || unreached
    {
        return None;
    }
    Some(view! {
        <section class="measure-here" id="measure-offer" hidden data-url=record.options.url.clone() data-method=record.options.method.as_str() aria-labelledby="measure-title">
            <h2 id="measure-title">"Your browser as a vantage"</h2>
            <p aria-live="polite">{offered()}</p>
            <button type="button" class="secondary" id="measure-here" data-action="measure">"Measure from this browser too"</button>
        </section>
    })
}

/// What the offer says before anything is measured.
fn offered() -> String {
    format!(
        "Your browser requests the URL {ATTEMPTS} times and reads what it may see of each request; the timings and your browser's user agent (not your address) are stored with this result, for everyone with its link."
    )
}

/// One request's row: label and tags, track, total.
fn row_view(row: &BrowserRow, ticks: &[Tick]) -> impl IntoView + use<> {
    let class = format!(
        "wf-row{}{}{}",
        if row.reused { " reused" } else { "" },
        if row.failed { " failed" } else { "" },
        if row.hidden { " hidden-timing" } else { "" }
    );
    let protocol = row
        .protocol
        .clone()
        .map(|p| view! { <span class="tag tag-protocol">{p}</span> });
    let reused = row.reused.then(|| {
        view! { <span class="tag tag-reused" title="ran on a connection the browser already had">"reused"</span> }
    });
    let failed = row
        .failed
        .then(|| view! { <span class="tag tag-failed">"failed"</span> });
    let opaque = row.hidden.then(|| {
        view! { <rect class="opaque" data-phase="total" x="0" width=pct(row.width) y="4" height="16"></rect> }
    });
    let bars = row
        .bars
        .iter()
        .map(|bar| {
            let name = bar.phase.as_str();
            let title = phase_times(bar.phase, bar.start_us, bar.end_us);
            view! {
                <g class=format!("bar phase-{name}") data-phase=name>
                    <title>{title}</title>
                    {phase_rects(bar.phase, bar.x, bar.width)}
                </g>
            }
        })
        .collect_view();
    view! {
        <li class=class data-attempt=row.attempt>
            <span class="wf-label">{row.label.clone()}{protocol}{reused}{failed}</span>
            <svg class="wf-track" role="img" aria-label=row.description.clone()>
                <title>{row.description.clone()}</title>
                {grid(ticks)}
                {opaque}
                {bars}
            </svg>
            <span class="wf-total">{ms(row.total_us)}</span>
        </li>
    }
}

/// What a browser hides, said plainly, and what is stored.
fn notes(run: &BrowserRun) -> impl IntoView + use<> {
    let totals_only = run
        .attempts
        .iter()
        .any(|a| a.error.is_none() && !a.visible())
        .then(|| {
            view! {
                <li>
                    <strong>"Only totals:"</strong>
                    " the target sends no "<code>"Timing-Allow-Origin"</code>
                    " header, so a browser shows another site's requests to a page as a total alone: no phases, no protocol, no connection state."
                </li>
            }
        });
    view! {
        <ul class="browser-notes">
            {totals_only}
            <li>"A browser chooses its own protocol (HTTP/3 only after the site advertises it with "<code>"Alt-Svc"</code>") and may reuse a connection it already had; the server measured each protocol on purpose."</li>
            <li>"Requests went without cookies, past the browser's cache; another site's answer is opaque to this page, so its status is not known here."</li>
            <li>"Stored with this result: these timings and the owner's browser's user agent, not its address."</li>
        </ul>
    }
}
