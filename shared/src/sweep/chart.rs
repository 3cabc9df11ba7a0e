//! The decay chart of a sweep: the steps across (evenly spaced, each
//! labelled with its value, the steps not yet run included), requests per
//! second up on a logarithmic axis, one line per protocol, and over RTT the
//! model's ceiling as a thin dashed line. Pure geometry in SVG user units, and
//! the one drawing of its plot that the page and the SVG picture share.
//!
//! Why logarithmic: over RTT a sweep's rates fall by one to two orders of
//! magnitude (4,000/s on loopback, 77/s at 100 ms), and a linear axis from
//! zero flattens every later step onto the floor. On a log axis equal ratios
//! are equal distances, so each step, and how far it sits below the model,
//! stays readable.

use super::{SweepResult, curve, protocols};
use crate::bench_chart::{AxisTick, Frame, dash, dash_attribute};
use crate::markup::escape;
use crate::schema::Protocol;
use std::fmt::Write as _;

/// A protocol's colour, as the web UI's `--h1`, `--h2` and `--h3`.
pub fn colour(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::H1 => "#0072b2",
        Protocol::H2 => "#d55e00",
        Protocol::H3 => "#009e73",
    }
}

/// The model's lines' colour in the picture (the page's `--text`): dark, so
/// they stand out on the protocols' coloured lines they run beside.
pub const MODEL_COLOUR: &str = "#111827";

/// The model's lines' `stroke-dasharray`, unlike any protocol's.
pub const MODEL_DASH: &str = "5 3";

/// A logarithmic requests-per-second axis: whole decades from `low` to `high`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LogAxis {
    /// The floor's power of ten (the floor is `10^low`).
    pub low: i32,
    /// The top's power of ten.
    pub high: i32,
}

impl LogAxis {
    /// The decades that hold every positive value of `values` with room:
    /// the lowest at least a factor of 2 above the floor, the highest at
    /// least 25% below the top. Without a positive value, 1 to 10.
    pub fn fit(values: impl IntoIterator<Item = f64>) -> LogAxis {
        let (lo, hi) = values
            .into_iter()
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if hi <= 0.0 {
            return LogAxis { low: 0, high: 1 };
        }
        let low = (lo / 2.0).log10().floor() as i32;
        let high = ((hi * 1.25).log10().ceil() as i32).max(low + 1);
        LogAxis { low, high }
    }

    /// Where `value` sits, from 0 (the floor) to 1 (the top); a value at or
    /// below the floor (0 included) sits on the floor.
    pub fn fraction(&self, value: f64) -> f64 {
        let floor = 10f64.powi(self.low);
        if value.is_nan() || value <= floor {
            return 0.0;
        }
        ((value.log10() - f64::from(self.low)) / f64::from(self.high - self.low)).min(1.0)
    }

    /// The ticks, bottom up: each decade (labelled, `major`) and its 2 and 5 multiples.
    pub fn ticks(&self) -> Vec<(f64, bool)> {
        let mut ticks = Vec::new();
        for exponent in self.low..=self.high {
            let decade = 10f64.powi(exponent);
            ticks.push((decade, true));
            if exponent < self.high {
                ticks.extend([(2.0 * decade, false), (5.0 * decade, false)]);
            }
        }
        ticks
    }
}

/// A decade as an axis reads it: `1`, `10`, `100`, `1k`, `10k`, `1M`; below
/// 1, `0.1`.
pub fn decade_label(exponent: i32) -> String {
    match exponent {
        e if e < 0 => format!("{:.*}", e.unsigned_abs() as usize, 10f64.powi(e)),
        0..=2 => 10u64.pow(exponent as u32).to_string(),
        3..=5 => format!("{}k", 10u64.pow(exponent as u32 - 3)),
        e => format!("{}M", 10u64.pow(e as u32 - 6)),
    }
}

