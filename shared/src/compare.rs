//! Two results compared (before and after a deploy, two CDNs, one URL a week
//! apart): per protocol and connection state, each metric's median in A and
//! in B, with a difference called only under the verdict's significance rule.
//!
//! Like the verdict and the table ([`crate::table`]), only whole redirect
//! chains that succeeded count: an HTTP error or a failure on one side leaves
//! that side's cell empty and says why, it is never compared. The noise a
//! difference must exceed is the larger spread of the two sides, and each
//! side needs [`crate::verdict::MIN_SAMPLES`] attempts.

use crate::chain::{Chain, ConnState, all_chains, chains};
use crate::format::ms;
use crate::json::ReadJson;
use crate::schema::{Micros, ProbeResult, Protocol, ProtocolRun};
use crate::stats::{Metric, PhaseStats};
use crate::table::{chain_value, unmeasured};
use crate::verdict::{MIN_SAMPLES, SIGNIFICANCE_RULE, list, significant};
use serde::{Deserialize, Serialize};

/// One of the two results.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The first result (the "before").
    A,
    /// The second result (the "after").
    B,
}

impl Side {
    /// "A" or "B".
    pub fn letter(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }

    fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
}

/// What kind of answer the comparison gives.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ComparisonKind {
    /// One result is faster than the other beyond the noise, somewhere.
    Differs,
    /// Everything both measured is within the noise.
    NoDifference,
    /// Nothing fair to compare (a side with no successful attempt, nothing measured in common, too few attempts).
    NotComparable,
}

/// One side's figures for a metric.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SideFigures {
    /// Values counted (successful chains).
    pub count: usize,
    /// Median (nearest rank).
    pub median: Micros,
    /// Fastest.
    pub min: Micros,
    /// Slowest.
    pub max: Micros,
}

impl SideFigures {
    fn of(values: Vec<Micros>) -> Option<SideFigures> {
        let s = PhaseStats::from_values(values)?;
        Some(SideFigures {
            count: s.count,
            median: s.median,
            min: s.min,
            max: s.max,
        })
    }

    fn spread(&self) -> Option<Micros> {
        (self.count > 1).then(|| self.max.saturating_sub(self.min))
    }
}

/// One metric in A and in B.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MetricDiff {
    /// The metric.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub metric: Metric,
    /// A's figures, absent when A has no value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<SideFigures>,
    /// B's figures, absent when B has no value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<SideFigures>,
    /// The spread a difference must exceed; absent when nothing measured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Micros>,
    /// The smallest difference that can be called ([`crate::verdict::floor`] of the faster
    /// median, or for a part of the request of the faster total's); absent when a side has no
    /// value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<Micros>,
    /// The faster side, only when the difference is called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faster: Option<Side>,
    /// How much faster its median is, only when the difference is called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<Micros>,
}

impl MetricDiff {
    /// What the row says: the faster side and by how much ("B faster by 12.0 ms"), or why nothing
    /// is called, with the bar it did not clear: the floor and the noise side by side ("under the
    /// 0.50 ms floor plus half the noise (0.05 ms)", "within noise (1.20 ms; floor 0.50 ms)"), too few
    /// attempts ("too few to tell (2 and 5; 4 each needed)"), "only in A".
    pub fn said(&self) -> String {
        let (x, y) = match (self.faster, self.gap, self.a, self.b) {
            (Some(side), Some(gap), ..) => {
                return format!("{} faster by {}", side.letter(), ms(gap));
            }
            (_, _, Some(x), Some(y)) => (x, y),
            (_, _, Some(_), None) => return "only in A".to_owned(),
            _ => return "only in B".to_owned(),
        };
        if x.count.min(y.count) < MIN_SAMPLES {
            return format!(
                "too few to tell ({} and {}; {MIN_SAMPLES} each needed)",
                x.count, y.count
            );
        }
        let floor = self
            .floor
            .unwrap_or_else(|| crate::verdict::floor(x.median.min(y.median)));
        match self.noise {
            None => format!("no spread measured (floor {})", ms(floor)),
            // The bar is the noise and the floor plus half the noise, whichever is higher.
            Some(noise) if noise.0 >= floor.0 + noise.0 / 2 => {
                format!("within noise ({}; floor {})", ms(noise), ms(floor))
            }
            Some(noise) => format!(
                "under the {} floor plus half the noise ({})",
                ms(floor),
                ms(noise)
            ),
        }
    }
}

