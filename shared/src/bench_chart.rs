//! The latency percentile chart of a bench, HDR-histogram style: the
//! percentile across on a log scale of 1/(1-p) (so 90, 99, 99.9 and 99.99%
//! are evenly spaced), latency up on one linear axis shared by every
//! protocol, one line per protocol. Pure geometry in SVG user units, for the
//! web UI and any SVG export; plus the text alternative to the picture.

use crate::bench::{BenchResult, BenchRun, PercentilePoint};
use crate::format::ms;
use crate::schema::{Micros, Protocol};
use crate::waterfall::{nice_step, tick_label};
use std::fmt::Write as _;

/// How many nines the percentile axis shows: it ends at 99.99%.
pub const NINES: i32 = 4;

/// The percentiles labelled on the x axis.
pub const X_TICKS: [f64; 5] = [0.0, 90.0, 99.0, 99.9, 99.99];

/// The percentiles of the text alternative; 100 is the maximum.
pub const TABLE_PERCENTILES: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 100.0];

/// Most intervals on the latency axis.
const Y_INTERVALS: u64 = 5;

/// The picture's size and the margins around its plot area, in SVG user units.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Frame {
    /// Width of the whole picture.
    pub width: f64,
    /// Height of the whole picture.
    pub height: f64,
    /// Room left of the plot (latency labels).
    pub left: f64,
    /// Room right of the plot.
    pub right: f64,
    /// Room above the plot.
    pub top: f64,
    /// Room below the plot (percentile labels).
    pub bottom: f64,
}

impl Default for Frame {
    fn default() -> Self {
        Frame {
            width: 720.0,
            height: 340.0,
            left: 64.0,
            right: 24.0,
            top: 16.0,
            bottom: 44.0,
        }
    }
}

impl Frame {
    /// Width of the plot area.
    pub fn plot_width(&self) -> f64 {
        (self.width - self.left - self.right).max(1.0)
    }

    /// Height of the plot area.
    pub fn plot_height(&self) -> f64 {
        (self.height - self.top - self.bottom).max(1.0)
    }

    /// The plot's bottom edge, where latency is zero.
    pub fn baseline(&self) -> f64 {
        self.top + self.plot_height()
    }

    /// The x coordinate of `percentile` (0 to 100).
    pub fn x(&self, percentile: f64) -> f64 {
        self.left + x_fraction(percentile) * self.plot_width()
    }

    /// The y coordinate of `value` on an axis from zero (the baseline) to `axis_max` (the top).
    pub fn y(&self, value: Micros, axis_max: Micros) -> f64 {
        self.baseline() - self.plot_height() * (value.0 as f64 / axis_max.0.max(1) as f64)
    }

    /// A latency axis from zero to a round value at or above `highest`, in at most `intervals`
    /// steps: its top, and its ticks from zero up.
    pub fn latency_axis(&self, highest: Micros, intervals: u64) -> (Micros, Vec<AxisTick>) {
        let highest = highest.0.max(1);
        let step = nice_step(Micros(highest), intervals);
        let axis_max = Micros(highest.div_ceil(step.0).saturating_mul(step.0));
        let ticks = (0..=axis_max.0 / step.0)
            .map(|i| {
                let at = Micros(i * step.0);
                AxisTick {
                    at: self.y(at, axis_max),
                    label: tick_label(at, step, axis_max),
                }
            })
            .collect();
        (axis_max, ticks)
    }
}

/// A labelled position on an axis.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisTick {
    /// The coordinate along the axis (x for percentiles, y for latency).
    pub at: f64,
    /// The label, e.g. `99.9%` or `20 ms`.
    pub label: String,
}

/// One protocol's latency by percentile.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The protocol.
    pub protocol: Protocol,
    /// The points, left to right.
    pub points: Vec<(f64, f64)>,
    /// The points as an SVG path (`M x,y L x,y ...`).
    pub path: String,
    /// The SVG `stroke-dasharray` that tells it apart without colour, if any.
    pub dash: Option<&'static str>,
}

