//! Redirect chains: the hops of one attempt as one request, placed end to end.
//!
//! With redirects followed, every hop is its own [`Attempt`] entry whose
//! phases are offsets from that hop's own start. A [`Chain`] puts them back
//! together: each hop starts at its `chain_start_us` (recorded by the engine),
//! or, in records without it, right where the previous hop ended. The chain's
//! total is what the user waited for, and its last hop holds the answer.

use crate::json::ReadJson;
use crate::schema::{
    Attempt, ConnectionMode, Failure, Micros, ProbeResult, Protocol, ProtocolRun, ResponseInfo,
};
use serde::{Deserialize, Serialize};

/// How an attempt got its connection: the state a fair comparison holds equal.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ReadJson,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ConnState {
    /// A new connection with a full handshake.
    New,
    /// A new connection that resumed an earlier TLS session (and maybe sent 0-RTT).
    Resumed,
    /// A connection opened for an earlier attempt.
    Reused,
}

impl ConnState {
    /// Every state, in display order.
    pub const ALL: [ConnState; 3] = [ConnState::New, ConnState::Resumed, ConnState::Reused];

    /// "a new connection", "a resumed connection", "a reused connection".
    pub fn phrase(self) -> &'static str {
        match self {
            ConnState::New => "a new connection",
            ConnState::Resumed => "a resumed connection",
            ConnState::Reused => "a reused connection",
        }
    }

    /// A short label: "new connection", "resumed", "reused".
    pub fn label(self) -> &'static str {
        match self {
            ConnState::New => "new connection",
            ConnState::Resumed => "resumed",
            ConnState::Reused => "reused",
        }
    }

    /// The state of one attempt (hop), from its connection and TLS facts.
    pub fn of(attempt: &Attempt) -> ConnState {
        if attempt.connection.as_ref().is_some_and(|c| c.reused) {
            ConnState::Reused
        } else if attempt.tls.as_ref().is_some_and(|t| t.resumed)
            || attempt
                .quic
                .as_ref()
                .is_some_and(|q| q.zero_rtt_accepted == Some(true))
        {
            ConnState::Resumed
        } else {
            ConnState::New
        }
    }
}

/// One attempt with all its redirect hops, end to end.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain<'a> {
    /// The protocol of the run.
    pub protocol: Protocol,
    /// Each hop with its start offset from the chain's start, in order.
    pub hops: Vec<(&'a Attempt, Micros)>,
}

impl<'a> Chain<'a> {
    /// The attempt number.
    pub fn attempt(&self) -> u32 {
        self.first().attempt
    }

    /// Hop 0: the requested URL.
    pub fn first(&self) -> &'a Attempt {
        self.hops[0].0
    }

    /// The last hop: the one that holds the answer (or the failure).
    pub fn last(&self) -> &'a Attempt {
        self.hops[self.hops.len() - 1].0
    }

    /// From the first hop's start to the last hop's end.
    pub fn total(&self) -> Micros {
        let (last, start) = self.hops[self.hops.len() - 1];
        Micros(start.0 + last.phases.total.end_us.0)
    }

    /// The name lookups of its hops, together (zero when none looked a name up).
    pub fn lookup(&self) -> Micros {
        Micros(
            self.hops
                .iter()
                .filter_map(|(a, _)| a.phases.dns.map(|s| s.duration().0))
                .sum(),
        )
    }

    /// The waits of its hops' QUIC handshakes on a name's other addresses
    /// before the one that answered (zero when none waited).
    pub fn address_wait(&self) -> Micros {
        Micros(
            self.hops
                .iter()
                .filter_map(|(a, _)| a.quic.as_ref()?.address_wait_us.map(|w| w.0))
                .sum(),
        )
    }

    /// Time to first byte of the final answer, from the chain's start.
    pub fn ttfb(&self) -> Option<Micros> {
        let (last, start) = self.hops[self.hops.len() - 1];
        last.phases.wait.map(|w| Micros(start.0 + w.end_us.0))
    }

    /// Time spent before the last hop started (the redirects' cost), when there are redirects.
    pub fn redirect_time(&self) -> Option<Micros> {
        (self.hops.len() > 1).then(|| self.hops[self.hops.len() - 1].1)
    }

    /// Number of redirects followed.
    pub fn redirects(&self) -> usize {
        self.hops.len() - 1
    }

    /// The first failure of any hop.
    pub fn failure(&self) -> Option<&'a Failure> {
        self.hops.iter().find_map(|(a, _)| a.failure.as_ref())
    }

    /// The final response, when the chain got one and did not fail after it.
    pub fn response(&self) -> Option<&'a ResponseInfo> {
        self.last().response.as_ref()
    }

    /// The final status, when there is one.
    pub fn status(&self) -> Option<u16> {
        self.response().map(|r| r.status)
    }

    /// Whether the chain completed with a final answer below 400.
    pub fn succeeded(&self) -> bool {
        self.failure().is_none() && self.status().is_some_and(|s| s < 400)
    }

    /// Whether the chain completed (no network failure), whatever its status.
    pub fn answered(&self) -> bool {
        self.failure().is_none() && self.status().is_some()
    }

    /// How the chain's first hop got its connection.
    pub fn state(&self) -> ConnState {
        ConnState::of(self.first())
    }
}

