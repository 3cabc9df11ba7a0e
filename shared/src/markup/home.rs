//! The home page as markup, drawn by the server into `index.html` (`/`) so the page is on screen
//! and takes typing before its wasm has arrived: the probe form, the load comparison form when the
//! server runs benches ([`bench_form`](super::bench_form)), and the recent results' frame (filled
//! by the page). The page's script (`frontend/src/home_page.rs`) gives the drawn forms their
//! behaviour in place, and draws the same markup itself when a static host served the page.

use super::bench_form::bench_form;
use super::form_parts::{network_picker, protocol_toggles};
use crate::ProbeOptions;
use crate::api::{BenchBounds, ServerInfo};
use crate::input::probe_form::MAX_REPEAT;
use std::fmt::Write as _;

/// What the server offers that changes the home page.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HomeForm {
    /// The server takes network conditions: the probe form's network picker is drawn.
    pub network: bool,
    /// The server measures public addresses only: the URL's hint says so.
    pub public_only: bool,
    /// The server runs benches within these bounds, on these targets: the load comparison form
    /// is drawn.
    pub bench: Option<(BenchBounds, Vec<String>)>,
}

impl HomeForm {
    /// What a server's `GET /api/v1/config` says it offers.
    pub fn of(info: &ServerInfo) -> Self {
        HomeForm {
            network: info.network_enabled,
            public_only: info.public_targets_only,
            bench: info
                .bench_limits
                .map(|bounds| (bounds, info.bench_targets.clone())),
        }
    }
}

/// The probe form, the load comparison form when offered, and the (still loading) recent results.
pub fn home(form: &HomeForm) -> String {
    let defaults = ProbeOptions::default();
    let mut out = String::with_capacity(9_000);
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
        r#"<p class="field-note vantage-note"></p></fieldset>"#,
        r#"<div class="options"><fieldset aria-describedby="protocols-problem"><legend>Protocols</legend>"#,
    ));
    protocol_toggles(&mut out, "protocol");
    out.push_str(concat!(
        r#"<p id="protocols-problem" class="field-note error" hidden>Pick at least one protocol.</p>"#,
        r#"</fieldset><fieldset><legend>Connections</legend>"#,
        r#"<label class="toggle"><input type="radio" name="mode" value="warm" checked>warm (reuse)</label>"#,
        r#"<label class="toggle"><input type="radio" name="mode" value="cold">cold (new each time)</label>"#,
        r#"<label class="toggle"><input type="radio" name="mode" value="resumed">resumed (new, TLS resumption)</label></fieldset>"#,
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
        network_picker(&mut out, "network");
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
    ));
    if let Some((bounds, targets)) = &form.bench {
        bench_form(&mut out, bounds, targets);
    }
    out.push_str(concat!(
        r#"<section class="recent" aria-labelledby="recent-title"><h2 id="recent-title">Recent results</h2>"#,
        r#"<p class="hint">Yours (remembered by this browser) and those their authors made public. Others are unlisted: only their link opens them.</p>"#,
        r#"<div class="recent-items"><p class="hint">Loading…</p></div></section>"#,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Protocol;

    #[test]
    fn the_form_has_the_defaults_and_the_servers_offer() {
        assert_eq!(ProbeOptions::default().protocols, Protocol::ALL.to_vec());
        let plain = home(&HomeForm::default());
        assert!(plain.contains(r#"id="url""#) && plain.contains("autofocus"));
        assert_eq!(plain.matches(r#"name="protocol""#).count(), 3);
        assert_eq!(
            plain.matches(" checked>").count(),
            4,
            "three protocols and warm"
        );
        assert!(plain.contains(r#"id="rounds" type="number" min="1" max="10""#));
        assert!(!plain.contains(r#"id="network""#));
        assert!(!plain.contains("bench-form"));
        assert!(plain.contains("An http or https URL."));
        assert!(plain.contains(r#"<div class="recent-items">"#));
        let offered = home(&HomeForm {
            network: true,
            public_only: true,
            bench: None,
        });
        assert!(offered.contains(r#"<select id="network""#));
        assert!(offered.contains("only measures public addresses"));
        assert!(offered.contains(r#"data-network="true" data-public-only="true""#));
    }

    #[test]
    fn a_server_that_runs_benches_gets_its_form_between_the_probes_and_the_list() {
        let info = ServerInfo {
            version: "0".into(),
            bench_enabled: true,
            bench_limits: Some(BenchBounds {
                max_concurrency: 64,
                max_connections: 16,
                max_duration_ms: 30_000,
                max_requests: 100_000,
                max_rate: 1000,
                max_warmup_ms: 5_000,
                max_total_ms: 60_000,
                network: false,
            }),
            allowed_methods: Vec::new(),
            max_request_body: 0,
            network_enabled: false,
            public_targets_only: false,
            bench_targets: vec!["127.0.0.1:8443".into()],
        };
        let form = HomeForm::of(&info);
        assert_eq!(form.bench.as_ref().map(|b| b.1.len()), Some(1));
        let page = home(&form);
        let (probe, bench, recent) = (
            page.find("probe-form").unwrap(),
            page.find("bench-form").unwrap(),
            page.find(r#"class="recent""#).unwrap(),
        );
        assert!(probe < bench && bench < recent);
        assert!(page.contains("one bench at a time: 127.0.0.1:8443."));
    }
}
