//! A bench's summary line (target, status, set-up, when) and its actions (copy the permalink,
//! download the JSON).

use crate::islands::{CopyPermalink, PermalinkText};
use crate::pages::parts::time;
use h123_shared::Protocol;
use h123_shared::api::{BenchLinks, BenchRecord, ProbeStatus};
use h123_shared::bench::words::{setup, status_words};
use leptos::prelude::*;

/// The line above a bench: its kind, target, status, method, protocols, set-up and when (a
/// `<time>` the page writes on the reader's clock).
pub fn summary(record: &BenchRecord) -> impl IntoView + use<> {
    let o = &record.options;
    let class = match record.status {
        ProbeStatus::Running => "status running",
        ProbeStatus::Done => "status done",
        ProbeStatus::Cancelled => "status cancelled",
    };
    let how = format!(
        " {} · {} · {} · ",
        o.method.as_str(),
        Protocol::versions(&o.protocols),
        setup(o)
    );
    view! {
        <section class="summary" aria-label="Bench">
            <p class="kind">"Load comparison"</p>
            <h1 class="target">{o.url.clone()}</h1>
            <p class="meta">
                <span class=class role="status">{status_words(record.status)}</span>
                {how}
                {time(record.created_at_unix_ms)}
            </p>
        </section>
    }
}

/// The actions bar (the island [`CopyPermalink`]): copy the permalink (its text below as a path,
/// the page's whole address once [`PermalinkText`] is hydrated), download the JSON (`href` the
/// API's path, also in `data-api` for a page whose API lives elsewhere to prefix).
pub fn actions(id: &str) -> impl IntoView + use<> {
    let links = BenchLinks::for_id(id);
    let json = links.self_.clone();
    let download = format!("h123-bench-{id}.json");
    view! {
        <nav class="actions" aria-label="Bench actions">
            <CopyPermalink>
                <a class="button" href=json.clone() data-api=json download=download>"Download JSON"</a>
            </CopyPermalink>
        </nav>
        <details class="copy-texts">
            <summary>"Permalink"</summary>
            <PermalinkText>{links.permalink}</PermalinkText>
        </details>
    }
}
