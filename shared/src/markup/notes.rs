//! The notes beside the waterfalls as markup: the emulated network a result was measured through
//! (per protocol how it was applied and what the link dropped), and what became of connections
//! moved mid-response.

use super::{element, escape};
use crate::ProbeResult;

/// The network note of `result`; nothing for a result on the real path alone.
pub fn network(result: &ProbeResult) -> Option<String> {
    note("Emulated network", &crate::network::lines(result))
}

/// The connection migration note of `result`: where each HTTP/3 connection moved and whether it
/// survived, and what a new connection costs the others; nothing for a result that asked for no
/// move.
pub fn migration(result: &ProbeResult) -> Option<String> {
    note("Connection migration", &crate::migration::lines(result))
}

/// A note of `lines`, a paragraph each, named `label` (as `<aside class="network-note">`);
/// nothing without lines.
pub fn note(label: &str, lines: &[String]) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let mut out = format!(
        r#"<aside class="network-note" aria-label="{}">"#,
        escape(label)
    );
    for line in lines {
        element(&mut out, "p", "", line);
    }
    out.push_str("</aside>");
    Some(out)
}