/// The chart, laid out in a [`Frame`].
#[derive(Clone, Debug, PartialEq)]
pub struct PercentileChart {
    /// Where it is drawn.
    pub frame: Frame,
    /// The top of the latency axis.
    pub axis_max: Micros,
    /// Percentile ticks, left to right.
    pub x_ticks: Vec<AxisTick>,
    /// Latency ticks, from zero up.
    pub y_ticks: Vec<AxisTick>,
    /// One line per protocol that completed requests, in the bench's order.
    pub lines: Vec<Line>,
}

/// Where `percentile` (0 to 100) sits across the axis, from 0 (p0) to 1
/// (p99.99 and beyond): `log10(1 / (1 - p)) / NINES`.
pub fn x_fraction(percentile: f64) -> f64 {
    let rest = 1.0 - percentile.clamp(0.0, 100.0) / 100.0;
    // A hair of tolerance, so 99.99 (not exact in binary) lands on the end.
    if rest <= 10f64.powi(-NINES) * (1.0 + 1e-9) {
        return 1.0;
    }
    (-rest.log10() / f64::from(NINES)).clamp(0.0, 1.0)
}

/// The dash pattern of a protocol's line: HTTP/1.1 solid, HTTP/2 dashed, HTTP/3 dotted.
pub fn dash(protocol: Protocol) -> Option<&'static str> {
    match protocol {
        Protocol::H1 => None,
        Protocol::H2 => Some("9 4"),
        Protocol::H3 => Some("2 3"),
    }
}

/// A percentile as a label: `0%`, `90%`, `99.99%`; 100 reads `max`.
pub fn percentile_label(percentile: f64) -> String {
    if percentile >= 100.0 {
        "max".into()
    } else {
        format!("{percentile}%")
    }
}

/// The runs a chart shows: those that completed requests and have a distribution.
fn charted(result: &BenchResult) -> impl Iterator<Item = &BenchRun> {
    result
        .runs
        .iter()
        .filter(|r| r.requests > 0 && !r.latency_percentiles.is_empty())
}

/// `points` in percentile order.
fn sorted(points: &[PercentilePoint]) -> Vec<&PercentilePoint> {
    let mut sorted: Vec<&PercentilePoint> = points.iter().collect();
    sorted.sort_by(|a, b| a.percentile.total_cmp(&b.percentile));
    sorted
}

/// Lays out the percentile chart of `result` in `frame`: every protocol on
/// one latency axis from zero to a round value above the slowest point.
pub fn chart(result: &BenchResult, frame: Frame) -> PercentileChart {
    let slowest = charted(result)
        .flat_map(|r| r.latency_percentiles.iter().map(|p| p.value.0))
        .max()
        .unwrap_or(0)
        .max(1);
    let (axis_max, y_ticks) = frame.latency_axis(Micros(slowest), Y_INTERVALS);
    let y = |v: Micros| frame.y(v, axis_max);
    let x_ticks = X_TICKS
        .iter()
        .map(|&p| AxisTick {
            at: frame.x(p),
            label: percentile_label(p),
        })
        .collect();
    let lines = charted(result)
        .map(|run| {
            let points: Vec<(f64, f64)> = sorted(&run.latency_percentiles)
                .into_iter()
                .map(|p| (frame.x(p.percentile), y(p.value)))
                .collect();
            let mut path = String::new();
            for (i, (px, py)) in points.iter().enumerate() {
                let _ = write!(path, "{}{px:.1},{py:.1}", if i == 0 { "M" } else { " L" });
            }
            Line {
                protocol: run.protocol,
                points,
                path,
                dash: dash(run.protocol),
            }
        })
        .collect();
    PercentileChart {
        frame,
        axis_max,
        x_ticks,
        y_ticks,
        lines,
    }
}

/// The latency at `percentile`: the first point at or above it (the slowest
/// known when the points stop short of it); `None` without points.
pub fn value_at(points: &[PercentilePoint], percentile: f64) -> Option<Micros> {
    let sorted = sorted(points);
    sorted
        .iter()
        .find(|p| p.percentile >= percentile - 1e-9)
        .or(sorted.last())
        .map(|p| p.value)
}