/// The chains of a run, in attempt order. Hops belong to the attempt before
/// them; a hop without a hop 0 before it starts a chain of its own.
pub fn chains(run: &ProtocolRun) -> Vec<Chain<'_>> {
    chains_of(run.protocol, &run.attempts)
}

/// The chains of `attempts` made over `protocol` (a run's, or one of its
/// [`crate::schema::AddressRun`]s'), as [`chains`] makes them.
pub fn chains_of(protocol: Protocol, attempts: &[Attempt]) -> Vec<Chain<'_>> {
    let mut out: Vec<Chain<'_>> = Vec::new();
    for attempt in attempts {
        match out.last_mut() {
            Some(chain) if attempt.hop > 0 && chain.attempt() == attempt.attempt => {
                let (previous, start) = chain.hops[chain.hops.len() - 1];
                let placed = attempt
                    .chain_start_us
                    .unwrap_or(Micros(start.0 + previous.phases.total.end_us.0));
                chain.hops.push((attempt, placed));
            }
            _ => out.push(Chain {
                protocol,
                hops: vec![(attempt, Micros(0))],
            }),
        }
    }
    out
}

/// The chains of every run of a result, run after run.
pub fn all_chains(result: &ProbeResult) -> impl Iterator<Item = Chain<'_>> {
    result.runs.iter().flat_map(chains)
}

/// The connection states a result's mode produces on attempts 2..N, for wording.
pub fn later_state(mode: ConnectionMode) -> ConnState {
    match mode {
        ConnectionMode::Warm => ConnState::Reused,
        ConnectionMode::Cold => ConnState::New,
        ConnectionMode::Resumed => ConnState::Resumed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, result, reused, run};
    use crate::schema::{FailureKind, Phase, QuicInfo};

    fn hop(mut a: Attempt, hop: u32, start: Option<u64>, status: u16) -> Attempt {
        a.hop = hop;
        a.chain_start_us = start.map(Micros);
        a.response.as_mut().unwrap().status = status;
        a
    }

    #[test]
    fn hops_are_placed_end_to_end_and_totalled() {
        let r = run(
            Protocol::H1,
            vec![
                hop(fresh(1, 0, 1_000, 2_000, 10_000), 0, None, 302),
                // Recorded start: 20 ms after hop 0 started.
                hop(reused(1, 5_000), 1, Some(20_000), 301),
                // No recorded start: right after the previous hop's end.
                hop(reused(1, 7_000), 2, None, 200),
                reused(2, 3_000),
            ],
        );
        let c = chains(&r);
        assert_eq!(c.len(), 2);
        let offsets: Vec<u64> = c[0].hops.iter().map(|(_, s)| s.0).collect();
        // hop 1 lasts 50 + 5000 + 500 = 5550 µs, so hop 2 starts at 25_550.
        assert_eq!(offsets, vec![0, 20_000, 25_550]);
        assert_eq!(c[0].total(), Micros(25_550 + 7_550));
        assert_eq!(c[0].ttfb(), Some(Micros(25_550 + 7_050)));
        assert_eq!(c[0].redirect_time(), Some(Micros(25_550)));
        assert_eq!((c[0].redirects(), c[0].status()), (2, Some(200)));
        assert!(c[0].succeeded());
        assert_eq!(c[0].state(), ConnState::New);
        assert_eq!(c[1].redirect_time(), None);
        assert_eq!(c[1].state(), ConnState::Reused);
        assert_eq!(c[1].total(), Micros(3_550));
    }

    #[test]
    fn failures_errors_and_states() {
        let broken = crate::fixture::failed(reused(1, 10), Phase::Wait, FailureKind::Reset);
        let mut zero_rtt = fresh(2, 0, 0, 0, 100);
        zero_rtt.quic = Some(QuicInfo {
            zero_rtt_accepted: Some(true),
            ..QuicInfo::default()
        });
        let mut not_found = reused(3, 100);
        not_found.response.as_mut().unwrap().status = 404;
        let r = result(vec![run(Protocol::H3, vec![broken, zero_rtt, not_found])]);
        let c: Vec<Chain> = all_chains(&r).collect();
        assert!(!c[0].succeeded() && !c[0].answered());
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Reset);
        assert_eq!(c[1].state(), ConnState::Resumed);
        assert!(c[1].succeeded());
        assert!(!c[2].succeeded() && c[2].answered());
        assert_eq!(later_state(ConnectionMode::Resumed), ConnState::Resumed);
    }
}
