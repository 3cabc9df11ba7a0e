//! A sweep's decay chart as a standalone SVG picture (`h123 bench --sweep
//! ... -o svg` and `GET /api/v1/benches/{id}/decay.svg`): the page's plot
//! (`shared::sweep::chart::plot`: requests per second at each step on a log
//! axis, one line per protocol in the web UI's colours and dash patterns, the
//! model's ceiling dashed where one applies) under a title and a legend, and
//! the table as its text alternative.

use h123_shared::bench_chart::{Frame, dash_attribute};
use h123_shared::markup::escape;
use h123_shared::sweep::chart::{MODEL_COLOUR, MODEL_DASH, chart, colour, plot};
use h123_shared::sweep::{SweepAxis, SweepResult, table};
use std::fmt::Write as _;

/// Room above the plot for the title and the legend.
const HEADER: f64 = 56.0;

/// The decay chart of `result`.
pub fn render(result: &SweepResult) -> String {
    let frame = Frame {
        top: HEADER,
        height: 340.0 + HEADER,
        ..Frame::default()
    };
    let drawn = chart(result, frame);
    let figure = match result.sweep.axis {
        SweepAxis::Rtt => "added round-trip time",
        SweepAxis::Loss => "loss",
    };
    let title = format!(
        "Requests per second (log scale) by {figure}: {} {}",
        result.options.method.as_str(),
        result.options.url
    );
    let mut svg = String::with_capacity(8192);
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="system-ui, sans-serif" font-size="12" role="img"><title>{}</title><desc>{}</desc><rect width="100%" height="100%" fill="#ffffff"/>"##,
        escape(&title),
        escape(&table(result)),
        w = frame.width,
        h = frame.height,
    );
    let _ = write!(
        svg,
        r##"<text x="{}" y="18" font-weight="bold" fill="#111827">{}</text>"##,
        frame.left,
        escape(&title)
    );
    let mut legend_x = frame.left;
    for line in &drawn.lines {
        let _ = write!(
            svg,
            r##"<line x1="{legend_x}" y1="36" x2="{}" y2="36" stroke="{}" stroke-width="2.5"{}/><text x="{}" y="40" fill="#111827">{}</text>"##,
            legend_x + 24.0,
            colour(line.protocol),
            dash_attribute(line.dash),
            legend_x + 30.0,
            line.protocol.http_version()
        );
        legend_x += 96.0;
    }
    if drawn.has_model() {
        let _ = write!(
            svg,
            r##"<line x1="{legend_x}" y1="36" x2="{}" y2="36" stroke="{MODEL_COLOUR}" stroke-width="1.5" stroke-dasharray="{MODEL_DASH}"/><text x="{}" y="40" fill="#374151">model: closed-loop ceiling (Little's law)</text>"##,
            legend_x + 24.0,
            legend_x + 30.0
        );
    }
    plot(&mut svg, &drawn, figure);
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::bench::{BenchOptions, BenchResult, BenchRun, LatencySummary};
    use h123_shared::sweep::{Sweep, SweepStep};
    use h123_shared::{Micros, Protocol};

    #[test]
    fn the_picture_has_a_line_per_protocol_the_model_and_the_table() {
        let options = BenchOptions {
            url: "https://e.test/?a=<b>".into(),
            protocols: vec![Protocol::H1, Protocol::H2],
            ..BenchOptions::default()
        };
        let step = |value: u32, p50: u64| SweepStep {
            value,
            result: BenchResult {
                runs: [Protocol::H1, Protocol::H2]
                    .into_iter()
                    .map(|p| BenchRun {
                        elapsed_us: Micros(1_000_000),
                        requests: 16_000_000 / p50,
                        successes: 16_000_000 / p50,
                        latency: LatencySummary {
                            mean: Micros(p50),
                            p50: Micros(p50),
                            p99: Micros(p50),
                            ..LatencySummary::default()
                        },
                        ..BenchRun::new(p)
                    })
                    .collect(),
                ..BenchResult::new(options.clone(), 0)
            },
        };
        let result = SweepResult {
            sweep: Sweep::parse("rtt=0,50ms").unwrap(),
            steps: vec![step(0, 1_000), step(50, 51_000)],
            options,
        };
        let svg = render(&result);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches(r#"class="line measured "#).count(), 2);
        assert_eq!(svg.matches(r#"class="line model "#).count(), 2);
        assert!(svg.contains(">requests per second (log scale)<"));
        assert!(svg.contains("model: closed-loop ceiling"));
        assert!(svg.contains("?a=&lt;b&gt;"), "escaped");
        assert!(
            svg.contains("<desc>added rtt"),
            "the table is the text alternative"
        );
        assert!(svg.contains(">50 ms<"));
    }
}
