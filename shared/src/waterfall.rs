//! Waterfall layout: a probe result as rows of phase bars on one shared time axis.
//!
//! One layout serves the web UI, the server-rendered SVG and the CLI's text
//! bars. Positions are fractions of the axis (0 = attempt start, 1 = the
//! axis end), and the axis is shared by every protocol, so bars compare
//! honestly across rows: the axis end is the longest attempt total rounded up
//! to a whole number of tick steps.
//!
//! A probe measured from several vantages is laid out by [`vantages`]: a
//! group per vantage, every group on one axis.

pub mod vantages;

use crate::chain::{Chain, ConnState, chains};
use crate::schema::{Micros, Phase, ProbeResult, Protocol};
use crate::server_timing;
use serde::{Deserialize, Serialize};

/// Most tick intervals on the axis; the step is the smallest "nice" one within it.
pub const MAX_TICK_INTERVALS: u64 = 8;

/// The axis span used when no attempt took any time (or there are none).
pub const EMPTY_AXIS: Micros = Micros(1_000);

/// What the readout under a page's waterfalls says while no bar is pointed at or focused.
pub const HINT: &str = "Hover or focus a bar for its exact times.";

/// A laid-out result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Waterfall {
    /// Where the axis ends (position 1.0).
    pub axis_us: Micros,
    /// Axis ticks from 0 to `axis_us`, evenly spaced.
    pub ticks: Vec<Tick>,
    /// One row per attempt (its redirect hops end to end), protocols in run order.
    pub rows: Vec<Row>,
    /// Protocols that were not measured, with the reason.
    pub skipped: Vec<SkippedRun>,
}

/// A tick on the time axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tick {
    /// Time at the tick.
    pub at_us: Micros,
    /// Position on the axis, 0..=1.
    pub x: f64,
    /// Label, e.g. `0`, `50 ms`, `0.5 ms`, `1.5 s`.
    pub label: String,
}

/// One attempt as a row of bars.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The protocol.
    pub protocol: Protocol,
    /// 1-based attempt number.
    pub attempt: u32,
    /// Redirects followed (0: the requested URL answered).
    pub redirects: u32,
    /// Row label, e.g. `h2 #2 (reused)` or `h1 #1, 2 redirects (failed)`.
    pub label: String,
    /// Whether the attempt ran on a reused connection.
    pub reused: bool,
    /// How the attempt got its connection (new, resumed or reused).
    pub state: ConnState,
    /// Whether its request went in QUIC's 0-RTT data and the server accepted it.
    pub zero_rtt: bool,
    /// Where each redirect hop after the first starts, as fractions of the axis.
    pub hop_starts: Vec<f64>,
    /// Whether the attempt failed.
    pub failed: bool,
    /// The attempt's total.
    pub total_us: Micros,
    /// The total as a fraction of the axis (at most 1).
    pub width: f64,
    /// Whether the attempt ran past the axis end and is drawn cut there.
    pub clipped: bool,
    /// Phase bars in timeline order.
    pub bars: Vec<Bar>,
    /// Server-Timing metrics laid inside the wait bar.
    pub marks: Vec<Mark>,
    /// Where on the axis the connection moved to a new address (`migrate`),
    /// as a fraction of the axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<f64>,
}

/// One phase of a row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bar {
    /// The phase.
    pub phase: Phase,
    /// The redirect hop it belongs to (0 for the requested URL).
    pub hop: u32,
    /// Phase start, from the start of the attempt's first hop.
    pub start_us: Micros,
    /// Phase end, from the start of the attempt's first hop.
    pub end_us: Micros,
    /// Start as a fraction of the axis.
    pub x: f64,
    /// Length as a fraction of the axis.
    pub width: f64,
}

/// A Server-Timing metric nested in the wait bar (see [`server_timing::wait_subspans`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    /// Metric name.
    pub name: String,
    /// Metric description, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Start as a fraction of the axis.
    pub x: f64,
    /// Length as a fraction of the axis.
    pub width: f64,
    /// Whether it was cut to fit the wait phase.
    pub clamped: bool,
}

