//! Connection migration (`--migrate`): an HTTP/3 connection moved to a new
//! local port or address after its first response's first body bytes, and
//! what became of it (RFC 9000, section 9).
//!
//! The move is quinn's endpoint rebind: the connection sends from a fresh
//! socket with a fresh connection ID and pings; a server that accepts the
//! move answers on the new path and checks it with a PATH_CHALLENGE. The old
//! socket reads nothing more, as a network that was left delivers nothing
//! more, so a server that ignores the new path leaves the response stalled.

use super::failure::failure;
use super::quic_socket::ClientEndpoint;
use super::trace::{self, AttemptTrace};
use h123_shared::migration::{Migrate, Migration};
use h123_shared::{Failure, FailureKind, Phase};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How long a completed response waits, beyond three round trips, for the
/// first datagram on the new path before its connection counts as lost.
const ANSWER_GRACE: Duration = Duration::from_secs(1);

/// A move made during a response, not yet settled.
#[derive(Debug)]
pub struct Moving {
    to: Migrate,
    from: SocketAddr,
    local: SocketAddr,
    after_bytes: u64,
    at: Instant,
    challenges_before: u64,
    responses_before: u64,
}

impl Moving {
    /// Moves `endpoint` (and so `quic`) `to` a new port or address, with
    /// `after_bytes` of the body read.
    pub fn start(
        endpoint: &mut ClientEndpoint,
        quic: &quinn::Connection,
        to: Migrate,
        after_bytes: u64,
    ) -> Result<Moving, Failure> {
        let stats = quic.stats();
        let cannot = |e: std::io::Error| {
            failure(
                Phase::Receive,
                FailureKind::Io,
                format!("could not move the connection {}: {e}", to.describe()),
            )
        };
        let from = endpoint.local_addr().map_err(cannot)?;
        let at = trace::now();
        let local = endpoint.move_to(&to).map_err(cannot)?;
        Ok(Moving {
            to,
            from,
            local,
            after_bytes,
            at,
            challenges_before: stats.frame_rx.path_challenge,
            responses_before: stats.frame_tx.path_response,
        })
    }

    /// What became of the move once the response ended (`completed`, or
    /// failed): whether anything came back on the new path (waiting a
    /// little for it after a completed response), and the path checks.
    pub async fn settle(
        self,
        endpoint: &ClientEndpoint,
        quic: &quinn::Connection,
        completed: bool,
        limit: Duration,
        trace: &AttemptTrace,
    ) -> Migration {
        let wait = match completed {
            true => limit.min(ANSWER_GRACE + 3 * quic.rtt()),
            false => Duration::ZERO,
        };
        let answered = endpoint.first_answer(wait).await;
        let stats = quic.stats();
        Migration {
            to: self.to,
            from_addr: shown(self.from),
            to_addr: shown(self.local),
            after_bytes: self.after_bytes,
            at_us: trace.offset(self.at),
            answered_after_us: answered.map(|at| super::trace::between(self.at, at)),
            path_challenges: stats.frame_rx.path_challenge - self.challenges_before,
            path_responses: stats.frame_tx.path_response - self.responses_before,
            survived: completed && answered.is_some() && quic.close_reason().is_none(),
        }
    }
}

/// The failure of a response that stopped after its connection moved:
/// `cause`, explained by what the new path did.
pub fn stalled(migration: &Migration, cause: Failure) -> Failure {
    let why = match migration.answered_after_us {
        None => format!(
            "nothing came back on the new path after the connection moved to {} (the server, \
             or something in front of it, does not accept a moved connection)",
            migration.to_addr
        ),
        Some(_) => format!(
            "the connection moved to {} and the response did not complete",
            migration.to_addr
        ),
    };
    failure(cause.phase, cause.kind, format!("{why}: {}", cause.message))
}

/// A local address as people read it: IPv4 out of its IPv6-mapped form.
fn shown(addr: SocketAddr) -> String {
    SocketAddr::new(addr.ip().to_canonical(), addr.port()).to_string()
}
