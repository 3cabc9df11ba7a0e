//! `h123 watch`'s words: one line per run (per protocol, the first attempt's
//! phases on its new connection, or why it has none, and a sparkline of the
//! protocol's recent totals), the legend above the lines, the notes a line
//! ends with (missed slots, breached SLO gates) and the summary at the end.
//!
//! Pure, so the web UI could draw a watch the same way. The figures are
//! milliseconds in four columns (`0.12`, `12.3`, `250`, `1.2s`) so that three
//! protocols fit in [`LINE_WIDTH`] columns; the sparkline is scaled from zero
//! to the largest total it shows, so noise stays small and a growing phase
//! grows the bars.

use crate::chain::chains;
use crate::format;
use crate::schema::{FailureKind, H3Outcome, Micros, Phase, ProbeResult, Protocol, ProtocolRun};
use crate::slo::{Judgement, SloReport};
use crate::stats::{Metric, PhaseStats};
use crate::table::chain_value;
use std::fmt::Write as _;

/// The columns a line fits in with three protocols and no notes.
pub const LINE_WIDTH: usize = 120;
/// The most runs a sparkline shows.
pub const MAX_TREND: usize = 20;

/// Sparkline levels, lowest first.
const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// A run whose attempt failed, in a sparkline.
const FAILED_MARK: char = '×';
/// A run that did not measure the protocol, in a sparkline.
const ABSENT_MARK: char = '·';
/// Width of one figure.
const FIGURE: usize = 4;
/// Width of a protocol's five figures and the spaces between them.
const BODY: usize = 5 * FIGURE + 4;
/// Width of the clock, `HH:MM:SS`.
const CLOCK: usize = 8;
/// A protocol's columns besides its sparkline: the gap, its name, its figures, a space.
const SEGMENT: usize = 2 + 2 + 1 + BODY + 1;

/// One protocol in one run: its first attempt (a redirect chain is one
/// attempt), which opened a new connection, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// The attempt got an answer (any status; 400 and above is an HTTP error).
    Answered(Figures),
    /// The attempt failed.
    Failed {
        /// The phase that was running.
        phase: Phase,
        /// What kind of failure.
        kind: FailureKind,
    },
    /// The protocol was not measured: why, in two or three words.
    Skipped(&'static str),
}

/// An answered attempt's figures, each phase summed over a redirect chain's hops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figures {
    /// The final status.
    pub status: u16,
    /// The name lookup, when there was one.
    pub dns: Option<Micros>,
    /// The TCP connect (HTTP/1.1 and HTTP/2).
    pub connect: Option<Micros>,
    /// The TLS handshake (https over TCP) or the QUIC handshake (HTTP/3).
    pub handshake: Option<Micros>,
    /// Time to first byte, from the attempt's start.
    pub ttfb: Option<Micros>,
    /// The whole attempt.
    pub total: Micros,
}

impl Cell {
    /// The cell of `run`: its first attempt's figures, its failure, or why it was not measured.
    pub fn of(run: &ProtocolRun) -> Cell {
        if run.skipped.is_some() {
            return Cell::Skipped(skip_reason(run));
        }
        let chains = chains(run);
        let Some(chain) = chains.first() else {
            return Cell::Skipped("no attempt");
        };
        if let Some(failure) = chain.failure() {
            return Cell::Failed {
                phase: failure.phase,
                kind: failure.kind,
            };
        }
        let Some(status) = chain.status() else {
            return Cell::Skipped("no answer");
        };
        let value = |metric| chain_value(metric, chain);
        Cell::Answered(Figures {
            status,
            dns: value(Metric::Dns),
            connect: value(Metric::Connect),
            handshake: value(Metric::Tls).or_else(|| value(Metric::Quic)),
            ttfb: chain.ttfb(),
            total: chain.total(),
        })
    }

    /// The total of an answered attempt (an HTTP error's too).
    pub fn total(&self) -> Option<Micros> {
        match self {
            Cell::Answered(f) => Some(f.total),
            _ => None,
        }
    }

    /// Whether the attempt failed or answered with an HTTP error.
    pub fn is_failure(&self) -> bool {
        match self {
            Cell::Answered(f) => f.status >= 400,
            Cell::Failed { .. } => true,
            Cell::Skipped(_) => false,
        }
    }

