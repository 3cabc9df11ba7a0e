//! "From the probe owner's browser" as markup: the owner's own browser measurement beside the server's, on
//! the same time axis, what a browser hides, and the finding the server computed; or, before
//! there is one, the hidden offer to measure, which the page shows only to the browser that made
//! the probe.

use super::waterfall::{DEFAULT_AXIS_PX, axis, grid, pct, phase_rects};
use super::{element, escape, time};
use crate::Micros;
use crate::api::{ProbeRecord, ProbeStatus};
use crate::browser::{ATTEMPTS, BrowserRow, BrowserRun, rows};
use crate::format::ms;
use crate::waterfall::{self, Tick};
use std::fmt::Write as _;

/// The browser's group: its rows on the axis showing `span` (the one the server's waterfalls
/// share with it), labels thinned to [`DEFAULT_AXIS_PX`].
pub fn group(run: &BrowserRun, span: Micros) -> String {
    let (axis_us, ticks) = waterfall::axis(span);
    let mut out = String::from(
        r#"<section class="browser-group" aria-labelledby="browser-title"><h2 id="browser-title">From the probe owner's browser"#,
    );
    let _ = write!(
        out,
        r#" <span class="vantage-tags">{} · {}</span></h2>"#,
        escape(&run.browser_name()),
        time(run.measured_at_unix_ms)
    );
    if let Some(finding) = &run.finding {
        let class = if finding.implausible {
            r#" class="browser-implausible""#
        } else {
            r#" class="verdict-summary browser-finding""#
        };
        element(&mut out, "p", class, &finding.summary);
        out.push_str(r#"<ul class="browser-lines">"#);
        for line in &finding.lines {
            element(&mut out, "li", "", line);
        }
        out.push_str("</ul>");
    }
    out.push_str(r#"<div class="wf-panel browser-panel">"#);
    axis(&mut out, &ticks, f64::from(DEFAULT_AXIS_PX));
    out.push_str(r#"<ol class="wf-rows">"#);
    for row in rows(run, axis_us) {
        row_markup(&mut out, &row, &ticks);
    }
    out.push_str("</ol></div>");
    notes(&mut out, run);
    out.push_str("</section>");
    out
}

/// The offer to measure from this browser too, hidden (the page shows it to the browser that
/// made the probe), with the URL and method to measure in `data-url` and `data-method`: on a
/// record that has finished, got at least one answer (an HTTP error counts: its connection can be
/// timed; a target nothing reached would fail the browser's requests alike), holds no browser
/// measurement and may still receive one at `now_unix_ms`; else nothing.
pub fn offer(record: &ProbeRecord, now_unix_ms: u64) -> Option<String> {
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
    let mut out = format!(
        r#"<section class="measure-here" id="measure-offer" hidden data-url="{}" data-method="{}" aria-labelledby="measure-title"><h2 id="measure-title">Your browser as a vantage</h2>"#,
        escape(&record.options.url),
        record.options.method.as_str()
    );
    element(&mut out, "p", r#" aria-live="polite""#, &offered());
    out.push_str(r#"<button type="button" class="secondary" id="measure-here" data-action="measure">Measure from this browser too</button></section>"#);
    Some(out)
}

/// What the offer says before anything is measured.
fn offered() -> String {
    format!(
        "Your browser requests the URL {ATTEMPTS} times and reads what it may see of each request; the timings and your browser's user agent (not your address) are stored with this result, for everyone with its link."
    )
}

/// One request's row: label and tags, track, total.
fn row_markup(out: &mut String, row: &BrowserRow, ticks: &[Tick]) {
    let class = format!(
        "wf-row{}{}{}",
        if row.reused { " reused" } else { "" },
        if row.failed { " failed" } else { "" },
        if row.hidden { " hidden-timing" } else { "" }
    );
    let _ = write!(
        out,
        r#"<li class="{class}" data-attempt="{}"><span class="wf-label">{}"#,
        row.attempt,
        escape(&row.label)
    );
    if let Some(p) = &row.protocol {
        element(out, "span", r#" class="tag tag-protocol""#, p);
    }
    if row.reused {
        out.push_str(r#"<span class="tag tag-reused" title="ran on a connection the browser already had">reused</span>"#);
    }
    if row.failed {
        out.push_str(r#"<span class="tag tag-failed">failed</span>"#);
    }
    let description = escape(&row.description);
    let _ = write!(
        out,
        r#"</span><svg class="wf-track" role="img" aria-label="{description}"><title>{description}</title>"#
    );
    grid(out, ticks);
    if row.hidden {
        let _ = write!(
            out,
            r#"<rect class="opaque" data-phase="total" x="0" width="{}" y="4" height="16"></rect>"#,
            pct(row.width)
        );
    }
    for bar in &row.bars {
        let name = bar.phase.as_str();
        let _ = write!(
            out,
            r#"<g class="bar phase-{name}" data-phase="{name}"><title>{name} {} (from {} to {})</title>"#,
            ms(bar.end_us.saturating_sub(bar.start_us)),
            ms(bar.start_us),
            ms(bar.end_us)
        );
        phase_rects(out, bar.phase, bar.x, bar.width);
        out.push_str("</g>");
    }
    let _ = write!(
        out,
        r#"</svg><span class="wf-total">{}</span></li>"#,
        ms(row.total_us)
    );
}

/// What a browser hides, said plainly, and what is stored.
fn notes(out: &mut String, run: &BrowserRun) {
    out.push_str(r#"<ul class="browser-notes">"#);
    if run
        .attempts
        .iter()
        .any(|a| a.error.is_none() && !a.visible())
    {
        out.push_str("<li><strong>Only totals:</strong> the target sends no <code>Timing-Allow-Origin</code> header, so a browser shows another site's requests to a page as a total alone: no phases, no protocol, no connection state.</li>");
    }
    out.push_str("<li>A browser chooses its own protocol (HTTP/3 only after the site advertises it with <code>Alt-Svc</code>) and may reuse a connection it already had; the server measured each protocol on purpose.</li>");
    out.push_str("<li>Requests went without cookies, past the browser's cache; another site's answer is opaque to this page, so its status is not known here.</li>");
    out.push_str("<li>Stored with this result: these timings and the owner's browser's user agent, not its address.</li></ul>");
}
