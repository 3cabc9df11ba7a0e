//! The text report's side-by-side section of `--all-addresses`: one row per
//! address a protocol dialled, with medians and failures.

use h123_shared::addresses::rows;
use h123_shared::format::ms;
use h123_shared::{Micros, Protocol, ProtocolRun};
use std::fmt::Write as _;

/// Writes the address section of `run`, when it has other addresses.
pub fn write_addresses(out: &mut String, run: &ProtocolRun) {
    let rows = rows(run);
    if rows.is_empty() {
        return;
    }
    let handshake = if run.protocol == Protocol::H3 {
        "quic"
    } else {
        "tls"
    };
    let _ = writeln!(
        out,
        "  addresses (medians; {handshake} and connect over new connections):"
    );
    let _ = writeln!(
        out,
        "    {:<28} {:<6} {:>9} {:>9} {:>9} {:>9}  failed",
        "address", "family", "connect", handshake, "ttfb", "total"
    );
    let cell = |v: Option<Micros>| v.map_or_else(|| "-".to_owned(), ms);
    for row in &rows {
        let f = row.figures(run.protocol);
        let name = row.shown();
        let _ = writeln!(
            out,
            "    {name:<28} {:<6} {:>9} {:>9} {:>9} {:>9}  {}/{}",
            row.family.name(),
            cell(f.connect),
            cell(f.handshake),
            cell(f.ttfb),
            cell(f.total),
            f.failures,
            f.chains
        );
        if let Some(failure) = &f.first_failure {
            let _ = writeln!(
                out,
                "      {} failed in {}: {} ({})",
                row.address,
                failure.phase.as_str(),
                failure.message,
                failure.kind.as_str()
            );
        }
    }
}
