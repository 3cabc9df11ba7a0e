//! SLO gates: thresholds on a probe's figures, judged per protocol, for CI.
//!
//! A gate reads `[PROTO:]METRIC[.STAT]=DURATION`, e.g. `total=300ms`,
//! `h2:ttfb=150ms` or `total.p95=400ms`: METRIC is a [`Metric`] (`dns`,
//! `connect`, `tls`, `quic`, `send`, `wait`, `receive`, `ttfb`, `total`), STAT
//! a [`Statistic`] (`median` by default, `p95`, `max`), DURATION a number with
//! `us`, `ms` or `s`. A gate without a protocol applies to every protocol.
//!
//! **How a gate is judged.** Per protocol, over that run's attempts (an
//! attempt is its whole redirect chain, as everywhere): `total` and `ttfb`
//! over every attempt, a phase over the attempts that have it (summed over a
//! chain's hops), so `dns`, `connect` and `tls` are judged over the attempts
//! that opened a connection. An attempt that failed or answered 4xx/5xx
//! never meets a gate: it counts in every gate of its protocol as slower than
//! any threshold. The statistic is taken by nearest rank
//! ([`crate::stats`]); the gate is met when it is at most the threshold.
//! A protocol that was not measured (skipped), or a metric no attempt has,
//! judges nothing; but a gate that judged nothing anywhere is breached: a
//! threshold nobody could check is not met.

use crate::chain::{Chain, chains};
use crate::format;
use crate::schema::{Micros, ProbeResult, Protocol, ProtocolRun};
use crate::stats::{Metric, nearest_rank};
use crate::table::chain_value;
use serde::{Deserialize, Serialize};

/// The statistic a gate judges over a protocol's attempts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    /// The nearest-rank median (the lower middle value of an even count).
    Median,
    /// The nearest-rank 95th percentile.
    P95,
    /// The largest value.
    Max,
}

impl Statistic {
    /// Every statistic.
    pub const ALL: [Statistic; 3] = [Statistic::Median, Statistic::P95, Statistic::Max];

    /// `median`, `p95`, `max`.
    pub fn as_str(self) -> &'static str {
        match self {
            Statistic::Median => "median",
            Statistic::P95 => "p95",
            Statistic::Max => "max",
        }
    }

    /// The 1-based rank of this statistic among `n` sorted values.
    fn rank(self, n: usize) -> usize {
        match self {
            Statistic::Median => nearest_rank(n, 50),
            Statistic::P95 => nearest_rank(n, 95),
            Statistic::Max => n,
        }
    }
}

/// One threshold, as written on the command line.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    /// The protocol it applies to; `None` for every protocol.
    pub protocol: Option<Protocol>,
    /// What it measures.
    pub metric: Metric,
    /// The statistic judged.
    pub statistic: Statistic,
    /// The largest value that meets it.
    pub threshold_us: Micros,
}

impl Gate {
    /// Parses one `[PROTO:]METRIC[.STAT]=DURATION`.
    ///
    /// # Errors
    /// A readable sentence naming the part that is wrong.
    pub fn parse(text: &str) -> Result<Gate, String> {
        Gate::parse_parts(text).map_err(|why| format!("SLO gate `{text}`: {why}"))
    }

    /// [`Gate::parse`] without the gate in its errors.
    fn parse_parts(text: &str) -> Result<Gate, String> {
        let (name, duration) = text.split_once('=').ok_or_else(|| {
            "must look like [PROTO:]METRIC[.STAT]=DURATION, e.g. total=300ms".to_owned()
        })?;
        let (protocol, name) = match name.split_once(':') {
            Some((p, rest)) => (Some(p.parse::<Protocol>()?), rest),
            None => (None, name),
        };
        let (metric, statistic) = name.split_once('.').unwrap_or((name, "median"));
        let metric = Metric::ALL
            .into_iter()
            .find(|m| m.as_str() == metric.trim())
            .ok_or_else(|| {
                format!("unknown metric `{metric}` (expected dns, connect, tls, quic, send, wait, receive, ttfb or total)")
            })?;
        let statistic = Statistic::ALL
            .into_iter()
            .find(|s| s.as_str() == statistic.trim())
            .ok_or_else(|| {
                format!("unknown statistic `{statistic}` (expected median, p95 or max)")
            })?;
        Ok(Gate {
            protocol,
            metric,
            statistic,
            threshold_us: parse_duration(duration)?,
        })
    }