/// One protocol's curve, measured and modelled.
#[derive(Clone, Debug, PartialEq)]
pub struct DecayLine {
    /// The protocol.
    pub protocol: Protocol,
    /// Requests per second at each step it has figures for, as an SVG path.
    pub measured: String,
    /// The model's ceiling at each later step, as an SVG path (empty without one).
    pub model: String,
    /// The measured points, each marked (a sweep's first step is a point alone).
    pub measured_marks: Vec<(f64, f64)>,
    /// The model's points, each marked.
    pub model_marks: Vec<(f64, f64)>,
    /// The SVG `stroke-dasharray` that tells it apart without colour, if any.
    pub dash: Option<&'static str>,
}

/// The chart, laid out in a [`Frame`].
#[derive(Clone, Debug, PartialEq)]
pub struct DecayChart {
    /// Where it is drawn.
    pub frame: Frame,
    /// The rate axis.
    pub axis: LogAxis,
    /// The steps, left to right.
    pub x_ticks: Vec<AxisTick>,
    /// The decades of requests per second, from the floor up.
    pub y_ticks: Vec<AxisTick>,
    /// The 2 and 5 multiples between them: heights only.
    pub y_minor: Vec<f64>,
    /// One line per protocol, in the sweep's order.
    pub lines: Vec<DecayLine>,
}

impl DecayChart {
    /// Whether any protocol has a model line.
    pub fn has_model(&self) -> bool {
        self.lines.iter().any(|l| !l.model_marks.is_empty())
    }
}

/// The y-axis title: says the scale is logarithmic.
pub const Y_TITLE: &str = "requests per second (log scale)";

/// Lays out the decay chart of `result` in `frame`.
pub fn chart(result: &SweepResult, frame: Frame) -> DecayChart {
    let curves: Vec<(Protocol, Vec<super::Point>)> = protocols(result)
        .into_iter()
        .map(|p| (p, curve(result, p)))
        .collect();
    let axis = LogAxis::fit(
        curves
            .iter()
            .flat_map(|(_, points)| points.iter())
            .filter(|p| p.failure.is_none())
            .flat_map(|p| [Some(p.requests_per_sec), p.expected_per_sec])
            .flatten(),
    );
    let y = |v: f64| frame.baseline() - frame.plot_height() * axis.fraction(v);
    // Every planned step has its place, so a running sweep's axis holds still.
    let steps = result.sweep.steps.len();
    let x = |i: usize| match steps {
        0 | 1 => frame.left + frame.plot_width() / 2.0,
        n => frame.left + frame.plot_width() * i as f64 / (n - 1) as f64,
    };
    let x_ticks = result
        .sweep
        .steps
        .iter()
        .enumerate()
        .map(|(i, &value)| AxisTick {
            at: x(i),
            label: result.sweep.label(value),
        })
        .collect();
    let (major, minor): (Vec<_>, Vec<_>) = axis.ticks().into_iter().partition(|(_, m)| *m);
    let y_ticks = major
        .iter()
        .zip(axis.low..)
        .map(|(&(v, _), exponent)| AxisTick {
            at: y(v),
            label: decade_label(exponent),
        })
        .collect();
    let y_minor = minor.iter().map(|&(v, _)| y(v)).collect();
    let place = |points: &mut dyn Iterator<Item = (usize, f64)>| -> Vec<(f64, f64)> {
        points.map(|(i, v)| (x(i), y(v))).collect()
    };
    let lines = curves
        .iter()
        .map(|(protocol, points)| {
            let measured_marks = place(
                &mut points
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.failure.is_none())
                    .map(|(i, p)| (i, p.requests_per_sec)),
            );
            let model_marks = place(
                &mut points
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| Some((i, p.expected_per_sec?))),
            );
            DecayLine {
                protocol: *protocol,
                measured: path(&measured_marks),
                model: path(&model_marks),
                measured_marks,
                model_marks,
                dash: dash(*protocol),
            }
        })
        .collect();
    DecayChart {
        frame,
        axis,
        x_ticks,
        y_ticks,
        y_minor,
        lines,
    }
}

