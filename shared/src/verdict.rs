//! The verdict: which protocol is faster here, by how much and why, or that none is.
//!
//! Like is compared with like: the totals of successful attempts (whole
//! redirect chains) are grouped by connection state ([`ConnState`]: new,
//! resumed, reused) and protocols are only compared within a group. A
//! difference is called only when it exceeds [`NOISE_FLOOR`] and the measured
//! spread ([`SIGNIFICANCE_RULE`]); otherwise the verdict says where the time
//! goes instead. HTTP errors and failures are never compared: a 404 page served
//! fast says nothing about the protocol.

use crate::chain::{Chain, ConnState, all_chains};
use crate::format::ms;
use crate::json::ReadJson;
use crate::schema::{Micros, Phase, ProbeResult, Protocol};
use crate::stats::percentile;
use serde::{Deserialize, Serialize};

/// Differences at or under this are never called, whatever the spread.
pub const NOISE_FLOOR: Micros = Micros(500);

/// A single attempt must also beat another by this share of the faster one
/// (in percent): one attempt has no spread of its own, and a first connection
/// carries costs (caches, a process's first handshake) that repeats do not.
pub const SINGLE_ATTEMPT_PERCENT: u64 = 5;

/// The significance rule, in one line (shown on hover and in the CLI).
pub const SIGNIFICANCE_RULE: &str = "A difference is called only when the medians differ by more than 0.5 ms \
and by more than the spread (slowest minus fastest) of the attempts compared; a group with a single attempt \
per protocol borrows the largest spread measured elsewhere in the probe and must also differ by more than 5%, \
and with no repeats at all nothing is called.";

/// What kind of answer the verdict gives.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// Some protocol is faster, beyond the noise, in at least one connection state.
    Faster,
    /// The protocols are within noise of each other.
    NoDifference,
    /// There is nothing fair to compare (one protocol, no repeats, only HTTP errors).
    NotComparable,
    /// Nothing succeeded.
    Failed,
}

/// One protocol's totals in one connection state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProtocolSample {
    /// The protocol.
    pub protocol: Protocol,
    /// Successful attempts counted.
    pub count: usize,
    /// Median total (nearest rank).
    pub median: Micros,
    /// Fastest total.
    pub min: Micros,
    /// Slowest total.
    pub max: Micros,
}

impl ProtocolSample {
    fn spread(&self) -> Option<Micros> {
        (self.count > 1).then(|| self.max.saturating_sub(self.min))
    }
}

/// The protocols compared in one connection state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StateComparison {
    /// The connection state compared.
    pub state: ConnState,
    /// One sample per protocol with successful attempts in this state, fastest median first.
    pub samples: Vec<ProtocolSample>,
    /// The spread a difference must exceed here; absent when nothing measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Micros>,
    /// The protocols not beaten beyond the noise (all of them when there is no difference).
    pub leaders: Vec<Protocol>,
    /// When a difference is called: how much faster the leaders are than the next protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<Micros>,
}

impl StateComparison {
    /// Whether a difference is called in this state.
    pub fn differs(&self) -> bool {
        self.margin.is_some()
    }

    /// Whether `protocol` leads beyond the noise here (never when there is no difference).
    pub fn leads(&self, protocol: Protocol) -> bool {
        self.differs() && self.leaders.contains(&protocol)
    }
}

/// The answer, with its evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Verdict {
    /// What kind of answer this is.
    pub kind: VerdictKind,
    /// One or two sentences that answer the question.
    pub summary: String,
    /// Per connection state with two or more protocols, the comparison behind the summary.
    pub comparisons: Vec<StateComparison>,
    /// The significance rule ([`SIGNIFICANCE_RULE`]).
    pub rule: String,
}