    /// The words under the protocol's name: five figures, `HTTP 503` and
    /// the total, the failure's phase and kind, or why it was skipped.
    fn body(&self) -> String {
        let text = match self {
            Cell::Answered(f) if f.status >= 400 => format!(
                "{:<width$} {:>FIGURE$}",
                format!("HTTP {}", f.status),
                figure(Some(f.total)),
                width = BODY - FIGURE - 1
            ),
            Cell::Answered(f) => [f.dns, f.connect, f.handshake, f.ttfb, Some(f.total)]
                .map(|v| format!("{:>FIGURE$}", figure(v)))
                .join(" "),
            Cell::Failed { phase, kind } => format!("{} {}", phase.as_str(), kind.as_str()),
            Cell::Skipped(why) => (*why).to_owned(),
        };
        text.chars().take(BODY).collect()
    }
}

/// Why a skipped run was not measured, in a few words.
fn skip_reason(run: &ProtocolRun) -> &'static str {
    match (&run.not_offered, &run.discovery) {
        (Some(_), _) => "not offered",
        (None, Some(d)) if d.outcome == H3Outcome::NotAdvertised => "not advertised",
        _ => "skipped",
    }
}

/// A duration in at most four columns, in milliseconds: `0.12`, `12.3`,
/// `250`, then seconds `1.2s`, `12s`; `-` when there is none.
pub fn figure(value: Option<Micros>) -> String {
    let Some(Micros(us)) = value else {
        return "-".to_owned();
    };
    let ms = us as f64 / 1000.0;
    match us {
        0..9_995 => format!("{ms:.2}"),
        9_995..99_950 => format!("{ms:.1}"),
        99_950..999_500 => format!("{ms:.0}"),
        999_500..9_950_000 => format!("{:.1}s", ms / 1000.0),
        _ => format!("{:.0}s", ms / 1000.0),
    }
}

/// The last `width` cells as a sparkline, right-aligned in `width` columns:
/// an answered attempt's total as a bar scaled from zero to the largest
/// total shown, `×` for a failure, `·` for a run that did not measure it.
pub fn sparkline(cells: &[Cell], width: usize) -> String {
    let shown = &cells[cells.len().saturating_sub(width)..];
    let top = shown
        .iter()
        .filter_map(Cell::total)
        .max()
        .unwrap_or(Micros(0));
    let mut out = " ".repeat(width - shown.len());
    out.extend(shown.iter().map(|cell| match cell {
        Cell::Answered(f) => level(f.total, top),
        Cell::Failed { .. } => FAILED_MARK,
        Cell::Skipped(_) => ABSENT_MARK,
    }));
    out
}

/// The bar of `value` on a scale from zero to `top`: the lowest bar for
/// anything above zero up to an eighth of `top`, the highest for `top`.
fn level(value: Micros, top: Micros) -> char {
    if top.0 == 0 {
        return LEVELS[0];
    }
    let eighths = (u128::from(value.0) * 8).div_ceil(u128::from(top.0));
    LEVELS[(eighths as usize).clamp(1, LEVELS.len()) - 1]
}

/// How many runs a sparkline shows so that a line of `protocols` protocols
/// fits in [`LINE_WIDTH`] columns (7 for three), at most [`MAX_TREND`].
pub fn trend_width(protocols: usize) -> usize {
    let n = protocols.max(1);
    (LINE_WIDTH.saturating_sub(CLOCK + n * SEGMENT) / n).clamp(5, MAX_TREND)
}