/// A protocol that was not measured, or stopped before its last attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedRun {
    /// The protocol.
    pub protocol: Protocol,
    /// Why it was not measured, or why its later attempts were not made.
    pub reason: String,
    /// Whether some attempts were made (the run stopped early) rather than none.
    pub stopped: bool,
}

/// Lays out a whole result on one axis.
pub fn layout(result: &ProbeResult) -> Waterfall {
    layout_on(result, fitted_span([result]))
}

/// The time the axis of `results` must show: their longest attempt that
/// worked (a failure that waited out a 10 s timeout would flatten every
/// 20 ms bar; it is drawn cut at the end), and room for where each failed
/// attempt's failing phase starts, a quarter of the axis left for that
/// phase (a 10 s QUIC timeout after a 3.7 ms lookup is drawn as a lookup,
/// then QUIC cut at the end, never as a lookup alone); else their longest
/// attempt, else [`EMPTY_AXIS`].
pub fn fitted_span<'a>(results: impl IntoIterator<Item = &'a ProbeResult>) -> Micros {
    let all: Vec<Chain> = results
        .into_iter()
        .flat_map(|r| r.runs.iter().flat_map(chains))
        .collect();
    let longest_of = |failed_too: bool| {
        all.iter()
            .filter(|c| failed_too || c.failure().is_none())
            .map(Chain::total)
            .max()
            .filter(|m| m.0 > 0)
    };
    let failing_from = all
        .iter()
        .filter_map(failing_phase_start)
        .map(|start| Micros(start.0.saturating_add(start.0 / 3)))
        .max();
    longest_of(false)
        .map(|ok| ok.max(failing_from.unwrap_or(Micros(0))))
        .or_else(|| longest_of(true))
        .unwrap_or(EMPTY_AXIS)
}

/// Where, on its chain's clock, a failed chain's failing phase started.
fn failing_phase_start(chain: &Chain) -> Option<Micros> {
    let &(last, start) = chain.hops.last()?;
    let span = last.phases.get(last.failure.as_ref()?.phase)?;
    Some(Micros(start.0 + span.start_us.0))
}

/// Lays out a result on an axis that shows `longest` (rounded up to whole
/// ticks), as [`fitted_span`] gives for it alone or for several results
/// drawn on one axis.
pub fn layout_on(result: &ProbeResult, longest: Micros) -> Waterfall {
    let all: Vec<Chain> = result.runs.iter().flat_map(chains).collect();
    let (axis_us, ticks) = axis(longest);
    let pos = |t: Micros| t.0 as f64 / axis_us.0 as f64;
    let rows = all.iter().map(|c| row(c, &pos)).collect();
    let skipped = result
        .runs
        .iter()
        .filter_map(|r| {
            let (reason, stopped) = match (&r.skipped, r.stopped.as_ref().or(r.cut_short.as_ref()))
            {
                (Some(reason), _) => (reason.clone(), false),
                (None, Some(reason)) => (reason.clone(), true),
                (None, None) => return None,
            };
            Some(SkippedRun {
                protocol: r.protocol,
                reason,
                stopped,
            })
        })
        .collect();
    Waterfall {
        axis_us,
        ticks,
        rows,
        skipped,
    }
}

/// The axis that shows `longest`: its end (a whole number of "nice" steps)
/// and its ticks (what [`layout_on`] draws on; other rows on the same axis use it too).
pub fn axis(longest: Micros) -> (Micros, Vec<Tick>) {
    let step = nice_step(longest, MAX_TICK_INTERVALS);
    let intervals = longest.0.div_ceil(step.0).max(1);
    let axis_us = Micros(step.0.saturating_mul(intervals));
    let ticks = (0..=intervals)
        .map(|i| {
            let at = Micros(step.0.saturating_mul(i));
            Tick {
                at_us: at,
                x: at.0 as f64 / axis_us.0 as f64,
                label: tick_label(at, step, axis_us),
            }
        })
        .collect();
    (axis_us, ticks)
}

