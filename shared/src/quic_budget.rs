//! How long a QUIC handshake may take before HTTP/3 is given up on: what a
//! browser would spend before falling back to TCP, not the whole phase
//! timeout.
//!
//! A QUIC client that hears nothing resends its first packet after its
//! probe timeout, about 1 s before it has measured the path (quinn starts
//! from a 333 ms round trip guess). The floor, [`FLOOR_MS`], leaves room for
//! that resend and its answer, so one lost datagram does not fail the
//! handshake. On top of it, [`ROUND_TRIPS`] of the path's TCP round trip
//! (the median TCP connect to the same host) cover a slow path; the ceiling,
//! [`CEILING_MS`], also holds when no TCP connection was measured. An
//! explicit `quic_timeout_ms` sets the budget instead, and the phase timeout
//! bounds it either way.

use crate::schema::{Attempt, Micros, ProbeOptions};

/// The least a QUIC handshake is given, in milliseconds.
pub const FLOOR_MS: u64 = 2_000;
/// The most a QUIC handshake is given by default, in milliseconds.
pub const CEILING_MS: u64 = 3_000;
/// TCP round trips added to the floor.
pub const ROUND_TRIPS: u64 = 10;

/// The path's TCP round trip as `attempts` measured it: the median of their
/// TCP connects (of any host: the attempts given are the probe's own), or
/// `None` when none connected over TCP.
pub fn tcp_round_trip<'a>(attempts: impl IntoIterator<Item = &'a Attempt>) -> Option<Micros> {
    let mut connects: Vec<Micros> = attempts
        .into_iter()
        .filter_map(|a| a.phases.connect.map(|span| span.duration()))
        .collect();
    connects.sort_unstable();
    connects.get(connects.len() / 2).copied()
}

/// The QUIC handshake budget of a probe with `options`, in milliseconds,
/// given the path's `tcp_round_trip` when one was measured.
pub fn budget_ms(options: &ProbeOptions, tcp_round_trip: Option<Micros>) -> u64 {
    let derived = match tcp_round_trip {
        Some(rtt) => (FLOOR_MS + ROUND_TRIPS * rtt.0.div_ceil(1_000)).min(CEILING_MS),
        None => CEILING_MS,
    };
    let phase_limit = options.phase_timeout_ms.min(options.timeout_ms);
    options.quic_timeout_ms.unwrap_or(derived).min(phase_limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(quic: Option<u64>, phase: u64) -> ProbeOptions {
        ProbeOptions {
            quic_timeout_ms: quic,
            phase_timeout_ms: phase,
            ..ProbeOptions::default()
        }
    }

    #[test]
    fn the_round_trip_scales_the_budget_between_floor_and_ceiling() {
        let defaults = options(None, 10_000);
        assert_eq!(budget_ms(&defaults, Some(Micros(50))), 2_010);
        assert_eq!(budget_ms(&defaults, Some(Micros(40_000))), 2_400);
        assert_eq!(budget_ms(&defaults, Some(Micros(300_000))), CEILING_MS);
        assert_eq!(budget_ms(&defaults, None), CEILING_MS);
    }

    #[test]
    fn the_round_trip_is_the_median_tcp_connect() {
        use crate::fixture::fresh;
        let attempts = [
            fresh(1, 100, 40, 300, 500),
            fresh(2, 100, 60, 300, 500),
            fresh(3, 100, 9_000, 300, 500),
        ];
        assert_eq!(tcp_round_trip(&attempts), Some(Micros(60)));
        assert_eq!(tcp_round_trip(&[]), None);
    }

    #[test]
    fn an_explicit_budget_wins_and_the_phase_timeout_bounds_both() {
        assert_eq!(budget_ms(&options(Some(8_000), 10_000), None), 8_000);
        assert_eq!(budget_ms(&options(Some(8_000), 5_000), None), 5_000);
        assert_eq!(budget_ms(&options(None, 1_000), Some(Micros(50))), 1_000);
    }
}
