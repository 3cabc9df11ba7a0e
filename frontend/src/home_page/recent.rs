//! The most recent results, from the API's list: this browser's own probes and the public ones,
//! drawn as markup into the home page's list once it arrives, on the reader's clock.

use crate::api;
use crate::components::local_time;
use h123_shared::api::{ProbeList, ProbeSummary};
use h123_shared::markup::{element, escape};
use std::fmt::Write as _;
use wasm_bindgen_futures::spawn_local;

/// How many recent results the home page lists.
const RECENT: u32 = 10;

/// Asks for the recent results and puts them in the page's list.
pub fn fill() {
    spawn_local(async move {
        let answer = api::recent_probes(RECENT).await;
        let list = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.query_selector(".recent .recent-items").ok().flatten());
        if let Some(list) = list {
            list.set_inner_html(&markup(&answer));
        }
    });
}

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