/// A moment's time of day in UTC, `HH:MM:SS`.
pub fn clock(unix_ms: u64) -> String {
    let secs = unix_ms / 1000 % 86_400;
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// The note of a run that overran its slot: `missed 2 slots`; `None` for none.
pub fn missed_note(missed: u64) -> Option<String> {
    match missed {
        0 => None,
        1 => Some("missed 1 slot".to_owned()),
        n => Some(format!("missed {n} slots")),
    }
}

/// The note of a run that breached SLO gates, each gate with the protocols
/// it breached on: `SLO breached: total.median (h1 h2); ttfb.p95 (h3)`.
pub fn breach_note(report: &SloReport) -> Option<String> {
    let mut gates: Vec<(String, Vec<&str>)> = Vec::new();
    for check in report
        .checks
        .iter()
        .filter(|c| c.judgement == Judgement::Breached)
    {
        let name = check.gate.name();
        match gates.iter_mut().find(|(g, _)| *g == name) {
            Some((_, protocols)) => protocols.push(check.protocol.as_str()),
            None => gates.push((name, vec![check.protocol.as_str()])),
        }
    }
    (!gates.is_empty()).then(|| {
        let each: Vec<String> = gates
            .iter()
            .map(|(gate, protocols)| format!("{gate} ({})", protocols.join(" ")))
            .collect();
        format!("SLO breached: {}", each.join("; "))
    })
}

/// Every run so far, per protocol: what the lines and the summary are drawn from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct History {
    /// The protocols watched, in the order asked, each with its cells, one per run.
    columns: Vec<(Protocol, Vec<Cell>)>,
    /// The wall-clock starts of the first and the latest run.
    span_ms: Option<(u64, u64)>,
}

impl History {
    /// No runs yet, of `protocols`.
    pub fn new(protocols: &[Protocol]) -> History {
        History {
            columns: protocols.iter().map(|&p| (p, Vec::new())).collect(),
            span_ms: None,
        }
    }

    /// Runs so far.
    pub fn runs(&self) -> usize {
        self.columns.first().map_or(0, |(_, cells)| cells.len())
    }

    /// Adds a finished run (a protocol it lacks counts as not measured).
    pub fn push(&mut self, result: &ProbeResult) {
        for (protocol, cells) in &mut self.columns {
            cells.push(
                result
                    .runs
                    .iter()
                    .find(|run| run.protocol == *protocol)
                    .map_or(Cell::Skipped("not run"), Cell::of),
            );
        }
        let at = result.started_at_unix_ms;
        self.span_ms = Some(self.span_ms.map_or((at, at), |(first, _)| (first, at)));
    }

    /// The column names above the lines: the clock's zone, then per protocol
    /// its figures' names and the sparkline's.
    pub fn legend(&self) -> String {
        let trend = trend_width(self.columns.len());
        let mut out = format!("{:<CLOCK$}", "UTC");
        for (protocol, _) in &self.columns {
            let handshake = if *protocol == Protocol::H3 {
                "quic"
            } else {
                "tls"
            };
            let _ = write!(
                out,
                "  {protocol} {:>FIGURE$} {:>FIGURE$} {:>FIGURE$} {:>FIGURE$} {:>FIGURE$} {:<trend$}",
                "dns", "conn", handshake, "ttfb", "tot", "trend"
            );
        }
        out.trim_end().to_owned()
    }

    /// The latest run's line: its start (UTC), each protocol's cell and
    /// sparkline, then `notes`, each after two spaces.
    pub fn line(&self, notes: &[String]) -> String {
        let trend = trend_width(self.columns.len());
        let mut out = clock(self.span_ms.map_or(0, |(_, last)| last));
        for (protocol, cells) in &self.columns {
            let body = cells.last().map(Cell::body).unwrap_or_default();
            let _ = write!(
                out,
                "  {protocol} {body:<BODY$} {}",
                sparkline(cells, trend)
            );
        }
        for note in notes {
            out.push_str("  ");
            out.push_str(note);
        }
        out
    }

