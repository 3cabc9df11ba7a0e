//! The addresses of a run side by side (`--all-addresses`): one table row per
//! address, with its family, setup and total medians, and failures; drawn as markup.

use h123_shared::addresses::rows;
use h123_shared::format::ms;
use h123_shared::markup::element;
use h123_shared::{Micros, Protocol, ProtocolRun};
use std::fmt::Write as _;

/// One row's cells: address, family, connect, handshake, ttfb, total, failed.
fn cells(run: &ProtocolRun) -> Vec<[String; 7]> {
    let cell = |v: Option<Micros>| v.map_or_else(|| "–".to_owned(), ms);
    rows(run)
        .iter()
        .map(|row| {
            let f = row.figures(run.protocol);
            let failed = match &f.first_failure {
                Some(first) => format!(
                    "{} of {} ({} in {})",
                    f.failures,
                    f.chains,
                    first.kind.as_str(),
                    first.phase.as_str()
                ),
                None => format!("0 of {}", f.chains),
            };
            [
                if row.main {
                    format!("{} (main)", row.address)
                } else {
                    row.address.clone()
                },
                row.family.name().to_owned(),
                cell(f.connect),
                cell(f.handshake),
                cell(f.ttfb),
                cell(f.total),
                failed,
            ]
        })
        .collect()
}

/// Appends the address table of `run`; nothing when it probed one address.
pub fn address_table(out: &mut String, run: &ProtocolRun) {
    let rows = cells(run);
    if rows.is_empty() {
        return;
    }
    let handshake = if run.protocol == Protocol::H3 {
        "QUIC"
    } else {
        "TLS"
    };
    let _ = write!(
        out,
        r#"<div class="table-scroll addresses"><table><caption>Addresses (medians; connect and {handshake} over new connections)</caption><thead><tr><th scope="col">Address</th><th scope="col">Family</th><th scope="col">Connect</th><th scope="col">{handshake}</th><th scope="col">TTFB</th><th scope="col">Total</th><th scope="col">Failed</th></tr></thead><tbody>"#
    );
    for [address, cells @ ..] in &rows {
        out.push_str("<tr>");
        element(out, "th", r#" scope="row""#, address);
        for cell in cells {
            element(out, "td", "", cell);
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}
