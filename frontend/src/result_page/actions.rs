//! What a result's buttons and forms do: copy its permalink or curl commands, run it again,
//! compare it with another result; and its links made whole (the page's origin, the API's base).

use crate::{api, clipboard, components, navigate};
use h123_shared::compare::probe_id_in;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element, HtmlInputElement};

/// What the compare field says of an entry with no result id in it.
const NO_ID: &str = "Paste another result's permalink (…/r/ followed by 12 characters) or its id.";

/// Gives the drawn result's links their full address: the permalink text the page's origin,
/// the page's links to the API (`a[data-api]`: the downloads, the footer's) the configured base.
pub fn complete_links(document: &Document, result: &Element) {
    if let Ok(Some(permalink)) = result.query_selector(r#"pre[data-text="permalink"]"#) {
        let path = permalink.text_content().unwrap_or_default();
        if path.starts_with('/') {
            permalink.set_text_content(Some(&format!("{}{path}", clipboard::origin())));
        }
    }
    api_links(document);
}

/// Gives the page's links to the API (`a[data-api]`: the downloads, the footer's) the configured
/// base.
pub fn api_links(document: &Document) {
    let Ok(links) = document.query_selector_all("a[data-api]") else {
        return;
    };
    for i in 0..links.length() {
        if let Some(link) = links.item(i).and_then(|l| l.dyn_into::<Element>().ok())
            && let Some(path) = link.get_attribute("href")
            && path.starts_with("/api/")
        {
            let _ = link.set_attribute("href", &api::api_url(&path));
        }
    }
}

/// Does what `button`'s `data-action` names.
pub fn act(button: &Element) {
    match button.get_attribute("data-action").as_deref() {
        Some("copy") => copy(button),
        Some("rerun") => rerun(button),
        Some("measure") => super::offer::open(button),
        _ => {}
    }
}

/// Copies the text `button`'s `data-copy` names in its result or bench, and says so (or where to
/// copy it from).
pub(crate) fn copy(button: &Element) {
    let which = button.get_attribute("data-copy").unwrap_or_default();
    let Some(result) = button.closest("#result, #bench").ok().flatten() else {
        return;
    };
    let text = result
        .query_selector(&format!(r#"pre[data-text="{which}"]"#))
        .ok()
        .flatten()
        .and_then(|pre| pre.text_content())
        .unwrap_or_default();
    let what = if which == "curl" {
        "curl command"
    } else {
        "Permalink"
    };
    let copied = clipboard::copy(&text);
    if let Ok(Some(note)) = result.query_selector(".actions .note") {
        note.set_text_content(Some(&clipboard::said(what, copied)));
    }
}

/// "Run again": the result's options (`data-options`) as a new probe, opened once the server
/// accepts it; its refusal shown below the actions. One request at a time.
fn rerun(button: &Element) {
    if button.has_attribute("disabled") {
        return;
    }
    let options = button.get_attribute("data-options").unwrap_or_default();
    let _ = button.set_attribute("disabled", "");
    let button = button.clone();
    spawn_local(async move {
        match api::create_probe_from(&options).await {
            Ok(created) => navigate::to(&created.links.permalink),
            Err(error) => {
                let _ = button.remove_attribute("disabled");
                if let Some(Ok(Some(problem))) = button
                    .closest("#result")
                    .ok()
                    .flatten()
                    .map(|r| r.query_selector(".rerun-problem"))
                {
                    problem.set_inner_html(&components::problem_markup(&error, false));
                    let _ = problem.remove_attribute("hidden");
                }
            }
        }
    });
}

/// "Compare with another result": the pasted permalink's or id's result as A (before), this
/// one as B (after); an entry with no id in it is marked, with what to paste.
pub fn compare_with(form: &Element) {
    let Some(id) = form
        .closest("#result")
        .ok()
        .flatten()
        .and_then(|r| r.get_attribute("data-id"))
    else {
        return;
    };
    let Some(field) = form
        .query_selector("#compare-with")
        .ok()
        .flatten()
        .and_then(|f| f.dyn_into::<HtmlInputElement>().ok())
    else {
        return;
    };
    let other = probe_id_in(&field.value()).map(str::to_owned);
    let _ = field.set_attribute(
        "aria-invalid",
        if other.is_some() { "false" } else { "true" },
    );
    if let Ok(Some(note)) = form.query_selector("#compare-with-problem") {
        note.set_text_content(Some(if other.is_some() { "" } else { NO_ID }));
    }
    if let Some(other) = other {
        navigate::to(&format!("/compare/{other}/{id}"));
    }
}