    /// The gate's name: `total.median`, `h2:ttfb.p95`.
    pub fn name(&self) -> String {
        let metric = format!("{}.{}", self.metric.as_str(), self.statistic.as_str());
        match self.protocol {
            Some(p) => format!("{p}:{metric}"),
            None => metric,
        }
    }
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <= {}", self.name(), format::ms(self.threshold_us))
    }
}

/// Parses `--slo` values: each a comma-separated list of gates.
///
/// # Errors
/// The first gate that does not parse, in a sentence.
pub fn parse_gates(specs: &[String]) -> Result<Vec<Gate>, String> {
    specs
        .iter()
        .flat_map(|spec| spec.split(','))
        .map(|one| Gate::parse(one.trim()))
        .collect()
}

/// Refuses a gate that names a protocol the probe does not measure.
///
/// # Errors
/// A sentence naming the gate and the protocol.
pub fn check_protocols(gates: &[Gate], protocols: &[Protocol]) -> Result<(), String> {
    match gates
        .iter()
        .find(|g| g.protocol.is_some_and(|p| !protocols.contains(&p)))
    {
        Some(g) => Err(format!(
            "SLO gate `{}` names a protocol the probe does not measure (see --proto)",
            g.name()
        )),
        None => Ok(()),
    }
}

/// `300ms`, `1.5s`, `800us` to microseconds.
fn parse_duration(text: &str) -> Result<Micros, String> {
    let text = text.trim();
    let bad =
        || format!("threshold `{text}` must be a positive duration in us, ms or s, e.g. 300ms");
    let (number, scale) = [("us", 1.0), ("µs", 1.0), ("ms", 1e3), ("s", 1e6)]
        .into_iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, scale)))
        .ok_or_else(bad)?;
    let value: f64 = number.trim().parse().map_err(|_| bad())?;
    let us = (value * scale).round();
    if !(us.is_finite() && us >= 1.0 && us <= u64::MAX as f64) {
        return Err(bad());
    }
    Ok(Micros(us as u64))
}

/// How one gate came out for one protocol.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// The statistic is at most the threshold.
    Met,
    /// The statistic is over the threshold, or falls on an attempt that
    /// failed or answered with an HTTP error, or the gate judged nothing at all.
    Breached,
    /// Nothing to judge here (the protocol was skipped, or no attempt has the
    /// metric); the gate was judged on another protocol.
    NotMeasured,
}

impl Judgement {
    /// `met`, `breached`, `not measured`.
    pub fn label(self) -> &'static str {
        match self {
            Judgement::Met => "met",
            Judgement::Breached => "breached",
            Judgement::NotMeasured => "not measured",
        }
    }
}

/// One gate judged on one protocol's run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// The gate as written (its protocol `None` when it applies to every protocol).
    pub gate: Gate,
    /// The protocol judged.
    pub protocol: Protocol,
    /// How it came out.
    pub judgement: Judgement,
    /// The statistic, when it fell on an attempt that succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_us: Option<Micros>,
    /// Attempts judged.
    pub attempts: u32,
    /// Of those, attempts that failed or answered with an HTTP error.
    pub unmet: u32,
    /// The judgement in a sentence, with the figure and the threshold.
    pub detail: String,
}

/// Every gate judged on every protocol it applies to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SloReport {
    /// Whether no check was breached.
    pub met: bool,
    /// Gate by gate, protocol by protocol in the probe's order.
    pub checks: Vec<Check>,
}

impl SloReport {
    /// Checks breached.
    pub fn breached(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| c.judgement == Judgement::Breached)
            .count()
    }
}

/// Judges the gates on a finished result.
pub fn evaluate(result: &ProbeResult, gates: &[Gate]) -> SloReport {
    let mut checks = Vec::new();
    for gate in gates {
        let first = checks.len();
        for run in &result.runs {
            if gate.protocol.is_none_or(|p| p == run.protocol) {
                checks.push(judge(gate, run));
            }
        }
        let judged = &mut checks[first..];
        if judged.iter().all(|c| c.judgement == Judgement::NotMeasured) {
            for check in judged {
                check.judgement = Judgement::Breached;
                check.detail = format!("breached: nothing measured this gate ({})", check.detail);
            }
        }
    }
    SloReport {
        met: checks.iter().all(|c| c.judgement != Judgement::Breached),
        checks,
    }
}

