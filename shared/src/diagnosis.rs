//! Diagnosis: rules over a probe result that say what is slow or broken, with evidence and a next step.
//!
//! The rules are those of DESIGN.md section 4, with thresholds as the named
//! constants below. Slow-phase rules only look at phases that completed (a
//! phase cut short by a failure is the failure rule's business) and report
//! the worst occurrence across all protocols, once. Reuse rules apply per
//! protocol, in warm mode. Failures are grouped by kind; HTTP/3 failures that
//! the other protocols do not share become the HTTP/3 availability finding,
//! because "HTTP/3 not available" is a finding, not an error.
//!
//! Findings come most severe first; within a severity, in rule order.

use crate::curl::shell_quote;
use crate::json::ReadJson;
use crate::schema::{Attempt, Micros, Phase, ProbeResult, Protocol, ProtocolRun, Span};
use crate::uri;
use serde::{Deserialize, Serialize};

mod addresses;
mod connection;
mod failure;
mod h3;
mod http;
mod migration;
mod offered;
mod quic_race;
mod slow;
mod streams;

/// A name lookup slower than this is reported.
pub const DNS_SLOW: Micros = Micros(100_000);
/// A TCP connect slower than this is reported, whatever the others took.
pub const CONNECT_SLOW: Micros = Micros(200_000);
/// A TCP connect this many times the fastest connect of the probe ...
pub const CONNECT_SLOW_FACTOR: u64 = 3;
/// ... and slower than this is reported.
pub const CONNECT_SLOW_FLOOR: Micros = Micros(50_000);
/// A TLS (or QUIC) handshake on a new connection slower than this is reported.
pub const TLS_SLOW: Micros = Micros(500_000);
/// A wait for the first byte (server time plus one round trip) slower than this is reported.
pub const TTFB_SLOW: Micros = Micros(200_000);

/// How much a finding matters.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ReadJson,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// Something is slow or not working as it should.
    Warning,
    /// Requests fail.
    Critical,
}

/// What a finding is based on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Evidence {
    /// The protocol where it was seen (the first, when seen on several).
    pub protocol: Protocol,
    /// The attempt, when one attempt shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The phase concerned, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// The duration concerned, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Micros>,
    /// The figures, in a sentence or two.
    pub detail: String,
}

/// One conclusion of the diagnosis.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Finding {
    /// Stable snake_case rule id, e.g. `dns_slow` or `failure_timeout`.
    pub id: String,
    /// How much it matters.
    pub severity: Severity,
    /// One line for a heading.
    pub title: String,
    /// What it is based on.
    pub evidence: Evidence,
    /// What to do next, naming real commands.
    pub next_step: String,
}

/// Runs every rule over a result; most severe findings first. Rules about a
/// working target (slow phases, reuse) only run when some attempt succeeded.
pub fn diagnose(result: &ProbeResult) -> Vec<Finding> {
    let working = crate::chain::all_chains(result).any(|c| c.succeeded());
    let mut findings = Vec::new();
    if working {
        slow::slow_phases(result, &mut findings);
        for run in &result.runs {
            connection::reuse(result, run, &mut findings);
        }
    }
    http::errors(result, &mut findings);
    http::redirects(result, &mut findings);
    failure::failures(result, &mut findings);
    offered::not_offered(result, &mut findings);
    addresses::families(result, &mut findings);
    quic_race::silent_addresses(result, &mut findings);
    quic_race::refused_addresses(result, &mut findings);
    truncated(result, &mut findings);
    capped(result, &mut findings);
    migration::migration(result, &mut findings);
    streams::streams(result, &mut findings);
    if working {
        connection::reuse_saving(result, &mut findings);
        for run in &result.runs {
            connection::resumption_saving(result, run, &mut findings);
        }
    }
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    findings
}

/// Every (run, attempt) pair of the result.
fn all_attempts(result: &ProbeResult) -> impl Iterator<Item = (&ProtocolRun, &Attempt)> {
    result
        .runs
        .iter()
        .flat_map(|run| run.attempts.iter().map(move |a| (run, a)))
}

/// The span of a phase that completed: present, and not the one a failure cut short.
fn completed(attempt: &Attempt, phase: Phase) -> Option<Span> {
    let cut_short = attempt.failure.as_ref().is_some_and(|f| f.phase == phase);
    attempt.phases.get(phase).filter(|_| !cut_short)
}

