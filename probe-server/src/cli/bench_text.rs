//! Text output of `h123 bench`: the comparison table in the style of
//! published benchmark tables, the errors, the caveats, and the progress line.

use crate::bench::BenchPlan;
use crate::bench::plan::Stop;
use h123_shared::bench::{self, BenchProgress, BenchResult, BenchRun};
use h123_shared::format::{count, ms};
use h123_shared::sweep::{self, SweepAxis, SweepResult};
use std::fmt::Write;

/// Characters of the progress bar.
const PROGRESS_WIDTH: usize = 24;

/// The final report.
pub fn report(result: &BenchResult) -> String {
    let o = &result.options;
    let mut out = settings_line(o);
    let network = h123_shared::network::describe(
        o.network.as_ref(),
        result
            .runs
            .iter()
            .map(|r| (r.protocol, r.emulated.as_ref())),
    );
    for line in network {
        let _ = writeln!(out, "{line}");
    }
    table(&mut out, result);
    out
}

/// A sweep's report: the settings, how the network was applied (the page's own lines: what each
/// step varied, how each protocol's packets crossed the link and what it dropped), the curve as
/// a table, and the model.
pub fn sweep_report(result: &SweepResult) -> String {
    let mut out = settings_line(&result.options);
    for line in sweep::network_lines(result) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    out.push_str(&sweep::table(result));
    let _ = writeln!(
        out,
        "\n{}",
        match (result.sweep.axis, result.options.rate) {
            (SweepAxis::Rtt, None) => {
                "model: in-flight requests / (mean latency at the first step + the added round \
                 trip), the most a closed loop can complete (Little's law)"
            }
            (SweepAxis::Rtt, Some(_)) => "no model: a fixed-rate bench is an open loop",
            (SweepAxis::Loss, _) => {
                "no model: the Mathis bound is for bulk TCP throughput, not request rates"
            }
        }
    );
    for caveat in sweep::caveats(result) {
        let _ = writeln!(out, "note: {caveat}");
    }
    out
}

/// The first line: method, URL, and how the load was made.
fn settings_line(o: &h123_shared::bench::BenchOptions) -> String {
    let mut out = String::new();
    let stop = match (o.requests, o.duration_ms) {
        (Some(n), _) => format!("{} requests", count(n)),
        (None, Some(d)) => format!("{} s", d as f64 / 1000.0),
        (None, None) => String::new(),
    };
    let connections = if o.cold {
        "a new connection per request".to_owned()
    } else {
        format!(
            "HTTP/1.1 {} connections, HTTP/2 and HTTP/3 {} each",
            o.concurrency,
            o.connections.unwrap_or(1)
        )
    };
    let _ = writeln!(
        out,
        "{} {} · {} in flight · {stop} per protocol{} · {connections}",
        o.method.as_str(),
        o.url,
        o.concurrency,
        o.rate
            .map(|r| format!(" at {} req/s", count(r.into())))
            .unwrap_or_default(),
    );
    out
}

/// The comparison table, the errors and the caveats.
fn table(out: &mut String, result: &BenchResult) {
    let o = &result.options;
    let _ = writeln!(
        out,
        "\n{:<9}{:>10}{:>8}{:>11}{:>6}{:>11}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>7}",
        "",
        "requests",
        "errors",
        "req/s",
        "×best",
        "MB/s",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "ttfb p50",
        "conns"
    );
    let ratios = bench::ratios(result);
    for run in &result.runs {
        if let Some(f) = &run.failure {
            let _ = writeln!(
                out,
                "{:<9}could not run: {} failed ({}): {}",
                run.protocol.http_version(),
                f.phase.as_str(),
                f.kind.as_str(),
                f.message
            );
            continue;
        }
        let of_best = ratios
            .iter()
            .find(|r| r.protocol == run.protocol)
            .map_or("-".to_owned(), |r| format!("{:.2}", r.of_best));
        let l = &run.latency;
        let _ = writeln!(
            out,
            "{:<9}{:>10}{:>8}{:>11}{:>6}{:>11.2}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>7}",
            run.protocol.http_version(),
            count(run.requests),
            count(run.errors),
            format!("{:.1}", run.requests_per_sec()),
            of_best,
            run.bytes_per_sec() / 1e6,
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.p999),
            ms(l.max),
            ms(run.ttfb.p50),
            run.connections_opened,
        );
    }
    let errors: Vec<String> = result.runs.iter().filter_map(error_line).collect();
    if !errors.is_empty() {
        let _ = writeln!(out, "\nerrors:");
        for line in errors {
            let _ = writeln!(out, "  {line}");
        }
    }
    if let Some(rate) = o.rate {
        let _ = writeln!(out, "\narrival rate asked {rate} req/s, sent:");
        for run in result.runs.iter().filter(|r| r.requests > 0) {
            let _ = writeln!(
                out,
                "  {:<9}{:.1} req/s ({:+.2}%)",
                run.protocol.http_version(),
                run.send_rate,
                (run.send_rate / f64::from(rate) - 1.0) * 100.0
            );
        }
    }
    let _ = writeln!(
        out,
        "\nlatency: send to last body byte{}; ttfb: to the response headers",
        if o.rate.is_some() {
            ", from each request's intended send time"
        } else {
            ""
        }
    );
    for caveat in bench::caveats(result) {
        let _ = writeln!(out, "note: {caveat}");
    }
}

