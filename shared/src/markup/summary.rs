//! The line above a result as markup: what was measured, how, when, whether it is still running,
//! and how long it waited for a slot; and the page's title, which says the answer.

use super::{escape, time};
use crate::analysis::Outcome;
use crate::api::{ProbeRecord, ProbeStatus};
use crate::{ConnectionMode, Protocol};
use std::fmt::Write as _;

/// The summary of a probe: `<section class="summary">` with the URL as its heading and the
/// outcome badge, method, attempts, protocols, mode, creation time, vantages and wait below it.
pub fn summary(record: &ProbeRecord) -> String {
    let o = &record.options;
    let protocols = Protocol::versions(&o.protocols);
    let mode = match o.mode {
        ConnectionMode::Warm => "warm (each round's later attempts reuse its connection)",
        ConnectionMode::Cold => "cold (a new connection per attempt)",
        ConnectionMode::Resumed => {
            "resumed (a new connection per attempt, resuming the TLS session)"
        }
    };
    let (status, class) = status(record);
    // The outcome's line, as the CLI prints it first.
    let headline = match &record.result.analysis {
        Some(a) if record.status == ProbeStatus::Done && !a.headline.is_empty() => {
            format!(r#" title="{}""#, escape(&a.headline))
        }
        _ => String::new(),
    };
    let mut out = format!(
        r#"<section class="summary" aria-label="Probe"><h1 class="target">{}</h1><p class="meta"><span class="{class}" role="status"{headline}>{status}</span> {} · {} × {} × {protocols} · {mode} · {}"#,
        escape(&o.url),
        o.method.as_str(),
        o.rounds,
        o.repeat,
        time(record.created_at_unix_ms),
    );
    if !o.vantages.is_empty() {
        out.push_str(&escape(&format!(" · from {}", o.vantages.join(", "))));
    }
    if let Some(ms) = record.queued_ms.filter(|ms| *ms > 0) {
        let _ = write!(
            out,
            " · waited {ms} ms for a slot (shared fairly between clients)"
        );
    }
    out.push_str("</p></section>");
    out
}

/// The page's title (as text, not yet escaped): the URL and the verdict's answer, or while there
/// is none, the status word.
pub fn title(record: &ProbeRecord) -> String {
    let answer = record
        .result
        .analysis
        .as_ref()
        .map(|a| a.verdict.summary.as_str());
    format!(
        "{}: {}",
        record.options.url,
        answer.unwrap_or(status(record).0)
    )
}

/// The status word and the badge's classes.
fn status(record: &ProbeRecord) -> (&'static str, &'static str) {
    let outcome = record.result.analysis.as_ref().map(|a| a.outcome);
    match (record.status, outcome) {
        (ProbeStatus::Running, _) => ("measuring…", "status running"),
        (ProbeStatus::Cancelled, _) => ("cancelled", "status cancelled"),
        (ProbeStatus::Done, Some(Outcome::Failed)) => ("failed", "status failed"),
        (ProbeStatus::Done, Some(Outcome::DoneWithErrors)) => ("done with errors", "status errors"),
        (ProbeStatus::Done, _) => ("done", "status done"),
    }
}
