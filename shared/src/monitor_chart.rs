//! A monitor's series as a line chart: time across the window, the metric up on one linear axis
//! from zero, a line per protocol and vantage through each bucket's median (broken where a
//! bucket has no answer), breaching buckets as hollow points, failed runs and missed slots as
//! marks along the bottom, and the threshold as a dashed line. Pure geometry in SVG user units;
//! the page draws it and gives its table as the text alternative.

use crate::bench_chart::{AxisTick, Frame, dash};
use crate::format::wall_clock;
use crate::monitor::{Bucket, Series};
use crate::schema::{Micros, Protocol};
use std::fmt::Write as _;

/// Most intervals on the metric axis.
const Y_INTERVALS: u64 = 4;

/// Most intervals on the time axis.
const X_INTERVALS: u64 = 6;

/// Time steps the axis may take, in milliseconds: a minute to a week.
const TIME_STEPS: [u64; 12] = [
    60_000,
    300_000,
    900_000,
    1_800_000,
    3_600_000,
    3 * 3_600_000,
    6 * 3_600_000,
    12 * 3_600_000,
    86_400_000,
    2 * 86_400_000,
    7 * 86_400_000,
    14 * 86_400_000,
];

/// One bucket of a line, placed.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartPoint {
    /// Across: the bucket's middle.
    pub x: f64,
    /// Up: its median.
    pub y: f64,
    /// The bucket's start, milliseconds since the Unix epoch.
    pub start_unix_ms: u64,
    /// Its median.
    pub median: Micros,
    /// Runs in it.
    pub runs: u32,
    /// Whether a run in it breached a threshold.
    pub breached: bool,
    /// The probe of its slowest run (its only one, when it holds one).
    pub probe_id: Option<String>,
}

/// One protocol at one vantage.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartLine {
    /// The protocol (its colour and dash).
    pub protocol: Protocol,
    /// The vantage (empty for the server itself).
    pub vantage: String,
    /// The buckets that answered, left to right.
    pub points: Vec<ChartPoint>,
    /// The line as an SVG path, a new stroke after each gap.
    pub path: String,
    /// The `stroke-dasharray` that tells it apart without colour, if any.
    pub dash: Option<&'static str>,
}

/// Runs that failed, or slots missed, in one bucket: a mark on the time axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// Across: the bucket's middle.
    pub x: f64,
    /// The bucket's start, milliseconds since the Unix epoch.
    pub start_unix_ms: u64,
    /// How many.
    pub count: u64,
    /// Whose runs failed (`None` for missed slots).
    pub protocol: Option<Protocol>,
}

/// The chart, laid out in a [`Frame`].
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorChart {
    /// Where it is drawn.
    pub frame: Frame,
    /// The top of the metric axis.
    pub axis_max: Micros,
    /// Time ticks, left to right (UTC).
    pub x_ticks: Vec<AxisTick>,
    /// Metric ticks, from zero up.
    pub y_ticks: Vec<AxisTick>,
    /// The lines.
    pub lines: Vec<ChartLine>,
    /// Buckets with failed runs, per line.
    pub failures: Vec<Mark>,
    /// Buckets with missed slots.
    pub missed: Vec<Mark>,
    /// The threshold's height and value, when the metric has one.
    pub threshold: Option<(f64, Micros)>,
}

/// Lays out `series` in `frame`, with `threshold` (the metric's limit, if any) on the axis.
pub fn layout(series: &Series, threshold: Option<Micros>, frame: Frame) -> MonitorChart {
    let (from, to) = (
        series.from_unix_ms,
        series.to_unix_ms.max(series.from_unix_ms + 1),
    );
    let x = |unix_ms: u64| {
        let at = unix_ms.clamp(from, to) - from;
        frame.left + frame.plot_width() * (at as f64 / (to - from) as f64)
    };
    let middle = |start: u64| x(start.saturating_add(series.bucket_ms / 2).min(to));
    let highest = series
        .lines
        .iter()
        .flat_map(|l| l.buckets.iter().filter_map(|b| b.median))
        .chain(threshold)
        .map(|m| m.0)
        .max()
        .unwrap_or(0)
        .max(1000);
    let (axis_max, y_ticks) = frame.latency_axis(Micros(highest), Y_INTERVALS);
    let y = |v: Micros| frame.y(v, axis_max);
    let mut failures = Vec::new();
    let lines = series
        .lines
        .iter()
        .map(|line| {
            for b in line.buckets.iter().filter(|b| b.failures > 0) {
                failures.push(Mark {
                    x: middle(b.start_unix_ms),
                    start_unix_ms: b.start_unix_ms,
                    count: u64::from(b.failures),
                    protocol: Some(line.protocol),
                });
            }
            let points: Vec<ChartPoint> = line
                .buckets
                .iter()
                .filter_map(|b| {
                    let median = b.median?;
                    Some(ChartPoint {
                        x: middle(b.start_unix_ms),
                        y: y(median),
                        start_unix_ms: b.start_unix_ms,
                        median,
                        runs: b.runs,
                        breached: b.breaches > 0,
                        probe_id: b.slowest_probe_id.clone(),
                    })
                })
                .collect();
            ChartLine {
                protocol: line.protocol,
                vantage: line.vantage.clone(),
                path: path(&points, series.bucket_ms),
                points,
                dash: dash(line.protocol),
            }
        })
        .collect();
    MonitorChart {
        frame,
        axis_max,
        x_ticks: time_ticks(from, to)
            .into_iter()
            .map(|(at, label)| AxisTick { at: x(at), label })
            .collect(),
        y_ticks,
        lines,
        failures,
        missed: series
            .missed
            .iter()
            .map(|m| Mark {
                x: middle(m.start_unix_ms),
                start_unix_ms: m.start_unix_ms,
                count: m.missed,
                protocol: None,
            })
            .collect(),
        threshold: threshold.map(|t| (y(t), t)),
    }
}

