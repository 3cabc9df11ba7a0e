//! The browser as a vantage on a finished result: the server draws the offer hidden (when the
//! result still takes a measurement); only the browser that made the probe shows it, measures
//! (on the measuring page `?measure=browser`, whose policy lets it request the target: the
//! click that opened it was the consent), stores the measurement and draws the result again.

use crate::api::{self, Error};
use crate::browser_measure;
use h123_shared::Method;
use h123_shared::browser::ATTEMPTS;
use std::sync::atomic::{AtomicBool, Ordering};
use wasm_bindgen_futures::spawn_local;
use web_sys::Element;

/// Whether this page has begun its one measurement (a result drawn again must not start another).
static MEASURING: AtomicBool = AtomicBool::new(false);

/// Shows the offer of result `result` (id `id`) when this browser made it: why its URL cannot
/// be measured from here, or the button; on the measuring page, measures at once.
pub fn show(result: &Element, id: &str) {
    let Ok(Some(offer)) = result.query_selector("#measure-offer") else {
        return;
    };
    if !api::is_mine(id) {
        return;
    }
    let url = offer.get_attribute("data-url").unwrap_or_default();
    let method = offer
        .get_attribute("data-method")
        .and_then(|m| Method::ALL.into_iter().find(|k| k.as_str() == m))
        .unwrap_or_default();
    let _ = offer.remove_attribute("hidden");
    if let Some(why) = browser_measure::cannot_measure(&url, method) {
        say(
            &offer,
            &format!("This URL cannot be measured from your browser: {why}"),
            false,
        );
    } else if browser_measure::opened_to_measure() && !MEASURING.swap(true, Ordering::Relaxed) {
        measure(offer, id.to_owned(), url, method);
    }
}

/// The offer's button: opens the result as the measuring page (a full load, for its policy).
pub fn open(button: &Element) {
    if let Some(id) = button
        .closest("#result")
        .ok()
        .flatten()
        .and_then(|r| r.get_attribute("data-id"))
    {
        browser_measure::open_to_measure(&id);
    }
}

/// Measures `url` from this browser, stores it with probe `id`, and draws the result again with
/// it; `offer` says how far it got, or why it was not stored.
fn measure(offer: Element, id: String, url: String, method: Method) {
    spawn_local(async move {
        let measured = browser_measure::measure(&url, method, |n| {
            say(
                &offer,
                &format!("Measuring from your browser: {n} of {ATTEMPTS} requests…"),
                false,
            );
        })
        .await;
        say(&offer, "Storing your browser's measurement…", false);
        match api::attach_browser(&id, &measured).await {
            Ok(()) => {
                browser_measure::forget_measure_query(&id);
                super::fetch(&id).await;
            }
            Err(Error::Api { error, .. }) => say(
                &offer,
                &format!(
                    "Your browser's measurement was not stored: {}",
                    error.error.message
                ),
                true,
            ),
            Err(Error::Fetch(why)) => say(
                &offer,
                &format!("Your browser's measurement was not stored: {why}"),
                true,
            ),
        }
    });
}

/// Puts `words` in the offer in place of its button (marked an error when `failed`).
fn say(offer: &Element, words: &str, failed: bool) {
    if let Ok(Some(button)) = offer.query_selector("button") {
        button.remove();
    }
    if let Ok(Some(line)) = offer.query_selector("p") {
        line.set_text_content(Some(words));
        let _ = if failed {
            line.set_attribute("class", "error")
        } else {
            line.remove_attribute("class")
        };
    }
}
