//! A bench's summary line (target, status, set-up, when), its title and link preview's words,
//! and its actions (copy the permalink, download the JSON).

use super::super::{escape, time};
use crate::Protocol;
use crate::api::{BenchLinks, BenchRecord, ProbeStatus};
use crate::bench::BenchOptions;
use crate::format::rate;
use std::fmt::Write as _;

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
fn status_words(status: ProbeStatus) -> &'static str {
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

/// The line above a bench: its kind, target, status, method, protocols, set-up and when (a
/// `<time>` the page writes on the reader's clock).
pub fn summary(record: &BenchRecord) -> String {
    let o = &record.options;
    let class = match record.status {
        ProbeStatus::Running => "status running",
        ProbeStatus::Done => "status done",
        ProbeStatus::Cancelled => "status cancelled",
    };
    format!(
        r#"<section class="summary" aria-label="Bench"><p class="kind">Load comparison</p><h1 class="target">{}</h1><p class="meta"><span class="{class}" role="status">{}</span> {} · {} · {} · {}</p></section>"#,
        escape(&o.url),
        status_words(record.status),
        o.method.as_str(),
        Protocol::versions(&o.protocols),
        escape(&setup(o)),
        time(record.created_at_unix_ms)
    )
}

/// The actions bar: copy the permalink (its text below as a path, which the page prefixes with
/// its origin), download the JSON (`href` the API's path, also in `data-api` for a page whose API
/// lives elsewhere to prefix).
pub fn actions(id: &str) -> String {
    let links = BenchLinks::for_id(id);
    let mut out = String::from(
        r#"<nav class="actions" aria-label="Bench actions"><button type="button" data-action="copy" data-copy="permalink">Copy permalink</button>"#,
    );
    let json = escape(&links.self_);
    let _ = write!(
        out,
        r#"<a class="button" href="{json}" data-api="{json}" download="h123-bench-{}.json">Download JSON</a><span class="note" role="status"></span></nav><details class="copy-texts"><summary>Permalink</summary><pre data-text="permalink">{}</pre></details>"#,
        escape(id),
        escape(&links.permalink)
    );
    out
}
