//! A running bench followed in the page.

use leptos::prelude::*;

/// Drawn at the end of a running bench's page, and nothing to see: once hydrated it asks for the
/// view of the page's bench (its id from the page's address) every 500 ms and puts in the parts
/// that changed (the progress line in place, so its live region reads each change; a sweep's
/// decay chart as each step ends). Once the bench no longer runs, the page loads again, drawn
/// finished by the server.
#[island]
pub fn BenchFollow() -> impl IntoView {
    #[cfg(feature = "hydrate")]
    follow::start();
}

/// The following, in the browser. The server draws each state of the bench (the Leptos component
/// `pages::bench`); its view is put in as drawn rather than drawn here, which would ship the
/// bench's components and record reader in the bundle.
#[cfg(feature = "hydrate")]
mod follow {
    use crate::{api, browser_measure, navigate, result_page::actions};
    use h123_shared::route::Route;
    use wasm_bindgen::JsCast;
    use web_sys::Element;

    /// How often a running bench's view is asked for.
    pub const POLL_MS: i32 = 500;

    /// Starts following the page's bench, from its drawing as the server drew it: taken now,
    /// while the islands hydrate, before their effects write its times and links.
    pub fn start() {
        let Route::Bench(id) = navigate::current() else {
            return;
        };
        let Some(drawn) = page().and_then(|bench| copy_of(&bench)) else {
            return;
        };
        wasm_bindgen_futures::spawn_local(follow(id, drawn));
    }

    /// The page's bench, `#bench`.
    fn page() -> Option<Element> {
        web_sys::window()?.document()?.get_element_by_id("bench")
    }

    /// A detached copy of `element`.
    fn copy_of(element: &Element) -> Option<Element> {
        element.clone_node_with_deep(true).ok()?.dyn_into().ok()
    }

    /// `html` (a bench's view) parsed outside the page.
    fn parse(html: &str) -> Option<Element> {
        let holder = web_sys::window()?.document()?.create_element("div").ok()?;
        holder.set_inner_html(html);
        holder.first_element_child()
    }

    /// Asks for bench `id`'s view until it no longer runs; `drawn` is the drawing the page shows.
    /// A failed request is made again at the next tick.
    async fn follow(id: String, mut drawn: Element) {
        loop {
            browser_measure::sleep(POLL_MS).await;
            let Some(next) = api::bench_view(&id)
                .await
                .ok()
                .and_then(|html| parse(&html))
            else {
                continue;
            };
            let (Some(window), Some(shown)) = (web_sys::window(), page()) else {
                return;
            };
            let (parts, before, after) = (children(&shown), children(&drawn), children(&next));
            let running = next.get_attribute("data-status").as_deref() == Some("running");
            if !running || parts.len() != after.len() || before.len() != after.len() {
                // Finished (or drawn otherwise): the server draws the whole page again.
                let _ = window.location().reload();
                return;
            }
            for ((part, was), now) in parts.iter().zip(&before).zip(&after) {
                if was.outer_html() != now.outer_html()
                    && !progress(part, now)
                    && let Some(fresh) = copy_of(now)
                {
                    let _ = part.replace_with_with_node_1(&fresh);
                }
            }
            if let Some(document) = window.document() {
                actions::api_links(&document);
            }
            drawn = next;
        }
    }

    /// Puts the progress of `now` into the progress section `part`, if both are one.
    fn progress(part: &Element, now: &Element) -> bool {
        let is_progress = |e: &Element| e.matches(".bench-progress").unwrap_or(false);
        if !is_progress(part) || !is_progress(now) {
            return false;
        }
        for selector in ["progress", ".progress-text"] {
            let (Ok(Some(shown)), Ok(Some(fresh))) =
                (part.query_selector(selector), now.query_selector(selector))
            else {
                return false;
            };
            if let Some(value) = fresh.get_attribute("value") {
                let _ = shown.set_attribute("value", &value);
            }
            if selector != "progress" {
                shown.set_text_content(fresh.text_content().as_deref());
            }
        }
        true
    }

    /// `parent`'s element children, in order.
    fn children(parent: &Element) -> Vec<Element> {
        let all = parent.children();
        (0..all.length()).filter_map(|i| all.item(i)).collect()
    }
}