fn error_line(run: &BenchRun) -> Option<String> {
    (!run.errors_by_kind.is_empty()).then(|| {
        let kinds: Vec<String> = run
            .errors_by_kind
            .iter()
            .map(|(kind, n)| format!("{} × {kind}", count(*n)))
            .collect();
        format!("{:<9}{}", run.protocol.http_version(), kinds.join(", "))
    })
}

/// One line of progress: protocol, a bar, time or requests, errors.
pub fn progress_line(plan: &BenchPlan, p: &BenchProgress) -> String {
    let Some(protocol) = p.protocol else {
        return format!(
            "connecting ({} of {} protocols done)",
            p.protocols_done,
            plan.options().protocols.len()
        );
    };
    if p.warming_up {
        return format!("{:<9}warming up…", protocol.http_version());
    }
    let (done, total, label) = match plan.stop {
        Stop::After(d) => (
            p.elapsed_ms as f64,
            d.as_millis() as f64,
            format!(
                "{:.1} s / {:.1} s",
                p.elapsed_ms as f64 / 1000.0,
                d.as_secs_f64()
            ),
        ),
        Stop::Count(n) => (
            p.requests as f64,
            n as f64,
            format!("{} / {}", count(p.requests), count(n)),
        ),
    };
    let filled = ((done / total.max(1.0)).clamp(0.0, 1.0) * PROGRESS_WIDTH as f64) as usize;
    format!(
        "{:<9}[{}{}] {label} · {} requests · {} errors",
        protocol.http_version(),
        "#".repeat(filled),
        ".".repeat(PROGRESS_WIDTH - filled),
        count(p.requests),
        count(p.errors)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::bench::{BenchOptions, LatencySummary};
    use h123_shared::{Failure, FailureKind, Micros, Phase, Protocol};

    #[test]
    fn the_table_has_a_row_per_protocol_and_names_failures_and_errors() {
        let mut result = BenchResult::new(
            BenchOptions {
                url: "https://127.0.0.1:8443/".into(),
                requests: Some(1000),
                ..BenchOptions::default()
            },
            0,
        );
        let mut h1 = BenchRun::new(Protocol::H1);
        h1.requests = 1000;
        h1.successes = 990;
        h1.errors = 10;
        h1.errors_by_kind.insert("status 500".into(), 10);
        h1.elapsed_us = Micros(500_000);
        h1.latency = LatencySummary {
            p50: Micros(276),
            ..LatencySummary::default()
        };
        let h3 = BenchRun {
            failure: Some(Failure {
                phase: Phase::Quic,
                kind: FailureKind::Timeout,
                message: "no answer".into(),
            }),
            ..BenchRun::new(Protocol::H3)
        };
        result.runs = vec![h1, h3];
        let text = report(&result);
        assert!(
            text.contains("HTTP/1.1      1,000      10     2000.0  1.00"),
            "{text}"
        );
        assert!(text.contains("0.28 ms"), "{text}");
        assert!(
            text.contains("HTTP/3   could not run: quic failed (timeout): no answer"),
            "{text}"
        );
        assert!(text.contains("10 × status 500"), "{text}");
        assert!(text.contains("note: Loopback"), "{text}");
    }
}