/// Computes the verdict of a result.
pub fn verdict(result: &ProbeResult) -> Verdict {
    let chains: Vec<Chain> = all_chains(result).collect();
    let good: Vec<&Chain> = chains.iter().filter(|c| c.succeeded()).collect();
    let make = |kind, summary: String, comparisons| Verdict {
        kind,
        summary,
        comparisons,
        rule: SIGNIFICANCE_RULE.to_string(),
    };
    if good.is_empty() {
        return nothing_succeeded(&chains)
            .map(|(kind, summary)| make(kind, summary, Vec::new()))
            .unwrap_or_else(|| {
                make(
                    VerdictKind::Failed,
                    "Nothing was measured.".into(),
                    Vec::new(),
                )
            });
    }
    let where_time_goes = where_time_goes(&good);
    let protocols = protocols_of(&good);
    if protocols.len() < 2 {
        let asked = result.options.protocols.len();
        let who = protocols[0].http_version();
        let opening = if asked > 1 {
            format!("Only {who} answered successfully, so there is nothing to compare it with.")
        } else {
            format!("Only {who} was measured.")
        };
        return make(
            VerdictKind::NotComparable,
            format!("{opening} {where_time_goes}"),
            Vec::new(),
        );
    }
    let samples_by_state = samples(&good);
    let borrowed = samples_by_state
        .iter()
        .flat_map(|(_, s)| s.iter().filter_map(ProtocolSample::spread))
        .max();
    let comparisons: Vec<StateComparison> = samples_by_state
        .into_iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(state, samples)| compare(state, samples, borrowed))
        .collect();
    if borrowed.is_none() {
        return make(
            VerdictKind::NotComparable,
            format!(
                "One attempt per protocol cannot tell a difference from noise: repeat the probe \
                 (3 attempts or more) to measure the spread. {where_time_goes}"
            ),
            comparisons,
        );
    }
    let rtt = round_trip(&good);
    let calls: Vec<String> = comparisons
        .iter()
        .filter(|c| c.differs())
        .map(|c| call(c, rtt))
        .collect();
    if calls.is_empty() {
        let names = list(
            &protocols
                .iter()
                .map(|p| p.http_version())
                .collect::<Vec<_>>(),
        );
        return make(
            VerdictKind::NoDifference,
            format!("No meaningful difference between {names}. {where_time_goes}"),
            comparisons,
        );
    }
    let quiet: Vec<&str> = comparisons
        .iter()
        .filter(|c| !c.differs())
        .map(|c| c.state.phrase())
        .collect();
    let mut summary = calls.join(" ");
    if !quiet.is_empty() {
        summary.push_str(&format!(
            " On {} the protocols are within noise.",
            list(&quiet)
        ));
    }
    make(VerdictKind::Faster, summary, comparisons)
}

/// The summary when no attempt succeeded: every answer an HTTP error, or every attempt failed.
fn nothing_succeeded(chains: &[Chain]) -> Option<(VerdictKind, String)> {
    let mut statuses: Vec<u16> = chains
        .iter()
        .filter(|c| c.answered())
        .filter_map(Chain::status)
        .collect();
    statuses.sort_unstable();
    statuses.dedup();
    if !statuses.is_empty() {
        let codes = list(
            &statuses
                .iter()
                .map(|s| crate::format::status(*s))
                .collect::<Vec<_>>(),
        );
        return Some((
            VerdictKind::NotComparable,
            format!(
                "Nothing to compare: every answer was an HTTP error ({codes}). How fast an error page \
                 comes back says little about the protocols; probe a URL that answers 2xx."
            ),
        ));
    }
    let failure = chains.iter().find_map(Chain::failure)?;
    Some((
        VerdictKind::Failed,
        format!(
            "Nothing to compare: every attempt failed, the first in the {} phase: {}.",
            failure.phase.as_str(),
            failure.message.trim_end_matches('.')
        ),
    ))
}

/// Protocols with successful chains, in result order.
fn protocols_of(good: &[&Chain]) -> Vec<Protocol> {
    let mut out: Vec<Protocol> = Vec::new();
    for c in good {
        if !out.contains(&c.protocol) {
            out.push(c.protocol);
        }
    }
    out
}

