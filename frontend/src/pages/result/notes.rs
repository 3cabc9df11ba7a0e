//! The notes beside the waterfalls: the emulated network a result was measured through (per
//! protocol how it was applied and what the link dropped), and what became of connections moved
//! mid-response.

use crate::pages::parts::note;
use h123_shared::ProbeResult;
use leptos::prelude::*;

/// The network note of `result`; nothing for a result on the real path alone.
pub fn network(result: &ProbeResult) -> impl IntoView + use<> {
    note("Emulated network", h123_shared::network::lines(result))
}

/// The connection migration note of `result`: where each HTTP/3 connection moved and whether it
/// survived, and what a new connection costs the others; nothing for a result that asked for no
/// move.
pub fn migration(result: &ProbeResult) -> impl IntoView + use<> {
    note(
        "Connection migration",
        h123_shared::migration::lines(result),
    )
}