/// The smallest step of the form 1, 2 or 5 × 10^k µs that covers `span` in at
/// most `max_intervals` steps (at least 1 µs).
pub fn nice_step(span: Micros, max_intervals: u64) -> Micros {
    let max_intervals = max_intervals.max(1);
    let mut power: u64 = 1;
    loop {
        for m in [1, 2, 5] {
            let Some(step) = power.checked_mul(m) else {
                return Micros(u64::MAX);
            };
            if span.0.div_ceil(step) <= max_intervals {
                return Micros(step);
            }
        }
        match power.checked_mul(10) {
            Some(next) => power = next,
            None => return Micros(u64::MAX),
        }
    }
}

/// Character counts per phase for a text bar `width_chars` wide for the whole
/// axis. The counts sum to exactly the row's share of it
/// (`round(row.width * width_chars)`), split in proportion to the phases'
/// drawn widths (their durations, a phase cut at the axis's end as far as
/// it shows) by largest-remainder rounding (ties go to the earlier phase).
/// When there are at least as many characters as phases, every phase gets at
/// least one, taken from the phase with the most. Gaps between phases are not
/// drawn. Empty when the row has no phases.
pub fn text_bar(row: &Row, width_chars: usize) -> Vec<(Phase, usize)> {
    if row.bars.is_empty() {
        return Vec::new();
    }
    let target = (row.width.clamp(0.0, 1.0) * width_chars as f64).round() as usize;
    // Widths in billionths of the axis: a cut phase weighs what it shows.
    let mut weights: Vec<u128> = row
        .bars
        .iter()
        .map(|b| (b.width.max(0.0) * 1e9).round() as u128)
        .collect();
    if weights.iter().all(|w| *w == 0) {
        weights.iter_mut().for_each(|w| *w = 1);
    }
    let sum: u128 = weights.iter().sum();
    let exact: Vec<(usize, u128)> = weights
        .iter()
        .map(|w| {
            let share = target as u128 * w;
            ((share / sum) as usize, share % sum)
        })
        .collect();
    let mut counts: Vec<usize> = exact.iter().map(|(floor, _)| *floor).collect();
    let leftover = target - counts.iter().sum::<usize>();
    let mut by_remainder: Vec<usize> = (0..counts.len()).collect();
    by_remainder.sort_by(|&i, &j| exact[j].1.cmp(&exact[i].1).then(i.cmp(&j)));
    for &i in by_remainder.iter().take(leftover) {
        counts[i] += 1;
    }
    if target >= counts.len() {
        while let Some(empty) = counts.iter().position(|c| *c == 0) {
            // Pigeonhole: some phase holds two or more while one holds none.
            let richest = (0..counts.len())
                .max_by_key(|&i| (counts[i], std::cmp::Reverse(i)))
                .unwrap_or(empty);
            counts[richest] -= 1;
            counts[empty] += 1;
        }
    }
    row.bars.iter().map(|b| b.phase).zip(counts).collect()
}

/// A tick label's width per character, in CSS pixels: the web UI's 0.75rem (12 px) axis
/// font, with room for wide fonts' digits and `m`.
pub const TICK_CHAR_PX: f64 = 8.0;

/// The least space between two tick labels, in CSS pixels.
pub const TICK_GAP_PX: f64 = 8.0;

/// Every how many ticks a label goes on an axis `width_px` wide so that no two labels overlap:
/// the smallest stride that divides the intervals (so the axis end keeps its label) and fits,
/// with each label [`TICK_CHAR_PX`] per character wide, the first one starting at its tick,
/// the last one ending at its tick and the others centred on theirs, as the web UI draws them.
/// When nothing fits (or the width is not known yet), only the two ends are labelled.
pub fn label_stride(ticks: &[Tick], width_px: f64) -> usize {
    let intervals = ticks.len().saturating_sub(1).max(1);
    (1..intervals)
        .filter(|stride| intervals.is_multiple_of(*stride))
        .find(|stride| labels_fit(ticks, *stride, width_px))
        .unwrap_or(intervals)
}