fn is_reused(attempt: &Attempt) -> bool {
    attempt.connection.as_ref().is_some_and(|c| c.reused)
}

/// The host, `host port` (for `nc`) and `host:port` of a URL, shell-quoted where needed.
struct Target {
    host: String,
    host_space_port: String,
    host_port: String,
}

fn target(url: &str) -> Target {
    let (host, port) = match uri::parse(url) {
        Some(u) => (u.host, if u.port == 0 { 443 } else { u.port }),
        None => (url, 443),
    };
    let host_port = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    Target {
        host: shell_quote(host),
        host_space_port: format!("{} {port}", shell_quote(host)),
        host_port: shell_quote(&host_port),
    }
}

fn label(protocol: Protocol, attempt: &Attempt) -> String {
    if attempt.hop > 0 {
        format!("{protocol} #{} hop {}", attempt.attempt, attempt.hop)
    } else {
        format!("{protocol} #{}", attempt.attempt)
    }
}

fn finding(
    id: &str,
    severity: Severity,
    title: String,
    evidence: Evidence,
    next_step: String,
) -> Finding {
    Finding {
        id: id.to_string(),
        severity,
        title,
        evidence,
        next_step,
    }
}

/// The first body cut at the size cap (`body_truncated`).
fn truncated(result: &ProbeResult, out: &mut Vec<Finding>) {
    let Some((run, a, r)) = all_attempts(result).find_map(|(run, a)| {
        a.response
            .as_ref()
            .filter(|r| r.truncated)
            .map(|r| (run, a, r))
    }) else {
        return;
    };
    out.push(finding(
        "body_truncated",
        Severity::Info,
        "Response body cut at the size cap".into(),
        Evidence {
            protocol: run.protocol,
            attempt: Some(a.attempt),
            phase: Some(Phase::Receive),
            duration: a.phases.receive.map(|s| s.duration()),
            detail: format!(
                "{} read {} bytes and stopped at the {} byte cap, so the receive time covers only part of the body.",
                label(run.protocol, a),
                r.body_bytes,
                result.options.max_body_bytes
            ),
        },
        format!(
            "Raise the body size cap to time the whole download, or measure it with \
             `curl -o /dev/null -s -w '%{{size_download}} bytes in %{{time_total}}s\\n' {}`.",
            shell_quote(&a.url)
        ),
    ));
}

/// The record's bounds at work: a run stopped at the record's size cap
/// (`record_capped`), or response headers cut to the stored budget (`headers_truncated`).
fn capped(result: &ProbeResult, out: &mut Vec<Finding>) {
    if let Some((run, why)) = result
        .runs
        .iter()
        .find_map(|run| run.cut_short.as_deref().map(|why| (run, why)))
    {
        out.push(finding(
            "record_capped",
            Severity::Warning,
            "Probe stopped at the record's size cap".into(),
            Evidence {
                protocol: run.protocol,
                attempt: None,
                phase: None,
                duration: None,
                detail: format!(
                    "{} kept {} attempts and {why}: the target's answers (headers, redirect hops) are large.",
                    run.protocol,
                    run.attempts.len()
                ),
            },
            "Probe fewer attempts (a lower repeat or max_redirects), or look at one answer with \
             `curl -sI` to see what makes it large."
                .into(),
        ));
    }
    if let Some((run, a)) =
        all_attempts(result).find(|(_, a)| a.response.as_ref().is_some_and(|r| r.headers_truncated))
    {
        out.push(finding(
            "headers_truncated",
            Severity::Info,
            "Response headers cut to the stored budget".into(),
            Evidence {
                protocol: run.protocol,
                attempt: Some(a.attempt),
                phase: None,
                duration: None,
                detail: format!(
                    "{} answered with more header bytes than a record keeps (16 KiB); the rest were left out.",
                    label(run.protocol, a)
                ),
            },
            format!("See them all with `curl -sI {}`.", shell_quote(&a.url)),
        ));
    }
}

#[cfg(test)]
mod test_support {
    use super::*;
    use crate::schema::Header;

