//! Decay curves (`h123 bench --sweep`): the same bench at each step of one
//! network figure (round-trip time or loss), every protocol at every step,
//! and the table of throughput and latency the steps make, with the model's
//! expectation where one applies.
//!
//! The model: a closed-loop bench keeps `concurrency` requests in flight,
//! so it completes `concurrency / mean latency` requests per second
//! (Little's law); each request waits at least the added round trip `r`,
//! so at a later step it completes at most `concurrency / (mean₀ + r)`,
//! `mean₀` being the mean latency at the sweep's first step (a fixed-rate
//! bench is open-loop: no model). Loss has no such closed form for request rates (the Mathis
//! model bounds bulk TCP throughput, not small requests), so a loss sweep
//! shows the measurements alone.

use crate::bench::{BenchOptions, BenchResult, BenchRun};
use crate::format::{ms, rate};
use crate::json::ReadJson;
use crate::network::NetworkProfile;
use crate::schema::{Micros, Protocol};
use serde::{Deserialize, Serialize};
use std::fmt;

pub mod chart;

/// Most steps one sweep takes.
pub const MAX_STEPS: usize = 10;

/// The network figure a sweep varies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SweepAxis {
    /// Round-trip time, in milliseconds.
    Rtt,
    /// Loss, in basis points (hundredths of a percent).
    Loss,
}

impl SweepAxis {
    /// What the swept figure is called: `added round-trip time`, `loss`.
    pub fn figure(self) -> &'static str {
        match self {
            SweepAxis::Rtt => "added round-trip time",
            SweepAxis::Loss => "loss",
        }
    }
}

/// One figure and the values it takes, in order. The API reads it as text
/// (`"rtt=0,25,50ms"`) or as its fields, and writes its fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Sweep {
    /// The figure varied.
    pub axis: SweepAxis,
    /// Its values: milliseconds of RTT, or basis points of loss.
    pub steps: Vec<u32>,
}

impl Sweep {
    /// Reads `rtt=0,25,50,100,200ms` or `loss=0,0.5,1,2,5%`.
    ///
    /// # Errors
    /// A readable sentence naming what is wrong.
    pub fn parse(text: &str) -> Result<Sweep, String> {
        let (key, values) = text
            .split_once('=')
            .ok_or_else(|| format!("`{text}` is not a sweep like rtt=0,50,100ms or loss=0,1,2%"))?;
        let axis = match key.trim().to_ascii_lowercase().as_str() {
            "rtt" => SweepAxis::Rtt,
            "loss" => SweepAxis::Loss,
            other => return Err(format!("cannot sweep `{other}`: sweep rtt or loss")),
        };
        let values = values.trim();
        // The last value's unit stands for every bare number before it.
        let number = |c: char| c.is_ascii_digit() || c == '.';
        let last = values.rsplit(',').next().unwrap_or_default().trim();
        let unit = last.trim_start_matches(number);
        let steps = values
            .split(',')
            .map(|v| {
                let v = v.trim();
                let unit = if v.chars().all(number) { unit } else { "" };
                let figure = format!("{}={v}{unit}", key.trim());
                let profile = NetworkProfile::parse(&figure)?;
                Ok(match axis {
                    SweepAxis::Rtt => profile.rtt_ms,
                    SweepAxis::Loss => profile.loss_basis_points,
                })
            })
            .collect::<Result<Vec<u32>, String>>()?;
        Sweep::new(axis, steps)
    }

    /// The sweep of `axis` over `steps`, checked: 2 to [`MAX_STEPS`]
    /// growing values, each within the network profile's bounds.
    ///
    /// # Errors
    /// A readable sentence naming what is wrong.
    pub fn new(axis: SweepAxis, steps: Vec<u32>) -> Result<Sweep, String> {
        if steps.len() < 2 || steps.len() > MAX_STEPS {
            return Err(format!(
                "a sweep takes 2 to {MAX_STEPS} steps (got {})",
                steps.len()
            ));
        }
        let sweep = Sweep { axis, steps };
        if sweep.steps.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!("`{sweep}`: a sweep's steps must grow"));
        }
        for &value in &sweep.steps {
            sweep.network(None, value).check()?;
        }
        Ok(sweep)
    }

    /// The network of step `value`: `base` (or the real path) with the
    /// swept figure set.
    pub fn network(&self, base: Option<&NetworkProfile>, value: u32) -> NetworkProfile {
        let mut profile = base.cloned().unwrap_or_default();
        profile.name = None;
        match self.axis {
            SweepAxis::Rtt => profile.rtt_ms = value,
            SweepAxis::Loss => profile.loss_basis_points = value,
        }
        profile
    }

    /// A step's value as people read it: `25 ms`, `0.5%`.
    pub fn label(&self, value: u32) -> String {
        match self.axis {
            SweepAxis::Rtt => format!("{value} ms"),
            SweepAxis::Loss => format!("{}%", crate::network::percent_text(value)),
        }
    }
}

