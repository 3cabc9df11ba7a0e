//! The line above a result: what was measured, how, when, whether it is still running, and how long it waited for a slot.

use h123_shared::ConnectionMode;
use h123_shared::analysis::Outcome;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::format::wall_clock;
use h123_shared::markup::escape;
use leptos::prelude::*;
use std::fmt::Write as _;

/// A date from milliseconds since the epoch, on the reader's clock (`format::wall_clock`; not
/// `toLocaleString`, whose first call cost the result page 17 ms of script, 4x that on a slow phone).
pub fn local_time(unix_ms: u64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_ms as f64));
    // JavaScript gives the offset in minutes west of UTC.
    wall_clock(unix_ms, -(date.get_timezone_offset() as i32))
}

/// The summary of a probe.
#[component]
pub fn ProbeSummaryLine(
    /// The probe.
    record: ProbeRecord,
) -> impl IntoView {
    let o = &record.options;
    let protocols = o
        .protocols
        .iter()
        .map(|p| p.http_version())
        .collect::<Vec<_>>()
        .join(", ");
    let mode = match o.mode {
        ConnectionMode::Warm => "warm (attempts 2+ reuse the connection)",
        ConnectionMode::Cold => "cold (a new connection per attempt)",
        ConnectionMode::Resumed => {
            "resumed (a new connection per attempt, resuming the TLS session)"
        }
    };
    let outcome = record.result.analysis.as_ref().map(|a| a.outcome);
    let (status, class) = match (record.status, outcome) {
        (ProbeStatus::Running, _) => ("measuring…", "status running"),
        (ProbeStatus::Cancelled, _) => ("cancelled", "status cancelled"),
        (ProbeStatus::Done, Some(Outcome::Failed)) => ("failed", "status failed"),
        (ProbeStatus::Done, Some(Outcome::DoneWithErrors)) => ("done with errors", "status errors"),
        (ProbeStatus::Done, _) => ("done", "status done"),
    };
    let answer = record
        .result
        .analysis
        .as_ref()
        .map(|a| a.verdict.summary.as_str());
    crate::title::set(&format!("{}: {}", o.url, answer.unwrap_or(status)));
    let mut meta = format!(
        r#"<span class="{class}" role="status">{status}</span> {} · {} × {protocols} · {mode} · {}"#,
        o.method.as_str(),
        o.repeat,
        local_time(record.created_at_unix_ms),
    );
    if !o.vantages.is_empty() {
        meta.push_str(&escape(&format!(" · from {}", o.vantages.join(", "))));
    }
    if let Some(ms) = record.queued_ms.filter(|ms| *ms > 0) {
        let _ = write!(
            meta,
            " · waited {ms} ms for a slot (shared fairly between clients)"
        );
    }
    view! {
        <section class="summary" aria-label="Probe">
            <h1 class="target">{o.url.clone()}</h1>
            <p class="meta" inner_html=meta></p>
        </section>
    }
}