    /// The summary at the end: runs and their span, then per protocol its
    /// failures (failed or HTTP error) and the median and p95 of the total
    /// and of the time to first byte over the runs that succeeded.
    pub fn summary(&self) -> String {
        let runs = self.runs();
        let Some((first, last)) = self.span_ms else {
            return "0 runs\n".to_owned();
        };
        let plural = if runs == 1 { "" } else { "s" };
        let mut out = format!(
            "{runs} run{plural}, started {} to {} UTC; per protocol, each run's first attempt:\n",
            clock(first),
            clock(last)
        );
        let _ = writeln!(
            out,
            "      {:>10}  {:>12}  {:>8}  {:>12}  {:>8}",
            "failed", "total median", "p95", "ttfb median", "p95"
        );
        for (protocol, cells) in &self.columns {
            let good = cells.iter().filter_map(|cell| match cell {
                Cell::Answered(f) if f.status < 400 => Some(f),
                _ => None,
            });
            let totals = PhaseStats::from_values(good.clone().map(|f| f.total).collect());
            let ttfbs = PhaseStats::from_values(good.filter_map(|f| f.ttfb).collect());
            let shown = |stats: Option<PhaseStats>, pick: fn(&PhaseStats) -> Micros| {
                stats.map_or_else(|| "-".to_owned(), |s| format::ms(pick(&s)))
            };
            let failed = cells.iter().filter(|c| c.is_failure()).count();
            let measured = cells
                .iter()
                .filter(|c| !matches!(c, Cell::Skipped(_)))
                .count();
            let _ = writeln!(
                out,
                "  {protocol}  {:>10}  {:>12}  {:>8}  {:>12}  {:>8}",
                format!("{failed} of {measured}"),
                shown(totals, |s| s.median),
                shown(totals, |s| s.p95),
                shown(ttfbs, |s| s.median),
                shown(ttfbs, |s| s.p95),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{failed, fresh, result, run};
    use crate::slo::{evaluate, parse_gates};

    fn answered(total_us: u64) -> Cell {
        Cell::Answered(Figures {
            status: 200,
            dns: None,
            connect: None,
            handshake: None,
            ttfb: None,
            total: Micros(total_us),
        })
    }

    #[test]
    fn figures_fit_four_columns_at_every_scale() {
        let cases = [
            (0, "0.00"),
            (120, "0.12"),
            (9_994, "9.99"),
            (9_996, "10.0"),
            (12_340, "12.3"),
            (99_960, "100"),
            (250_000, "250"),
            (999_600, "1.0s"),
            (1_234_000, "1.2s"),
            (9_960_000, "10s"),
            (125_000_000, "125s"),
        ];
        for (us, text) in cases {
            assert_eq!(figure(Some(Micros(us))), text, "{us} µs");
            assert!(text.chars().count() <= FIGURE);
        }
        assert_eq!(figure(None), "-");
    }

    #[test]
    fn a_sparkline_scales_from_zero_to_the_largest_total_shown() {
        let cells: Vec<Cell> = [10, 20, 40, 80].map(|ms| answered(ms * 1000)).to_vec();
        assert_eq!(sparkline(&cells, 4), "▁▂▄█");
        // Noise stays small: 100 and 101 ms are both nearly full bars.
        assert_eq!(sparkline(&[answered(100_000), answered(101_000)], 2), "██");
        // A short history is right-aligned; only the last `width` runs are shown
        // and scaled: the 1 s run that scrolled out no longer flattens the rest.
        assert_eq!(sparkline(&cells[..2], 5), "   ▄█");
        let mut long = vec![answered(1_000_000)];
        long.extend(cells.iter().cloned());
        assert_eq!(sparkline(&long, 4), "▁▂▄█");
        // Failures and runs that measured nothing have marks of their own.
        let mixed = [
            answered(50_000),
            Cell::Failed {
                phase: Phase::Quic,
                kind: FailureKind::Timeout,
            },
            Cell::Skipped("not advertised"),
            answered(0),
        ];
        assert_eq!(sparkline(&mixed, 4), "█×·▁");
        assert_eq!(sparkline(&[], 3), "   ");
    }

    #[test]
    fn three_protocols_fit_the_line_width() {
        assert_eq!(trend_width(3), 7);
        assert_eq!(trend_width(1), MAX_TREND);
        assert_eq!(trend_width(2), MAX_TREND);
        let r = result(vec![
            run(Protocol::H1, vec![fresh(1, 1_500, 2_500, 125_000, 99_000)]),
            run(Protocol::H2, vec![fresh(1, 1_500, 2_500, 125_000, 99_000)]),
            run(Protocol::H3, vec![fresh(1, 1_500, 2_500, 125_000, 99_000)]),
        ]);
        let mut history = History::new(&Protocol::ALL);
        for _ in 0..30 {
            history.push(&r);
        }
        let line = history.line(&[]);
        assert!(line.chars().count() <= LINE_WIDTH, "{line}");
        assert!(history.legend().chars().count() <= line.chars().count());
    }

    #[test]
    fn a_line_has_the_clock_the_phases_failures_statuses_and_notes() {
        let mut ok = fresh(1, 1_500, 2_500, 12_000, 80_000);
        ok.response.as_mut().unwrap().status = 200;
        let mut error = fresh(1, 0, 2_500, 12_000, 80_000);
        error.response.as_mut().unwrap().status = 503;
        let mut r = result(vec![
            run(Protocol::H1, vec![ok]),
            run(Protocol::H2, vec![error]),
            run(
                Protocol::H3,
                vec![failed(
                    fresh(1, 0, 0, 0, 0),
                    Phase::Quic,
                    FailureKind::Timeout,
                )],
            ),
        ]);
        // 2026-01-02 03:04:05.678 UTC.
        r.started_at_unix_ms = 1_767_323_045_678;
        let mut history = History::new(&Protocol::ALL);
        history.push(&r);
        let notes = [missed_note(2).unwrap()];
        let line = history.line(&notes);
        let Cell::Answered(f) = Cell::of(&r.runs[0]) else {
            panic!("h1 answered")
        };
        let expected_h1 = format!(
            "h1 {:>4} {:>4} {:>4} {:>4} {:>4}",
            figure(f.dns),
            figure(f.connect),
            figure(f.handshake),
            figure(f.ttfb),
            figure(Some(f.total))
        );
        assert!(line.starts_with("03:04:05  h1 "), "{line}");
        assert!(line.contains(&expected_h1), "{line}");
        assert_eq!(figure(f.handshake), "12.0");
        assert!(line.contains("h2 HTTP 503"), "{line}");
        assert!(line.contains("h3 quic timeout"), "{line}");
        assert!(line.ends_with("×  missed 2 slots"), "{line}");
        assert!(
            history
                .legend()
                .starts_with("UTC       h1  dns conn  tls ttfb  tot")
        );
        assert!(
            history
                .legend()
                .contains("h3  dns conn quic ttfb  tot trend")
        );
    }

    #[test]
    fn notes_name_missed_slots_and_breached_gates() {
        assert_eq!(missed_note(0), None);
        assert_eq!(missed_note(1).as_deref(), Some("missed 1 slot"));
        let r = result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 1_000, 2_000, 3_000)]),
            run(Protocol::H2, vec![fresh(1, 0, 1_000, 2_000, 3_000)]),
        ]);
        let met = evaluate(&r, &parse_gates(&["total=1s".to_owned()]).unwrap());
        assert_eq!(breach_note(&met), None);
        let gates = parse_gates(&["total=1ms,h2:ttfb.p95=1ms".to_owned()]).unwrap();
        assert_eq!(
            breach_note(&evaluate(&r, &gates)).as_deref(),
            Some("SLO breached: total.median (h1 h2); h2:ttfb.p95 (h2)")
        );
    }

    #[test]
    fn the_summary_counts_failures_and_takes_medians_and_p95_of_successes() {
        let mut history = History::new(&[Protocol::H1, Protocol::H3]);
        for (i, wait) in [10_000, 20_000, 30_000, 40_000].into_iter().enumerate() {
            let h3 = if i == 3 {
                failed(fresh(1, 0, 0, 0, 0), Phase::Quic, FailureKind::Timeout)
            } else {
                fresh(1, 0, 0, 0, wait)
            };
            let mut r = result(vec![
                run(Protocol::H1, vec![fresh(1, 0, 1_000, 2_000, wait)]),
                run(Protocol::H3, vec![h3]),
            ]);
            r.started_at_unix_ms = 1_000 * i as u64;
            history.push(&r);
        }
        let summary = history.summary();
        assert!(
            summary.starts_with("4 runs, started 00:00:00 to 00:00:03 UTC"),
            "{summary}"
        );
        let row = |p: &str| {
            summary
                .lines()
                .find(|l| l.trim_start().starts_with(p))
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let h1: Vec<Micros> = [10_000, 20_000, 30_000, 40_000]
            .map(|w| {
                Cell::of(&run(Protocol::H1, vec![fresh(1, 0, 1_000, 2_000, w)]))
                    .total()
                    .unwrap()
            })
            .to_vec();
        assert!(
            row("h1").starts_with(&format!(
                "h1 0 of 4 {} {}",
                format::ms(h1[1]),
                format::ms(h1[3])
            )),
            "{summary}"
        );
        assert!(row("h3").starts_with("h3 1 of 4"), "{summary}");
        assert_eq!(History::new(&[Protocol::H1]).summary(), "0 runs\n");
    }
}
