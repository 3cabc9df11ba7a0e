//! The server-rendered waterfall: `shared::waterfall::layout` drawn as a
//! self-contained SVG that reads well when pasted into a chat or an issue.
//! A record measured from several vantages is drawn by [`vantages`]: a
//! labelled group per vantage on one time axis. The owner's browser measurement, when there is
//! one, is drawn under the server's rows on their axis ([`browser`]). [`preview`] draws the
//! same rows at the size of a link preview's picture.

mod browser;
pub mod preview;
mod vantages;

use h123_shared::api::ProbeRecord;
use h123_shared::format::ms;
use h123_shared::markup::escape;
use h123_shared::palette;
use h123_shared::waterfall::{Bar, Row, SkippedRun, Tick, fitted_span, layout_on};
use h123_shared::{Phase, Protocol};
use std::fmt::Write as _;

const WIDTH: f64 = 960.0;
const PLOT_X: f64 = 200.0;
const PLOT_W: f64 = 650.0;
const ROW_H: f64 = 26.0;
const BAR_H: f64 = 16.0;
const TOP: f64 = 92.0;

/// `text` cut to `max` characters, the last one an ellipsis when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Draws `record` as an SVG document: its vantages as groups when it has
/// runs per vantage, else its one result.
pub fn render(record: &ProbeRecord) -> String {
    if !record.vantages.is_empty() {
        return vantages::render(record);
    }
    // The owner's browser measurement shares the server's axis.
    let browser = record.browser.as_ref();
    let span =
        fitted_span([&record.result]).max(browser.map_or(h123_shared::Micros(0), |b| b.span()));
    let waterfall = layout_on(&record.result, span);
    let rows = waterfall.rows.len();
    let skipped = waterfall.skipped.len();
    let server_bottom = TOP + ROW_H * rows.max(1) as f64;
    let plot_bottom = server_bottom + browser.map_or(0.0, browser::rows_height);
    let verdict = record.result.analysis.as_ref();
    let network = h123_shared::network::lines(&record.result);
    let height = plot_bottom
        + 24.0
        + 20.0
            * (skipped
                + network.len()
                + usize::from(verdict.is_some())
                + usize::from(browser.is_some())) as f64
        + 48.0;
    let mut svg = String::with_capacity(4096 + rows * 600);
    let status = match (record.status, verdict) {
        (h123_shared::api::ProbeStatus::Done, Some(a)) => a.outcome.label(),
        (status, _) => status.as_str(),
    };
    open(
        &mut svg,
        record,
        height,
        &format!("{rows} attempt(s) · {status}"),
    );
    axis(&mut svg, &waterfall.ticks, plot_bottom);
    if rows == 0 {
        let _ = write!(
            svg,
            r##"<text x="{PLOT_X}" y="{y}" fill="#6b7280">no attempt finished yet</text>"##,
            y = TOP + 17.0
        );
    }
    draw_rows(&mut svg, &waterfall.rows, TOP);
    let mut y = plot_bottom + 22.0;
    if let Some(run) = browser {
        y = browser::draw(&mut svg, run, waterfall.axis_us, server_bottom);
    }
    if let Some(a) = verdict {
        y = line(&mut svg, &a.verdict.summary, y, "#111827", true);
    }
    for text in &network {
        y = line(&mut svg, text, y, "#4b5563", false);
    }
    let y = skipped_lines(&mut svg, &waterfall.skipped, y);
    legend(&mut svg, y + 6.0);
    svg.push_str("</svg>\n");
    svg
}

/// Opens the document `height` high: its title, background, heading (the
/// URL) and the line under it (the protocols, `what`, the probe's id).
fn open(svg: &mut String, record: &ProbeRecord, height: f64, what: &str) {
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    );
    let _ = write!(
        svg,
        r##"<title>h123 waterfall of {url}</title><rect width="100%" height="100%" fill="#ffffff"/>"##,
        url = escape(&shorten(&record.options.url, 200))
    );
    let _ = write!(
        svg,
        r##"<text x="16" y="26" font-size="16" font-weight="bold" fill="#111827">h123 · {}</text>"##,
        escape(&shorten(&record.options.url, 90))
    );
    let _ = write!(
        svg,
        r##"<text x="16" y="46" fill="#4b5563">{} · {} · probe {}</text>"##,
        escape(&Protocol::versions(&record.options.protocols)),
        escape(what),
        escape(&record.id)
    );
}

