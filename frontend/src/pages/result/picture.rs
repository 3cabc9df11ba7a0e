//! The waterfall as a picture: `shared::waterfall::layout` drawn as a self-contained SVG that
//! reads well when pasted into a chat or an issue (`GET /api/v1/probes/{id}/waterfall.svg`,
//! drawn by [`crate::pages::render_picture`]). A record measured from several vantages is drawn
//! by [`vantages`]: a labelled group per vantage on one time axis. The owner's browser
//! measurement, when there is one, is drawn under the server's rows on their axis ([`browser`]).
//! [`preview`] draws the same rows at the size of a link preview's picture.

mod browser;
pub mod preview;
mod vantages;

use crate::pages::parts::at;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::format::{ms, shorten};
use h123_shared::palette;
use h123_shared::waterfall::{Bar, Row, SkippedRun, Tick, fitted_span, layout_on};
use h123_shared::{Micros, Phase, Protocol};
use leptos::prelude::*;

const WIDTH: f64 = 960.0;
const PLOT_X: f64 = 200.0;
const PLOT_W: f64 = 650.0;
const ROW_H: f64 = 26.0;
const BAR_H: f64 = 16.0;
const TOP: f64 = 92.0;
/// The colour of a failed row's words.
const FAILED: &str = "#b91c1c";
/// The colour of headings and figures.
const INK: &str = "#111827";

/// `record` as a picture: its vantages as groups when it has runs per vantage, else its one
/// result.
pub fn picture(record: &ProbeRecord) -> AnyView {
    if !record.vantages.is_empty() {
        return vantages::picture(record).into_any();
    }
    // The owner's browser measurement shares the server's axis.
    let browser = record.browser.as_ref();
    let span = fitted_span([&record.result]).max(browser.map_or(Micros(0), |b| b.span()));
    let waterfall = layout_on(&record.result, span);
    let rows = waterfall.rows.len();
    let server_bottom = TOP + ROW_H * rows.max(1) as f64;
    let plot_bottom = server_bottom + browser.map_or(0.0, browser::rows_height);
    let verdict = record.result.analysis.as_ref();
    let status = match (record.status, verdict) {
        (ProbeStatus::Done, Some(a)) => a.outcome.label(),
        (status, _) => status.as_str(),
    };
    let empty = (rows == 0).then(|| {
        view! { <text x=PLOT_X y=TOP + 17.0 fill="#6b7280">"no attempt finished yet"</text> }
    });
    let mut y = plot_bottom + 22.0;
    let browser = browser.map(|run| {
        let (drawn, below) = browser::group(run, waterfall.axis_us, server_bottom);
        y = below;
        drawn
    });
    let mut lines = Vec::new();
    if let Some(a) = verdict {
        lines.push(line(&a.verdict.summary, y, INK, true).into_any());
        y += 20.0;
    }
    for text in h123_shared::network::lines(&record.result) {
        lines.push(line(&text, y, "#4b5563", false).into_any());
        y += 20.0;
    }
    let (skipped, y) = skipped_lines(&waterfall.skipped, y);
    // The legend's row and a margin under it.
    let height = y + 50.0;
    let what = format!("{rows} attempt(s) · {status}");
    frame(
        record,
        height,
        &what,
        view! {
            {axis(&waterfall.ticks, plot_bottom)}
            {empty}
            {draw_rows(&waterfall.rows, TOP)}
            {browser}
            {lines}
            {skipped}
            {legend(y + 6.0)}
        },
    )
    .into_any()
}

/// The document `height` high around `body`: its title, background, heading (the URL) and the
/// line under it (the protocols, `what`, the probe's id).
fn frame<B: IntoView>(
    record: &ProbeRecord,
    height: f64,
    what: &str,
    body: B,
) -> impl IntoView + use<B> {
    let line = format!(
        "{} · {what} · probe {}",
        Protocol::versions(&record.options.protocols),
        record.id
    );
    view! {
        <svg xmlns="http://www.w3.org/2000/svg" width=WIDTH height=height viewBox=format!("0 0 {WIDTH} {height}") font-family="Helvetica, Arial, sans-serif" font-size="12">
            <title>{format!("h123 waterfall of {}", shorten(&record.options.url, 200))}</title>
            <rect width="100%" height="100%" fill="#ffffff"></rect>
            <text x="16" y="26" font-size="16" font-weight="bold" fill=INK>{format!("h123 · {}", shorten(&record.options.url, 90))}</text>
            <text x="16" y="46" fill="#4b5563">{line}</text>
            {body}
        </svg>
    }
}

/// The time axis: a label and a grid line down to `plot_bottom` per tick, and the totals
/// column's heading.
fn axis(ticks: &[Tick], plot_bottom: f64) -> impl IntoView + use<> {
    let ticks = ticks
        .iter()
        .map(|tick| {
            let x = at(PLOT_X + tick.x * PLOT_W);
            view! {
                <line x1=x.clone() y1=TOP - 8.0 x2=x.clone() y2=plot_bottom stroke="#e5e7eb"></line>
                <text x=x y=TOP - 14.0 text-anchor="middle" fill="#6b7280">{tick.label.clone()}</text>
            }
        })
        .collect_view();
    view! {
        {ticks}
        <text x=WIDTH - 16.0 y=TOP - 14.0 text-anchor="end" fill="#6b7280">"total"</text>
    }
}

/// Rows of one result from `top` down, a line between protocols.
fn draw_rows(rows: &[Row], top: f64) -> impl IntoView + use<> {
    let mut previous: Option<Protocol> = None;
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let y = top + ROW_H * i as f64;
            let rule = previous.is_some_and(|p| p != row.protocol).then(|| {
                view! { <line x1="16" y1=y x2=WIDTH - 16.0 y2=y stroke="#9ca3af"></line> }
            });
            previous = Some(row.protocol);
            view! { {rule}{draw_row(row, y)} }
        })
        .collect_view()
}

