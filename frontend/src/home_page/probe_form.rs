//! The probe form's behaviour: its fields read as [`ProbeFields`], their notes kept up to date
//! as they are typed (the URL's check, the protocols, the headers, the network, the vantages), a
//! pasted URL kept whole, and the submit that starts the probe and opens its page.

use super::{field, network, submission, vantages};
use crate::api;
use h123_shared::input::parse_headers;
use h123_shared::input::probe_form::{MAX_REPEAT, ProbeFields, url_note};
use h123_shared::{Method, Protocol};
use wasm_bindgen::JsCast;
use web_sys::{ClipboardEvent, Element, Event, HtmlInputElement};

/// Whether the server that drew `form` offers the option `name` (`data-network`,
/// `data-public-only`).
fn offers(form: &Element, name: &str) -> bool {
    form.get_attribute(name).as_deref() == Some("true")
}

/// What is pasted into the URL field, as pasted, until the next keystroke (a URL field's value
/// drops line breaks without a word).
const PASTED: &str = "data-pasted";

/// The URL as typed, or as pasted.
fn url(form: &Element) -> String {
    field::find(form, "#url")
        .and_then(|f| f.get_attribute(PASTED))
        .unwrap_or_else(|| field::value(form, "#url"))
}

/// The URL field `field` was typed into: what was pasted is gone.
pub fn typed(field: &Element) {
    let _ = field.remove_attribute(PASTED);
}

/// What `form`'s fields hold.
fn read(form: &Element) -> ProbeFields {
    let ticked = field::ticked(form, r#"input[name="protocol"]"#);
    let repeat = |id| field::number(form, id).clamp(1, u64::from(MAX_REPEAT)) as u32;
    ProbeFields {
        url: url(form),
        protocols: Protocol::ALL
            .into_iter()
            .filter(|p| ticked.iter().any(|t| t == p.as_str()))
            .collect(),
        repeat: repeat("#repeat"),
        rounds: repeat("#rounds"),
        mode: field::ticked(form, r#"input[name="mode"]"#)
            .first()
            .and_then(|m| m.parse().ok())
            .unwrap_or_default(),
        method: if field::value(form, "#method") == "HEAD" {
            Method::Head
        } else {
            Method::Get
        },
        headers: field::value(form, "#headers"),
        insecure: field::checked(form, "#insecure"),
        follow: field::checked(form, "#follow"),
        h3_direct: field::checked(form, "#h3-direct"),
        migrate: field::checked(form, "#migrate"),
        at_once: field::checked(form, "#streams"),
        public: field::checked(form, "#public"),
        network: network::text(form, "network"),
        vantages: vantages::chosen(form),
        vantages_offered: vantages::offered(form),
    }
}

/// Brings `form`'s notes up to date with its fields.
pub fn refresh(form: &Element) {
    let fields = read(form);
    let show = form.has_attribute("data-touched") || !fields.url.is_empty();
    let (note, error) = url_note(&fields.url, show, offers(form, "data-public-only"));
    field::note(form, "#url-reason", &note, error);
    field::invalid(form, "#url", error);
    if let Some(problem) = field::find(form, "#protocols-problem") {
        let _ = problem.toggle_attribute_with_force("hidden", !fields.protocols.is_empty());
    }
    let headers = parse_headers(&fields.headers).err();
    field::invalid(form, "#headers", headers.is_some());
    let error = headers.is_some();
    field::note(
        form,
        "#headers-note",
        &headers.unwrap_or_else(|| "Name: value".into()),
        error,
    );
    let network = offers(form, "data-network");
    if network {
        network::show(form, "network", fields.network_problem(network));
    }
    vantages::note(form);
}

/// A pasted URL with whitespace inside (a link wrapped over two lines, say) is kept as pasted
/// ([`PASTED`]), so the check names the problem: the field itself drops line breaks without a
/// word.
pub fn paste(ev: &Event) {
    let Some(text) = ev
        .dyn_ref::<ClipboardEvent>()
        .and_then(ClipboardEvent::clipboard_data)
        .and_then(|d| d.get_data("text").ok())
    else {
        return;
    };
    if !text.trim().contains(char::is_whitespace) {
        return;
    }
    ev.prevent_default();
    let Some(input) = ev
        .target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
    else {
        return;
    };
    input.set_value(text.trim());
    let _ = input.set_attribute(PASTED, text.trim());
    if let Ok(Some(form)) = input.closest("form") {
        refresh(&form);
    }
}

/// Submits `form`: every problem shows; when there is none, the probe starts, and once accepted
/// its result's page opens (or, to measure from this browser too, the measuring page: a full
/// load, since only that page may fetch the target).
pub fn submit(form: &Element) {
    let _ = form.set_attribute("data-touched", "");
    refresh(form);
    let Some(options) = read(form).options(offers(form, "data-network")) else {
        return;
    };
    let answered = form.clone();
    submission::send(
        form,
        false,
        async move { api::create_probe(&options).await },
        move |created| {
            if field::checked(&answered, "#browser-too") {
                crate::browser_measure::open_to_measure(&created.id);
            } else {
                crate::navigate::to(&created.links.permalink);
            }
        },
    );
}
