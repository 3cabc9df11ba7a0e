//! Requests at once compared (`streams_h3_sooner`, `streams_h2_sooner`):
//! whether one protocol's streams finished clearly sooner than the other's,
//! and, under loss, why.

use super::*;
use crate::format::ms;
use crate::streams::{Spread, bursts, clearly_sooner, spread};

/// One finding when HTTP/2's and HTTP/3's requests at once finished
/// clearly apart (the middle halves of their completion times do not
/// overlap); nothing when they overlap.
pub(super) fn streams(result: &ProbeResult, out: &mut Vec<Finding>) {
    let of = |protocol: Protocol| -> Option<(usize, Spread)> {
        bursts(result)
            .find(|(run, _)| run.protocol == protocol)
            .and_then(|(_, burst)| Some((burst.streams.len(), spread(burst)?)))
    };
    let (Some((sent, h2)), Some((_, h3))) = (of(Protocol::H2), of(Protocol::H3)) else {
        return;
    };
    let lossy = result
        .options
        .network
        .as_ref()
        .is_some_and(|n| n.loss_basis_points > 0);
    let figures = |name: &str, s: &Spread| {
        format!(
            "{name}'s finished by {} (median {}, the first after {})",
            ms(s.last),
            ms(s.median),
            ms(s.first)
        )
    };
    let both = format!(
        "Of {sent} requests sent at once, {}; {}.",
        figures("HTTP/3", &h3),
        figures("HTTP/2", &h2)
    );
    let (id, title, protocol, faster, why) = if clearly_sooner(&h3, &h2) {
        let why = if lossy {
            "Over one TCP connection a lost segment holds every HTTP/2 stream behind it until it \
             is resent (head-of-line blocking); QUIC holds only the stream whose packet was lost, \
             and the others carry on. Pages of many resources over lossy networks (mobile, Wi-Fi) \
             gain most from HTTP/3."
        } else {
            "No loss was emulated, so this is not head-of-line blocking from loss: the two \
             stacks' costs and flow control differ. Add loss to the network (--network loss=2%, or the \
             form's network picker) to see what it does to each."
        };
        (
            "streams_h3_sooner",
            "HTTP/3's requests at once finished sooner than HTTP/2's",
            Protocol::H3,
            h3,
            why,
        )
    } else if clearly_sooner(&h2, &h3) {
        let why = if lossy {
            "Under loss QUIC usually keeps the streams that lost nothing moving; here HTTP/2 \
             finished first all the same, so something else weighs more: the server's QUIC \
             stack, its congestion control or its flow-control windows."
        } else {
            "Without loss both protocols send every stream over one connection; the difference is \
             the stacks' costs and flow control, not head-of-line blocking."
        };
        (
            "streams_h2_sooner",
            "HTTP/2's requests at once finished sooner than HTTP/3's",
            Protocol::H2,
            h2,
            why,
        )
    } else {
        return;
    };
    out.push(finding(
        id,
        Severity::Info,
        title.into(),
        Evidence {
            protocol,
            attempt: None,
            phase: Some(Phase::Receive),
            duration: Some(faster.median),
            detail: both,
        },
        why.into(),
    ));
}
