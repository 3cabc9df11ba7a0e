//! The load comparison form's behaviour: its fields read as [`BenchFields`] within the bounds
//! the server drew it with (`data-bounds`), its notes kept up to date as they are typed (the
//! options' problem or "Ready: about N s in all.", the connections and rate, the network, the
//! sweep), and the submit that starts the bench and opens its page.

use super::{field, network, submission};
use crate::api;
use crate::pages::home::SWEEP_NOTE;
use h123_shared::Protocol;
use h123_shared::api::BenchBounds;
use h123_shared::input::bench_form::{BenchFields, network_problem, sweep_problem};
use h123_shared::input::check_url;
use h123_shared::json;
use web_sys::Element;

/// The bounds the server drew `form` with.
fn bounds(form: &Element) -> Option<BenchBounds> {
    json::from_str(&form.get_attribute("data-bounds")?).ok()
}

/// What `form`'s fields hold.
fn read(form: &Element) -> BenchFields {
    let ticked = field::ticked(form, r#"input[name="bench-protocol"]"#);
    BenchFields {
        url: field::value(form, "#bench-url"),
        protocols: Protocol::ALL
            .into_iter()
            .filter(|p| ticked.iter().any(|t| t == p.as_str()))
            .collect(),
        concurrency: u32::try_from(field::number(form, "#bench-concurrency")).unwrap_or(1),
        duration_s: field::number(form, "#bench-duration"),
        connections: field::value(form, "#bench-connections"),
        rate: field::value(form, "#bench-rate"),
        cold: field::checked(form, "#bench-cold"),
        network: network::text(form, "bench-network"),
        sweep: field::value(form, "#bench-sweep"),
    }
}

/// Brings `form`'s notes up to date with its fields.
pub fn refresh(form: &Element) {
    let Some(bounds) = bounds(form) else {
        return;
    };
    let fields = read(form);
    let show = form.has_attribute("data-touched") || !fields.url.is_empty();
    let (note, error) = fields.note(&bounds, show);
    field::note(form, "#bench-note", &note, error);
    field::invalid(form, "#bench-url", show && check_url(&fields.url).is_err());
    field::invalid(
        form,
        "#bench-connections",
        fields.connections_refused(&bounds),
    );
    field::invalid(form, "#bench-rate", fields.rate_refused(&bounds));
    if bounds.network {
        network::show(form, "bench-network", network_problem(&fields.network));
        let problem = sweep_problem(&fields.sweep);
        field::invalid(form, "#bench-sweep", problem.is_some());
        let error = problem.is_some();
        let note = problem.unwrap_or_else(|| SWEEP_NOTE.to_owned());
        field::note(form, "#bench-sweep-note", &note, error);
    }
}

/// Submits `form`: its problem shows; when there is none, the bench starts, and once accepted
/// its page opens.
pub fn submit(form: &Element) {
    let _ = form.set_attribute("data-touched", "");
    refresh(form);
    let Some(options) = bounds(form).and_then(|b| read(form).options(&b).ok()) else {
        return;
    };
    submission::send(
        form,
        true,
        async move { api::create_bench(&options).await },
        |created| crate::navigate::to(&created.links.permalink),
    );
}
