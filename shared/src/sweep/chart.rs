//! The decay chart of a sweep: the steps across (evenly spaced, each
//! labelled with its value, the steps not yet run included), requests per
//! second up on a logarithmic axis, one line per protocol, and over RTT the
//! model's ceiling as a thin dashed line. Pure geometry in SVG user units; the
//! page and the SVG picture draw it with one component (`h123-frontend`'s
//! `pages::bench::decay`).
//!
//! Why logarithmic: over RTT a sweep's rates fall by one to two orders of
//! magnitude (4,000/s on loopback, 77/s at 100 ms), and a linear axis from
//! zero flattens every later step onto the floor. On a log axis equal ratios
//! are equal distances, so each step, and how far it sits below the model,
//! stays readable.

use super::{SweepResult, curve, protocols};
use crate::bench_chart::{AxisTick, Frame, dash};
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

/// `points` joined as an SVG path.
fn path(points: &[(f64, f64)]) -> String {
    let mut out = String::new();
    for (n, (x, y)) in points.iter().enumerate() {
        let _ = write!(out, "{}{x:.1},{y:.1}", if n == 0 { "M" } else { " L" });
    }
    out
}