/// One protocol in one connection state, metric by metric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProtocolDiff {
    /// The protocol.
    pub protocol: Protocol,
    /// The connection state of every chain counted.
    pub state: ConnState,
    /// The metrics either side has, phases in timeline order, then `ttfb` and `total`.
    pub metrics: Vec<MetricDiff>,
}

impl ProtocolDiff {
    /// The whole chain's row, when both sides have it.
    pub fn total(&self) -> Option<&MetricDiff> {
        self.metrics
            .iter()
            .find(|m| m.metric == Metric::Total && m.a.is_some() && m.b.is_some())
    }
}

/// The answer, with its evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Comparison {
    /// What kind of answer this is.
    pub kind: ComparisonKind,
    /// A few sentences that answer "is B faster than A, where and by how much".
    pub summary: String,
    /// What differs between the two probes besides their timings (URL, vantage, options, what failed).
    pub caveats: Vec<String>,
    /// Per connection state, then per protocol, in the results' order.
    pub groups: Vec<ProtocolDiff>,
    /// The significance rule ([`SIGNIFICANCE_RULE`]).
    pub rule: String,
}

impl Comparison {
    /// Whether the significance rule weighed anything here (some protocol and connection state
    /// measured by both results), so the page should say it; not for "Nothing to compare".
    pub fn rule_applies(&self) -> bool {
        self.groups.iter().any(|g| g.total().is_some())
    }
}

/// Compares result `b` with result `a`.
pub fn compare(a: &ProbeResult, b: &ProbeResult) -> Comparison {
    let protocols = protocols_of(a, b);
    let groups = groups(a, b, &protocols);
    let caveats = caveats(a, b, &protocols);
    let (kind, summary) = answer(a, b, &groups);
    Comparison {
        kind,
        summary,
        caveats,
        groups,
        rule: SIGNIFICANCE_RULE.to_owned(),
    }
}

/// The probe id in what someone pasted: a bare id, or a permalink (`https://host/r/{id}`,
/// `/r/{id}`) or record URL (`/api/v1/probes/{id}`) ending in one; `None` when there is none.
pub fn probe_id_in(text: &str) -> Option<&str> {
    let text = text.trim();
    let path = text.split(['?', '#']).next().unwrap_or_default();
    let path = path.trim_end_matches('/');
    let id = match path.rsplit_once('/') {
        None => path,
        Some((before, id)) if before.ends_with("/r") || before.ends_with("/probes") => id,
        Some(_) => return None,
    };
    let valid = id.len() == 12
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    valid.then_some(id)
}

/// Every protocol either result ran, A's order first.
fn protocols_of(a: &ProbeResult, b: &ProbeResult) -> Vec<Protocol> {
    let mut out: Vec<Protocol> = Vec::new();
    for run in a.runs.iter().chain(&b.runs) {
        if !out.contains(&run.protocol) {
            out.push(run.protocol);
        }
    }
    out
}

/// The successful chains of one result.
fn good(result: &ProbeResult) -> Vec<Chain<'_>> {
    all_chains(result).filter(Chain::succeeded).collect()
}

/// A metric's values in `chains` for one protocol and state.
fn values(chains: &[Chain], protocol: Protocol, state: ConnState, metric: Metric) -> Vec<Micros> {
    chains
        .iter()
        .filter(|c| c.protocol == protocol && c.state() == state)
        .filter_map(|c| chain_value(metric, c))
        .collect()
}

fn groups(a: &ProbeResult, b: &ProbeResult, protocols: &[Protocol]) -> Vec<ProtocolDiff> {
    let (good_a, good_b) = (good(a), good(b));
    // Every cell once: per state and protocol, each metric's figures in A and in B.
    type Cells = Vec<(Metric, Option<SideFigures>, Option<SideFigures>)>;
    let cells: Vec<(ConnState, Protocol, Cells)> = ConnState::ALL
        .into_iter()
        .flat_map(|state| protocols.iter().map(move |p| (state, *p)))
        .map(|(state, protocol)| {
            let row = Metric::ALL
                .into_iter()
                .map(|metric| {
                    let of =
                        |good: &[Chain]| SideFigures::of(values(good, protocol, state, metric));
                    (metric, of(&good_a), of(&good_b))
                })
                .collect();
            (state, protocol, row)
        })
        .collect();
    cells
        .into_iter()
        .filter_map(|(state, protocol, row)| {
            let whole = row
                .iter()
                .find(|(metric, ..)| *metric == Metric::Total)
                .map(|(metric, x, y)| diff(*metric, *x, *y, None));
            let metrics: Vec<MetricDiff> = row
                .into_iter()
                .filter(|(_, x, y)| x.is_some() || y.is_some())
                .map(|(metric, x, y)| {
                    let whole = whole.as_ref().filter(|_| metric != Metric::Total);
                    diff(metric, x, y, whole)
                })
                .collect();
            (!metrics.is_empty()).then_some(ProtocolDiff {
                protocol,
                state,
                metrics,
            })
        })
        .collect()
}

