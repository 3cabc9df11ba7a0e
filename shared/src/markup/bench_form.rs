//! The load comparison form as markup, drawn on the home page when the server runs benches: as
//! the server bounds it (the most in flight, the longest run, network conditions and a sweep only
//! when it allows them) and naming what it may load. The bounds ride along in `data-bounds` for
//! the page's checks (`input::bench_form`).

use super::escape;
use super::form_parts::{network_picker, protocol_toggles};
use crate::api::BenchBounds;
use std::fmt::Write as _;

/// The sweep field's note when nothing is typed.
pub const SWEEP_NOTE: &str = "Empty: one bench. rtt=… or loss=…: the whole bench at each step, on top of the network, drawn as a decay curve.";

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
pub fn bench_form(out: &mut String, bounds: &BenchBounds, targets: &[String]) {
    let placeholder = targets
        .first()
        .map_or_else(|| "https://".to_owned(), |t| format!("https://{t}/"));
    let allowed = if targets.is_empty() {
        "This server loads only the targets its operator allows, one bench at a time.".to_owned()
    } else {
        format!(
            "This server loads only what its operator allows, one bench at a time: {}.",
            targets.join(", ")
        )
    };
    let bounds_json = serde_json::to_string(bounds).unwrap_or_default();
    let _ = write!(
        out,
        concat!(
            r#"<form class="bench-form" novalidate aria-labelledby="bench-title" data-drawn="server" data-bounds="{bounds}">"#,
            r#"<p class="kind">Many requests at once</p><h2 id="bench-title">Load comparison</h2>"#,
            r#"<p class="hint">Send the same request over HTTP/1.1, HTTP/2 and HTTP/3 in turn, as fast as the target answers (or at a fixed rate), and compare throughput and latency. {allowed}</p>"#,
            r#"<label for="bench-url">Target URL</label><div class="url-row">"#,
            r#"<input id="bench-url" type="url" inputmode="url" spellcheck="false" placeholder="{placeholder}" aria-describedby="bench-note" aria-invalid="false">"#,
            r#"<button type="submit" class="primary">Compare</button></div>"#,
            r#"<p id="bench-note" class="field-note">http or https; HTTP/3 needs https.</p>"#,
            r#"<div class="options"><fieldset><legend>Protocols</legend>"#,
        ),
        bounds = escape(&bounds_json),
        allowed = escape(&allowed),
        placeholder = escape(&placeholder),
    );
    protocol_toggles(out, "bench-protocol");
    let max_secs = max_seconds(bounds);
    let _ = write!(
        out,
        concat!(
            r#"</fieldset><div class="field"><label for="bench-concurrency">In flight</label>"#,
            r#"<input id="bench-concurrency" type="number" min="1" max="{max_in_flight}" value="{in_flight}"></div>"#,
            r#"<div class="field"><label for="bench-duration">Seconds each</label>"#,
            r#"<input id="bench-duration" type="number" min="1" max="{max_secs}" value="{secs}"></div>"#,
            r#"<div class="field"><label for="bench-connections">Connections</label>"#,
            r#"<input id="bench-connections" type="number" min="1" placeholder="auto" title="Empty: one per request in flight for HTTP/1.1, one in all for HTTP/2 and HTTP/3" aria-describedby="bench-note" aria-invalid="false"></div>"#,
            r#"<div class="field"><label for="bench-rate">Rate /s</label>"#,
            r#"<input id="bench-rate" type="number" min="1" placeholder="max" title="Empty: as fast as responses return; a number: a fixed arrival rate" aria-describedby="bench-note" aria-invalid="false"></div>"#,
            r#"<label class="toggle"><input type="checkbox" id="bench-cold">Cold (a new connection per request)</label>"#,
        ),
        max_in_flight = bounds.max_concurrency,
        in_flight = IN_FLIGHT.min(bounds.max_concurrency).max(1),
        max_secs = max_secs,
        secs = SECONDS.min(max_secs),
    );
    if bounds.network {
        network_picker(out, "bench-network");
        let _ = write!(
            out,
            concat!(
                r#"<div class="field sweep-field"><label for="bench-sweep">Sweep</label>"#,
                r#"<input id="bench-sweep" type="text" spellcheck="false" list="bench-sweeps" placeholder="rtt=0,25,50,100,200ms" aria-describedby="bench-sweep-note" aria-invalid="false">"#,
                r#"<datalist id="bench-sweeps"><option value="rtt=0,25,50,100,200ms"></option><option value="loss=0,0.5,1,2,5%"></option></datalist>"#,
                r#"<p id="bench-sweep-note" class="field-note">{note}</p></div>"#,
            ),
            note = SWEEP_NOTE,
        );
    }
    out.push_str("</div></form>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(network: bool) -> BenchBounds {
        BenchBounds {
            max_concurrency: 8,
            max_connections: 16,
            max_duration_ms: 30_000,
            max_requests: 100_000,
            max_rate: 1000,
            max_warmup_ms: 5_000,
            max_total_ms: 60_000,
            network,
        }
    }

    #[test]
    fn the_form_keeps_to_the_servers_bounds_and_targets() {
        let mut out = String::new();
        bench_form(&mut out, &bounds(false), &["127.0.0.1:8443".to_owned()]);
        assert!(out.contains(r#"placeholder="https://127.0.0.1:8443/""#));
        assert!(out.contains("one bench at a time: 127.0.0.1:8443.</p>"));
        assert!(out.contains(r#"id="bench-concurrency" type="number" min="1" max="8" value="8""#));
        assert!(out.contains(r#"id="bench-duration" type="number" min="1" max="30" value="10""#));
        assert_eq!(out.matches(r#"name="bench-protocol""#).count(), 3);
        assert!(!out.contains("bench-network") && !out.contains("bench-sweep"));
        let json = serde_json::to_string(&bounds(false)).unwrap();
        assert!(out.contains(&format!(r#"data-bounds="{}""#, escape(&json))));

        let mut open = String::new();
        bench_form(&mut open, &bounds(true), &[]);
        assert!(open.contains(r#"placeholder="https://""#));
        assert!(open.contains("the targets its operator allows, one bench at a time.</p>"));
        assert!(
            open.contains(r#"<select id="bench-network" aria-describedby="bench-network-note">"#)
        );
        assert!(open.contains(r#"id="bench-network-figures""#));
        assert!(open.contains(r#"id="bench-sweep""#) && open.contains(SWEEP_NOTE));
    }
}