/// Per connection state (in [`ConnState::ALL`] order), one sample per protocol.
fn samples(good: &[&Chain]) -> Vec<(ConnState, Vec<ProtocolSample>)> {
    ConnState::ALL
        .into_iter()
        .filter_map(|state| {
            let samples: Vec<ProtocolSample> = protocols_of(good)
                .into_iter()
                .filter_map(|protocol| {
                    let mut totals: Vec<Micros> = good
                        .iter()
                        .filter(|c| c.protocol == protocol && c.state() == state)
                        .map(|c| c.total())
                        .collect();
                    totals.sort_unstable();
                    Some(ProtocolSample {
                        protocol,
                        count: totals.len(),
                        median: percentile(&totals, 50),
                        min: *totals.first()?,
                        max: *totals.last()?,
                    })
                })
                .collect();
            (!samples.is_empty()).then_some((state, samples))
        })
        .collect()
}

/// Applies the significance rule to samples of one connection state (fastest median first in the result).
pub fn compare(
    state: ConnState,
    mut samples: Vec<ProtocolSample>,
    borrowed: Option<Micros>,
) -> StateComparison {
    samples.sort_by_key(|s| s.median);
    let own = samples.iter().filter_map(ProtocolSample::spread).max();
    let noise = if samples.iter().all(|s| s.count > 1) {
        own
    } else {
        own.max(borrowed)
    };
    let fastest = samples[0].median;
    let single = samples.iter().any(|s| s.count == 1);
    let beaten =
        |s: &ProtocolSample| significant(s.median.saturating_sub(fastest), noise, fastest, single);
    let leaders: Vec<Protocol> = samples
        .iter()
        .filter(|s| !beaten(s))
        .map(|s| s.protocol)
        .collect();
    let margin = samples
        .iter()
        .find(|s| beaten(s))
        .map(|s| s.median.saturating_sub(fastest));
    StateComparison {
        state,
        samples,
        noise,
        leaders,
        margin,
    }
}

/// Whether `gap` (a slower median less the `fastest` one) is called under
/// [`SIGNIFICANCE_RULE`]: over [`NOISE_FLOOR`], over the `noise` (nothing is
/// called without one), and, when a side has a `single` attempt, over
/// [`SINGLE_ATTEMPT_PERCENT`] of the fastest.
pub fn significant(gap: Micros, noise: Option<Micros>, fastest: Micros, single: bool) -> bool {
    let share = Micros(fastest.0 * SINGLE_ATTEMPT_PERCENT / 100);
    noise.is_some_and(|noise| gap > NOISE_FLOOR && gap > noise && (!single || gap > share))
}

/// One called difference as a sentence, e.g. "HTTP/3 is faster on a new connection by 38 ms (about 1 round trip) than HTTP/1.1 and HTTP/2."
fn call(c: &StateComparison, rtt: Option<Micros>) -> String {
    let Some(margin) = c.margin else {
        return String::new();
    };
    let leaders: Vec<&str> = c.leaders.iter().map(|p| p.http_version()).collect();
    let others: Vec<&str> = c
        .samples
        .iter()
        .filter(|s| !c.leaders.contains(&s.protocol))
        .map(|s| s.protocol.http_version())
        .collect();
    let verb = if leaders.len() > 1 { "are" } else { "is" };
    let trips = rtt
        .filter(|r| r.0 >= 1_000)
        .map(|r| margin.0 as f64 / r.0 as f64)
        .filter(|n| (0.7..=4.5).contains(n))
        .map(|n| {
            let n = n.round() as u64;
            format!(" (about {n} round trip{})", if n == 1 { "" } else { "s" })
        })
        .unwrap_or_default();
    format!(
        "{} {verb} faster on {} by {}{trips} than {}.",
        list(&leaders),
        c.state.phrase(),
        ms(margin),
        list(&others)
    )
}

/// The path's round trip: the median TCP connect, else the median QUIC RTT estimate.
fn round_trip(good: &[&Chain]) -> Option<Micros> {
    let mut connects: Vec<Micros> = good
        .iter()
        .filter_map(|c| c.first().phases.connect.map(|s| s.duration()))
        .collect();
    if connects.is_empty() {
        connects = good
            .iter()
            .filter_map(|c| c.first().quic.as_ref().map(|q| q.rtt_us))
            .filter(|r| r.0 > 0)
            .collect();
    }
    connects.sort_unstable();
    (!connects.is_empty()).then(|| percentile(&connects, 50))
}