/// One metric's row, called by the significance rule when both sides have it; a part of the
/// request (every metric but the total) only where it also clears its `whole`'s noise and floor,
/// as the table's cells ([`crate::verdict::compare_part`]).
fn diff(
    metric: Metric,
    a: Option<SideFigures>,
    b: Option<SideFigures>,
    whole: Option<&MetricDiff>,
) -> MetricDiff {
    let mut row = MetricDiff {
        metric,
        a,
        b,
        noise: None,
        floor: None,
        faster: None,
        gap: None,
    };
    let (Some(x), Some(y)) = (a, b) else {
        return row;
    };
    row.noise = x.spread().max(y.spread()).max(whole.and_then(|w| w.noise));
    let (faster, fast, slow) = if y.median < x.median {
        (Side::B, y.median, x.median)
    } else {
        (Side::A, x.median, y.median)
    };
    let floor_of = whole
        .and_then(|w| w.a.zip(w.b))
        .map_or(fast, |(p, q)| p.median.min(q.median).max(fast));
    row.floor = Some(crate::verdict::floor(floor_of));
    let gap = slow.saturating_sub(fast);
    if significant(gap, floor_of, row.noise, x.count.min(y.count)) {
        row.faster = Some(faster);
        row.gap = Some(gap);
    }
    row
}

/// The kind and the summary.
fn answer(a: &ProbeResult, b: &ProbeResult, groups: &[ProtocolDiff]) -> (ComparisonKind, String) {
    let empty: Vec<String> = [(Side::A, a), (Side::B, b)]
        .into_iter()
        .filter_map(|(side, r)| nothing_succeeded(r).map(|why| format!("{} {why}", side.letter())))
        .collect();
    if !empty.is_empty() {
        return (
            ComparisonKind::NotComparable,
            format!(
                "Nothing to compare: {}. Only successful answers (2xx or 3xx) are compared.",
                empty.join("; ")
            ),
        );
    }
    let mut both: Vec<(&ProtocolDiff, &MetricDiff)> = groups
        .iter()
        .filter_map(|g| g.total().map(|t| (g, t)))
        .collect();
    if both.is_empty() {
        return (
            ComparisonKind::NotComparable,
            "Nothing to compare: the two results have no protocol and connection state with \
             successful attempts in common."
                .to_owned(),
        );
    }
    let enough = |t: &MetricDiff| {
        t.a.zip(t.b)
            .is_some_and(|(a, b)| a.count.min(b.count) >= MIN_SAMPLES)
    };
    both.retain(|(_, t)| enough(t));
    if both.is_empty() {
        return (
            ComparisonKind::NotComparable,
            format!(
                "Too few attempts on each side to tell a difference from noise (a difference needs \
                 {MIN_SAMPLES} of a kind on each side): measure more rounds in both probes."
            ),
        );
    }
    let calls: Vec<String> = ConnState::ALL
        .into_iter()
        .flat_map(|state| [(state, Side::B), (state, Side::A)])
        .filter_map(|(state, side)| {
            let called: Vec<(&ProtocolDiff, &MetricDiff)> = both
                .iter()
                .filter(|(g, t)| g.state == state && t.faster == Some(side))
                .copied()
                .collect();
            (!called.is_empty()).then(|| call(state, side, &called))
        })
        .collect();
    if calls.is_empty() {
        let mut protocols: Vec<&str> = Vec::new();
        let mut states: Vec<&str> = Vec::new();
        for (g, _) in &both {
            if !protocols.contains(&g.protocol.http_version()) {
                protocols.push(g.protocol.http_version());
            }
            let word = match g.state {
                ConnState::New => "new",
                ConnState::Resumed => "resumed",
                ConnState::Reused => "reused",
            };
            if !states.contains(&word) {
                states.push(word);
            }
        }
        return (
            ComparisonKind::NoDifference,
            format!(
                "No meaningful difference between A and B beyond the measured noise, over {} on {} connections.",
                list(&protocols),
                list(&states)
            ),
        );
    }
    (ComparisonKind::Differs, calls.join(" "))
}

