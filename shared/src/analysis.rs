//! What a finished result means: its outcome, the verdict and the findings, computed once.
//!
//! The engine's callers attach an [`Analysis`] to every finished result
//! ([`ProbeResult::analysis`]), so the API, the CLI's JSON, the SSE `done`
//! event, the HAR export and the web page all say the same thing.

use crate::chain::{Chain, all_chains};
use crate::diagnosis::{Finding, diagnose};
use crate::json::ReadJson;
use crate::schema::{
    FailureKind, H3Discovery, H3Outcome, H3Via, Phase, ProbeResult, Protocol, ProtocolRun,
};
use crate::verdict::{Verdict, list, verdict};
use serde::{Deserialize, Serialize};

/// How a probe went, as its badge says.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every attempt got an answer below 400.
    Done,
    /// Some attempts failed or answered 4xx/5xx, or an advertised HTTP/3
    /// endpoint failed beside them; some succeeded.
    DoneWithErrors,
    /// Nothing succeeded: every attempt failed or answered with an HTTP error.
    Failed,
}

impl Outcome {
    /// The badge text: `done`, `done with errors`, `failed`.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::DoneWithErrors => "done with errors",
            Outcome::Failed => "failed",
        }
    }
}

/// Counts behind the outcome.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptCounts {
    /// Attempts (whole redirect chains) counted.
    pub attempts: u32,
    /// Those that got an answer below 400.
    pub succeeded: u32,
    /// Those answered with a 4xx or 5xx status.
    pub http_errors: u32,
    /// Those that failed in some phase.
    pub failed: u32,
}

/// The meaning of a finished result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Analysis {
    /// How it went.
    pub outcome: Outcome,
    /// The attempts behind the outcome.
    pub counts: AttemptCounts,
    /// The outcome in one line, the CLI's first: the label, what the counted
    /// attempts did and for which protocols, and beside them an HTTP/3 run
    /// set apart or why nothing was measured (empty in records analysed
    /// before it existed).
    #[serde(default)]
    pub headline: String,
    /// The answer to "which protocol is faster, and why".
    pub verdict: Verdict,
    /// What is slow or broken, most severe first.
    pub findings: Vec<Finding>,
}

/// Analyses a result.
pub fn analyze(result: &ProbeResult) -> Analysis {
    let counts = counts(result);
    let h3_failed = h3_apart(result).is_some_and(|(_, d)| advertised_h3_failed(d));
    let outcome = if counts.succeeded == 0 {
        Outcome::Failed
    } else if counts.succeeded == counts.attempts && !h3_failed && !http3_only(result) {
        Outcome::Done
    } else {
        Outcome::DoneWithErrors
    };
    Analysis {
        outcome,
        counts,
        headline: headline(result, outcome, counts),
        verdict: verdict(result),
        findings: diagnose(result),
    }
}

/// The result's own analysis when it carries one, else one made now (a
/// running probe, or a record written before analyses existed).
pub fn of(result: &ProbeResult) -> Analysis {
    result.analysis.clone().unwrap_or_else(|| analyze(result))
}

/// A result with its analysis attached (replacing any earlier one).
pub fn analyzed(mut result: ProbeResult) -> ProbeResult {
    result.analysis = None;
    result.analysis = Some(analyze(&result));
    result
}

/// The HTTP/3 run set apart from the count: one whose discovery found
/// HTTP/3 unavailable, beside other protocols (alone, it is all there is).
/// Its story is told beside the count, and by [`advertised_h3_failed`].
pub fn h3_apart(result: &ProbeResult) -> Option<(&ProtocolRun, &H3Discovery)> {
    if result.runs.iter().all(|r| r.protocol == Protocol::H3) {
        return None;
    }
    result
        .runs
        .iter()
        .filter(|r| r.protocol == Protocol::H3)
        .find_map(|r| Some((r, r.discovery.as_ref()?)))
        .filter(|(_, d)| d.outcome != H3Outcome::Ok)
}

/// Whether something advertised the endpoint (an `Alt-Svc` header, an
/// HTTPS record) that then failed: the site's error, exit code 7, though
/// its attempts stay out of the count. One tried only because asked
/// (`--h3-direct`), or refused by the safety policy, is a fact instead.
pub fn advertised_h3_failed(d: &H3Discovery) -> bool {
    matches!(d.via, Some(H3Via::AltSvc | H3Via::HttpsRecord))
        && !matches!(
            d.outcome,
            H3Outcome::Ok | H3Outcome::NotAdvertised | H3Outcome::Blocked
        )
}

