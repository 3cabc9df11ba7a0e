//! The load comparison form, drawn on the home page when the server runs benches: as the server
//! bounds it (the most in flight, the longest run, network conditions and a sweep only when it
//! allows them) and naming what it may load. The bounds ride along in `data-bounds` for the
//! page's checks (`input::bench_form`).

use super::SWEEP_NOTE;
use super::form_parts::{network_picker, protocol_toggles};
use h123_shared::api::BenchBounds;
use leptos::prelude::*;

/// Requests in flight the form starts with (within the server's bound).
const IN_FLIGHT: u32 = 16;

/// Seconds per protocol the form starts with (within the server's bound).
const SECONDS: u64 = 10;

/// The longest run per protocol the form offers, in whole seconds (at least one).
fn max_seconds(bounds: &BenchBounds) -> u64 {
    (bounds.max_duration_ms / 1000).max(1)
}

/// The load comparison form of a server with `bounds` that may load `targets` (`address` or
/// `address:port`).
pub fn bench_form(bounds: &BenchBounds, targets: &[String]) -> impl IntoView + use<> {
    let placeholder = targets
        .first()
        .map_or_else(|| "https://".to_owned(), |t| format!("https://{t}/"));
    let allowed = if targets.is_empty() {
        "the targets its operator allows, one bench at a time.".to_owned()
    } else {
        format!(
            "what its operator allows, one bench at a time: {}.",
            targets.join(", ")
        )
    };
    let hint = format!(
        "Send the same request over HTTP/1.1, HTTP/2 and HTTP/3 in turn, as fast as the target answers (or at a fixed rate), and compare throughput and latency. This server loads only {allowed}"
    );
    let max_secs = max_seconds(bounds);
    view! {
        <form class="bench-form" novalidate aria-labelledby="bench-title" data-drawn="server" data-bounds=serde_json::to_string(bounds).unwrap_or_default()>
            <p class="kind">"Many requests at once"</p>
            <h2 id="bench-title">"Load comparison"</h2>
            <p class="hint">{hint}</p>
            <label for="bench-url">"Target URL"</label>
            <div class="url-row">
                <input id="bench-url" type="url" inputmode="url" spellcheck="false" placeholder=placeholder aria-describedby="bench-note" aria-invalid="false"/>
                <button type="submit" class="primary">"Compare"</button>
            </div>
            <p id="bench-note" class="field-note">"http or https; HTTP/3 needs https."</p>
            <div class="options">
                <fieldset><legend>"Protocols"</legend>{protocol_toggles("bench-protocol")}</fieldset>
                <div class="field">
                    <label for="bench-concurrency">"In flight"</label>
                    <input id="bench-concurrency" type="number" min="1" max=bounds.max_concurrency value=IN_FLIGHT.min(bounds.max_concurrency).max(1)/>
                </div>
                <div class="field">
                    <label for="bench-duration">"Seconds each"</label>
                    <input id="bench-duration" type="number" min="1" max=max_secs value=SECONDS.min(max_secs)/>
                </div>
                <div class="field">
                    <label for="bench-connections">"Connections"</label>
                    <input id="bench-connections" type="number" min="1" placeholder="auto" title="Empty: one per request in flight for HTTP/1.1, one in all for HTTP/2 and HTTP/3" aria-describedby="bench-note" aria-invalid="false"/>
                </div>
                <div class="field">
                    <label for="bench-rate">"Rate /s"</label>
                    <input id="bench-rate" type="number" min="1" placeholder="max" title="Empty: as fast as responses return; a number: a fixed arrival rate" aria-describedby="bench-note" aria-invalid="false"/>
                </div>
                <label class="toggle"><input type="checkbox" id="bench-cold"/>"Cold (a new connection per request)"</label>
                {bounds.network.then(sweep)}
            </div>
        </form>
    }
}

/// The network picker and the sweep field, for a server that takes network conditions.
fn sweep() -> impl IntoView + use<> {
    view! {
        {network_picker("bench-network")}
        <div class="field sweep-field">
            <label for="bench-sweep">"Sweep"</label>
            <input id="bench-sweep" type="text" spellcheck="false" list="bench-sweeps" placeholder="rtt=0,25,50,100,200ms" aria-describedby="bench-sweep-note" aria-invalid="false"/>
            <datalist id="bench-sweeps"><option value="rtt=0,25,50,100,200ms"></option><option value="loss=0,0.5,1,2,5%"></option></datalist>
            <p id="bench-sweep-note" class="field-note">{SWEEP_NOTE}</p>
        </div>
    }
}