/// The time axis: a label and a grid line down to `plot_bottom` per tick,
/// and the totals column's heading.
fn axis(svg: &mut String, ticks: &[Tick], plot_bottom: f64) {
    for tick in ticks {
        let x = PLOT_X + tick.x * PLOT_W;
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{y1}" x2="{x:.1}" y2="{plot_bottom}" stroke="#e5e7eb"/><text x="{x:.1}" y="{ty}" text-anchor="middle" fill="#6b7280">{}</text>"##,
            escape(&tick.label),
            y1 = TOP - 8.0,
            ty = TOP - 14.0
        );
    }
    let _ = write!(
        svg,
        r##"<text x="{x}" y="{y}" text-anchor="end" fill="#6b7280">total</text>"##,
        x = WIDTH - 16.0,
        y = TOP - 14.0
    );
}

/// Rows of one result from `top` down, a line between protocols.
fn draw_rows(svg: &mut String, rows: &[Row], top: f64) {
    let mut previous: Option<Protocol> = None;
    for (i, row) in rows.iter().enumerate() {
        let y = top + ROW_H * i as f64;
        if previous.is_some_and(|p| p != row.protocol) {
            let _ = write!(
                svg,
                r##"<line x1="16" y1="{y}" x2="{x2}" y2="{y}" stroke="#9ca3af"/>"##,
                x2 = WIDTH - 16.0
            );
        }
        previous = Some(row.protocol);
        draw_row(svg, row, y);
    }
}