/// `text` as a line at `y` (cut to 150 characters, the whole as its tooltip).
fn line(text: &str, y: f64, fill: &'static str, bold: bool) -> impl IntoView + use<> {
    view! {
        <text x="16" y=y fill=fill font-weight=bold.then_some("bold")>
            {shorten(text, 150)}<title>{text.to_owned()}</title>
        </text>
    }
}

/// A line per protocol that was not measured or stopped early, from `y` down; with the `y`
/// under them.
fn skipped_lines(skipped: &[SkippedRun], mut y: f64) -> (impl IntoView + use<>, f64) {
    let mut lines = Vec::new();
    for skip in skipped {
        let what = if skip.stopped {
            "stopped"
        } else {
            "not measured"
        };
        let text = format!(
            "{} {what}: {}",
            skip.protocol.http_version(),
            shorten(&skip.reason, 120)
        );
        lines.push(view! { <text x="16" y=y fill="#92400e">{text}</text> });
        y += 20.0;
    }
    (lines, y)
}

/// One attempt's row at `y`: its label, its phases' bars, its redirects and move, its marks and
/// its total.
fn draw_row(row: &Row, y: f64) -> impl IntoView + use<> {
    let text_y = y + ROW_H / 2.0 + 4.0;
    let colour = if row.failed { FAILED } else { INK };
    let bar_y = y + (ROW_H - BAR_H) / 2.0;
    let bars = row
        .bars
        .iter()
        .map(|bar| phase_bar(bar, y, text_y))
        .collect_view();
    let hops = row.hop_starts.iter().map(|start| {
        let x = at(PLOT_X + start * PLOT_W);
        view! {
            <line class="hop" x1=x.clone() y1=at(bar_y - 3.0) x2=x y2=at(bar_y + BAR_H + 3.0) stroke=INK stroke-dasharray="2 2"><title>"redirect"</title></line>
        }
    }).collect_view();
    let moved = row.moved.map(|moved| {
        let x = at(PLOT_X + moved * PLOT_W);
        view! {
            <line class="moved" x1=x.clone() y1=at(bar_y - 4.0) x2=x y2=at(bar_y + BAR_H + 4.0) stroke="#b42318" stroke-width="2" stroke-dasharray="4 2"><title>"the connection moved to a new address"</title></line>
        }
    });
    let marks = row.marks.iter().map(|mark| {
        view! {
            <rect x=at(PLOT_X + mark.x * PLOT_W) y=at(bar_y + BAR_H - 3.0) width=at((mark.width * PLOT_W).max(1.0)) height="3" fill="#052e16"><title>{mark.name.clone()}</title></rect>
        }
    }).collect_view();
    let total = if row.failed {
        format!("{} ✗", ms(row.total_us))
    } else {
        ms(row.total_us)
    };
    view! {
        <text x="16" y=text_y fill=colour>{shorten(&row.label, 28)}</text>
        {bars}
        {hops}
        {moved}
        {marks}
        <text x=WIDTH - 16.0 y=text_y text-anchor="end" fill=colour font-weight="bold">{total}</text>
    }
}

/// One phase of a row at `y`: its bar, and its name and time inside it when they fit.
fn phase_bar(bar: &Bar, y: f64, text_y: f64) -> impl IntoView + use<> {
    let bar_y = y + (ROW_H - BAR_H) / 2.0;
    let x = PLOT_X + bar.x * PLOT_W;
    let w = (bar.width * PLOT_W).max(1.0);
    let label = format!(
        "{} {}",
        bar.phase.as_str(),
        ms(bar.end_us.saturating_sub(bar.start_us))
    );
    let inside = (w >= 7.0 * label.len() as f64).then(|| {
        view! {
            <text x=at(x + w / 2.0) y=text_y text-anchor="middle" fill=palette::ink(bar.phase) font-size="11">{label.clone()}</text>
        }
    });
    view! {
        <rect x=at(x) y=at(bar_y) width=at(w) height=BAR_H fill=palette::fill(bar.phase) rx="2"><title>{label.clone()}</title></rect>
        {inside}
    }
}

/// A swatch and a name per phase, in a row at `y`.
fn legend(y: f64) -> impl IntoView + use<> {
    let mut x = 16.0;
    Phase::ALL
        .into_iter()
        .map(|phase| {
            let drawn = view! {
                <rect x=x y=y width="12" height="12" fill=palette::fill(phase) rx="2"></rect>
                <text x=x + 16.0 y=y + 10.0 fill="#374151">{phase.as_str()}</text>
            };
            x += 22.0 + 8.0 * phase.as_str().len() as f64 + 14.0;
            drawn
        })
        .collect_view()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::render_picture;
    use h123_shared::fixture;
    use h123_shared::{ProbeOptions, ProbeResult};

    fn render(record: &ProbeRecord) -> String {
        render_picture(|| picture(record))
    }

    #[test]
    fn text_is_escaped_and_empty_results_still_draw() {
        let options = ProbeOptions {
            url: "https://e.com/?a=<script>&b=\"x\"".into(),
            ..ProbeOptions::default()
        };
        let record = fixture::record(
            "abc",
            ProbeStatus::Running,
            ProbeResult::empty(options, 0, None),
        );
        let svg = render(&record);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(!svg.contains("<script>"));
        assert!(svg.contains(r#"&lt;script&gt;&amp;b="x""#), "{svg}");
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
        let css = include_str!("../../../site/style.css");
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
