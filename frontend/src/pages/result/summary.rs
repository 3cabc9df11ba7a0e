//! The line above a result: what was measured, how, when, whether it is still running, and how
//! long it waited for a slot; and the page's title, which says the answer.

use crate::pages::parts::time;
use h123_shared::analysis::Outcome;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::{ConnectionMode, Protocol};
use leptos::prelude::*;

/// The summary of a probe: `<section class="summary">` with the URL as its heading and the
/// outcome badge, method, attempts, protocols, mode, creation time, vantages and wait below it.
pub fn summary(record: &ProbeRecord) -> impl IntoView + use<> {
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
            Some(a.headline.clone())
        }
        _ => None,
    };
    let how = format!(
        " {} · {} × {} × {protocols} · {mode} · ",
        o.method.as_str(),
        o.rounds,
        o.repeat
    );
    let vantages = (!o.vantages.is_empty()).then(|| format!(" · from {}", o.vantages.join(", ")));
    let waited = record
        .queued_ms
        .filter(|ms| *ms > 0)
        .map(|ms| format!(" · waited {ms} ms for a slot (shared fairly between clients)"));
    view! {
        <section class="summary" aria-label="Probe">
            <h1 class="target">{o.url.clone()}</h1>
            <p class="meta">
                <span class=class role="status" title=headline>{status}</span>
                {how}
                {time(record.created_at_unix_ms)}
                {vantages}
                {waited}
            </p>
        </section>
    }
}

/// The page's title (as text): the URL and the verdict's answer, or while there is none, the
/// status word.
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
