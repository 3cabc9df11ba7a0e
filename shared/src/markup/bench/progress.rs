//! Where a running bench is: a sweep's step, the protocol, its requests, errors and time, and a
//! progress bar over every run planned.

use super::super::element;
use crate::bench::{BenchOptions, BenchProgress};
use crate::format::count;
use std::fmt::Write as _;

/// The progress section of a bench set up with `options`, at `p`.
pub fn progress(options: &BenchOptions, p: &BenchProgress) -> String {
    let hint = if steps(options) > 1 {
        "Steps run one after another, each protocol in turn, never at once. The decay chart grows as each step ends."
    } else {
        "Protocols run one after another, never at once. The table and chart appear when the last one is done."
    };
    let mut out = format!(
        r#"<section class="bench-progress" aria-label="Progress"><progress max="1" value="{:.3}"></progress>"#,
        fraction(options, p)
    );
    element(
        &mut out,
        "p",
        r#" class="progress-text" role="status" aria-live="polite""#,
        &text(options, p),
    );
    let _ = write!(out, r#"<p class="hint">{hint}</p></section>"#);
    out
}

/// The protocols a step runs, at least one.
fn protocols(options: &BenchOptions) -> u32 {
    (options.protocols.len() as u32).max(1)
}

/// The steps a bench runs: a sweep's, at least one.
fn steps(options: &BenchOptions) -> u32 {
    options
        .sweep
        .as_ref()
        .map_or(1, |s| s.steps.len() as u32)
        .max(1)
}

/// The progress in words: `Step 1 of 2 (0 ms): HTTP/2 (2 of 3) measuring: 1,200 requests, 0
/// errors, 0.4 s of 1 s`.
pub fn text(options: &BenchOptions, p: &BenchProgress) -> String {
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
pub fn fraction(options: &BenchOptions, p: &BenchProgress) -> f64 {
    let total = protocols(options) * steps(options);
    let within = match (options.duration_ms, p.protocol) {
        (Some(ms), Some(_)) if ms > 0 && !p.warming_up => {
            (p.elapsed_ms as f64 / ms as f64).min(1.0)
        }
        _ => 0.0,
    };
    ((f64::from(p.protocols_done) + within) / f64::from(total.max(1))).min(1.0)
}
