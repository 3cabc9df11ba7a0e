//! The bench pieces: its summary line, progress, actions, comparison table,
//! latency percentile chart, caveats, and the form that starts one.

mod chart;
mod decay;
mod form;
mod table;

pub use chart::PercentileChart;
pub use decay::DecayChart;
pub use form::BenchForm;
pub use table::BenchTable;

use super::clock::local_time;
use h123_shared::Protocol;
use h123_shared::api::{BenchLinks, BenchRecord, ProbeStatus};
use h123_shared::bench::{BenchOptions, BenchProgress};
use h123_shared::format::{count, rate};
use leptos::prelude::*;

/// How the bench was set up, in a few words: `16 in flight · 10 s per protocol · warm`.
fn setup(o: &BenchOptions) -> String {
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

/// The line above a bench: target, status, set-up, when.
#[component]
pub fn BenchSummaryLine(
    /// The bench.
    record: BenchRecord,
) -> impl IntoView {
    let o = &record.options;
    let protocols = Protocol::versions(&o.protocols);
    let (status, class) = match record.status {
        ProbeStatus::Running => ("measuring…", "status running"),
        ProbeStatus::Done => ("done", "status done"),
        ProbeStatus::Cancelled => ("cancelled", "status cancelled"),
    };
    crate::title::set(&format!("Load comparison of {}: {status}", o.url));
    view! {
        <section class="summary" aria-label="Bench">
            <p class="kind">"Load comparison"</p>
            <h1 class="target">{o.url.clone()}</h1>
            <p class="meta">
                <span class=class role="status">{status}</span>
                {format!(
                    " {} · {} · {} · {}",
                    o.method.as_str(),
                    protocols,
                    setup(o),
                    local_time(record.created_at_unix_ms),
                )}
            </p>
        </section>
    }
}

/// Where a running bench is: protocol, requests, errors, time.
#[component]
pub fn BenchProgressView(
    /// The options (for the protocol count and planned duration).
    options: BenchOptions,
    /// The latest progress.
    #[prop(into)]
    progress: Signal<BenchProgress>,
) -> impl IntoView {
    let protocols = (options.protocols.len() as u32).max(1);
    let sweep = options.sweep.clone();
    let steps = sweep.as_ref().map_or(1, |s| s.steps.len() as u32);
    let total = protocols * steps;
    let planned_ms = options.duration_ms;
    let text = move || {
        let p = progress.get();
        // A sweep's protocols count on from step to step.
        let step = (p.protocols_done / protocols).min(steps - 1);
        let at_step = sweep
            .as_ref()
            .map(|s| {
                let value = s.steps[step as usize];
                format!("Step {} of {steps} ({}): ", step + 1, s.label(value))
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
        let time = match planned_ms {
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
    };
    let fraction = move || {
        let p = progress.get();
        let within = match (planned_ms, p.protocol) {
            (Some(ms), Some(_)) if ms > 0 && !p.warming_up => {
                (p.elapsed_ms as f64 / ms as f64).min(1.0)
            }
            _ => 0.0,
        };
        ((f64::from(p.protocols_done) + within) / f64::from(total.max(1))).min(1.0)
    };
    view! {
        <section class="bench-progress" aria-label="Progress">
            <progress max="1" value=move || format!("{:.3}", fraction())></progress>
            <p class="progress-text" role="status" aria-live="polite">{text}</p>
            <p class="hint">
                {if steps > 1 {
                    "Steps run one after another, each protocol in turn, never at once. The decay chart grows as each step ends."
                } else {
                    "Protocols run one after another, never at once. The table and chart appear when the last one is done."
                }}
            </p>
        </section>
    }
}

/// Copy the permalink, download the JSON.
#[component]
pub fn BenchActions(
    /// The bench's id.
    id: String,
) -> impl IntoView {
    let links = BenchLinks::for_id(&id);
    let permalink = format!("{}{}", crate::clipboard::origin(), links.permalink);
    let shown = permalink.clone();
    let note = RwSignal::new(String::new());
    view! {
        <nav class="actions" aria-label="Bench actions">
            <button
                type="button"
                on:click=move |_| {
                    note.set(if crate::clipboard::copy(&permalink) {
                        "Permalink copied to the clipboard.".into()
                    } else {
                        "This page cannot use the clipboard; copy the permalink from below.".into()
                    })
                }
            >
                "Copy permalink"
            </button>
            <a class="button" href=crate::api::api_url(&links.self_) download=format!("h123-bench-{id}.json")>
                "Download JSON"
            </a>
            <span class="note" role="status">{move || note.get()}</span>
        </nav>
        <details class="copy-texts">
            <summary>"Permalink"</summary>
            <pre>{shown}</pre>
        </details>
    }
}

/// What a reader of the figures should keep in mind: a bench's or a sweep's caveats.
#[component]
pub fn Caveats(
    /// The caveats, each one sentence.
    notes: Vec<String>,
) -> impl IntoView {
    view! {
        <section class="caveats" aria-labelledby="caveats-title">
            <h2 id="caveats-title">"Before you conclude"</h2>
            <ul>{notes.into_iter().map(|c| view! { <li>{c}</li> }).collect_view()}</ul>
        </section>
    }
}
