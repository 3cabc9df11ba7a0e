//! The decay chart of a sweep: the steps across (evenly spaced, each
//! labelled with its value, the steps not yet run included), requests per second up on a linear axis from
//! zero, one line per protocol, and over RTT the model's ceiling as a thin
//! line of the same protocol. Pure geometry in SVG user units, with the
//! protocols' colours of the web UI.

use super::{SweepResult, curve, protocols};
use crate::bench_chart::{AxisTick, Frame, dash};
use crate::format::rate;
use crate::schema::{Micros, Protocol};
use crate::waterfall::nice_step;
use std::fmt::Write as _;

/// Most intervals on the rate axis.
const Y_INTERVALS: u64 = 5;

/// A protocol's colour, as the web UI's `--h1`, `--h2` and `--h3`.
pub fn colour(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::H1 => "#0072b2",
        Protocol::H2 => "#d55e00",
        Protocol::H3 => "#009e73",
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
    /// The steps, left to right.
    pub x_ticks: Vec<AxisTick>,
    /// Requests-per-second ticks, from zero up.
    pub y_ticks: Vec<AxisTick>,
    /// One line per protocol, in the sweep's order.
    pub lines: Vec<DecayLine>,
}

/// Lays out the decay chart of `result` in `frame`.
pub fn chart(result: &SweepResult, frame: Frame) -> DecayChart {
    let curves: Vec<(Protocol, Vec<super::Point>)> = protocols(result)
        .into_iter()
        .map(|p| (p, curve(result, p)))
        .collect();
    let highest = curves
        .iter()
        .flat_map(|(_, points)| points.iter())
        .flat_map(|p| [Some(p.requests_per_sec), p.expected_per_sec])
        .flatten()
        .fold(1.0f64, f64::max);
    // Rates are laid out as whole requests per second on the axis helper.
    let step = nice_step(Micros(highest.ceil() as u64), Y_INTERVALS)
        .0
        .max(1);
    let axis_max = (highest.ceil() as u64).div_ceil(step) * step;
    let y = |v: f64| frame.baseline() - frame.plot_height() * (v / axis_max as f64);
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
    let y_ticks = (0..=axis_max / step)
        .map(|i| AxisTick {
            at: y((i * step) as f64),
            label: rate((i * step) as f64),
        })
        .collect();
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
        x_ticks,
        y_ticks,
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