/// Whether every `stride`-th tick's label fits beside its neighbours.
fn labels_fit(ticks: &[Tick], stride: usize, width_px: f64) -> bool {
    let shown: Vec<&Tick> = ticks.iter().step_by(stride).collect();
    let last = shown.len().saturating_sub(1);
    let extent = |i: usize| {
        let x = shown[i].x * width_px;
        // Tick labels are ASCII: digits, a point, a space and a unit.
        let w = shown[i].label.len() as f64 * TICK_CHAR_PX;
        match i {
            0 => (x, x + w),
            i if i == last => (x - w, x),
            _ => (x - w / 2.0, x + w / 2.0),
        }
    };
    (0..last).all(|i| extent(i).1 + TICK_GAP_PX <= extent(i + 1).0)
}

fn row(chain: &Chain, pos: &dyn Fn(Micros) -> f64) -> Row {
    let first = chain.first();
    let protocol = chain.protocol;
    let state = chain.state();
    let reused = state == ConnState::Reused;
    let failed = chain.failure().is_some();
    let redirects = chain.redirects() as u32;
    let mut label = format!("{protocol} #{}", chain.attempt());
    match redirects {
        0 => {}
        1 => label.push_str(", 1 redirect"),
        n => label.push_str(&format!(", {n} redirects")),
    }
    match (reused, failed) {
        (true, true) => label.push_str(" (reused, failed)"),
        (true, false) => label.push_str(" (reused)"),
        (false, true) => label.push_str(" (failed)"),
        (false, false) => {}
    }
    let total = chain.total();
    let clipped = pos(total) > 1.0;
    if clipped {
        label.push_str(&format!(" (cut: {})", crate::format::ms(total)));
    }
    let shifted = |start: Micros, t: Micros| Micros(start.0 + t.0);
    let bars = chain
        .hops
        .iter()
        .flat_map(|&(a, start)| {
            a.phases.present().map(move |(phase, span)| Bar {
                phase,
                hop: a.hop,
                start_us: shifted(start, span.start_us),
                end_us: shifted(start, span.end_us),
                x: pos(shifted(start, span.start_us)),
                width: pos(span.duration()),
            })
        })
        .filter(|b| b.x < 1.0)
        .map(|b| Bar {
            width: b.width.min(1.0 - b.x),
            ..b
        })
        .collect();
    let marks = chain
        .hops
        .iter()
        .flat_map(|&(a, start)| {
            server_timing::wait_subspans(a)
                .into_iter()
                .map(move |s| Mark {
                    name: s.name,
                    description: s.description,
                    x: pos(shifted(start, s.start_us)),
                    width: pos(s.end_us.saturating_sub(s.start_us)),
                    clamped: s.clamped,
                })
        })
        .filter(|m| m.x + m.width <= 1.0)
        .collect();
    let moved = chain
        .hops
        .iter()
        .find_map(|&(a, start)| Some(pos(shifted(start, a.migration.as_ref()?.at_us))))
        .filter(|&x| x <= 1.0);
    Row {
        protocol,
        attempt: chain.attempt(),
        redirects,
        label,
        reused,
        state,
        zero_rtt: first
            .quic
            .as_ref()
            .is_some_and(|q| q.zero_rtt_accepted == Some(true)),
        hop_starts: chain.hops.iter().skip(1).map(|&(_, s)| pos(s)).collect(),
        failed,
        total_us: total,
        width: pos(total).min(1.0),
        clipped,
        bars,
        marks,
        moved,
    }
}