/// A server that answers HTTP/3 only: every attempt over TCP (HTTP/1.1,
/// HTTP/2) was refused at connect while an HTTP/3 attempt got an answer.
/// The TCP runs are set apart from the count and told beside it, as an
/// HTTP/3 run set apart is: the site's error (browsers find HTTP/3 through a
/// TCP answer), exit code 8, the outcome "done with errors" at best.
pub fn http3_only(result: &ProbeResult) -> bool {
    let (tcp, h3): (Vec<&ProtocolRun>, Vec<&ProtocolRun>) =
        result.runs.iter().partition(|r| r.protocol != Protocol::H3);
    let refused = |run: &&ProtocolRun| {
        !run.attempts.is_empty()
            && run.attempts.iter().all(|a| {
                a.failure
                    .as_ref()
                    .is_some_and(|f| f.phase == Phase::Connect && f.kind == FailureKind::Refused)
            })
    };
    !tcp.is_empty()
        && tcp.iter().all(refused)
        && h3
            .iter()
            .flat_map(|r| &r.attempts)
            .any(|a| a.response.is_some())
}

/// The chains the outcome counts: every run's, less an HTTP/3 run set
/// apart ([`h3_apart`]) or the TCP runs of a server that answers HTTP/3
/// only ([`http3_only`]).
pub fn counted(result: &ProbeResult) -> impl Iterator<Item = Chain<'_>> {
    let h3 = h3_apart(result).is_some();
    let tcp = http3_only(result);
    all_chains(result).filter(move |c| {
        let apart = match c.protocol {
            Protocol::H3 => h3,
            _ => tcp,
        };
        !apart
    })
}

/// Why nothing was measured when the server offers none of the protocols
/// asked for (every run not offered or, HTTP/3, not available): the runs'
/// own reasons. `None` when some run has an attempt, or a run was skipped
/// for another reason.
pub fn nothing_measured(result: &ProbeResult) -> Option<String> {
    let unoffered = result.runs.iter().any(|r| r.not_offered.is_some());
    let quiet = result.runs.iter().all(|r| {
        r.attempts.is_empty()
            && (r.not_offered.is_some()
                || r.discovery
                    .as_ref()
                    .is_some_and(|d| d.outcome == H3Outcome::NotAdvertised))
    });
    (unoffered && quiet).then(|| {
        let reasons: Vec<&str> = result
            .runs
            .iter()
            .filter_map(|r| r.skipped.as_deref())
            .collect();
        reasons.join("; ")
    })
}

/// The outcome's line (see [`Analysis::headline`]), e.g. "done with errors ·
/// 16 of 16 HTTP/1.1 and HTTP/2 attempts succeeded · HTTP/3 failed: ...".
fn headline(result: &ProbeResult, outcome: Outcome, c: AttemptCounts) -> String {
    let label = outcome.label();
    if let Some(why) = nothing_measured(result) {
        return format!("{label} · nothing measured: {why}");
    }
    let mut protocols: Vec<Protocol> = counted(result).map(|c| c.protocol).collect();
    protocols.dedup();
    let versions: Vec<&str> = protocols.iter().map(|p| p.http_version()).collect();
    let mut line = format!(
        "{label} · {} of {} {} attempt(s) succeeded",
        c.succeeded,
        c.attempts,
        list(&versions)
    )
    .replace("  ", " ");
    if c.http_errors > 0 {
        line.push_str(&format!(", {} HTTP error(s)", c.http_errors));
    }
    if c.failed > 0 {
        line.push_str(&format!(", {} failed", c.failed));
    }
    if let Some((_, d)) = h3_apart(result) {
        let aside = match d.outcome {
            H3Outcome::NotAdvertised => "HTTP/3 not advertised".to_owned(),
            _ if advertised_h3_failed(d) => format!("HTTP/3 failed: {}", d.detail),
            _ => format!("no HTTP/3: {}", d.detail),
        };
        line.push_str(" · ");
        line.push_str(&aside);
    }
    if http3_only(result) {
        let tcp: Vec<&str> = result
            .runs
            .iter()
            .filter(|r| r.protocol != Protocol::H3)
            .map(|r| r.protocol.http_version())
            .collect();
        line.push_str(&format!(
            " · {} refused: nothing listens on TCP, this server answers HTTP/3 only",
            list(&tcp)
        ));
    }
    line
}

