//! What a finished result means: its outcome, the verdict and the findings, computed once.
//!
//! The engine's callers attach an [`Analysis`] to every finished result
//! ([`ProbeResult::analysis`]), so the API, the CLI's JSON, the SSE `done`
//! event, the HAR export and the web page all say the same thing.

use crate::chain::{Chain, all_chains};
use crate::diagnosis::{Finding, diagnose};
use crate::json::ReadJson;
use crate::schema::{H3Outcome, ProbeResult, Protocol};
use crate::verdict::{Verdict, verdict};
use serde::{Deserialize, Serialize};

/// How a probe went, as its badge says.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every attempt got an answer below 400.
    Done,
    /// Some attempts failed or answered 4xx/5xx; some succeeded.
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
    /// The answer to "which protocol is faster, and why".
    pub verdict: Verdict,
    /// What is slow or broken, most severe first.
    pub findings: Vec<Finding>,
}

/// Analyses a result.
pub fn analyze(result: &ProbeResult) -> Analysis {
    let counts = counts(result);
    let outcome = if counts.succeeded == 0 {
        Outcome::Failed
    } else if counts.succeeded == counts.attempts {
        Outcome::Done
    } else {
        Outcome::DoneWithErrors
    };
    Analysis {
        outcome,
        counts,
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

/// Counts attempts as chains. An HTTP/3 run that discovery found unavailable
/// is a finding, not an error, and is not counted unless it was all that ran.
fn counts(result: &ProbeResult) -> AttemptCounts {
    let h3_unavailable = result.runs.iter().any(|r| {
        r.protocol == Protocol::H3
            && r.discovery
                .as_ref()
                .is_some_and(|d| d.outcome != H3Outcome::Ok)
    });
    let only_h3 = result.runs.iter().all(|r| r.protocol == Protocol::H3);
    let mut counts = AttemptCounts::default();
    for chain in all_chains(result) {
        if h3_unavailable && !only_h3 && chain.protocol == Protocol::H3 {
            continue;
        }
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
    use crate::schema::{FailureKind, H3Discovery, Phase};

    fn status(mut a: crate::schema::Attempt, code: u16) -> crate::schema::Attempt {
        a.response.as_mut().unwrap().status = code;
        a
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