/// A tick label in seconds when the axis reaches a second, else in
/// milliseconds, with as many decimals as the step needs; `0` at the origin.
pub fn tick_label(at: Micros, step: Micros, axis: Micros) -> String {
    if at.0 == 0 {
        return "0".into();
    }
    let (unit, suffix) = if axis.0 >= 1_000_000 {
        (1_000_000u64, "s")
    } else {
        (1_000, "ms")
    };
    let mut decimals = 0u32;
    while decimals < 6
        && !(u128::from(step.0) * 10u128.pow(decimals)).is_multiple_of(u128::from(unit))
    {
        decimals += 1;
    }
    let scaled = u128::from(at.0) * 10u128.pow(decimals) / u128::from(unit);
    if decimals == 0 {
        format!("{scaled} {suffix}")
    } else {
        let scale = 10u128.pow(decimals);
        format!(
            "{}.{:0width$} {suffix}",
            scaled / scale,
            scaled % scale,
            width = decimals as usize
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, Header};

    fn bar_row(durations: &[(Phase, u64)], axis: u64) -> Row {
        let r = run(Protocol::H1, vec![attempt(1, durations, false)]);
        row(&chains(&r)[0], &|t: Micros| t.0 as f64 / axis as f64)
    }

    /// Ticks every `step` ms up to `intervals` steps, labelled as the layout labels them.
    fn ms_ticks(step: u64, intervals: u64) -> Vec<Tick> {
        let axis = Micros(step * intervals * 1_000);
        (0..=intervals)
            .map(|i| {
                let at = Micros(step * i * 1_000);
                Tick {
                    at_us: at,
                    x: i as f64 / intervals as f64,
                    label: tick_label(at, Micros(step * 1_000), axis),
                }
            })
            .collect()
    }

    #[test]
    fn labels_thin_out_with_the_width_but_keep_the_end() {
        // 0, 40 ms, ..., 160 ms: wide enough for all, then every other, then the ends.
        let ticks = ms_ticks(40, 4);
        assert_eq!(label_stride(&ticks, 600.0), 1);
        assert_eq!(label_stride(&ticks, 170.0), 2);
        assert_eq!(label_stride(&ticks, 100.0), 4);
        // "80 ms" centred at two thirds and "120 ms" ending at the end: at 174 px (a 390 px
        // screen) they would overlap as "80 ms120 ms", so only the ends are labelled.
        let ticks = ms_ticks(40, 3);
        assert_eq!(label_stride(&ticks, 174.0), 3);
        assert_eq!(label_stride(&ticks, 400.0), 1);
        // A prime count of intervals has no stride between 1 and all.
        assert_eq!(label_stride(&ms_ticks(10, 7), 200.0), 7);
        // Unknown width (not measured yet): the ends.
        assert_eq!(label_stride(&ms_ticks(10, 8), 0.0), 8);
        // One interval, or none: both ends, or the one tick.
        assert_eq!(label_stride(&ms_ticks(10, 1), 0.0), 1);
        assert_eq!(label_stride(&[], 100.0), 1);
    }

    #[test]
    fn labels_that_fit_never_overlap() {
        for intervals in 1..=8 {
            for step in [1, 5, 20, 200, 2_000] {
                let ticks = ms_ticks(step, intervals);
                for width in (40..=1_200).step_by(7) {
                    let width = f64::from(width);
                    let stride = label_stride(&ticks, width);
                    assert!((intervals as usize).is_multiple_of(stride));
                    if stride < intervals as usize {
                        assert!(
                            labels_fit(&ticks, stride, width),
                            "{intervals} {step} {width}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn nice_steps_are_1_2_5_times_powers_of_ten() {
        let cases = [
            (0, 1),
            (1, 1),
            (8, 1),
            (9, 2),
            (40, 5),
            (950_000, 200_000),
            (1_000_000, 200_000),
            (1_600_000, 200_000),
            (1_700_000, 500_000),
            (4_000_000, 500_000),
            (4_000_001, 1_000_000),
        ];
        for (span, want) in cases {
            assert_eq!(nice_step(Micros(span), 8), Micros(want), "{span}");
        }
        assert_eq!(nice_step(Micros(u64::MAX), 8).0, 5_000_000_000_000_000_000);
        assert_eq!(nice_step(Micros(10), 0), Micros(10));
    }

    #[test]
    fn tick_labels_fit_the_step() {
        assert_eq!(
            tick_label(Micros(0), Micros(200_000), Micros(1_200_000)),
            "0"
        );
        assert_eq!(
            tick_label(Micros(400_000), Micros(200_000), Micros(1_200_000)),
            "0.4 s"
        );
        assert_eq!(
            tick_label(Micros(1_000_000), Micros(500_000), Micros(2_000_000)),
            "1.0 s"
        );
        assert_eq!(
            tick_label(Micros(3_000_000), Micros(1_000_000), Micros(4_000_000)),
            "3 s"
        );
        assert_eq!(
            tick_label(Micros(40_000), Micros(20_000), Micros(100_000)),
            "40 ms"
        );
        assert_eq!(tick_label(Micros(500), Micros(100), Micros(800)), "0.5 ms");
        assert_eq!(tick_label(Micros(15), Micros(5), Micros(40)), "0.015 ms");
    }

    #[test]
    fn rows_share_one_axis_across_protocols() {
        let mut h2 = fresh(1, 1_000, 1_000, 1_000, 96_450); // total 100_000
        h2.response.as_mut().unwrap().headers.push(Header {
            name: "server-timing".into(),
            value: "db;dur=40;desc=\"q\"".into(),
        });
        let r = result(vec![
            run(
                Protocol::H1,
                vec![fresh(1, 1_000, 1_000, 1_000, 46_450), reused(2, 10_000)],
            ),
            run(Protocol::H2, vec![h2]),
        ]);
        let w = layout(&r);
        assert_eq!(w.axis_us, Micros(100_000));
        let labels: Vec<&str> = w.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(
            labels,
            vec!["0", "20 ms", "40 ms", "60 ms", "80 ms", "100 ms"]
        );
        assert_eq!(w.ticks.last().unwrap().x, 1.0);

        assert_eq!(w.rows.len(), 3);
        assert_eq!(w.rows[0].label, "h1 #1");
        assert_eq!(w.rows[0].width, 0.5);
        assert_eq!(w.rows[1].label, "h1 #2 (reused)");
        assert!(w.rows[1].reused && !w.rows[1].failed);
        assert_eq!(w.rows[2].width, 1.0);
        let tls = &w.rows[2].bars[2];
        assert_eq!((tls.phase, tls.x, tls.width), (Phase::Tls, 0.02, 0.01));

        let mark = &w.rows[2].marks[0];
        assert_eq!(
            (mark.name.as_str(), mark.description.as_deref()),
            ("db", Some("q"))
        );
        assert_eq!((mark.x, mark.width, mark.clamped), (0.0305, 0.4, false));
        assert!(w.rows[0].marks.is_empty());
    }

    #[test]
    fn failed_hops_and_skipped_runs() {
        let mut hop = failed(reused(1, 500), Phase::Wait, FailureKind::Timeout);
        hop.hop = 1;
        let mut h3 = run(Protocol::H3, Vec::new());
        h3.skipped = Some("UDP blocked".into());
        let w = layout(&result(vec![
            run(Protocol::H2, vec![reused(1, 1_000), hop]),
            h3,
        ]));
        assert_eq!(w.rows.len(), 1, "one row per attempt, hops included");
        assert_eq!(w.rows[0].label, "h2 #1, 1 redirect (reused, failed)");
        // Hop 1 starts where hop 0 (1550 µs) ended.
        assert_eq!(w.rows[0].hop_starts, vec![1_550.0 / w.axis_us.0 as f64]);
        let hop1: Vec<&Bar> = w.rows[0].bars.iter().filter(|b| b.hop == 1).collect();
        assert_eq!(hop1[0].start_us, Micros(1_550));
        assert_eq!(
            w.skipped,
            vec![SkippedRun {
                protocol: Protocol::H3,
                reason: "UDP blocked".into(),
                stopped: false,
            }]
        );

        let empty = layout(&result(Vec::new()));
        assert_eq!(empty.axis_us, EMPTY_AXIS);
        assert!(empty.rows.is_empty());
        assert_eq!(empty.ticks.first().unwrap().label, "0");
    }

    #[test]
    fn text_bar_counts_sum_to_the_row_width() {
        let r = bar_row(
            &[(Phase::Dns, 10), (Phase::Connect, 30), (Phase::Tls, 60)],
            200,
        );
        assert_eq!(r.width, 0.5);
        assert_eq!(
            text_bar(&r, 40),
            vec![(Phase::Dns, 2), (Phase::Connect, 6), (Phase::Tls, 12)]
        );
        // Largest remainders: 7 chars of 10/30/60 -> 0.7/2.1/4.2 -> 1/2/4.
        assert_eq!(
            text_bar(&r, 14),
            vec![(Phase::Dns, 1), (Phase::Connect, 2), (Phase::Tls, 4)]
        );
        for width in 0..200 {
            let total: usize = text_bar(&r, width).iter().map(|(_, n)| n).sum();
            assert_eq!(total, (0.5 * width as f64).round() as usize, "{width}");
        }
    }

    #[test]
    fn text_bar_gives_tiny_phases_a_character_when_it_can() {
        let r = bar_row(
            &[
                (Phase::Dns, 1),
                (Phase::Connect, 1),
                (Phase::Send, 0),
                (Phase::Wait, 10_000),
            ],
            10_002,
        );
        assert_eq!(
            text_bar(&r, 10),
            vec![
                (Phase::Dns, 1),
                (Phase::Connect, 1),
                (Phase::Send, 1),
                (Phase::Wait, 7)
            ]
        );
        // Not enough room for everyone: counts still sum to the width.
        let narrow = text_bar(&r, 2);
        assert_eq!(narrow.iter().map(|(_, n)| n).sum::<usize>(), 2);
        assert_eq!(narrow.last(), Some(&(Phase::Wait, 2)));
        // All phases empty: shared evenly.
        let zero = bar_row(&[(Phase::Send, 0), (Phase::Wait, 0)], 1);
        assert_eq!(text_bar(&zero, 9), vec![(Phase::Send, 0), (Phase::Wait, 0)]);
        let mut none = bar_row(&[], 1);
        none.width = 1.0;
        assert!(text_bar(&none, 10).is_empty());
    }

    #[test]
    fn a_long_failure_does_not_flatten_the_working_attempts() {
        let silent = failed(
            attempt(1, &[(Phase::Quic, 10_000_000)], false),
            Phase::Quic,
            FailureKind::Timeout,
        );
        let w = layout(&result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 1_000, 2_000, 20_000)]),
            run(Protocol::H3, vec![silent]),
        ]));
        assert_eq!(w.axis_us, Micros(25_000));
        let cut = &w.rows[1];
        assert!(cut.clipped && cut.width == 1.0);
        assert_eq!(cut.label, "h3 #1 (failed) (cut: 10.0 s)");
        assert!(cut.bars.iter().all(|b| b.x + b.width <= 1.0 + 1e-9));
        assert!(!w.rows[0].clipped);
    }

    #[test]
    fn a_timeout_after_a_long_lookup_is_drawn_after_the_lookup() {
        // A 3.74 ms lookup, then QUIC silent for 10 s, beside 1 ms answers.
        let silent = failed(
            attempt(1, &[(Phase::Dns, 3_740), (Phase::Quic, 10_000_000)], false),
            Phase::Quic,
            FailureKind::Timeout,
        );
        let w = layout(&result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 100, 200, 1_000)]),
            run(Protocol::H3, vec![silent]),
        ]));
        assert!(w.axis_us.0 >= 4_986, "{:?}", w.axis_us);
        assert!(w.axis_us.0 < 10_000, "{:?}", w.axis_us);
        let cut = &w.rows[1];
        let phases: Vec<Phase> = cut.bars.iter().map(|b| b.phase).collect();
        assert_eq!(phases, vec![Phase::Dns, Phase::Quic]);
        for width in [10, 40, 80] {
            let text = text_bar(cut, width);
            let quic = text.iter().find(|(p, _)| *p == Phase::Quic).unwrap().1;
            let dns = text.iter().find(|(p, _)| *p == Phase::Dns).unwrap().1;
            assert!(dns > 0 && quic > 0, "{width}: {text:?}");
            assert!(
                dns > quic,
                "the lookup drawn where it is: {width}: {text:?}"
            );
        }
    }
}