impl fmt::Display for Sweep {
    /// The text [`Sweep::parse`] reads: `rtt=0,25,50ms`, `loss=0,0.5,1%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (key, unit) = match self.axis {
            SweepAxis::Rtt => ("rtt", "ms"),
            SweepAxis::Loss => ("loss", "%"),
        };
        let values: Vec<String> = self
            .steps
            .iter()
            .map(|&v| match self.axis {
                SweepAxis::Rtt => v.to_string(),
                SweepAxis::Loss => crate::network::percent_text(v),
            })
            .collect();
        write!(f, "{key}={}{unit}", values.join(","))
    }
}

impl<'de> Deserialize<'de> for Sweep {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Text or fields, without buffering the input.
        struct Input;

        /// The fields as the API may send them.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Fields {
            axis: SweepAxis,
            steps: Vec<u32>,
        }

        impl<'de> serde::de::Visitor<'de> for Input {
            type Value = Sweep;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a sweep: text such as \"rtt=0,25,50ms\" or an object with axis and steps",
                )
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Sweep, E> {
                Sweep::parse(text).map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Sweep, A::Error> {
                let fields =
                    Fields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Sweep::new(fields.axis, fields.steps).map_err(serde::de::Error::custom)
            }
        }

        deserializer.deserialize_any(Input)
    }
}

impl ReadJson for Sweep {
    /// Text such as `rtt=0,25,50ms`, or the fields, as [`Deserialize`] reads them.
    fn read_in(&mut self, value: &crate::json::Json<'_>) -> Result<(), crate::json::JsonError> {
        /// The fields as the API may send them.
        #[derive(ReadJson)]
        struct Fields {
            axis: SweepAxis,
            steps: Vec<u32>,
        }

        *self = match value {
            crate::json::Json::String(text) => Sweep::parse(text),
            _ => {
                let fields = Fields::read_json(value)?;
                Sweep::new(fields.axis, fields.steps)
            }
        }
        .map_err(crate::json::JsonError::custom)?;
        Ok(())
    }

    fn placeholder() -> Self {
        Sweep {
            axis: SweepAxis::Rtt,
            steps: Vec::new(),
        }
    }
}

/// A finished sweep: what was asked and one bench per step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SweepResult {
    /// The bench each step ran (its `network` is the base the steps vary).
    pub options: BenchOptions,
    /// The figure varied and its values.
    pub sweep: Sweep,
    /// One bench per step, in order.
    pub steps: Vec<SweepStep>,
}

/// One step of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SweepStep {
    /// The swept figure's value at this step.
    pub value: u32,
    /// The bench at this step.
    pub result: BenchResult,
}

/// One protocol at one step: what was measured, and the model's expectation.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Requests per second.
    pub requests_per_sec: f64,
    /// Median latency.
    pub p50: Micros,
    /// 99th percentile latency.
    pub p99: Micros,
    /// The model's requests per second, where it applies.
    pub expected_per_sec: Option<f64>,
    /// Why the protocol has no figures at this step, if it has none.
    pub failure: Option<String>,
}

impl Point {
    /// The point in words, a table's cell:
    /// `583/s (model 605) · p50 27.1 ms · p99 31.0 ms`, or why it has none.
    pub fn text(&self) -> String {
        if let Some(why) = &self.failure {
            return format!("failed: {why}");
        }
        let model = self
            .expected_per_sec
            .map(|e| format!(" (model {})", rate(e)))
            .unwrap_or_default();
        format!(
            "{}/s{model} · p50 {} · p99 {}",
            rate(self.requests_per_sec),
            ms(self.p50),
            ms(self.p99)
        )
    }
}

/// The curve of `protocol`: one point per finished step.
pub fn curve(result: &SweepResult, protocol: Protocol) -> Vec<Point> {
    let run_at = |step: &SweepStep| -> Option<BenchRun> {
        step.result
            .runs
            .iter()
            .find(|r| r.protocol == protocol)
            .cloned()
    };
    let first = result.steps.first().and_then(run_at);
    let base_value = result.steps.first().map_or(0, |s| s.value);
    result
        .steps
        .iter()
        .map(|step| {
            let run = run_at(step);
            let failure = match &run {
                None => Some("not measured".to_owned()),
                Some(r) if r.successes == 0 => Some(
                    r.failure
                        .as_ref()
                        .map_or_else(|| "no request succeeded".to_owned(), |f| f.message.clone()),
                ),
                Some(_) => None,
            };
            let closed_loop = result.options.rate.is_none();
            let later = step.value > base_value;
            let expected_per_sec = match (result.sweep.axis, &first) {
                (SweepAxis::Rtt, Some(first)) if closed_loop && later && first.successes > 0 => {
                    let added = u64::from(step.value - base_value) * 1_000;
                    let latency = (first.latency.mean.0 + added) as f64 / 1e6;
                    Some(f64::from(result.options.concurrency) / latency)
                }
                _ => None,
            };
            Point {
                requests_per_sec: run.as_ref().map_or(0.0, BenchRun::requests_per_sec),
                p50: run.as_ref().map_or(Micros(0), |r| r.latency.p50),
                p99: run.as_ref().map_or(Micros(0), |r| r.latency.p99),
                expected_per_sec,
                failure,
            }
        })
        .collect()
}

