//! A running bench followed: its view asked for every [`POLL_MS`], and of each new drawing only
//! the parts that changed put in the page, so what the reader is doing (a copied permalink's
//! note, an open table, the keyboard's place) survives the progress; the progress line is
//! updated in place, so its live region reads each change.

use crate::result_page::{focus_nth, focused_index};
use crate::{api, browser_measure};
use wasm_bindgen::JsCast;
use web_sys::Element;

/// How often a running bench's view is asked for.
const POLL_MS: i32 = 500;

/// A drawing of the bench as the server made it (parsed, outside the page), to tell what the
/// next one changes.
pub struct Drawn(Element);

impl Drawn {
    /// A copy of `bench` as drawn, before the page adopted it.
    pub fn of(bench: &Element) -> Self {
        let copy = bench
            .clone_node_with_deep(true)
            .ok()
            .and_then(|n| n.dyn_into::<Element>().ok());
        Drawn(copy.unwrap_or_else(|| bench.clone()))
    }

    /// `html` (a bench's view) parsed outside the page.
    fn parse(html: &str) -> Option<Self> {
        let document = web_sys::window()?.document()?;
        let holder = document.create_element("div").ok()?;
        holder.set_inner_html(html);
        Some(Drawn(holder.first_element_child()?))
    }
}

/// Asks for bench `id`'s view until it no longer runs, putting each new drawing in the page;
/// `drawn` is the one it shows. A failed request is made again at the next tick.
pub async fn follow(id: String, mut drawn: Drawn) {
    loop {
        browser_measure::sleep(POLL_MS).await;
        let Ok(html) = api::bench_view(&id).await else {
            continue;
        };
        let Some(next) = Drawn::parse(&html) else {
            continue;
        };
        let Some(document) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        let Some(page) = document.get_element_by_id("bench") else {
            return;
        };
        update(&page, &drawn, &next);
        drawn = next;
        if !super::is_running(&page) {
            return;
        }
    }
}

/// Brings the page's bench `page` (drawn as `old`, then adopted) to the drawing `new`: each
/// changed part replaced, the progress line updated in place; the whole replaced when the parts
/// are not the same ones (the bench finished), the keyboard kept at its place.
fn update(page: &Element, old: &Drawn, new: &Drawn) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let (shown, before, after) = (children(page), children(&old.0), children(&new.0));
    let mut focused = None;
    if shown.len() != after.len() || before.len() != after.len() {
        focused = focused_index(&document, page);
        page.set_outer_html(&new.0.outer_html());
    } else {
        for ((part, was), now) in shown.iter().zip(&before).zip(&after) {
            if was.outer_html() == now.outer_html() {
                continue;
            }
            if !progress(part, now)
                && let Ok(fresh) = now.clone_node_with_deep(true)
            {
                let _ = part.replace_with_with_node_1(&fresh);
            }
        }
        for name in ["data-status", "data-title"] {
            let _ = page.set_attribute(name, &new.0.get_attribute(name).unwrap_or_default());
        }
    }
    if let Some(bench) = document.get_element_by_id("bench") {
        super::adopt(&document, &bench);
        if let Some(i) = focused {
            focus_nth(&bench, i);
        }
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