/// Counts attempts as chains ([`counted`]).
fn counts(result: &ProbeResult) -> AttemptCounts {
    let mut counts = AttemptCounts::default();
    for chain in counted(result) {
        counts.attempts += 1;
        if chain.failure().is_some() {
            counts.failed += 1;
        } else if chain.succeeded() {
            counts.succeeded += 1;
        } else if Chain::answered(&chain) {
            counts.http_errors += 1;
        } else {
            counts.failed += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run};
    use crate::schema::H3Discovery;

    fn status(mut a: crate::schema::Attempt, code: u16) -> crate::schema::Attempt {
        a.response.as_mut().unwrap().status = code;
        a
    }

    /// An attempt refused at connect: no answer.
    fn refused(n: u32) -> crate::schema::Attempt {
        let mut a = failed(
            attempt(n, &[(Phase::Connect, 300)], false),
            Phase::Connect,
            FailureKind::Refused,
        );
        a.response = None;
        a
    }

    #[test]
    fn a_server_answering_http3_only_has_its_tcp_runs_told_beside_the_count() {
        let only = result(vec![
            run(Protocol::H1, vec![refused(1), refused(2)]),
            run(Protocol::H2, vec![refused(1), refused(2)]),
            run(
                Protocol::H3,
                vec![fresh(1, 0, 1_000, 1_000, 1_000), reused(2, 1_000)],
            ),
        ]);
        assert!(http3_only(&only));
        let a = analyze(&only);
        assert_eq!(a.outcome, Outcome::DoneWithErrors, "the site's error");
        assert_eq!(
            a.counts,
            AttemptCounts {
                attempts: 2,
                succeeded: 2,
                http_errors: 0,
                failed: 0
            }
        );
        assert_eq!(
            a.headline,
            "done with errors · 2 of 2 HTTP/3 attempt(s) succeeded · HTTP/1.1 and HTTP/2 refused: \
             nothing listens on TCP, this server answers HTTP/3 only"
        );
        assert_eq!(
            crate::exit::Exit::of_result(&only),
            crate::exit::Exit::ConnectFailed
        );

        // One TCP answer, or no HTTP/3 answer: plain refusals, counted as any failure.
        let mut answered = only.clone();
        answered.runs[1].attempts[1] = reused(2, 1_000);
        assert!(!http3_only(&answered));
        assert_eq!(analyze(&answered).counts.attempts, 6);
        let mut silent = only.clone();
        silent.runs[2].attempts = vec![refused(1)];
        assert!(!http3_only(&silent));
        assert_eq!(analyze(&silent).outcome, Outcome::Failed);
        let alone = result(vec![run(Protocol::H3, vec![fresh(1, 0, 1, 1, 1)])]);
        assert!(!http3_only(&alone), "no TCP run asked for");
    }

    #[test]
    fn outcomes() {
        let ok = result(vec![run(
            Protocol::H1,
            vec![fresh(1, 0, 1, 1, 1), reused(2, 1)],
        )]);
        assert_eq!(analyze(&ok).outcome, Outcome::Done);

        let mixed = result(vec![run(
            Protocol::H1,
            vec![fresh(1, 0, 1, 1, 1), status(reused(2, 1), 502)],
        )]);
        let a = analyze(&mixed);
        assert_eq!(a.outcome, Outcome::DoneWithErrors);
        assert_eq!(
            a.counts,
            AttemptCounts {
                attempts: 2,
                succeeded: 1,
                http_errors: 1,
                failed: 0
            }
        );

        let bad_gateway = result(vec![run(
            Protocol::H1,
            vec![status(fresh(1, 0, 1, 1, 1), 502), status(reused(2, 1), 502)],
        )]);
        assert_eq!(analyze(&bad_gateway).outcome, Outcome::Failed);

        let refused = failed(
            attempt(1, &[(Phase::Connect, 10)], false),
            Phase::Connect,
            FailureKind::Refused,
        );
        let a = analyze(&result(vec![run(Protocol::H2, vec![refused])]));
        assert_eq!((a.outcome, a.counts.failed), (Outcome::Failed, 1));
        assert_eq!(Outcome::DoneWithErrors.label(), "done with errors");
    }

    #[test]
    fn unavailable_http3_is_a_finding_not_an_error() {
        let quic = failed(
            attempt(1, &[(Phase::Quic, 10)], false),
            Phase::Quic,
            FailureKind::Timeout,
        );
        let mut h3 = run(Protocol::H3, vec![quic]);
        h3.discovery = Some(H3Discovery {
            alt_svc: Vec::new(),
            https_record: None,
            https_lookup: None,
            via: None,
            endpoint: None,
            outcome: H3Outcome::UdpSilent,
            detail: "silent".into(),
            quic_budget_ms: None,
        });
        let r = result(vec![
            run(Protocol::H2, vec![fresh(1, 0, 1, 1, 1)]),
            h3.clone(),
        ]);
        assert_eq!(analyze(&r).outcome, Outcome::Done);
        assert_eq!(
            analyze(&result(vec![h3])).outcome,
            Outcome::Failed,
            "HTTP/3 alone, unreachable: nothing succeeded"
        );
        let with = analyzed(r.clone());
        assert_eq!(with.analysis, Some(analyze(&r)));
    }
}
