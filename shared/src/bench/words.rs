//! A bench in words, as its page, its link preview and its progress say it: the set-up, the
//! status, the title, a sentence for previews, where a running bench is, and why figures are
//! missing.

use crate::api::{BenchRecord, ProbeStatus};
use crate::bench::{BenchOptions, BenchProgress};
use crate::format::{count, rate};

/// What a sweep stopped before its last step says above the steps it finished.
pub const SWEEP_CANCELLED: &str = "This sweep was stopped before its last step (the server stopped or it ran over its time limit): the chart shows the steps it finished.";

/// What a bench stopped before it finished says in place of its figures.
pub const BENCH_CANCELLED: &str = "This bench was stopped before it finished (the server stopped or the bench ran over its time limit), so it has no figures. Start a new one from the home page.";

/// How the bench was set up, in a few words: `16 in flight · 10 s per protocol · warm`.
pub fn setup(o: &BenchOptions) -> String {
    let mut parts = vec![format!("{} in flight", o.concurrency)];
    if let Some(c) = o.connections {
        parts.push(format!("{c} connection(s)"));
    }
    match (o.duration_ms, o.requests) {
        (_, Some(n)) => parts.push(format!("{n} requests per protocol")),
        (Some(ms), None) => parts.push(format!("{} s per protocol", ms as f64 / 1000.0)),
        (None, None) => {}
    }
    if let Some(r) = o.rate {
        parts.push(format!("{}/s fixed rate", rate(f64::from(r))));
    }
    if o.warmup_ms > 0 {
        parts.push(format!("{} s warm-up", o.warmup_ms as f64 / 1000.0));
    }
    parts.push(
        if o.cold {
            "cold (a new connection per request)"
        } else {
            "warm (reused connections)"
        }
        .into(),
    );
    if let Some(sweep) = &o.sweep {
        parts.push(format!("swept over {sweep}"));
    }
    parts.join(" · ")
}

/// The status in words: `measuring…`, `done`, `cancelled`.
pub fn status_words(status: ProbeStatus) -> &'static str {
    match status {
        ProbeStatus::Running => "measuring…",
        ProbeStatus::Done => "done",
        ProbeStatus::Cancelled => "cancelled",
    }
}

/// The page's title: `Load comparison of URL: done`.
pub fn title(record: &BenchRecord) -> String {
    format!(
        "Load comparison of {}: {}",
        record.options.url,
        status_words(record.status)
    )
}

/// The bench in a sentence, for link previews: its state, or each protocol's requests per second.
pub fn description(record: &BenchRecord) -> String {
    match (record.status, &record.result, &record.options.sweep) {
        (ProbeStatus::Running, _, _) => "Running: the load is being measured.".to_owned(),
        (_, _, Some(sweep)) => format!(
            "A sweep over {sweep}: {} of {} steps measured.",
            record.steps.len(),
            sweep.steps.len()
        ),
        (ProbeStatus::Done, Some(result), None) => {
            let rates: Vec<String> = result
                .runs
                .iter()
                .map(|r| match &r.failure {
                    Some(_) if r.requests == 0 => {
                        format!("{} did not run", r.protocol.http_version())
                    }
                    _ => format!(
                        "{} {}",
                        r.protocol.http_version(),
                        rate(r.requests_per_sec())
                    ),
                })
                .collect();
            format!("Requests per second: {}.", rates.join(" · "))
        }
        _ => "Cancelled before it finished: no figures.".to_owned(),
    }
}

/// The protocols a step runs, at least one.
fn protocols(options: &BenchOptions) -> u32 {
    (options.protocols.len() as u32).max(1)
}

/// The steps a bench runs: a sweep's, at least one.
pub fn steps(options: &BenchOptions) -> u32 {
    options
        .sweep
        .as_ref()
        .map_or(1, |s| s.steps.len() as u32)
        .max(1)
}

/// The progress in words: `Step 1 of 2 (0 ms): HTTP/2 (2 of 3) measuring: 1,200 requests, 0
/// errors, 0.4 s of 1 s`.
pub fn progress_text(options: &BenchOptions, p: &BenchProgress) -> String {
    let protocols = protocols(options);
    let steps = steps(options);
    let total = protocols * steps;
    // A sweep's protocols count on from step to step.
    let step = (p.protocols_done / protocols).min(steps - 1);
    let at_step = options
        .sweep
        .as_ref()
        .and_then(|s| {
            let value = *s.steps.get(step as usize)?;
            Some(format!(
                "Step {} of {steps} ({}): ",
                step + 1,
                s.label(value)
            ))
        })
        .unwrap_or_default();
    let Some(protocol) = p.protocol else {
        return if p.protocols_done == 0 {
            "Opening connections…".to_string()
        } else {
            format!(
                "{} of {total} runs done; starting the next…",
                p.protocols_done
            )
        };
    };
    let phase = if p.warming_up {
        "warming up"
    } else {
        "measuring"
    };
    let time = match options.duration_ms {
        Some(ms) if !p.warming_up => format!(
            "{:.1} s of {:.0} s",
            p.elapsed_ms as f64 / 1000.0,
            ms as f64 / 1000.0
        ),
        _ => format!("{:.1} s", p.elapsed_ms as f64 / 1000.0),
    };
    format!(
        "{at_step}{} ({} of {protocols}) {phase}: {} requests, {} errors, {time}",
        protocol.http_version(),
        p.protocols_done % protocols + 1,
        count(p.requests),
        count(p.errors),
    )
}

/// How far the bench is, from 0 to 1: the runs done, and the measured part of the current one.
pub fn progress_fraction(options: &BenchOptions, p: &BenchProgress) -> f64 {
    let total = protocols(options) * steps(options);
    let within = match (options.duration_ms, p.protocol) {
        (Some(ms), Some(_)) if ms > 0 && !p.warming_up => {
            (p.elapsed_ms as f64 / ms as f64).min(1.0)
        }
        _ => 0.0,
    };
    ((f64::from(p.protocols_done) + within) / f64::from(total.max(1))).min(1.0)
}
