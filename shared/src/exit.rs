//! `h123 probe`'s exit codes: one table, part of the interface, and how a
//! result picks one, by the rule the outcome's first line follows too
//! ([`crate::analysis`]): the attempts it counts, and an advertised HTTP/3
//! endpoint that failed beside them.

use crate::analysis::{advertised_h3_failed, counted, h3_apart, http3_only, nothing_measured};
use crate::schema::{Phase, ProbeResult};
use crate::slo::SloReport;

/// What a probe's exit code says. The numbers are stable; when several
/// apply, the highest wins (see [`HELP`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: every attempt answered below 400 and every SLO gate was met.
    Success = 0,
    /// 1: h123 itself could not finish (its output or JUnit file could not be
    /// written, or the `--server` could not be reached or did not finish the probe).
    Trouble = 1,
    /// 2: the options were refused.
    Usage = 2,
    /// 3: an SLO gate was breached.
    SloBreached = 3,
    /// 4: an attempt answered 4xx.
    Http4xx = 4,
    /// 5: an attempt answered 5xx.
    Http5xx = 5,
    /// 6: an attempt failed sending the request or reading the response.
    RequestFailed = 6,
    /// 7: an attempt failed in the TLS or QUIC handshake, an advertised
    /// HTTP/3 endpoint did not answer (its name's lookup included), or the
    /// server offers none of the protocols asked for (nothing was measured).
    HandshakeFailed = 7,
    /// 8: an attempt failed to connect (or to open its proxy tunnel), or
    /// nothing listens on TCP where HTTP/3 answered (a server that answers
    /// HTTP/3 only).
    ConnectFailed = 8,
    /// 9: an attempt failed in the name lookup.
    DnsFailed = 9,
}

/// The exit code table, for `h123 probe --help` (docs/cli.md repeats it).
pub const HELP: &str = "\
Exit codes (stable; when several apply, the highest wins):
  0  every attempt answered below 400 and every --slo gate was met
  1  h123 could not write its output or --junit file, or --server failed it
  2  bad options (one line on stderr)
  3  an --slo gate was breached
  4  an attempt answered 4xx
  5  an attempt answered 5xx
  6  an attempt failed sending the request or reading the response
  7  an attempt failed in the TLS or QUIC handshake, an advertised HTTP/3 endpoint did not answer, or the server offers none of the protocols asked for
  8  an attempt failed to connect (or to open its proxy tunnel), or nothing listens on TCP where HTTP/3 answered
  9  an attempt failed in the name lookup (DNS)";

impl Exit {
    /// The code for finished results and, when gates were given, their judgement.
    pub fn of(results: &[ProbeResult], slo: Option<&SloReport>) -> Exit {
        let gates = match slo {
            Some(report) if !report.met => Exit::SloBreached,
            _ => Exit::Success,
        };
        results.iter().map(Exit::of_result).fold(gates, Exit::max)
    }

    /// The code for one result. An attempt is its whole redirect chain: its
    /// first failure, else its final status; the attempts counted are the
    /// outcome's ([`counted`]: an HTTP/3 run found unavailable beside other
    /// protocols is not among them). Such a run is 7 when something
    /// advertised the endpoint, and nothing when it was only tried; a probe
    /// that measured nothing because the server offers none of the
    /// protocols asked for is 7 (its TLS agreed on another); the TCP runs
    /// of a server that answers HTTP/3 only ([`http3_only`]) are set apart
    /// too, and are 8.
    pub fn of_result(result: &ProbeResult) -> Exit {
        let attempts = counted(result).map(|chain| match (chain.failure(), chain.status()) {
            (Some(failure), _) => Exit::failed_in(failure.phase),
            (None, Some(500..)) => Exit::Http5xx,
            (None, Some(400..)) => Exit::Http4xx,
            (None, Some(_)) => Exit::Success,
            // No answer and no failure recorded: not a success.
            (None, None) => Exit::RequestFailed,
        });
        let h3 = match h3_apart(result) {
            Some((_, d)) if advertised_h3_failed(d) => Exit::HandshakeFailed,
            _ => Exit::Success,
        };
        let unoffered = if nothing_measured(result).is_some() {
            Exit::HandshakeFailed
        } else {
            Exit::Success
        };
        let tcp = if http3_only(result) {
            Exit::ConnectFailed
        } else {
            Exit::Success
        };
        attempts.fold(h3.max(unoffered).max(tcp), Exit::max)
    }

    /// The code for a failure in `phase`.
    fn failed_in(phase: Phase) -> Exit {
        match phase {
            Phase::Dns => Exit::DnsFailed,
            Phase::Connect | Phase::Proxy => Exit::ConnectFailed,
            Phase::Tls | Phase::Quic => Exit::HandshakeFailed,
            Phase::Send | Phase::Wait | Phase::Receive => Exit::RequestFailed,
        }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(exit as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_table_lists_every_code_in_order() {
        let codes: Vec<u8> = HELP
            .lines()
            .skip(1)
            .map(|line| line.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        let all = [
            Exit::Success,
            Exit::Trouble,
            Exit::Usage,
            Exit::SloBreached,
            Exit::Http4xx,
            Exit::Http5xx,
            Exit::RequestFailed,
            Exit::HandshakeFailed,
            Exit::ConnectFailed,
            Exit::DnsFailed,
        ];
        assert_eq!(codes, all.map(|e| e as u8));
        assert!(all.is_sorted(), "the order is the precedence");
        let phases = Phase::ALL.map(Exit::failed_in);
        assert!(
            phases.is_sorted_by(|a, b| a >= b),
            "an earlier phase outranks a later one"
        );
    }
}
