//! The most recent results, from the API's list: this browser's own probes and the public ones.
//! Drawn as markup once the list arrives.

use super::clock::local_time;
use crate::api;
use h123_shared::api::{ProbeList, ProbeSummary};
use h123_shared::markup::{element, escape};
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::fmt::Write as _;

/// How many recent results the home page lists.
const RECENT: u32 = 10;

/// The list's markup, or what stands in for it.
fn markup(answer: &api::Result<ProbeList>) -> String {
    let mut out = String::new();
    match answer {
        Ok(page) if page.items.is_empty() => {
            out.push_str(r#"<p class="hint">No results yet: yours will be the first.</p>"#);
        }
        Ok(page) => {
            out.push_str(r#"<ul class="recent-list">"#);
            for item in &page.items {
                recent_item(&mut out, item);
            }
            out.push_str("</ul>");
        }
        Err(_) => {
            out.push_str(r#"<p class="hint">Recent results are not available right now.</p>"#);
        }
    }
    out
}

/// One recent result: its URL, its status at a glance (the result page's badge words, an HTTP
/// error named as such), what was asked and when, and its verdict (the result page's headline,
/// as the server stored it when the probe finished).
fn recent_item(out: &mut String, item: &ProbeSummary) {
    let protocols = item
        .protocols
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let _ = write!(out, r#"<li><a href="/r/{}">"#, escape(&item.id));
    let _ = write!(out, "{}</a>", escape(&item.url));
    let (status, class) = item.badge();
    let _ = write!(
        out,
        r#"<span class="meta"><span class="{class}">{status}</span> {}</span>"#,
        escape(&format!(
            "{protocols} · {} · {}",
            local_time(item.created_at_unix_ms),
            item.visibility.as_str()
        ))
    );
    if let Some(verdict) = &item.verdict {
        element(out, "p", r#" class="recent-verdict""#, verdict);
    }
    out.push_str("</li>");
}

/// The recent results list.
#[component]
pub fn RecentList() -> impl IntoView {
    let list = RwSignal::new(String::from(r#"<p class="hint">Loading…</p>"#));
    spawn_local(async move {
        let answer = api::recent_probes(RECENT).await;
        list.set(markup(&answer));
    });
    view! {
        <section class="recent" aria-labelledby="recent-title">
            <h2 id="recent-title">"Recent results"</h2>
            <p class="hint">"Yours (remembered by this browser) and those their authors made public. Others are unlisted: only their link opens them."</p>
            <div inner_html=move || list.get()></div>
        </section>
    }
}
