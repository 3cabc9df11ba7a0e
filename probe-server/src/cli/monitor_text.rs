//! `h123 monitor`'s words: a monitor, a list of them, and a series as a table (UTC).

use h123_shared::format;
use h123_shared::monitor::{Bucket, Monitor, Series, SeriesLine, every_text};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// A monitor in two or three lines.
pub fn monitor(m: &Monitor) -> String {
    let protocols: Vec<&str> = m
        .spec
        .options
        .protocols
        .iter()
        .map(|p| p.as_str())
        .collect();
    let state = if m.paused {
        "paused".to_owned()
    } else {
        format!("next run {}", format::wall_clock(m.next_slot_unix_ms, 0))
    };
    let mut out = format!(
        "monitor {} · {} every {} · {} · {} · {state}\n",
        m.id,
        m.spec.options.url,
        every_text(m.spec.every_ms),
        protocols.join(", "),
        m.spec.options.visibility.as_str(),
    );
    if !m.spec.thresholds.is_empty() {
        let _ = writeln!(out, "thresholds: {}", m.spec.thresholds.join(", "));
    }
    out
}

/// A line per monitor, or a sentence when there are none.
pub fn list(monitors: &[Monitor]) -> String {
    if monitors.is_empty() {
        return "no monitors (public, or under your owner token)\n".into();
    }
    let mut out = String::new();
    for m in monitors {
        let _ = writeln!(
            out,
            "{}  every {:<5} {:<7} {}",
            m.id,
            every_text(m.spec.every_ms),
            if m.paused { "paused" } else { "running" },
            m.spec.options.url
        );
    }
    out
}

/// A series as a table: a row per bucket, a column per line (median, p95 in brackets, failed
/// runs marked), missed slots, then the window's verdict.
pub fn series(s: &Series) -> String {
    let mut out = format!(
        "{} from {} to {}, buckets of {} (times UTC)\n",
        s.metric.as_str(),
        format::wall_clock(s.from_unix_ms, 0),
        format::wall_clock(s.to_unix_ms, 0),
        every_text(s.bucket_ms)
    );
    if s.lines.is_empty() && s.missed.is_empty() {
        out.push_str("no runs in this window\n");
        return out;
    }
    let starts: BTreeSet<u64> = s
        .lines
        .iter()
        .flat_map(|l| l.buckets.iter().map(|b| b.start_unix_ms))
        .chain(s.missed.iter().map(|m| m.start_unix_ms))
        .collect();
    let _ = write!(out, "{:<8}", "time");
    for line in &s.lines {
        let _ = write!(out, "  {:<22}", header(line));
    }
    out.push_str("  missed\n");
    for start in starts {
        let _ = write!(out, "{:<8}", time_of_day(start));
        for line in &s.lines {
            let cell = line
                .buckets
                .iter()
                .find(|b| b.start_unix_ms == start)
                .map_or_else(|| "-".to_owned(), cell);
            let _ = write!(out, "  {cell:<22}");
        }
        let missed = s
            .missed
            .iter()
            .find(|m| m.start_unix_ms == start)
            .map_or(0, |m| m.missed);
        let _ = writeln!(
            out,
            "  {}",
            if missed == 0 {
                String::new()
            } else {
                missed.to_string()
            }
        );
    }
    if let Some(verdict) = &s.verdict {
        let _ = writeln!(out, "{}", verdict.sentence);
    }
    out
}

fn header(line: &SeriesLine) -> String {
    if line.vantage.is_empty() {
        line.protocol.as_str().to_owned()
    } else {
        format!("{} @ {}", line.protocol, line.vantage)
    }
}

/// `12.3 ms (15.0 ms)`, with `✗N` for N runs that failed and `!` for a breached threshold.
fn cell(b: &Bucket) -> String {
    let mut text = match (b.median, b.p95) {
        (Some(median), Some(p95)) if b.runs > 1 => {
            format!("{} ({})", format::ms(median), format::ms(p95))
        }
        (Some(median), _) => format::ms(median),
        _ => "failed".to_owned(),
    };
    if b.failures > 0 && b.median.is_some() {
        let _ = write!(text, " ✗{}", b.failures);
    }
    if b.breaches > 0 {
        text.push_str(" !");
    }
    text
}

/// `HH:MM:SS` of a Unix time in milliseconds, UTC.
fn time_of_day(unix_ms: u64) -> String {
    let second = unix_ms / 1000 % 86_400;
    format!(
        "{:02}:{:02}:{:02}",
        second / 3600,
        second / 60 % 60,
        second % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::monitor::{Figures, MonitorPoint, PointState, SeriesMetric, missed_point};
    use h123_shared::{Micros, Protocol};

    fn point(slot: u64, protocol: Protocol, total_ms: u64, state: PointState) -> MonitorPoint {
        MonitorPoint {
            protocol: Some(protocol),
            state,
            vantage: String::new(),
            figures: Figures {
                total: (state == PointState::Ok).then_some(Micros(total_ms * 1000)),
                ..Figures::default()
            },
            ..missed_point(slot, 0)
        }
    }

    #[test]
    fn a_series_reads_as_a_table_with_failures_missed_slots_and_the_verdict() {
        let start = 1_700_000_000_000 - 1_700_000_000_000 % 60_000;
        let points = vec![
            point(start, Protocol::H2, 40, PointState::Ok),
            point(start, Protocol::H3, 30, PointState::Ok),
            point(start + 60_000, Protocol::H2, 41, PointState::Ok),
            point(start + 60_000, Protocol::H3, 0, PointState::Failed),
            missed_point(start + 120_000, 1),
        ];
        let s = h123_shared::monitor::series(
            &points,
            SeriesMetric::Total,
            (start, start + 180_000),
            60_000,
            h123_shared::monitor::MAX_BUCKETS,
        );
        let text = series(&s);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("total from "), "{text}");
        assert!(
            lines[1].starts_with("time") && lines[1].contains("h2") && lines[1].contains("h3"),
            "{text}"
        );
        assert!(
            lines[2].contains("40.0 ms") && lines[2].contains("30.0 ms"),
            "{text}"
        );
        assert!(
            lines[3].contains("41.0 ms") && lines[3].contains("failed"),
            "{text}"
        );
        assert!(
            lines[4].trim_end().ends_with('1'),
            "the missed slot: {text}"
        );
        assert!(lines[5].starts_with("HTTP/3 was the fastest"), "{text}");
        assert_eq!(time_of_day(86_400_000 + 3_723_000), "01:02:03");
    }
}