/// `text` as a line at `y` (cut to 150 characters, the whole as its
/// tooltip); returns the `y` under it.
fn line(svg: &mut String, text: &str, y: f64, fill: &str, bold: bool) -> f64 {
    let weight = if bold { r#" font-weight="bold""# } else { "" };
    let _ = write!(
        svg,
        r#"<text x="16" y="{y}" fill="{fill}"{weight}>{}<title>{}</title></text>"#,
        escape(&shorten(text, 150)),
        escape(text)
    );
    y + 20.0
}

/// A line per protocol that was not measured or stopped early, from `y`
/// down; returns the `y` under them.
fn skipped_lines(svg: &mut String, skipped: &[SkippedRun], mut y: f64) -> f64 {
    for skip in skipped {
        let _ = write!(
            svg,
            r##"<text x="16" y="{y}" fill="#92400e">{} {}: {}</text>"##,
            skip.protocol.http_version(),
            if skip.stopped {
                "stopped"
            } else {
                "not measured"
            },
            escape(&shorten(&skip.reason, 120))
        );
        y += 20.0;
    }
    y
}

fn draw_row(svg: &mut String, row: &Row, y: f64) {
    let text_y = y + ROW_H / 2.0 + 4.0;
    let label_colour = if row.failed { "#b91c1c" } else { "#111827" };
    let _ = write!(
        svg,
        r##"<text x="16" y="{text_y}" fill="{label_colour}">{}</text>"##,
        escape(&shorten(&row.label, 28))
    );
    let bar_y = y + (ROW_H - BAR_H) / 2.0;
    for bar in &row.bars {
        phase_bar(svg, bar, y, text_y);
    }
    for start in &row.hop_starts {
        let x = PLOT_X + start * PLOT_W;
        let _ = write!(
            svg,
            r##"<line class="hop" x1="{x:.1}" y1="{y1:.1}" x2="{x:.1}" y2="{y2:.1}" stroke="#111827" stroke-dasharray="2 2"><title>redirect</title></line>"##,
            y1 = bar_y - 3.0,
            y2 = bar_y + BAR_H + 3.0
        );
    }
    if let Some(moved) = row.moved {
        let x = PLOT_X + moved * PLOT_W;
        let _ = write!(
            svg,
            r##"<line class="moved" x1="{x:.1}" y1="{y1:.1}" x2="{x:.1}" y2="{y2:.1}" stroke="#b42318" stroke-width="2" stroke-dasharray="4 2"><title>the connection moved to a new address</title></line>"##,
            y1 = bar_y - 4.0,
            y2 = bar_y + BAR_H + 4.0
        );
    }
    for mark in &row.marks {
        let _ = write!(
            svg,
            r##"<rect x="{x:.1}" y="{my:.1}" width="{w:.1}" height="3" fill="#052e16"><title>{}</title></rect>"##,
            escape(&mark.name),
            x = PLOT_X + mark.x * PLOT_W,
            w = (mark.width * PLOT_W).max(1.0),
            my = bar_y + BAR_H - 3.0
        );
    }
    let total = if row.failed {
        format!("{} ✗", ms(row.total_us))
    } else {
        ms(row.total_us)
    };
    let _ = write!(
        svg,
        r##"<text x="{x}" y="{text_y}" text-anchor="end" fill="{label_colour}" font-weight="bold">{}</text>"##,
        escape(&total),
        x = WIDTH - 16.0
    );
}

/// One phase of a row at `y`: its bar, and its name and time inside it when they fit.
fn phase_bar(svg: &mut String, bar: &Bar, y: f64, text_y: f64) {
    let bar_y = y + (ROW_H - BAR_H) / 2.0;
    let x = PLOT_X + bar.x * PLOT_W;
    let w = (bar.width * PLOT_W).max(1.0);
    let duration = bar.end_us.saturating_sub(bar.start_us);
    let _ = write!(
        svg,
        r#"<rect x="{x:.1}" y="{bar_y:.1}" width="{w:.1}" height="{BAR_H}" fill="{}" rx="2"><title>{} {}</title></rect>"#,
        palette::fill(bar.phase),
        bar.phase.as_str(),
        escape(&ms(duration))
    );
    let label = format!("{} {}", bar.phase.as_str(), ms(duration));
    if w >= 7.0 * label.len() as f64 {
        let _ = write!(
            svg,
            r##"<text x="{cx:.1}" y="{text_y}" text-anchor="middle" fill="{}" font-size="11">{}</text>"##,
            palette::ink(bar.phase),
            escape(&label),
            cx = x + w / 2.0
        );
    }
}

fn legend(svg: &mut String, y: f64) {
    let mut x = 16.0;
    for phase in Phase::ALL {
        let _ = write!(
            svg,
            r##"<rect x="{x}" y="{y}" width="12" height="12" fill="{}" rx="2"/><text x="{tx}" y="{ty}" fill="#374151">{}</text>"##,
            palette::fill(phase),
            phase.as_str(),
            tx = x + 16.0,
            ty = y + 10.0
        );
        x += 22.0 + 8.0 * phase.as_str().len() as f64 + 14.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::api::ProbeStatus;
    use h123_shared::{ProbeOptions, ProbeResult};

    #[test]
    fn text_is_escaped_and_empty_results_still_draw() {
        let options = ProbeOptions {
            url: "https://e.com/?a=<script>&b=\"x\"".into(),
            ..ProbeOptions::default()
        };
        let record = ProbeRecord {
            id: "abc".into(),
            status: ProbeStatus::Running,
            created_at_unix_ms: 0,
            result: ProbeResult::empty(options.clone(), 0, None),
            options,
            queued_ms: None,
            cancel_reason: None,
            vantages: Vec::new(),
            browser: None,
            monitor: None,
        };
        let svg = render(&record);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;&amp;b=&quot;x&quot;"));
        assert!(svg.contains("no attempt finished yet"));
        assert!(svg.trim_end().ends_with("</svg>"));

        // Finished: the outcome in the header line and the verdict under the plot.
        let mut done = record.clone();
        done.status = ProbeStatus::Done;
        done.result = h123_shared::analysis::analyzed(done.result);
        let svg = render(&done);
        assert!(svg.contains("· failed · probe abc"), "{svg}");
        assert!(svg.contains("Nothing was measured."), "{svg}");
        assert!(
            !svg.contains("Emulated network"),
            "the real path says nothing"
        );

        // Through an emulated network: its lines under the verdict, as on the page.
        done.result.options.network = h123_shared::network::NetworkProfile::named("4g");
        let svg = render(&done);
        assert!(
            svg.contains("Emulated network: 4g (rtt=170ms,down=9mbit,up=9mbit)"),
            "{svg}"
        );
    }

    #[test]
    fn phases_have_the_web_pages_colours() {
        let css = include_str!("../../../frontend/site/style.css");
        let light = &css[css.find(":root {").unwrap()..];
        let light = &light[..light.find('}').unwrap()];
        for phase in Phase::ALL {
            let declaration = format!("--{}: {};", phase.as_str(), palette::fill(phase));
            assert!(
                light.contains(&declaration),
                "style.css lacks {declaration}"
            );
        }
    }
}