    pub(super) fn ids(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.id.as_str()).collect()
    }

    pub(super) fn find<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
        findings
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("no {id} in {:?}", ids(findings)))
    }

    pub(super) fn header(a: &mut Attempt, name: &str, value: &str) {
        a.response.as_mut().unwrap().headers.push(Header {
            name: name.into(),
            value: value.into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use crate::fixture::{attempt, failed, fresh, in_rounds, result, run, warm_rounds};
    use crate::schema::FailureKind;

    #[test]
    fn healthy_probe_only_reports_the_reuse_saving() {
        let r = in_rounds(
            result(vec![
                warm_rounds(
                    Protocol::H1,
                    [20_000, 20_100, 19_900, 20_000],
                    [1_000, 1_100, 1_000, 1_050],
                ),
                warm_rounds(
                    Protocol::H2,
                    [21_000, 21_100, 20_900, 21_000],
                    [1_000, 1_000, 1_000, 1_050],
                ),
            ]),
            4,
        );
        let f = diagnose(&r);
        // One finding for both protocols, with the figures of each.
        assert_eq!(ids(&f), vec!["reuse_saving"]);
        let saving = &f[0];
        assert_eq!(saving.severity, Severity::Info);
        // h1: new totals a median 22_550 µs against reused ones of 1_550; h2: 23_550.
        assert_eq!(saving.evidence.protocol, Protocol::H1);
        assert_eq!(saving.evidence.duration, Some(Micros(21_000)));
        assert_eq!(
            saving.title,
            "Connection reuse saves 21.0 ms per request on HTTP/1.1 and 22.0 ms on HTTP/2"
        );
        let detail = &saving.evidence.detail;
        assert!(
            detail.starts_with(
                "HTTP/1.1: the 4 attempt(s) on a new connection took a median 22.6 ms; \
                 the 4 reused attempt(s) a median 1.55 ms: 21.0 ms (93%) less. HTTP/2: "
            ) && detail.ends_with("the 4 reused attempt(s) a median 1.55 ms: 22.0 ms (93%) less."),
            "{detail}"
        );
    }

    #[test]
    fn truncated_body_and_ordering() {
        let mut big = fresh(1, 0, 1_000, 1_000, 300_000);
        big.response.as_mut().unwrap().truncated = true;
        let broken = failed(
            attempt(1, &[(Phase::Connect, 1)], false),
            Phase::Connect,
            FailureKind::Io,
        );
        let f = diagnose(&result(vec![
            run(Protocol::H1, vec![big]),
            run(Protocol::H2, vec![broken]),
        ]));
        assert_eq!(ids(&f), vec!["failure_io", "ttfb_slow", "body_truncated"]);
        assert!(f.windows(2).all(|w| w[0].severity >= w[1].severity));
        assert!(f[2].evidence.detail.contains("10485760 byte cap"));
        for finding in &f {
            assert!(
                finding
                    .id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_')
            );
            assert!(finding.next_step.contains('`') || finding.id == "reuse_saving");
        }
        let json = serde_json::to_value(&f[0]).unwrap();
        assert_eq!(json["severity"], "critical");
        assert_eq!(json["evidence"]["phase"], "connect");
    }

    #[test]
    fn the_record_cap_and_header_budget_are_findings() {
        let mut big = fresh(1, 0, 1_000, 1_000, 30_000);
        big.response.as_mut().unwrap().headers_truncated = true;
        let mut capped = run(Protocol::H1, vec![big]);
        capped.cut_short = Some(
            "stopped before attempt 2, hop 0: the record reached its size cap of 1024 KiB".into(),
        );
        let f = diagnose(&result(vec![capped]));
        let cap = find(&f, "record_capped");
        assert_eq!(cap.severity, Severity::Warning);
        assert!(
            cap.evidence.detail.contains("kept 1 attempts"),
            "{}",
            cap.evidence.detail
        );
        let headers = find(&f, "headers_truncated");
        assert!(headers.next_step.contains("curl -sI"));
        assert!(
            diagnose(&result(vec![run(Protocol::H1, vec![fresh(1, 0, 1, 1, 1)])]))
                .iter()
                .all(|f| f.id != "record_capped" && f.id != "headers_truncated")
        );
    }

    #[test]
    fn records_without_the_new_bounds_fields_still_load() {
        let mut r = result(vec![run(Protocol::H1, vec![fresh(1, 0, 1, 1, 1)])]);
        let json = serde_json::to_string(&r).unwrap();
        assert!(!json.contains("cut_short") && !json.contains("headers_truncated"));
        let back: ProbeResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        r.runs[0].cut_short = Some("x".into());
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<ProbeResult>(&json).unwrap(), r);
    }
}
