//! The probe form: the URL, the vantages (filled by the page), protocols, connections, rounds
//! and attempts, the network when the server takes one, the method, and the advanced options.

use super::HomeForm;
use super::form_parts::{network_picker, protocol_toggles};
use h123_shared::ProbeOptions;
use h123_shared::input::probe_form::MAX_REPEAT;
use leptos::prelude::*;

/// The advanced options' checkboxes: their ids and labels.
const TOGGLES: [(&str, &str); 7] = [
    (
        "follow",
        "Follow redirects (the hops end to end on one row)",
    ),
    (
        "h3-direct",
        "Try HTTP/3 directly (even when nothing advertises it)",
    ),
    (
        "migrate",
        "Move each HTTP/3 connection to a new port mid-response (does it survive a change of network?)",
    ),
    (
        "streams",
        "Then send 8 requests at once per protocol (streams over one connection: does one lost packet hold them all?)",
    ),
    ("insecure", "Skip certificate verification (like curl -k)"),
    (
        "public",
        "List the result publicly (otherwise only its link and your own list show it)",
    ),
    (
        "browser-too",
        "Also measure from this browser once the probe has finished (its timings and user agent, not your address, are stored with the result)",
    ),
];

/// The probe form as `form` offers it (`data-drawn`: the page's loader holds a submit back until
/// the script has adopted it).
pub fn probe_form(form: &HomeForm) -> impl IntoView + use<> {
    let url_note = if form.public_only {
        "http or https; this server only measures public addresses."
    } else {
        "An http or https URL."
    };
    view! {
        <form class="probe-form" novalidate aria-labelledby="probe-title" data-drawn="server" data-network=form.network.to_string() data-public-only=form.public_only.to_string()>
            <p class="kind">"One request at a time"</p>
            <h2 id="probe-title">"Timing waterfalls"</h2>
            <p class="hint">"A few requests per protocol, each split into its phases: where one request spends its time."</p>
            <label for="url">"URL to measure"</label>
            <div class="url-row">
                <input id="url" name="url" type="url" inputmode="url" autocomplete="url" spellcheck="false" placeholder="https://example.com/" aria-describedby="url-reason" aria-invalid="false" autofocus/>
                <button type="submit" class="primary">"Measure"</button>
            </div>
            <p id="url-reason" class="field-note">{url_note}</p>
            <fieldset class="vantage-picker" hidden>
                <legend>"Measure from"</legend>
                <div class="vantage-boxes"></div>
                <p class="field-note vantage-note"></p>
            </fieldset>
            {options(form.network)}
            {advanced()}
        </form>
    }
}

/// Protocols, connections, rounds and attempts, the network when `network`, and the method.
fn options(network: bool) -> impl IntoView + use<> {
    let defaults = ProbeOptions::default();
    view! {
        <div class="options">
            <fieldset aria-describedby="protocols-problem">
                <legend>"Protocols"</legend>
                {protocol_toggles("protocol")}
                <p id="protocols-problem" class="field-note error" hidden>"Pick at least one protocol."</p>
            </fieldset>
            <fieldset>
                <legend>"Connections"</legend>
                <label class="toggle"><input type="radio" name="mode" value="warm" checked/>"warm (reuse)"</label>
                <label class="toggle"><input type="radio" name="mode" value="cold"/>"cold (new each time)"</label>
                <label class="toggle"><input type="radio" name="mode" value="resumed"/>"resumed (new, TLS resumption)"</label>
            </fieldset>
            <div class="field">
                <label for="rounds">"Rounds, each on a new connection"</label>
                <input id="rounds" type="number" min="1" max=MAX_REPEAT title="Rounds, each from a new connection: a verdict on new connections needs 4 or more" value=defaults.rounds/>
            </div>
            <div class="field">
                <label for="repeat">"Attempts per round"</label>
                <input id="repeat" type="number" min="1" max=MAX_REPEAT value=defaults.repeat/>
            </div>
            {network.then(|| network_picker("network"))}
            <div class="field">
                <label for="method">"Method"</label>
                <select id="method"><option value="GET" selected>"GET"</option><option value="HEAD">"HEAD"</option></select>
            </div>
        </div>
    }
}

/// The advanced options: request headers, the toggles, and what is never stored.
fn advanced() -> impl IntoView + use<> {
    let toggles = TOGGLES
        .iter()
        .map(|(id, label)| {
            view! { <label class="toggle"><input type="checkbox" id=*id/>{*label}</label> }
        })
        .collect_view();
    view! {
        <details class="advanced">
            <summary>"Advanced"</summary>
            <div class="field">
                <label for="headers">"Request headers, one per line"</label>
                <textarea id="headers" rows="3" spellcheck="false" placeholder="Accept: text/html" aria-describedby="headers-note" aria-invalid="false"></textarea>
                <p id="headers-note" class="field-note">"Name: value"</p>
            </div>
            {toggles}
            <p class="field-note">"Authorization and Cookie headers, Set-Cookie answers, URL passwords and credential-looking headers and query parameters (api_key, token, X-Api-Key, ...) are sent but never stored: the result shows [redacted]."</p>
            <p class="field-note">"Certificates are verified against the system's public roots (and the CA its operator gave "<code>"h123 serve --cacert"</code>"). For a private CA, use the CLI's "<code>"--cacert FILE"</code>", or skip verification above to test."</p>
        </details>
    }
}