/// `points` as one SVG path, lifting the pen where buckets between two points hold no answer.
fn path(points: &[ChartPoint], bucket_ms: u64) -> String {
    let mut path = String::new();
    let mut previous: Option<u64> = None;
    for p in points {
        let joined = previous.is_some_and(|start| p.start_unix_ms - start <= bucket_ms);
        let pen = match (path.is_empty(), joined) {
            (true, _) => "M",
            (false, true) => " L",
            (false, false) => " M",
        };
        let _ = write!(path, "{pen}{:.1},{:.1}", p.x, p.y);
        previous = Some(p.start_unix_ms);
    }
    path
}

/// Round moments (UTC) across `[from, to)` at a step that gives at most [`X_INTERVALS`]:
/// `HH:MM` below a day, `MM-DD` from a day up.
pub fn time_ticks(from: u64, to: u64) -> Vec<(u64, String)> {
    let span = to.saturating_sub(from);
    let step = TIME_STEPS
        .into_iter()
        .find(|s| span / s <= X_INTERVALS)
        .unwrap_or(span.max(1));
    let first = from.div_ceil(step) * step;
    (0..)
        .map(|n| first + n * step)
        .take_while(|at| *at < to)
        .map(|at| {
            let clock = wall_clock(at, 0);
            let label = match step < 86_400_000 {
                true => clock[11..16].to_owned(),
                false => clock[5..10].to_owned(),
            };
            (at, label)
        })
        .collect()
}

/// A bucket in words, for a point's tooltip and the table: `42.0 ms median of 3 runs, 1 failed`.
pub fn bucket_words(bucket: &Bucket) -> String {
    let runs = match bucket.runs {
        1 => "1 run".to_owned(),
        n => format!("{n} runs"),
    };
    let mut words = match bucket.median {
        Some(m) if bucket.runs == 1 => crate::format::ms(m),
        Some(m) => format!("{} median of {runs}", crate::format::ms(m)),
        None => format!("no answer in {runs}"),
    };
    if bucket.failures > 0 {
        let _ = write!(words, ", {} failed", bucket.failures);
    }
    if bucket.breaches > 0 {
        let _ = write!(words, ", {} over a threshold", bucket.breaches);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{MissedBucket, SeriesLine, SeriesMetric};

    fn bucket(start: u64, median_ms: Option<u64>, failures: u32, breaches: u32) -> Bucket {
        Bucket {
            start_unix_ms: start,
            runs: 1,
            failures,
            breaches,
            min: None,
            median: median_ms.map(|m| Micros(m * 1000)),
            p95: None,
            max: None,
            probe_id: Some(format!("p{start}")),
            slowest_probe_id: median_ms.map(|_| format!("p{start}")),
        }
    }

    fn series(buckets: Vec<Bucket>, missed: Vec<MissedBucket>) -> Series {
        Series {
            metric: SeriesMetric::Total,
            from_unix_ms: 0,
            to_unix_ms: 600_000,
            bucket_ms: 60_000,
            lines: vec![SeriesLine {
                protocol: Protocol::H3,
                vantage: String::new(),
                buckets,
            }],
            missed,
            verdict: None,
        }
    }

    #[test]
    fn a_line_breaks_where_buckets_have_no_answer_and_marks_failures_and_missed_slots() {
        let s = series(
            vec![
                bucket(0, Some(40), 0, 0),
                bucket(60_000, Some(80), 0, 1),
                bucket(120_000, None, 1, 0),
                bucket(180_000, Some(40), 0, 0),
            ],
            vec![MissedBucket {
                start_unix_ms: 240_000,
                missed: 1,
            }],
        );
        let chart = layout(&s, Some(Micros(100_000)), Frame::default());
        assert_eq!(chart.axis_max, Micros(100_000));
        let line = &chart.lines[0];
        assert_eq!(line.points.len(), 3);
        assert_eq!(line.path.matches('M').count(), 2, "{}", line.path);
        assert!(line.points[1].breached && !line.points[0].breached);
        assert!(line.points[1].y < line.points[0].y, "slower is higher");
        assert_eq!(line.points[0].probe_id.as_deref(), Some("p0"));
        assert_eq!(chart.failures.len(), 1);
        assert_eq!(chart.failures[0].protocol, Some(Protocol::H3));
        assert_eq!(chart.missed[0].count, 1);
        let (height, _) = chart.threshold.unwrap();
        assert!(
            (height - chart.frame.top).abs() < 1e-9,
            "the limit tops the axis"
        );
        assert!(chart.x_ticks.iter().all(|t| t.at >= chart.frame.left));
        assert_eq!(
            bucket_words(&s.lines[0].buckets[1]),
            "80.0 ms, 1 over a threshold"
        );
    }

    #[test]
    fn time_ticks_are_round_and_few() {
        let ticks = time_ticks(0, 24 * 3_600_000);
        assert_eq!(ticks.len(), 4);
        assert_eq!(ticks[1].1, "06:00");
        let month = time_ticks(86_400_000 / 2, 30 * 86_400_000);
        assert!(month.len() <= 6, "{month:?}");
        assert_eq!(month[0].1, "01-08");
    }
}