/// Why a result has no successful chain at all, or `None` when it has one.
fn nothing_succeeded(result: &ProbeResult) -> Option<String> {
    if all_chains(result).any(|c| c.succeeded()) {
        return None;
    }
    let reasons: Vec<String> = result
        .runs
        .iter()
        .map(|run| format!("{} {}", run.protocol.http_version(), unmeasured(run)))
        .collect();
    Some(if reasons.is_empty() {
        "measured nothing".to_owned()
    } else {
        format!("has no successful attempt ({})", reasons.join("; "))
    })
}

/// The totals `side` wins in one connection state as a sentence, with the phase that moved
/// most, e.g. "B is faster than A on a new connection over HTTP/2 by 12.0 ms (40.1 ms against
/// 52.1 ms) and HTTP/3 by 10.2 ms (41.9 ms against 52.1 ms), most of it in tls."
fn call(state: ConnState, side: Side, called: &[(&ProtocolDiff, &MetricDiff)]) -> String {
    let parts: Vec<String> = called
        .iter()
        .filter_map(|(g, t)| {
            let (gap, x, y) = (t.gap?, t.a?, t.b?);
            let (fast, slow) = match side {
                Side::A => (x.median, y.median),
                Side::B => (y.median, x.median),
            };
            Some(format!(
                "{} by {} ({} against {})",
                g.protocol.http_version(),
                ms(gap),
                ms(fast),
                ms(slow)
            ))
        })
        .collect();
    // The phase each protocol gained most in; named when it is the same for all of them.
    let phases: Vec<Option<Metric>> = called
        .iter()
        .map(|(g, _)| {
            g.metrics
                .iter()
                .filter(|m| m.metric.phase().is_some() && m.faster == Some(side))
                .filter_map(|m| Some((m.gap?, m.metric)))
                .max()
                .map(|(_, metric)| metric)
        })
        .collect();
    let most = match phases.first() {
        Some(Some(metric)) if phases.iter().all(|p| *p == Some(*metric)) => {
            format!(", most of it in {}", metric.as_str())
        }
        _ => String::new(),
    };
    format!(
        "{} is faster than {} on {} over {}{most}.",
        side.letter(),
        side.other().letter(),
        state.phrase(),
        list(&parts),
    )
}

/// `result`'s run of `protocol`, if it ran one.
fn run_of(result: &ProbeResult, protocol: Protocol) -> Option<&ProtocolRun> {
    result.runs.iter().find(|run| run.protocol == protocol)
}