/// "Where the time goes": the component that takes most of the median total, when it takes most of it.
fn where_time_goes(good: &[&Chain]) -> String {
    let median_of = |values: Vec<Micros>| {
        let mut v = values;
        v.sort_unstable();
        percentile(&v, 50)
    };
    let total = median_of(good.iter().map(|c| c.total()).collect());
    let last_phase = |c: &Chain, phases: &[Phase]| {
        Micros(
            phases
                .iter()
                .filter_map(|p| c.last().phases.get(*p))
                .map(|s| s.duration().0)
                .sum(),
        )
    };
    let parts = [
        (
            "the server's wait for the first byte",
            median_of(good.iter().map(|c| last_phase(c, &[Phase::Wait])).collect()),
        ),
        (
            "connection setup (DNS, connect, TLS or QUIC)",
            median_of(
                good.iter()
                    .map(|c| last_phase(c, &[Phase::Dns, Phase::Connect, Phase::Tls, Phase::Quic]))
                    .collect(),
            ),
        ),
        (
            "the body download",
            median_of(
                good.iter()
                    .map(|c| last_phase(c, &[Phase::Receive]))
                    .collect(),
            ),
        ),
        (
            "redirects",
            median_of(
                good.iter()
                    .map(|c| c.redirect_time().unwrap_or_default())
                    .collect(),
            ),
        ),
    ];
    let Some((what, took)) = parts.iter().max_by_key(|(_, d)| *d) else {
        return String::new();
    };
    if total.0 == 0 || took.0 * 2 < total.0 {
        return format!("The median request takes {}.", ms(total));
    }
    format!("{} of the {} median is {what}.", ms(*took), ms(total))
}

