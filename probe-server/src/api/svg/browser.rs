//! The owner's browser measurement in the picture: under the server's rows, on their axis, a
//! heading, a row per request (its phases, or one grey bar when the target hid them) and the
//! finding.

use super::{PLOT_W, PLOT_X, ROW_H, WIDTH, line, phase_bar};
use h123_shared::Micros;
use h123_shared::browser::{BrowserRun, rows};
use h123_shared::format::ms;
use h123_shared::markup::escape;
use std::fmt::Write as _;

/// The height of the group's heading and rows (its finding is a line under the plot).
pub fn rows_height(run: &BrowserRun) -> f64 {
    ROW_H * (run.attempts.len() + 1) as f64
}

/// Draws `run` from `top` down on the axis ending at `axis_us`, its finding as the first line
/// under the plot; returns the `y` of the next line.
pub fn draw(svg: &mut String, run: &BrowserRun, axis_us: Micros, top: f64) -> f64 {
    let _ = write!(
        svg,
        r##"<line x1="16" y1="{top}" x2="{x2}" y2="{top}" stroke="#9ca3af"/><text x="16" y="{y}" font-weight="bold" fill="#111827">From the probe owner's browser · {}</text>"##,
        escape(&run.browser_name()),
        x2 = WIDTH - 16.0,
        y = top + ROW_H / 2.0 + 4.0
    );
    let mut y = top + ROW_H;
    for row in rows(run, axis_us) {
        let text_y = y + ROW_H / 2.0 + 4.0;
        let colour = if row.failed { "#b91c1c" } else { "#111827" };
        let label = match (&row.protocol, row.reused) {
            (Some(p), true) => format!("{} {p} (reused)", row.label),
            (Some(p), false) => format!("{} {p}", row.label),
            (None, _) => row.label.clone(),
        };
        let _ = write!(
            svg,
            r##"<g class="browser-row"><title>{}</title><text x="16" y="{text_y}" fill="{colour}">browser {}</text>"##,
            escape(&row.description),
            escape(&label)
        );
        if row.hidden {
            let _ = write!(
                svg,
                r##"<rect x="{PLOT_X}" y="{by:.1}" width="{w:.1}" height="{h}" fill="#9ca3af" rx="2"/>"##,
                by = y + (ROW_H - super::BAR_H) / 2.0,
                w = (row.width * PLOT_W).max(1.0),
                h = super::BAR_H
            );
        }
        for bar in &row.bars {
            phase_bar(svg, bar, y, text_y);
        }
        let _ = write!(
            svg,
            r##"<text x="{x}" y="{text_y}" text-anchor="end" fill="{colour}" font-weight="bold">{}</text></g>"##,
            escape(&ms(row.total_us)),
            x = WIDTH - 16.0
        );
        y += ROW_H;
    }
    match &run.finding {
        Some(finding) => line(svg, &finding.summary, y + 22.0, "#111827", false),
        None => y + 22.0,
    }
}
