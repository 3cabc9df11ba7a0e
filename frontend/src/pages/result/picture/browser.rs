//! The owner's browser measurement in the picture: under the server's rows, on their axis, a
//! heading, a row per request (its phases, or one grey bar when the target hid them) and the
//! finding.

use super::{BAR_H, FAILED, INK, PLOT_W, PLOT_X, ROW_H, WIDTH, line, phase_bar};
use crate::pages::parts::at;
use h123_shared::Micros;
use h123_shared::browser::{BrowserRun, rows};
use h123_shared::format::ms;
use leptos::prelude::*;

/// The height of the group's heading and rows (its finding is a line under the plot).
pub fn rows_height(run: &BrowserRun) -> f64 {
    ROW_H * (run.attempts.len() + 1) as f64
}

/// `run` from `top` down on the axis ending at `axis_us`, its finding as the first line under
/// the plot; with the `y` of the next line.
pub fn group(run: &BrowserRun, axis_us: Micros, top: f64) -> (impl IntoView + use<>, f64) {
    let mut y = top + ROW_H;
    let mut drawn = Vec::new();
    for row in rows(run, axis_us) {
        let text_y = y + ROW_H / 2.0 + 4.0;
        let colour = if row.failed { FAILED } else { INK };
        let label = match (&row.protocol, row.reused) {
            (Some(p), true) => format!("{} {p} (reused)", row.label),
            (Some(p), false) => format!("{} {p}", row.label),
            (None, _) => row.label.clone(),
        };
        let hidden = row.hidden.then(|| {
            view! {
                <rect x=PLOT_X y=at(y + (ROW_H - BAR_H) / 2.0) width=at((row.width * PLOT_W).max(1.0)) height=BAR_H fill="#9ca3af" rx="2"></rect>
            }
        });
        let bars = row
            .bars
            .iter()
            .map(|bar| phase_bar(bar, y, text_y))
            .collect_view();
        drawn.push(view! {
            <g class="browser-row">
                <title>{row.description.clone()}</title>
                <text x="16" y=text_y fill=colour>{format!("browser {label}")}</text>
                {hidden}
                {bars}
                <text x=WIDTH - 16.0 y=text_y text-anchor="end" fill=colour font-weight="bold">{ms(row.total_us)}</text>
            </g>
        });
        y += ROW_H;
    }
    let finding = run
        .finding
        .as_ref()
        .map(|finding| line(&finding.summary, y + 22.0, INK, false));
    let below = y + 22.0 + if finding.is_some() { 20.0 } else { 0.0 };
    let heading = format!("From the probe owner's browser · {}", run.browser_name());
    let view = view! {
        <line x1="16" y1=top x2=WIDTH - 16.0 y2=top stroke="#9ca3af"></line>
        <text x="16" y=top + ROW_H / 2.0 + 4.0 font-weight="bold" fill=INK>{heading}</text>
        {drawn}
        {finding}
    };
    (view, below)
}