/// One gate on one run.
fn judge(gate: &Gate, run: &ProtocolRun) -> Check {
    let mut check = Check {
        gate: *gate,
        protocol: run.protocol,
        judgement: Judgement::NotMeasured,
        measured_us: None,
        attempts: 0,
        unmet: 0,
        detail: String::new(),
    };
    if let Some(reason) = &run.skipped {
        check.detail = format!("{} was not measured: {reason}", run.protocol.http_version());
        return check;
    }
    // `None` is an attempt that failed or answered with an HTTP error: it
    // sorts after every figure.
    let mut sample: Vec<Option<Micros>> = chains(run)
        .iter()
        .filter_map(|chain| value(gate, chain))
        .collect();
    if sample.is_empty() {
        check.detail = format!(
            "no {} attempt has a {} phase",
            run.protocol.http_version(),
            gate.metric.as_str()
        );
        return check;
    }
    sample.sort_unstable_by_key(|v| (v.is_none(), *v));
    check.attempts = sample.len() as u32;
    check.unmet = sample.iter().filter(|v| v.is_none()).count() as u32;
    let stat = gate.statistic.as_str();
    let of = match (check.attempts, check.unmet) {
        (1, _) => "of 1 attempt".to_owned(),
        (n, 0) => format!("of {n} attempts"),
        (n, bad) => format!("of {n} attempts ({bad} failed or HTTP error)"),
    };
    let limit = format::ms(gate.threshold_us);
    match sample[gate.statistic.rank(sample.len()) - 1] {
        Some(measured) => {
            check.measured_us = Some(measured);
            let figure = format::ms(measured);
            (check.judgement, check.detail) = if measured <= gate.threshold_us {
                (
                    Judgement::Met,
                    format!("{stat} {figure} {of}, at most {limit}"),
                )
            } else {
                (
                    Judgement::Breached,
                    format!("{stat} {figure} {of}, over {limit}"),
                )
            };
        }
        None => {
            check.judgement = Judgement::Breached;
            check.detail = format!(
                "{stat} {of} falls on a failed attempt or HTTP error, which never meets {limit}"
            );
        }
    }
    check
}