/// The latency at `percentile` for the table: the run's own summary where it
/// has that percentile (so the table's median is the bench table's p50), the
/// percentile curve elsewhere.
fn summary_value(run: &BenchRun, percentile: f64) -> Option<Micros> {
    let s = &run.latency;
    let exact = [
        (50.0, s.p50),
        (90.0, s.p90),
        (99.0, s.p99),
        (99.9, s.p999),
        (100.0, s.max),
    ];
    match exact.iter().find(|(p, _)| (*p - percentile).abs() < 1e-9) {
        Some((_, value)) if s.count > 0 => Some(*value),
        _ => value_at(&run.latency_percentiles, percentile),
    }
}

/// The text alternative to the chart: latency per percentile per protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartTable {
    /// The columns: the protocols drawn.
    pub protocols: Vec<Protocol>,
    /// One row per percentile of [`TABLE_PERCENTILES`].
    pub rows: Vec<ChartTableRow>,
}

/// One percentile across the protocols.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartTableRow {
    /// The percentile, e.g. `99.9` (100 is the maximum).
    pub percentile: f64,
    /// Its label, e.g. `99.9%` or `max`.
    pub label: String,
    /// The latency per protocol, in the order of [`ChartTable::protocols`].
    pub values: Vec<Option<Micros>>,
}

/// The chart's data as a table.
pub fn table(result: &BenchResult) -> ChartTable {
    let runs: Vec<&BenchRun> = charted(result).collect();
    ChartTable {
        protocols: runs.iter().map(|r| r.protocol).collect(),
        rows: TABLE_PERCENTILES
            .iter()
            .map(|&p| ChartTableRow {
                percentile: p,
                label: percentile_label(p),
                values: runs.iter().map(|r| summary_value(r, p)).collect(),
            })
            .collect(),
    }
}