/// Draws the plot of `c` into `out` (the inside of an `<svg>`): grid, ticks,
/// axis titles (`figure` across), then per protocol its measured line and
/// points and the model's dashed line and rings on top. Each element has a
/// class the page's stylesheet themes and the presentation attributes a
/// standalone picture needs (a stylesheet's rules win over them).
pub fn plot(out: &mut String, c: &DecayChart, figure: &str) {
    let f = c.frame;
    let (left, right, top, base) = (f.left, f.width - f.right, f.top, f.baseline());
    const MUTED: &str = "#374151";
    for y in &c.y_minor {
        let _ = write!(
            out,
            r##"<line class="grid minor" x1="{left:.1}" x2="{right:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#f3f4f6"></line>"##
        );
    }
    for t in &c.y_ticks {
        let _ = write!(
            out,
            r##"<line class="grid" x1="{left:.1}" x2="{right:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e7eb"></line><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end" fill="{MUTED}">{}</text>"##,
            left - 8.0,
            t.at + 4.0,
            escape(&t.label),
            y = t.at
        );
    }
    for t in &c.x_ticks {
        let _ = write!(
            out,
            r##"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{top:.1}" y2="{base:.1}" stroke="#e5e7eb"></line><text class="tick" x="{x:.1}" y="{:.1}" text-anchor="middle" fill="{MUTED}">{}</text>"##,
            base + 18.0,
            escape(&t.label),
            x = t.at
        );
    }
    let middle = (top + base) / 2.0;
    let _ = write!(
        out,
        r##"<line class="axis" x1="{left:.1}" x2="{right:.1}" y1="{base:.1}" y2="{base:.1}" stroke="{MUTED}"></line><line class="axis" x1="{left:.1}" x2="{left:.1}" y1="{top:.1}" y2="{base:.1}" stroke="{MUTED}"></line><text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="middle" fill="{MUTED}">{}</text><text class="axis-title y-title" x="14" y="{middle:.1}" transform="rotate(-90 14 {middle:.1})" text-anchor="middle" fill="{MUTED}">{Y_TITLE}</text>"##,
        (left + right) / 2.0,
        base + 36.0,
        escape(figure),
    );
    for line in &c.lines {
        let (p, colour) = (line.protocol.as_str(), colour(line.protocol));
        let _ = write!(
            out,
            r##"<path class="line measured proto-{p}" data-protocol="{p}" d="{}" fill="none" stroke="{colour}" stroke-width="2.5"{}><title>{}</title></path>"##,
            line.measured,
            dash_attribute(line.dash),
            line.protocol.http_version()
        );
        for (x, y) in &line.measured_marks {
            let _ = write!(
                out,
                r##"<circle class="mark measured proto-{p}" cx="{x:.1}" cy="{y:.1}" r="4" fill="{colour}"></circle>"##
            );
        }
    }
    // The model on top, dark and dashed: it runs close to the measured lines.
    for line in &c.lines {
        let p = line.protocol.as_str();
        let _ = write!(
            out,
            r##"<path class="line model proto-{p}" data-protocol="{p}" d="{}" fill="none" stroke="{MODEL_COLOUR}" stroke-width="1.5" stroke-dasharray="{MODEL_DASH}"></path>"##,
            line.model
        );
        for (x, y) in &line.model_marks {
            let _ = write!(
                out,
                r##"<circle class="mark model proto-{p}" cx="{x:.1}" cy="{y:.1}" r="6" fill="none" stroke="{MODEL_COLOUR}" stroke-width="1.5"></circle>"##
            );
        }
    }
}

/// `points` joined as an SVG path.
fn path(points: &[(f64, f64)]) -> String {
    let mut out = String::new();
    for (n, (x, y)) in points.iter().enumerate() {
        let _ = write!(out, "{}{x:.1},{y:.1}", if n == 0 { "M" } else { " L" });
    }
    out
}