/// What differs between the two probes besides their timings.
fn caveats(a: &ProbeResult, b: &ProbeResult, protocols: &[Protocol]) -> Vec<String> {
    let (x, y) = (&a.options, &b.options);
    let mut out = Vec::new();
    if x.url != y.url {
        out.push(format!("A measured {}; B measured {}.", x.url, y.url));
    }
    let vantage = |r: &ProbeResult| r.vantage.as_ref().map(|v| v.shown().to_owned());
    if vantage(a) != vantage(b) {
        let name = |r| vantage(r).unwrap_or_else(|| "an unnamed vantage".to_owned());
        out.push(format!(
            "A was measured from {}; B from {}.",
            name(a),
            name(b)
        ));
    }
    let mut differ = Vec::new();
    if x.method != y.method {
        differ.push(format!("method ({} against {})", x.method, y.method));
    }
    if x.body.is_some() != y.body.is_some() {
        differ.push("request body (one sends one, the other not)".to_owned());
    }
    if x.mode != y.mode {
        differ.push(format!(
            "connection mode ({} against {})",
            x.mode.as_str(),
            y.mode.as_str()
        ));
    }
    if x.family != y.family {
        differ.push(format!(
            "address family ({} against {})",
            x.family.name(),
            y.family.name()
        ));
    }
    if !differ.is_empty() {
        out.push(format!("The probes differ in {}.", list(&differ)));
    }
    for protocol in protocols {
        match (run_of(a, *protocol), run_of(b, *protocol)) {
            (Some(_), None) => out.push(format!(
                "{} was measured only in A.",
                protocol.http_version()
            )),
            (None, Some(_)) => out.push(format!(
                "{} was measured only in B.",
                protocol.http_version()
            )),
            (Some(ra), Some(rb)) => {
                for (side, r) in [(Side::A, ra), (Side::B, rb)] {
                    if !chains(r).iter().any(Chain::succeeded) {
                        out.push(format!(
                            "{}'s {} has no successful attempt ({}).",
                            side.letter(),
                            protocol.http_version(),
                            unmeasured(r)
                        ));
                    }
                }
            }
            (None, None) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, Phase};

    fn h2(attempts: Vec<crate::schema::Attempt>) -> crate::schema::ProtocolRun {
        run(Protocol::H2, attempts)
    }

    /// New connections with these TLS times and a fixed wait.
    fn tls_times(tls: &[u64]) -> ProbeResult {
        result(vec![h2(tls
            .iter()
            .zip(1..)
            .map(|(t, n)| fresh(n, 100, 200, *t, 4_000))
            .collect())])
    }

    #[test]
    fn a_difference_beyond_the_spread_is_called_with_the_phase_behind_it() {
        let a = tls_times(&[30_000, 31_000, 30_500, 30_800]);
        let b = tls_times(&[9_000, 9_400, 9_200, 9_300]);
        let c = compare(&a, &b);
        assert_eq!(c.kind, ComparisonKind::Differs);
        let total = c.groups[0].total().unwrap();
        assert_eq!(total.faster, Some(Side::B));
        assert_eq!(total.gap, Some(Micros(21_300)));
        assert_eq!(
            c.summary,
            "B is faster than A on a new connection over HTTP/2 by 21.3 ms (14.1 ms against 35.4 ms), \
             most of it in tls."
        );
        assert!(c.summary.contains("most of it in tls"), "{}", c.summary);
        assert!(c.caveats.is_empty(), "{:?}", c.caveats);
    }

    #[test]
    fn one_sentence_per_state_and_direction() {
        let two = |tls: u64, wait: u64| {
            result(vec![
                h2((1..=4).map(|n| fresh(n, 100, 200, tls, 4_000)).collect()),
                run(
                    Protocol::H1,
                    (1..=4).map(|n| fresh(n, 100, 200, 9_000, wait)).collect(),
                ),
            ])
        };
        let c = compare(&two(30_000, 4_000), &two(9_000, 20_000));
        assert_eq!(
            c.summary,
            "B is faster than A on a new connection over HTTP/2 by 21.0 ms (13.9 ms against 34.9 ms), \
             most of it in tls. A is faster than B on a new connection over HTTP/1.1 by 16.0 ms \
             (13.9 ms against 29.9 ms), most of it in wait."
        );
    }

    #[test]
    fn a_difference_inside_the_spread_is_not_called() {
        // Medians 0.9 ms apart (over the floor), inside A's 4 ms spread.
        let a = tls_times(&[10_000, 14_000, 12_000, 12_500]);
        let b = tls_times(&[11_000, 13_000, 12_900, 12_950]);
        let c = compare(&a, &b);
        assert_eq!(c.kind, ComparisonKind::NoDifference, "{}", c.summary);
        let total = c.groups[0].total().unwrap();
        assert_eq!((total.faster, total.gap), (None, None));
        assert_eq!(total.noise, Some(Micros(4_000)));
        assert_eq!(
            c.summary,
            "No meaningful difference between A and B beyond the measured noise, over HTTP/2 on new connections."
        );
    }

    #[test]
    fn a_row_not_called_shows_the_floor_beside_the_noise() {
        let a = tls_times(&[10_000, 10_010, 10_020, 10_030]);
        let b = tls_times(&[10_170, 10_180, 10_190, 10_200]);
        let c = compare(&a, &b);
        assert_eq!(c.kind, ComparisonKind::NoDifference, "{}", c.summary);
        assert!(c.rule_applies());
        let total = c.groups[0].total().unwrap();
        assert_eq!(
            total.said(),
            "under the 0.74 ms floor plus half the noise (0.03 ms)"
        );
        // A part of the request is held to its total's floor: 0.17 ms of TLS is not 0.5 ms.
        let tls = c.groups[0]
            .metrics
            .iter()
            .find(|m| m.metric == Metric::Tls)
            .unwrap();
        assert_eq!(
            tls.said(),
            "under the 0.74 ms floor plus half the noise (0.03 ms)"
        );
        let a = tls_times(&[10_000, 14_000, 12_000, 12_500]);
        let b = tls_times(&[11_000, 13_000, 12_900, 12_950]);
        let total = compare(&a, &b).groups[0].total().cloned().unwrap();
        assert_eq!(total.said(), "within noise (4.00 ms; floor 0.84 ms)");
        let short = compare(&tls_times(&[10_000, 10_100]), &b);
        assert_eq!(
            short.groups[0].total().unwrap().said(),
            "too few to tell (2 and 4; 4 each needed)"
        );
        assert!(short.rule_applies(), "the rule says why nothing is called");
    }

    #[test]
    fn a_phase_gap_inside_the_totals_noise_is_not_called() {
        // `send` 0.17 ms against 1.01 ms on every new connection, in totals that vary by 1.5 ms.
        let sends = |send: u64| {
            result(vec![h2((1..=4)
                .map(|n| {
                    crate::fixture::attempt(
                        n,
                        &[
                            (Phase::Connect, 1_000),
                            (Phase::Send, send),
                            (Phase::Wait, 15_000 + u64::from(n) * 500),
                        ],
                        false,
                    )
                })
                .collect())])
        };
        let c = compare(&sends(1_010), &sends(170));
        let send = c.groups[0]
            .metrics
            .iter()
            .find(|m| m.metric == Metric::Send)
            .unwrap();
        assert_eq!((send.faster, send.gap), (None, None), "{send:?}");
        assert_eq!(
            send.said(),
            "under the 0.86 ms floor plus half the noise (1.50 ms)"
        );
    }

    #[test]
    fn under_the_floor_nothing_is_called_even_without_spread() {
        let a = tls_times(&[10_000; 4]);
        let b = tls_times(&[10_400; 4]);
        assert_eq!(compare(&a, &b).kind, ComparisonKind::NoDifference);
    }

    #[test]
    fn fewer_than_four_attempts_call_nothing_and_four_beyond_the_spread_do() {
        let one = |tls| result(vec![h2(vec![fresh(1, 100, 200, tls, 4_000)])]);
        let c = compare(&one(30_000), &one(9_000));
        assert_eq!(c.kind, ComparisonKind::NotComparable);
        assert!(c.summary.starts_with("Too few attempts"), "{}", c.summary);
        // Single new connections borrow nothing from the spread of the reused ones.
        let with_reuse = |tls, waits: [u64; 2]| {
            result(vec![h2(vec![
                fresh(1, 100, 200, tls, 4_000),
                reused(2, waits[0]),
                reused(3, waits[1]),
            ])])
        };
        let c = compare(
            &with_reuse(30_000, [2_000, 3_000]),
            &with_reuse(9_000, [2_000, 3_000]),
        );
        assert_ne!(c.kind, ComparisonKind::Differs, "{}", c.summary);
        let new = c.groups.iter().find(|g| g.state == ConnState::New).unwrap();
        let total = new.total().unwrap();
        assert_eq!((total.noise, total.faster, total.gap), (None, None, None));
        // Three new connections a side, 21 ms apart and spread over 1 ms: still nothing.
        let c = compare(
            &tls_times(&[30_000, 31_000, 30_500]),
            &tls_times(&[9_000, 9_400, 9_200]),
        );
        assert_ne!(c.kind, ComparisonKind::Differs, "{}", c.summary);
        let total = c.groups[0].total().unwrap();
        assert_eq!(total.noise, Some(Micros(1_000)));
        assert_eq!((total.faster, total.gap), (None, None));
        // A fourth each: the same gap is called.
        let c = compare(
            &tls_times(&[30_000, 31_000, 30_500, 30_800]),
            &tls_times(&[9_000, 9_400, 9_200, 9_300]),
        );
        assert_eq!(c.kind, ComparisonKind::Differs, "{}", c.summary);
        let total = c.groups[0].total().unwrap();
        assert_eq!(total.noise, Some(Micros(1_000)));
        assert_eq!(
            (total.faster, total.gap),
            (Some(Side::B), Some(Micros(21_300)))
        );
    }

    #[test]
    fn an_http_error_is_never_compared() {
        let a = tls_times(&[30_000, 31_000, 30_500, 30_800]);
        let mut b = tls_times(&[9_000, 9_400, 9_200, 9_300]);
        for attempt in &mut b.runs[0].attempts {
            attempt.response.as_mut().unwrap().status = 502;
        }
        let c = compare(&a, &b);
        assert_eq!(c.kind, ComparisonKind::NotComparable);
        assert!(
            c.summary.contains("B has no successful attempt"),
            "{}",
            c.summary
        );
        assert!(c.summary.contains("502"), "{}", c.summary);
        assert!(c.groups.iter().all(|g| g.total().is_none()));
        assert!(!c.rule_applies());
    }

    #[test]
    fn a_failed_protocol_on_one_side_is_named_and_left_out() {
        let a = result(vec![
            h2(vec![fresh(1, 100, 200, 9_000, 4_000); 4]),
            run(
                Protocol::H3,
                vec![fresh(1, 100, 0, 0, 4_000), fresh(2, 100, 0, 0, 4_000)],
            ),
        ]);
        let mut b = a.clone();
        b.runs[1].attempts = vec![failed(
            fresh(1, 100, 0, 0, 4_000),
            Phase::Quic,
            FailureKind::Timeout,
        )];
        let c = compare(&a, &b);
        assert_eq!(c.kind, ComparisonKind::NoDifference, "{}", c.summary);
        assert!(
            c.caveats
                .iter()
                .any(|s| s.starts_with("B's HTTP/3 has no successful attempt (failed in quic")),
            "{:?}",
            c.caveats
        );
        let h3 = c
            .groups
            .iter()
            .find(|g| g.protocol == Protocol::H3)
            .unwrap();
        assert!(h3.total().is_none());
    }

    #[test]
    fn different_urls_vantages_and_protocols_are_caveats() {
        let a = tls_times(&[9_000, 9_100, 9_200]);
        let mut b = tls_times(&[9_000, 9_100, 9_200]);
        b.options.url = "https://cdn.example.net/path".into();
        b.vantage = Some(crate::vantage::Vantage::named("fra1"));
        b.runs
            .push(run(Protocol::H3, vec![fresh(1, 100, 0, 0, 4_000)]));
        let c = compare(&a, &b);
        assert_eq!(
            c.caveats,
            vec![
                "A measured https://example.com/path?q=1; B measured https://cdn.example.net/path."
                    .to_owned(),
                "A was measured from an unnamed vantage; B from fra1.".to_owned(),
                "HTTP/3 was measured only in B.".to_owned(),
            ]
        );
    }

    #[test]
    fn nothing_in_common_is_not_comparable() {
        let a = tls_times(&[9_000, 9_100, 9_200]);
        let b = result(vec![run(
            Protocol::H3,
            vec![fresh(1, 100, 0, 0, 4_000), fresh(2, 100, 0, 0, 4_000)],
        )]);
        let c = compare(&a, &b);
        assert_eq!(c.kind, ComparisonKind::NotComparable);
        assert!(c.summary.contains("in common"), "{}", c.summary);
    }

    #[test]
    fn ids_are_found_in_what_people_paste() {
        for text in [
            "abcDEF123_-x",
            " abcDEF123_-x\n",
            "https://h123.example/r/abcDEF123_-x",
            "https://h123.example/r/abcDEF123_-x/?utm=1#waterfalls",
            "/r/abcDEF123_-x",
            "http://127.0.0.1:8080/api/v1/probes/abcDEF123_-x",
        ] {
            assert_eq!(probe_id_in(text), Some("abcDEF123_-x"), "{text:?}");
        }
        for text in [
            "",
            "abc",
            "abcDEF123_-x1",
            "abcDEF123.-x",
            "https://h123.example/b/abcDEF123_-x",
            "https://h123.example/r/abcDEF123_-x/har",
        ] {
            assert_eq!(probe_id_in(text), None, "{text:?}");
        }
    }

    #[test]
    fn it_reads_back_as_written() {
        let c = compare(
            &tls_times(&[30_000, 31_000, 30_500, 30_800]),
            &tls_times(&[9_000, 9_400, 9_200, 9_300]),
        );
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.contains(r#""faster":"b""#), "{json}");
        assert_eq!(serde_json::from_str::<Comparison>(&json).unwrap(), c);
    }
}
