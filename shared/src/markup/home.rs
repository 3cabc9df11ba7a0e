//! The home page's probe form and its recent-results section as markup, drawn by the server into
//! `index.html` (`/`) so the form is on screen and takes typing before the home page's wasm has
//! arrived. It is what the app's own `ProbeForm` draws first (the same elements, ids, classes and
//! defaults: every protocol, warm connections, the default rounds and attempts, GET); the app takes
//! it over (`frontend/src/takeover.rs`), keeping what was typed, ticked and focused, and a submit
//! made before it arrived.

use crate::network::NAMED_PROFILES;
use crate::{ProbeOptions, Protocol};
use std::fmt::Write as _;

/// Most attempts per protocol the form offers (the app's `MAX_REPEAT`).
const MAX_REPEAT: u32 = 10;

/// What the server offers that changes the form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HomeForm {
    /// The server takes network conditions: the network picker is drawn.
    pub network: bool,
    /// The server measures public addresses only: the URL's hint says so.
    pub public_only: bool,
}

/// The probe form and the (still loading) recent results, as the app draws them first.
pub fn home(form: HomeForm) -> String {
    let defaults = ProbeOptions::default();
    let mut out = String::with_capacity(6_000);
    out.push_str(concat!(
        r#"<form class="probe-form" novalidate aria-labelledby="probe-title""#,
        r#" data-drawn="server""#,
    ));
    let _ = write!(
        out,
        r#" data-network="{}" data-public-only="{}">"#,
        form.network, form.public_only
    );
    out.push_str(concat!(
        r#"<p class="kind">One request at a time</p><h2 id="probe-title">Timing waterfalls</h2>"#,
        r#"<p class="hint">A few requests per protocol, each split into its phases: where one request spends its time.</p>"#,
        r#"<label for="url">URL to measure</label><div class="url-row">"#,
        r#"<input id="url" name="url" type="url" inputmode="url" autocomplete="url" spellcheck="false" placeholder="https://example.com/" aria-describedby="url-reason" aria-invalid="false" autofocus>"#,
        r#"<button type="submit" class="primary">Measure</button></div>"#,
    ));
    let _ = write!(
        out,
        r#"<p id="url-reason" class="field-note">{}</p>"#,
        if form.public_only {
            "http or https; this server only measures public addresses."
        } else {
            "An http or https URL."
        }
    );
    out.push_str(concat!(
        r#"<fieldset class="vantage-picker" hidden><legend>Measure from</legend><div class="vantage-boxes"></div>"#,
        r#"<p class="field-note vantage-note error">Pick at least one vantage.</p></fieldset>"#,
        r#"<div class="options"><fieldset aria-describedby="protocols-problem"><legend>Protocols</legend>"#,
    ));
    for p in Protocol::ALL {
        let _ = write!(
            out,
            r#"<label class="toggle"><input type="checkbox" name="protocol" value="{}"{}>{}</label>"#,
            p.as_str(),
            if defaults.protocols.contains(&p) {
                " checked"
            } else {
                ""
            },
            p.http_version()
        );
    }
    out.push_str(concat!(
        r#"</fieldset><fieldset><legend>Connections</legend>"#,
        r#"<label class="toggle"><input type="radio" name="mode" checked>warm (reuse)</label>"#,
        r#"<label class="toggle"><input type="radio" name="mode">cold (new each time)</label>"#,
        r#"<label class="toggle"><input type="radio" name="mode">resumed (new, TLS resumption)</label></fieldset>"#,
    ));
    let _ = write!(
        out,
        concat!(
            r#"<div class="field"><label for="rounds">Rounds, each on a new connection</label>"#,
            r#"<input id="rounds" type="number" min="1" max="{max}" title="Rounds, each from a new connection: a verdict on new connections needs 4 or more" value="{rounds}"></div>"#,
            r#"<div class="field"><label for="repeat">Attempts per round</label>"#,
            r#"<input id="repeat" type="number" min="1" max="{max}" value="{repeat}"></div>"#,
        ),
        max = MAX_REPEAT,
        rounds = defaults.rounds,
        repeat = defaults.repeat,
    );
    if form.network {
        out.push_str(concat!(
            r#"<div class="field network-field"><label for="network">Network</label>"#,
            r#"<select id="network" aria-describedby="network-note"><option value="none">this server's own path</option>"#,
        ));
        for p in NAMED_PROFILES {
            let _ = write!(out, r#"<option value="{0}">{0}</option>"#, p.name);
        }
        out.push_str(concat!(
            r#"<option value="custom">custom figures…</option></select>"#,
            r#"<input id="network-figures" type="text" spellcheck="false" aria-label="Network figures" aria-describedby="network-note" aria-invalid="false" placeholder="rtt=100ms,loss=2%,down=10mbit,up=2mbit" hidden>"#,
            r#"<p id="network-note" class="field-note">Delay, loss and rate limits applied to every protocol alike, both ways.</p></div>"#,
        ));
    }
    out.push_str(concat!(
        r#"<div class="field"><label for="method">Method</label><select id="method">"#,
        r#"<option value="GET" selected>GET</option><option value="HEAD">HEAD</option></select></div></div>"#,
        r#"<details class="advanced"><summary>Advanced</summary><div class="field">"#,
        r#"<label for="headers">Request headers, one per line</label>"#,
        r#"<textarea id="headers" rows="3" spellcheck="false" placeholder="Accept: text/html" aria-describedby="headers-note" aria-invalid="false"></textarea>"#,
        r#"<p id="headers-note" class="field-note">Name: value</p></div>"#,
    ));
    for (id, label) in [
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
    ] {
        let _ = write!(
            out,
            r#"<label class="toggle"><input type="checkbox" id="{id}">{label}</label>"#
        );
    }
    out.push_str(concat!(
        r#"<p class="field-note">Authorization and Cookie headers, Set-Cookie answers, URL passwords and credential-looking headers and query parameters (api_key, token, X-Api-Key, ...) are sent but never stored: the result shows [redacted].</p>"#,
        r#"<p class="field-note">Certificates are verified against the system's public roots (and the CA its operator gave <code>h123 serve --cacert</code>). For a private CA, use the CLI's <code>--cacert FILE</code>, or skip verification above to test.</p>"#,
        r#"</details></form>"#,
        r#"<section class="recent" aria-labelledby="recent-title"><h2 id="recent-title">Recent results</h2>"#,
        r#"<p class="hint">Yours (remembered by this browser) and those their authors made public. Others are unlisted: only their link opens them.</p>"#,
        r#"<div><p class="hint">Loading…</p></div></section>"#,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_has_the_apps_defaults_and_the_servers_offer() {
        let plain = home(HomeForm::default());
        assert!(plain.contains(r#"id="url""#) && plain.contains("autofocus"));
        assert_eq!(plain.matches(r#"name="protocol""#).count(), 3);
        assert_eq!(
            plain.matches(" checked>").count(),
            4,
            "three protocols and warm"
        );
        assert!(plain.contains(r#"id="rounds" type="number" min="1" max="10""#));
        assert!(!plain.contains(r#"id="network""#));
        assert!(plain.contains("An http or https URL."));
        let offered = home(HomeForm {
            network: true,
            public_only: true,
        });
        assert!(offered.contains(r#"<select id="network""#));
        assert!(offered.contains("only measures public addresses"));
        assert!(offered.contains(r#"data-network="true" data-public-only="true""#));
    }
}