/// A one-sentence summary of the chart, for its accessible name.
pub fn describe(result: &BenchResult) -> String {
    let t = table(result);
    if t.protocols.is_empty() {
        return "Latency by percentile: no protocol completed a request.".into();
    }
    let row = |p: f64| t.rows.iter().find(|r| r.percentile == p);
    let parts: Vec<String> = t
        .protocols
        .iter()
        .enumerate()
        .map(|(i, protocol)| {
            let figure = |p: f64| {
                row(p)
                    .and_then(|r| r.values[i])
                    .map_or_else(|| "–".to_string(), ms)
            };
            format!(
                "{} median {}, p99 {}, max {}",
                protocol.http_version(),
                figure(50.0),
                figure(99.0),
                figure(100.0)
            )
        })
        .collect();
    format!(
        "Latency by percentile, one line per protocol on one axis: {}.",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BenchOptions;

    fn points(values_ms: &[(f64, u64)]) -> Vec<PercentilePoint> {
        values_ms
            .iter()
            .map(|&(percentile, v)| PercentilePoint {
                percentile,
                value: Micros(v * 1000),
            })
            .collect()
    }

    fn result(runs: Vec<(Protocol, Vec<PercentilePoint>)>) -> BenchResult {
        let mut r = BenchResult::new(BenchOptions::default(), 0);
        r.runs = runs
            .into_iter()
            .map(|(protocol, latency_percentiles)| BenchRun {
                requests: if latency_percentiles.is_empty() {
                    0
                } else {
                    100
                },
                latency_percentiles,
                ..BenchRun::new(protocol)
            })
            .collect();
        r
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn nines_are_evenly_spaced() {
        assert_eq!(x_fraction(0.0), 0.0);
        assert!(close(x_fraction(90.0), 0.25));
        assert!(close(x_fraction(99.0), 0.5));
        assert!(close(x_fraction(99.9), 0.75));
        assert_eq!(x_fraction(99.99), 1.0);
        assert_eq!(x_fraction(100.0), 1.0);
        assert_eq!(x_fraction(-5.0), 0.0);
        assert!(x_fraction(50.0) > 0.0 && x_fraction(50.0) < 0.25);
        let frame = Frame::default();
        assert_eq!(frame.x(0.0), frame.left);
        assert!(close(frame.x(99.99), frame.width - frame.right));
    }

    #[test]
    fn protocols_share_one_latency_axis() {
        let r = result(vec![
            (Protocol::H1, points(&[(0.0, 1), (50.0, 2), (100.0, 8)])),
            (
                Protocol::H2,
                points(&[(0.0, 1), (50.0, 3), (99.0, 9), (100.0, 17)]),
            ),
            (Protocol::H3, Vec::new()),
        ]);
        let frame = Frame::default();
        let c = chart(&r, frame);
        assert_eq!(c.axis_max, Micros(20_000), "a round value above 17 ms");
        let labels: Vec<&str> = c.y_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "5 ms", "10 ms", "15 ms", "20 ms"]);
        assert_eq!(c.y_ticks[0].at, frame.baseline());
        assert!(close(c.y_ticks[4].at, frame.top));
        let x_labels: Vec<&str> = c.x_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(x_labels, ["0%", "90%", "99%", "99.9%", "99.99%"]);
        assert_eq!(c.lines.len(), 2, "a run without requests has no line");
        let h2 = &c.lines[1];
        assert_eq!(h2.protocol, Protocol::H2);
        assert_eq!(h2.dash, Some("9 4"));
        // 17 ms of a 20 ms axis, at the right end (the maximum).
        let (x, y) = *h2.points.last().unwrap();
        assert!(close(x, frame.width - frame.right));
        assert!(close(y, frame.baseline() - frame.plot_height() * 0.85));
        // 9 ms at p99, halfway across.
        assert!(close(h2.points[2].0, frame.left + frame.plot_width() / 2.0));
        assert!(h2.path.starts_with(&format!("M{:.1},", frame.left)));
        assert_eq!(h2.path.matches(" L").count(), 3);
    }

    #[test]
    fn points_are_drawn_in_percentile_order() {
        let r = result(vec![(
            Protocol::H1,
            points(&[(99.0, 5), (0.0, 1), (50.0, 2)]),
        )]);
        let line = &chart(&r, Frame::default()).lines[0];
        assert!(line.points.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn an_empty_bench_still_has_axes() {
        let c = chart(&result(Vec::new()), Frame::default());
        assert!(c.lines.is_empty());
        assert!(c.axis_max.0 > 0);
        assert!(c.y_ticks.len() >= 2);
        assert_eq!(
            describe(&result(Vec::new())),
            "Latency by percentile: no protocol completed a request."
        );
    }

    #[test]
    fn the_text_alternative_reads_the_same_points() {
        let r = result(vec![
            (
                Protocol::H1,
                points(&[(0.0, 1), (50.0, 2), (99.0, 4), (100.0, 8)]),
            ),
            (Protocol::H3, points(&[(0.0, 1), (50.0, 3), (90.0, 5)])),
        ]);
        let t = table(&r);
        assert_eq!(t.protocols, [Protocol::H1, Protocol::H3]);
        let labels: Vec<&str> = t.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["50%", "90%", "99%", "99.9%", "99.99%", "max"]);
        let p90 = &t.rows[1].values;
        assert_eq!(p90, &[Some(Micros(4_000)), Some(Micros(5_000))]);
        let max = &t.rows[5].values;
        assert_eq!(
            max,
            &[Some(Micros(8_000)), Some(Micros(5_000))],
            "the slowest known when points stop short"
        );
        assert_eq!(value_at(&[], 50.0), None);
        let text = describe(&r);
        assert!(
            text.contains("HTTP/1.1 median 2.00 ms, p99 4.00 ms, max 8.00 ms"),
            "{text}"
        );
        assert!(text.contains("HTTP/3 median 3.00 ms"), "{text}");
    }

    #[test]
    fn the_table_median_is_the_summary_p50() {
        // The curve has no point at 50% (HDR steps jump from 0 to 68.75%).
        let mut r = result(vec![(
            Protocol::H1,
            points(&[(0.0, 1), (68.75, 3), (100.0, 9)]),
        )]);
        r.runs[0].latency = crate::bench::LatencySummary {
            count: 100,
            p50: Micros(1_700),
            max: Micros(9_000),
            ..Default::default()
        };
        let t = table(&r);
        assert_eq!(t.rows[0].values[0], Some(Micros(1_700)));
        assert_eq!(t.rows[4].label, percentile_label(99.99));
        assert_eq!(
            t.rows[4].values[0],
            Some(Micros(9_000)),
            "99.99% from the curve"
        );
    }
}