/// The protocols a sweep measured, in the order asked.
pub fn protocols(result: &SweepResult) -> Vec<Protocol> {
    result.options.protocols.clone()
}

/// The sweep as a text table: a row per step, per protocol requests per
/// second (with the model's in brackets), p50 and p99.
pub fn table(result: &SweepResult) -> String {
    let protocols = protocols(result);
    let axis = match result.sweep.axis {
        SweepAxis::Rtt => "added rtt",
        SweepAxis::Loss => "loss",
    };
    let mut columns: Vec<Vec<String>> = vec![
        std::iter::once(axis.to_owned())
            .chain(result.steps.iter().map(|s| result.sweep.label(s.value)))
            .collect(),
    ];
    for &protocol in &protocols {
        let points = curve(result, protocol);
        columns.push(
            std::iter::once(protocol.http_version().to_owned())
                .chain(points.iter().map(Point::text))
                .collect(),
        );
    }
    let widths: Vec<usize> = columns
        .iter()
        .map(|c| c.iter().map(|t| t.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in 0..=result.steps.len() {
        let line: Vec<String> = columns
            .iter()
            .zip(&widths)
            .map(|(column, &width)| format!("{:<width$}", column[row]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// How the network was applied: the swept figure's steps (on top of the
/// base network, if any), then per protocol how its packets went through
/// the emulator and what the link dropped at the last finished step.
pub fn network_lines(result: &SweepResult) -> Vec<String> {
    let base = result
        .options
        .network
        .as_ref()
        .map(|n| format!(" on top of {n}"))
        .unwrap_or_default();
    let mut lines = vec![format!(
        "Emulated network: {}{base}, one step at a time, every protocol through the emulator at every step",
        result.sweep
    )];
    if let Some(last) = result.steps.last() {
        let at = result.sweep.label(last.value);
        for run in &last.result.runs {
            if let Some(path) = &run.emulated {
                lines.push(format!(
                    "{}: {}; at {at}: {}",
                    run.protocol.http_version(),
                    path.emulation.describe(),
                    path.drops()
                ));
            }
        }
    }
    lines
}

/// What a reader of the decay should keep in mind: the cost of the
/// emulated path itself (the first step goes through the emulator's relay
/// too, so its rate is the relay's ceiling, not the target's), then the
/// plain bench's caveats ([`crate::bench::caveats`]) of each step, each
/// once, naming the steps it applies to when not all.
pub fn caveats(result: &SweepResult) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(first) = result.steps.first() {
        let rates: Vec<String> = first
            .result
            .runs
            .iter()
            .filter(|r| r.successes > 0)
            .map(|r| {
                format!(
                    "{} {}/s",
                    r.protocol.http_version(),
                    rate(r.requests_per_sec())
                )
            })
            .collect();
        let figures = if rates.is_empty() {
            String::new()
        } else {
            format!(" ({})", rates.join(", "))
        };
        notes.push(format!(
            "Step {} goes through the emulator's relay like every step: its rate{figures} is the \
             relay's ceiling, not the target's. The relay copies every byte in user space, so a plain bench of the \
             same URL, without a network, can run many times faster: compare the steps with \
             each other, not with a plain bench.",
            result.sweep.label(first.value)
        ));
    }
    let per_step: Vec<Vec<String>> = result
        .steps
        .iter()
        .map(|s| crate::bench::caveats(&s.result))
        .collect();
    let mut seen: Vec<&String> = Vec::new();
    for note in per_step.iter().flatten() {
        if seen.contains(&note) {
            continue;
        }
        seen.push(note);
        let at: Vec<String> = result
            .steps
            .iter()
            .zip(&per_step)
            .filter(|(_, notes)| notes.contains(note))
            .map(|(s, _)| result.sweep.label(s.value))
            .collect();
        notes.push(if at.len() == result.steps.len() {
            note.clone()
        } else {
            format!("At {}: {note}", at.join(", "))
        });
    }
    notes
}

#[cfg(test)]
mod tests;