/// A chain's entry in a gate's sample: `Some(Some(figure))` for a successful
/// chain that has the metric, `Some(None)` for one that failed or answered
/// with an HTTP error, `None` when it does not enter the sample.
fn value(gate: &Gate, chain: &Chain) -> Option<Option<Micros>> {
    if chain.succeeded() {
        chain_value(gate.metric, chain).map(Some)
    } else {
        Some(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, Phase};

    fn gates(spec: &str) -> Vec<Gate> {
        parse_gates(&[spec.to_owned()]).unwrap()
    }

    fn status(mut a: crate::schema::Attempt, code: u16) -> crate::schema::Attempt {
        a.response.as_mut().unwrap().status = code;
        a
    }

    #[test]
    fn gates_parse_with_protocol_statistic_and_unit() {
        let g = gates("total=300ms, h2:ttfb.p95=1.5s,dns.max=800us");
        assert_eq!(
            g[0],
            Gate {
                protocol: None,
                metric: Metric::Total,
                statistic: Statistic::Median,
                threshold_us: Micros(300_000),
            }
        );
        assert_eq!(
            (
                g[1].protocol,
                g[1].metric,
                g[1].statistic,
                g[1].threshold_us
            ),
            (
                Some(Protocol::H2),
                Metric::Ttfb,
                Statistic::P95,
                Micros(1_500_000)
            )
        );
        assert_eq!(
            (g[2].statistic, g[2].threshold_us),
            (Statistic::Max, Micros(800))
        );
        assert_eq!(g[1].to_string(), "h2:ttfb.p95 <= 1.50 s");
        for (bad, needle) in [
            ("total", "must look like"),
            ("total=300", "positive duration"),
            ("total=-3ms", "positive duration"),
            ("total=0ms", "positive duration"),
            ("speed=3ms", "SLO gate `speed=3ms`: unknown metric `speed`"),
            ("total.p99=3ms", "unknown statistic `p99`"),
            ("h4:total=3ms", "unknown protocol `h4`"),
        ] {
            let e = parse_gates(&[bad.to_owned()]).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let e = check_protocols(&gates("h3:total=1s"), &[Protocol::H1]).unwrap_err();
        assert!(e.contains("`h3:total.median`"), "{e}");
        assert!(check_protocols(&gates("total=1s"), &[Protocol::H1]).is_ok());
    }

    #[test]
    fn median_and_p95_over_every_attempt_setup_over_new_connections() {
        // Attempt 1 sets up a connection (12.55 ms in all); 2 and 3 reuse it.
        let r = result(vec![run(
            Protocol::H1,
            vec![
                fresh(1, 1_000, 1_000, 2_000, 8_000),
                reused(2, 4_000),
                reused(3, 5_000),
            ],
        )]);
        let report = evaluate(
            &r,
            &gates("total=6ms,total.p95=10ms,tls=2ms,connect.max=0.9ms"),
        );
        let [median, p95, tls, connect] = &report.checks[..] else {
            panic!("{report:?}")
        };
        assert_eq!(median.measured_us, Some(Micros(5_550)));
        assert_eq!(median.judgement, Judgement::Met);
        assert_eq!(
            median.detail,
            "median 5.55 ms of 3 attempts, at most 6.00 ms"
        );
        assert_eq!(
            (p95.judgement, p95.measured_us),
            (Judgement::Breached, Some(Micros(12_550)))
        );
        assert_eq!(
            (tls.attempts, tls.judgement),
            (1, Judgement::Met),
            "tls only where set up"
        );
        assert_eq!(connect.judgement, Judgement::Breached);
        assert_eq!(connect.detail, "max 1.00 ms of 1 attempt, over 0.90 ms");
        assert!(!report.met);
        assert_eq!(report.breached(), 2);
    }

    #[test]
    fn failures_and_http_errors_never_meet_a_gate() {
        let refused = failed(
            attempt(1, &[(Phase::Connect, 10)], false),
            Phase::Connect,
            FailureKind::Refused,
        );
        let r = result(vec![
            run(Protocol::H1, vec![refused]),
            run(Protocol::H2, vec![status(fresh(1, 0, 10, 10, 10), 503)]),
            run(
                Protocol::H3,
                vec![
                    status(fresh(1, 0, 10, 10, 10), 404),
                    reused(2, 10),
                    reused(3, 10),
                ],
            ),
        ]);
        let report = evaluate(&r, &gates("total=1s"));
        let judged: Vec<_> = report
            .checks
            .iter()
            .map(|c| (c.protocol, c.judgement))
            .collect();
        assert_eq!(
            judged,
            vec![
                (Protocol::H1, Judgement::Breached),
                (Protocol::H2, Judgement::Breached),
                // One HTTP error of three: the median is still an answer.
                (Protocol::H3, Judgement::Met),
            ]
        );
        assert!(
            report.checks[1]
                .detail
                .contains("falls on a failed attempt or HTTP error")
        );
        assert_eq!((report.checks[2].attempts, report.checks[2].unmet), (3, 1));
        let max = evaluate(&r, &gates("h3:total.max=1s"));
        assert_eq!(max.checks[0].judgement, Judgement::Breached);
        assert_eq!(max.checks[0].measured_us, None);
    }

    #[test]
    fn skipped_protocols_and_absent_phases_judge_nothing_but_a_gate_must_judge_something() {
        let mut h3 = run(Protocol::H3, Vec::new());
        h3.skipped = Some("not advertised".into());
        let r = result(vec![run(Protocol::H1, vec![reused(1, 10)]), h3]);
        let report = evaluate(&r, &gates("total=1s"));
        assert!(report.met);
        assert_eq!(report.checks[1].judgement, Judgement::NotMeasured);
        assert_eq!(
            report.checks[1].detail,
            "HTTP/3 was not measured: not advertised"
        );
        let nothing = evaluate(&r, &gates("quic=1s"));
        assert!(!nothing.met);
        assert!(
            nothing
                .checks
                .iter()
                .all(|c| c.judgement == Judgement::Breached)
        );
        assert_eq!(
            nothing.checks[0].detail,
            "breached: nothing measured this gate (no HTTP/1.1 attempt has a quic phase)"
        );
        let named = evaluate(&r, &gates("h3:total=1s"));
        assert_eq!(named.checks.len(), 1);
        assert_eq!(named.checks[0].judgement, Judgement::Breached);
    }
}
