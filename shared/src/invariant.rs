//! Consistency checks on measured attempts, for tests and for results read from elsewhere.
//!
//! The rules, per attempt: every span starts no later than it ends; phases
//! appear in timeline order (dns, connect, tls, quic, send, wait, receive)
//! without overlapping, all within the total; `quic` never appears with
//! `connect` or `tls`; a reused connection has no dns, connect, tls or quic;
//! a successful attempt has a response and the send and wait phases, plus
//! receive for GET.

use crate::schema::{Attempt, Method, Phase, ProbeResult, Protocol, Span};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A broken rule, with where it was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The protocol run, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// The attempt number.
    pub attempt: u32,
    /// The redirect hop.
    pub hop: u32,
    /// What is wrong, in a sentence.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(protocol) = self.protocol {
            write!(f, "{protocol} ")?;
        }
        write!(f, "#{}", self.attempt)?;
        if self.hop > 0 {
            write!(f, " hop {}", self.hop)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Checks one attempt, made with `method`; empty when consistent.
pub fn check_attempt(attempt: &Attempt, method: Method) -> Vec<Violation> {
    let mut messages = Vec::new();
    let p = &attempt.phases;
    let total = p.total;
    let show = |name: &str, s: Span| format!("{name} ({}..{} µs)", s.start_us.0, s.end_us.0);

    if total.start_us > total.end_us {
        messages.push(format!("{} ends before it starts", show("total", total)));
    }
    let present: Vec<(Phase, Span)> = p.present().collect();
    for &(phase, span) in &present {
        if span.start_us > span.end_us {
            messages.push(format!(
                "{} ends before it starts",
                show(phase.as_str(), span)
            ));
        }
        if span.start_us < total.start_us || span.end_us > total.end_us {
            messages.push(format!(
                "{} lies outside {}",
                show(phase.as_str(), span),
                show("total", total)
            ));
        }
    }
    for pair in present.windows(2) {
        let ((a, sa), (b, sb)) = (pair[0], pair[1]);
        if sa.end_us > sb.start_us {
            messages.push(format!(
                "{} overlaps or comes after {}",
                show(a.as_str(), sa),
                show(b.as_str(), sb)
            ));
        }
    }
    if p.quic.is_some() && (p.connect.is_some() || p.tls.is_some()) {
        messages.push("quic appears together with connect or tls".to_string());
    }
    if attempt.connection.as_ref().is_some_and(|c| c.reused) {
        let setup: Vec<&str> = [Phase::Dns, Phase::Connect, Phase::Tls, Phase::Quic]
            .into_iter()
            .filter(|ph| p.get(*ph).is_some())
            .map(Phase::as_str)
            .collect();
        if !setup.is_empty() {
            messages.push(format!("reused connection has {}", setup.join(", ")));
        }
    }
    if attempt.failure.is_none() {
        let mut needed = vec![Phase::Send, Phase::Wait];
        if method == Method::Get {
            needed.push(Phase::Receive);
        }
        let missing: Vec<&str> = needed
            .into_iter()
            .filter(|ph| p.get(*ph).is_none())
            .map(Phase::as_str)
            .collect();
        if !missing.is_empty() {
            messages.push(format!(
                "successful {} attempt lacks {}",
                method.as_str(),
                missing.join(", ")
            ));
        }
        if attempt.response.is_none() {
            messages.push("successful attempt has no response".to_string());
        }
    }
    messages
        .into_iter()
        .map(|message| Violation {
            protocol: None,
            attempt: attempt.attempt,
            hop: attempt.hop,
            message,
        })
        .collect()
}

/// Checks every attempt of a result with its method; a skipped run must have
/// no attempts.
pub fn check_result(result: &ProbeResult) -> Vec<Violation> {
    let mut out = Vec::new();
    for run in &result.runs {
        if run.skipped.is_some() && !run.attempts.is_empty() {
            out.push(Violation {
                protocol: Some(run.protocol),
                attempt: 0,
                hop: 0,
                message: "skipped run has attempts".to_string(),
            });
        }
        for attempt in &run.attempts {
            out.extend(
                check_attempt(attempt, result.options.method)
                    .into_iter()
                    .map(|v| Violation {
                        protocol: Some(run.protocol),
                        ..v
                    }),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run, span};
    use crate::schema::{FailureKind, Micros};

    fn messages(a: &Attempt, method: Method) -> Vec<String> {
        check_attempt(a, method)
            .into_iter()
            .map(|v| v.message)
            .collect()
    }

    #[test]
    fn well_formed_attempts_pass() {
        assert!(messages(&fresh(1, 10, 20, 30, 40), Method::Get).is_empty());
        assert!(messages(&reused(2, 40), Method::Get).is_empty());
        let quic = attempt(
            1,
            &[
                (Phase::Quic, 5),
                (Phase::Send, 1),
                (Phase::Wait, 1),
                (Phase::Receive, 1),
            ],
            false,
        );
        assert!(messages(&quic, Method::Get).is_empty());
        let head = attempt(1, &[(Phase::Send, 1), (Phase::Wait, 1)], false);
        assert!(messages(&head, Method::Head).is_empty());
        // Zero-length phases touching each other are fine.
        let touching = attempt(
            1,
            &[(Phase::Send, 0), (Phase::Wait, 0), (Phase::Receive, 0)],
            false,
        );
        assert!(messages(&touching, Method::Get).is_empty());
    }

    #[test]
    fn backwards_overlapping_and_outside_spans() {
        let mut a = fresh(1, 10, 20, 30, 40);
        a.phases.tls = Some(Span {
            start_us: Micros(35),
            end_us: Micros(25),
        });
        assert_eq!(
            messages(&a, Method::Get),
            vec!["tls (35..25 µs) ends before it starts"]
        );

        let mut a = fresh(1, 10, 20, 30, 40);
        a.phases.connect = span(5, 30);
        let m = messages(&a, Method::Get);
        assert_eq!(
            m,
            vec!["dns (0..10 µs) overlaps or comes after connect (5..30 µs)"]
        );

        let mut a = fresh(1, 10, 20, 30, 40);
        a.phases.total.end_us = Micros(100);
        let m = messages(&a, Method::Get);
        assert!(
            m.iter()
                .any(|s| s.starts_with("wait (110..150 µs) lies outside total")),
            "{m:?}"
        );

        let mut a = reused(1, 10);
        a.phases.total = Span {
            start_us: Micros(9_999),
            end_us: Micros(0),
        };
        assert!(
            messages(&a, Method::Get)
                .iter()
                .any(|s| s.starts_with("total (9999..0 µs) ends before"))
        );
    }

    #[test]
    fn quic_reuse_and_completeness_rules() {
        let mut a = fresh(1, 10, 20, 30, 40);
        a.phases.quic = span(60, 60);
        assert!(
            messages(&a, Method::Get)
                .contains(&"quic appears together with connect or tls".to_string())
        );

        let mut a = fresh(2, 10, 20, 30, 40);
        a.connection.as_mut().unwrap().reused = true;
        assert!(
            messages(&a, Method::Get)
                .contains(&"reused connection has dns, connect, tls".to_string())
        );

        let mut a = attempt(1, &[(Phase::Send, 1), (Phase::Wait, 1)], false);
        a.response = None;
        assert_eq!(
            messages(&a, Method::Get),
            vec![
                "successful GET attempt lacks receive",
                "successful attempt has no response"
            ]
        );
        // A failed attempt may stop anywhere.
        let stopped = failed(
            attempt(1, &[(Phase::Connect, 5)], false),
            Phase::Connect,
            FailureKind::Refused,
        );
        assert!(messages(&stopped, Method::Get).is_empty());
    }

    #[test]
    fn result_check_names_protocol_and_attempt() {
        let mut bad = reused(3, 10);
        bad.hop = 1;
        bad.phases.dns = span(0, 0);
        let mut h3 = run(Protocol::H3, vec![reused(1, 1)]);
        h3.skipped = Some("off".into());
        let r = result(vec![run(Protocol::H2, vec![fresh(1, 1, 1, 1, 1), bad]), h3]);
        let v = check_result(&r);
        let shown: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            vec![
                "h2 #3 hop 1: reused connection has dns",
                "h3 #0: skipped run has attempts",
            ]
        );
        assert!(
            check_result(&result(vec![run(Protocol::H1, vec![fresh(1, 1, 1, 1, 1)])])).is_empty()
        );
    }
}