/// "a", "a and b", "a, b and c".
pub fn list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => format!(
            "{} and {}",
            init.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, ProtocolRun};

    /// A warm run: one new connection with `handshake` µs of TLS, then reused attempts with these waits.
    fn warm(protocol: Protocol, handshake: u64, waits: &[u64]) -> ProtocolRun {
        let mut attempts = vec![fresh(1, 1_000, 5_000, handshake, waits[0])];
        for (i, w) in waits.iter().enumerate().skip(1) {
            attempts.push(reused(i as u32 + 1, *w));
        }
        run(protocol, attempts)
    }

    #[test]
    fn equal_protocols_behind_a_slow_server_make_no_difference() {
        let r = result(vec![
            warm(Protocol::H1, 10_000, &[80_000, 80_200, 80_400]),
            warm(Protocol::H2, 10_000, &[80_300, 80_100, 80_500]),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
        assert!(
            v.summary
                .starts_with("No meaningful difference between HTTP/1.1 and HTTP/2."),
            "{}",
            v.summary
        );
        assert!(v.summary.contains("is the server's wait"), "{}", v.summary);
        assert_eq!(v.comparisons.len(), 2);
        let reused = &v.comparisons[1];
        assert_eq!(reused.state, ConnState::Reused);
        assert!(!reused.differs() && reused.leaders.len() == 2);
        assert_eq!(reused.noise, Some(Micros(400)));
    }

    #[test]
    fn a_round_trip_less_on_new_connections_is_named() {
        // h3: no TCP connect (5 ms round trip) but a QUIC handshake 1 RTT shorter than connect + TLS.
        let mut h3 = vec![attempt(
            1,
            &[
                (Phase::Dns, 1_000),
                (Phase::Quic, 10_000),
                (Phase::Send, 50),
                (Phase::Wait, 20_000),
                (Phase::Receive, 500),
            ],
            false,
        )];
        h3.extend((2..=3).map(|n| reused(n, 20_000 + u64::from(n) * 100)));
        let r = result(vec![
            warm(Protocol::H1, 10_000, &[20_000, 20_100, 20_300]),
            warm(Protocol::H2, 10_000, &[20_050, 20_250, 20_150]),
            run(Protocol::H3, h3),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::Faster, "{}", v.summary);
        assert_eq!(
            v.summary,
            "HTTP/3 is faster on a new connection by 5.00 ms (about 1 round trip) than HTTP/1.1 and HTTP/2. \
             On a reused connection the protocols are within noise."
        );
        let new = &v.comparisons[0];
        assert_eq!(new.leaders, vec![Protocol::H3]);
        assert!(new.leads(Protocol::H3) && !new.leads(Protocol::H1));
        // Single attempts per protocol borrow the reused attempts' largest spread.
        assert_eq!(new.noise, Some(Micros(200)));
    }

    #[test]
    fn a_difference_inside_the_spread_or_the_floor_is_not_called() {
        // Reused medians differ by 3 ms, but one protocol's attempts spread over 5 ms.
        let wide = result(vec![
            warm(Protocol::H1, 1_000, &[10_000, 12_000, 17_000]),
            warm(Protocol::H2, 1_000, &[10_000, 9_000, 9_500]),
        ]);
        assert_eq!(verdict(&wide).kind, VerdictKind::NoDifference);
        // Tight spreads, but 0.4 ms apart: under the floor.
        let close = result(vec![
            warm(Protocol::H1, 1_000, &[1_000, 1_400, 1_410]),
            warm(Protocol::H2, 1_000, &[1_000, 1_000, 1_010]),
        ]);
        let v = verdict(&close);
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
    }

    #[test]
    fn a_single_first_connection_must_also_differ_by_five_percent() {
        // 300 ms behind the server; the first h1 connection 1.7 ms slower: under 5%.
        let r = result(vec![
            warm(Protocol::H1, 11_700, &[300_000, 300_100, 300_200]),
            warm(Protocol::H2, 10_000, &[300_050, 300_150, 300_100]),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
    }

    #[test]
    fn single_attempts_call_nothing() {
        let r = result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 1_000, 9_000, 10_000)]),
            run(Protocol::H2, vec![fresh(1, 0, 1_000, 1_000, 10_000)]),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::NotComparable);
        assert!(v.summary.starts_with("One attempt per protocol"));
    }

    #[test]
    fn error_answers_name_no_winner() {
        let not_found = |p, wait| {
            let mut a = warm(p, 1_000, &[wait, wait, wait]);
            for x in &mut a.attempts {
                x.response.as_mut().unwrap().status = 404;
            }
            a
        };
        let v = verdict(&result(vec![
            not_found(Protocol::H1, 2_300),
            not_found(Protocol::H3, 560),
        ]));
        assert_eq!(v.kind, VerdictKind::NotComparable);
        assert!(
            v.summary
                .contains("every answer was an HTTP error (404 Not Found)"),
            "{}",
            v.summary
        );
        assert!(v.comparisons.is_empty());
    }

    #[test]
    fn total_failure_and_a_lone_survivor() {
        let refused = |p| {
            run(
                p,
                vec![failed(
                    attempt(1, &[(Phase::Connect, 100)], false),
                    Phase::Connect,
                    FailureKind::Refused,
                )],
            )
        };
        let v = verdict(&result(vec![refused(Protocol::H1), refused(Protocol::H2)]));
        assert_eq!(v.kind, VerdictKind::Failed);
        assert_eq!(
            v.summary,
            "Nothing to compare: every attempt failed, the first in the connect phase: Refused in connect."
        );
        let v = verdict(&result(vec![
            refused(Protocol::H1),
            warm(Protocol::H2, 1_000, &[1_000, 1_000]),
        ]));
        assert_eq!(v.kind, VerdictKind::NotComparable);
        assert!(v.summary.starts_with(
            "Only HTTP/2 answered successfully, so there is nothing to compare it with."
        ));
    }

    #[test]
    fn lists() {
        assert_eq!(list::<&str>(&[]), "");
        assert_eq!(list(&["a"]), "a");
        assert_eq!(list(&["a", "b", "c"]), "a, b and c");
    }
}
