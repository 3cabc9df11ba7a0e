//! The verdict: which protocol is faster here, by how much and why, or that none is.
//!
//! Like is compared with like: the totals of successful attempts (whole
//! redirect chains) are grouped by connection state ([`ConnState`]: new,
//! resumed, reused) and protocols are only compared within a group. A
//! difference is called only when every protocol has [`MIN_SAMPLES`]
//! attempts in the group and it exceeds [`NOISE_FLOOR`], [`RELATIVE_FLOOR_PERCENT`]
//! of the faster median and the measured spread ([`SIGNIFICANCE_RULE`]);
//! otherwise the verdict says so, and where
//! the time goes instead. One sample has no spread, and with two or three the
//! rule would still call chance differences often enough that "Run again"
//! gives another answer. The name lookup is left out of the totals compared:
//! every protocol does the same lookup, so it cannot tell them apart. HTTP
//! errors and failures are never compared: a 404 page served fast says
//! nothing about the protocol.

use crate::chain::{Chain, ConnState, all_chains};
use crate::format::ms;
use crate::json::ReadJson;
use crate::schema::{ConnectionMode, Micros, Phase, ProbeResult, Protocol};
use crate::stats::percentile;
use serde::{Deserialize, Serialize};

/// Differences at or under this are never called, whatever the spread.
pub const NOISE_FLOOR: Micros = Micros(500);

/// Nor differences at or under this share of the faster median, in percent:
/// a difference that small is no reason to pick a protocol, and one that
/// is real but that small (a QUIC handshake's extra CPU on loopback, about
/// 0.6 ms of 22) sits at the floor, so the same URL was called one way in
/// some runs and not in others (17 to 18 of 20 default probes agreed).
pub const RELATIVE_FLOOR_PERCENT: u64 = 5;

/// Successful attempts each side needs in a connection state before a
/// difference there is called. With equal protocols and jittery samples, the
/// rule below calls a chance difference about 17% of the time on 2 samples a
/// side, 6% on 3 and under 1% on 4 (simulated over exponential jitter), so a
/// verdict on 4 survives "Run again".
pub const MIN_SAMPLES: usize = 4;

/// The noise a difference of medians must clear is this many times the
/// attempts' spread (each protocol's fastest to slowest, its single slowest
/// left out once it has [`MIN_SAMPLES`]). Simulated over exponential jitter
/// with an occasional outlier, 4 samples a side call a chance difference in
/// under 2% of probes of equal protocols, and still call a difference of 5
/// jitter scales in 84 to 95% of them.
pub const NOISE_FACTOR: u64 = 2;

/// The significance rule, in one line (shown on hover and in the CLI).
pub const SIGNIFICANCE_RULE: &str = "A difference is called only when each protocol has at least 4 successful \
attempts of the kind compared (new, resumed or reused connections) and their medians differ by more than twice the spread of the \
attempts compared (fastest to slowest, each protocol's single slowest left out) and by more than the floor (0.5 ms or 5% of the \
faster median, whichever is more) plus that spread, so a real difference that sits at the floor gets the same words every run. \
Name lookups are left out: every protocol makes the same one; so is a QUIC handshake's wait on a name's other addresses, \
the client's address order.";

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
    /// The slowest total but one (the slowest, when there is one).
    #[serde(default)]
    pub next_to_max: Micros,
}

impl ProtocolSample {
    /// The sample of `protocol`'s `totals` (in any order); `None` when there are none.
    pub fn of(protocol: Protocol, mut totals: Vec<Micros>) -> Option<ProtocolSample> {
        totals.sort_unstable();
        Some(ProtocolSample {
            protocol,
            count: totals.len(),
            median: percentile(&totals, 50),
            min: *totals.first()?,
            max: *totals.last()?,
            next_to_max: totals[totals.len().saturating_sub(2)],
        })
    }

    /// Fastest to slowest, leaving out the single slowest once there are
    /// [`MIN_SAMPLES`]: one slow outlier (a first connection's one-off cost,
    /// a scheduler hiccup) does not hide a difference every other attempt shows.
    pub fn spread(&self) -> Option<Micros> {
        let top = if self.count >= MIN_SAMPLES {
            self.next_to_max
        } else {
            self.max
        };
        (self.count > 1).then(|| top.saturating_sub(self.min))
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

    /// The fewest successful attempts any protocol has here.
    pub fn fewest(&self) -> usize {
        self.samples.iter().map(|s| s.count).min().unwrap_or(0)
    }

    /// Whether every protocol has enough attempts here for a difference to be called.
    pub fn enough(&self) -> bool {
        self.fewest() >= MIN_SAMPLES
    }

    /// Whether `protocol` leads beyond the noise here (never when there is no difference).
    pub fn leads(&self, protocol: Protocol) -> bool {
        self.differs() && self.leaders.contains(&protocol)
    }

    /// Where no difference is called though enough attempts were compared,
    /// the protocols slower than the fastest by more than the noise (a real
    /// difference, but inside the floor plus the spread), each with its gap,
    /// most first; empty otherwise.
    pub fn slight(&self) -> Vec<(Protocol, Micros)> {
        let (Some(noise), Some(fastest)) = (self.noise, self.samples.first()) else {
            return Vec::new();
        };
        if self.differs() || !self.enough() {
            return Vec::new();
        }
        let mut slower: Vec<(Protocol, Micros)> = self
            .samples
            .iter()
            .map(|s| (s.protocol, s.median.saturating_sub(fastest.median)))
            .filter(|(_, gap)| *gap > noise)
            .collect();
        slower.sort_by_key(|(_, gap)| std::cmp::Reverse(*gap));
        slower
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

impl Verdict {
    /// Whether the significance rule weighed anything here (some connection state had two
    /// protocols to compare), so the page should say it; not for "Nothing to compare" or a
    /// single protocol.
    pub fn rule_applies(&self) -> bool {
        !self.comparisons.is_empty()
    }
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
    // The protocols this server does not offer, in the words of a short answer.
    let not_offered: Vec<&str> = result
        .runs
        .iter()
        .filter(|r| r.not_offered.is_some())
        .map(|r| r.protocol.http_version())
        .collect();
    if good.is_empty() {
        return nothing_succeeded(&chains)
            .map(|(kind, summary)| make(kind, summary, Vec::new()))
            .unwrap_or_else(|| {
                let summary = if not_offered.is_empty() {
                    "Nothing was measured.".to_owned()
                } else {
                    format!(
                        "Nothing was measured: this server does not offer {}.",
                        list(&not_offered)
                    )
                };
                make(VerdictKind::Failed, summary, Vec::new())
            });
    }
    let where_time_goes = where_time_goes(&good);
    let lookups = format!("{}{}", lookups(&good), address_waits(&good));
    let protocols = protocols_of(&good);
    if protocols.len() < 2 {
        let who = protocols[0].http_version();
        let opening = if !not_offered.is_empty() {
            format!(
                "Only {who} was measured: this server does not offer {}.",
                list(&not_offered)
            )
        } else if result.options.protocols.len() > 1 {
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
    let comparisons: Vec<StateComparison> = samples(&good)
        .into_iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(state, samples)| compare(state, samples))
        .collect();
    let too_few = too_few(&comparisons, result.options.mode);
    if comparisons.iter().all(|c| !c.enough()) {
        return make(
            VerdictKind::NotComparable,
            format!("{too_few} {where_time_goes}{lookups}"),
            comparisons,
        );
    }
    let rtt = round_trip(&good);
    let calls: Vec<String> = comparisons
        .iter()
        .filter(|c| c.differs())
        .map(|c| call(c, rtt))
        .collect();
    let quiet: Vec<&str> = comparisons
        .iter()
        .filter(|c| c.enough() && !c.differs())
        .map(|c| c.state.phrase())
        .collect();
    let (kind, mut summary) = if calls.is_empty() {
        let names = list(
            &protocols
                .iter()
                .map(|p| p.http_version())
                .collect::<Vec<_>>(),
        );
        (
            VerdictKind::NoDifference,
            format!(
                "No meaningful difference between {names} on {}.",
                list(&quiet)
            ),
        )
    } else {
        let mut summary = calls.join(" ");
        if !quiet.is_empty() {
            summary.push_str(&format!(
                " On {} the protocols are within noise.",
                list(&quiet)
            ));
        }
        (VerdictKind::Faster, summary)
    };
    for slight in comparisons.iter().filter_map(slight) {
        summary.push(' ');
        summary.push_str(&slight);
    }
    if !too_few.is_empty() {
        summary.push(' ');
        summary.push_str(&too_few);
    }
    if kind == VerdictKind::NoDifference {
        summary.push(' ');
        summary.push_str(&where_time_goes);
    }
    summary.push_str(&lookups);
    make(kind, summary, comparisons)
}

/// What could not be told for want of samples, e.g. "Too few new
/// connections to tell the protocols apart (1 per protocol; a difference
/// needs 4): measure more rounds."; empty when every state had enough. The
/// advice is one that can help under the probe's connection `mode`: under
/// `--resumed` one session spans the rounds, so more rounds never add a
/// full handshake.
fn too_few(comparisons: &[StateComparison], mode: ConnectionMode) -> String {
    let short: Vec<&StateComparison> = comparisons.iter().filter(|c| !c.enough()).collect();
    if short.is_empty() {
        return String::new();
    }
    let what: Vec<String> = short
        .iter()
        .map(|c| {
            let noun = match c.state {
                ConnState::New => "new connections",
                ConnState::Resumed => "resumed connections",
                ConnState::Reused => "requests on a reused connection",
            };
            format!("{noun} ({} per protocol)", c.fewest())
        })
        .collect();
    let short_of = |state| short.iter().any(|c| c.state == state);
    let new_short = short_of(ConnState::New);
    let more = match mode {
        ConnectionMode::Resumed if new_short => {
            "--resumed keeps one TLS session across rounds, so more rounds add no full handshake; \
             compare new connections with --cold"
        }
        ConnectionMode::Warm if !short_of(ConnState::Reused) => "measure more rounds",
        _ => "measure more rounds or more attempts per round",
    };
    format!(
        "Too few {} to tell the protocols apart (a difference needs {MIN_SAMPLES} of each): {more}.",
        list(&what)
    )
}

/// The nonzero values of `part` over the `good` chains, sorted.
fn nonzero(good: &[&Chain], part: impl Fn(&Chain) -> Micros) -> Vec<Micros> {
    let mut values: Vec<Micros> = good.iter().map(|c| part(c)).filter(|d| d.0 > 0).collect();
    values.sort_unstable();
    values
}

/// " Name lookups took a median 12.3 ms, the same for every protocol, and are
/// left out of the comparison.", when they took any time worth saying.
fn lookups(good: &[&Chain]) -> String {
    let values = nonzero(good, |c| c.lookup());
    if values.is_empty() || percentile(&values, 50) <= NOISE_FLOOR {
        return String::new();
    }
    format!(
        " Name lookups (median {}) are the same work for every protocol and left out of the comparison.",
        ms(percentile(&values, 50))
    )
}

/// " 4 of HTTP/3's new connections waited a median 250 ms on the name's
/// other addresses before one answered: the client's address order, not the
/// protocol, so it is left out of the comparison.", when any did.
fn address_waits(good: &[&Chain]) -> String {
    let values = nonzero(good, |c| c.address_wait());
    if values.is_empty() {
        return String::new();
    }
    format!(
        " {} of HTTP/3's new connections waited a median {} on the name's other addresses before \
         one answered: the client's address order, not the protocol, so it is left out of the \
         comparison.",
        values.len(),
        ms(percentile(&values, 50))
    )
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
                    let totals: Vec<Micros> = good
                        .iter()
                        .filter(|c| c.protocol == protocol && c.state() == state)
                        .map(|c| compared_total(c))
                        .collect();
                    ProtocolSample::of(protocol, totals)
                })
                .collect();
            (!samples.is_empty()).then_some((state, samples))
        })
        .collect()
}

/// What a chain's total is compared by: its total less its name lookups
/// and its QUIC handshakes' waits on other addresses (the client's address
/// order, said by the path's own findings), which are the same or no work of
/// the protocol's.
pub fn compared_total(chain: &Chain) -> Micros {
    chain
        .total()
        .saturating_sub(chain.lookup())
        .saturating_sub(chain.address_wait())
}

/// Applies the significance rule to samples of one connection state (fastest median first in the result).
pub fn compare(state: ConnState, samples: Vec<ProtocolSample>) -> StateComparison {
    weigh(state, samples, None)
}

/// Like [`compare`], for a part of the request (a phase, the time to first byte) whose `whole`
/// (the totals in the same state) was compared: a difference is called only where it also
/// clears the whole's bar, its noise and the floor of its faster median. A difference the
/// request as a whole cannot show (0.8 ms of `send` in a 20 ms request whose totals vary by
/// more) is no reason to pick a protocol.
pub fn compare_part(
    state: ConnState,
    samples: Vec<ProtocolSample>,
    whole: &StateComparison,
) -> StateComparison {
    weigh(state, samples, Some(whole))
}

fn weigh(
    state: ConnState,
    mut samples: Vec<ProtocolSample>,
    whole: Option<&StateComparison>,
) -> StateComparison {
    samples.sort_by_key(|s| s.median);
    let own = samples
        .iter()
        .filter_map(ProtocolSample::spread)
        .max()
        .map(|s| Micros(s.0 * NOISE_FACTOR));
    let noise = own.max(whole.and_then(|w| w.noise));
    let fastest = samples[0].median;
    let floor_of = whole
        .and_then(|w| w.samples.first())
        .map_or(fastest, |s| s.median.max(fastest));
    let fewest = samples.iter().map(|s| s.count).min().unwrap_or(0);
    let beaten =
        |s: &ProtocolSample| significant(s.median.saturating_sub(fastest), floor_of, noise, fewest);
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

/// Whether `gap` (a slower median less the `faster` one) is called under
/// [`SIGNIFICANCE_RULE`]: the side with the `fewest` samples has at least
/// [`MIN_SAMPLES`], and the gap is over the `noise` (nothing is called without
/// one) and over [`floor`] plus half the noise. The half noise (the spread, for
/// the verdict's noise of twice the spread) keeps a real difference that sits
/// at the floor from being called in some runs and not in others: measured
/// against Caddy, HTTP/3's new connections were 0.9 to 1.1 ms slower of 22 ms
/// in every probe, at the 1.1 ms floor, and 2 of 32 probes called it.
pub fn significant(gap: Micros, faster: Micros, noise: Option<Micros>, fewest: usize) -> bool {
    fewest >= MIN_SAMPLES
        && noise.is_some_and(|noise| gap > noise && gap.0 > floor(faster).0 + noise.0 / 2)
}

/// What `after` saves against `before` (each a sample of one kind of attempt: full handshakes
/// against resumed ones, new connections against reused ones), when the saving is called under
/// [`SIGNIFICANCE_RULE`]: [`MIN_SAMPLES`] a side, over the floor of `after`'s median and over
/// [`NOISE_FACTOR`] times the larger spread. One slow first handshake is never a saving.
pub fn saving(before: &ProtocolSample, after: &ProtocolSample) -> Option<Micros> {
    let gap = before.median.saturating_sub(after.median);
    let noise = before
        .spread()
        .max(after.spread())
        .map(|spread| Micros(spread.0 * NOISE_FACTOR));
    let fewest = before.count.min(after.count);
    significant(gap, after.median, noise, fewest).then_some(gap)
}

/// The smallest difference from a `faster` median that can be called:
/// [`NOISE_FLOOR`] or [`RELATIVE_FLOOR_PERCENT`] of it, whichever is more.
pub fn floor(faster: Micros) -> Micros {
    NOISE_FLOOR.max(Micros(faster.0 * RELATIVE_FLOOR_PERCENT / 100))
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
    let noise = c
        .noise
        .map(|n| format!("; the noise here is {}", ms(n)))
        .unwrap_or_default();
    format!(
        "{} {verb} faster on {} by {}{trips} than {} (medians of {} or more attempts each{noise}).",
        list(&leaders),
        c.state.phrase(),
        ms(margin),
        list(&others),
        c.fewest()
    )
}

/// A difference beyond the noise but not called (see
/// [`StateComparison::slight`]) as a sentence, e.g. "HTTP/3 is about 1.0 ms
/// slower on a new connection than HTTP/2, inside the 1.1 ms floor plus the
/// spread that a difference must clear: too little to pick a protocol by."
/// It keeps the answer the same when a real difference sits at the floor.
fn slight(c: &StateComparison) -> Option<String> {
    let slower = c.slight();
    let &(_, most) = slower.first()?;
    let fastest = c.samples.first()?;
    let names: Vec<&str> = slower.iter().map(|(p, _)| p.http_version()).collect();
    let verb = if names.len() > 1 {
        "are up to"
    } else {
        "is about"
    };
    Some(format!(
        "{} {verb} {} slower on {} than {}, inside the {} floor plus the spread that a \
         difference must clear: too little to pick a protocol by.",
        list(&names),
        ms(most),
        c.state.phrase(),
        fastest.protocol.http_version(),
        ms(floor(fastest.median))
    ))
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
    let over = whose(good);
    if total.0 == 0 || took.0 * 2 < total.0 {
        return format!("Over {over}, the median request takes {}.", ms(total));
    }
    format!(
        "Over {over}, {} of the {} median is {what}.",
        ms(*took),
        ms(total)
    )
}

/// Whose requests a figure over `good` is taken from, e.g. "HTTP/2 on new connections" or
/// "HTTP/1.1, HTTP/2 and HTTP/3 on new and reused connections together".
fn whose(good: &[&Chain]) -> String {
    let protocols: Vec<&str> = protocols_of(good)
        .iter()
        .map(|p| p.http_version())
        .collect();
    let states: Vec<&str> = ConnState::ALL
        .into_iter()
        .filter(|s| good.iter().any(|c| c.state() == *s))
        .map(|s| match s {
            ConnState::New => "new",
            ConnState::Resumed => "resumed",
            ConnState::Reused => "reused",
        })
        .collect();
    let together = if protocols.len() > 1 || states.len() > 1 {
        " together"
    } else {
        ""
    };
    format!(
        "{} on {} connections{together}",
        list(&protocols),
        list(&states)
    )
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
    use crate::schema::{FailureKind, NotOffered, ProtocolRun};

    /// Rounds of a warm run: per round a new connection with `handshake` µs of
    /// TLS (1 ms DNS, 5 ms connect) waiting `waits[0]`, then a reused attempt per later wait.
    fn rounds(protocol: Protocol, handshakes: &[u64], waits: &[u64]) -> ProtocolRun {
        let per_round = waits.len() as u32;
        let mut attempts = Vec::new();
        for (round, handshake) in handshakes.iter().enumerate() {
            let first = round as u32 * per_round + 1;
            attempts.push(fresh(first, 1_000, 5_000, *handshake, waits[0]));
            for (i, w) in waits.iter().enumerate().skip(1) {
                attempts.push(reused(first + i as u32, *w + round as u64 * 10));
            }
        }
        run(protocol, attempts)
    }

    /// An HTTP/3 new connection: 1 ms DNS, a `quic` µs handshake, then `wait`.
    fn quic(n: u32, quic: u64, wait: u64) -> crate::schema::Attempt {
        attempt(
            n,
            &[
                (Phase::Dns, 1_000),
                (Phase::Quic, quic),
                (Phase::Send, 50),
                (Phase::Wait, wait),
                (Phase::Receive, 500),
            ],
            false,
        )
    }

    #[test]
    fn equal_protocols_behind_a_slow_server_make_no_difference() {
        let r = result(vec![
            rounds(
                Protocol::H1,
                &[10_000, 10_100, 10_200, 10_050],
                &[80_000, 80_200],
            ),
            rounds(
                Protocol::H2,
                &[10_100, 10_000, 10_150, 10_000],
                &[80_300, 80_100],
            ),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
        assert!(
            v.summary.starts_with(
                "No meaningful difference between HTTP/1.1 and HTTP/2 on a new connection and a reused connection."
            ),
            "{}",
            v.summary
        );
        assert!(
            v.summary.contains(
                "Over HTTP/1.1 and HTTP/2 on new and reused connections together, 80.1 ms of the \
                 80.8 ms median is the server's wait for the first byte."
            ),
            "the figures say whose they are: {}",
            v.summary
        );
        assert!(v.rule_applies());
        assert_eq!(v.comparisons.len(), 2);
        let reused = &v.comparisons[1];
        assert_eq!(reused.state, ConnState::Reused);
        assert!(reused.enough() && !reused.differs() && reused.leaders.len() == 2);
    }

    #[test]
    fn a_round_trip_less_on_new_connections_is_named_with_its_spread() {
        // h3: no TCP connect (5 ms round trip) but a QUIC handshake as long as TLS alone.
        let mut h3 = Vec::new();
        for round in 0..4u32 {
            h3.push(quic(round * 2 + 1, 10_000 + u64::from(round) * 100, 20_000));
            h3.push(reused(round * 2 + 2, 20_000 + u64::from(round) * 100));
        }
        let r = result(vec![
            rounds(
                Protocol::H1,
                &[10_000, 10_200, 10_100, 10_300],
                &[20_000, 20_100],
            ),
            rounds(
                Protocol::H2,
                &[10_000, 10_100, 10_300, 10_200],
                &[20_050, 20_150],
            ),
            run(Protocol::H3, h3),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::Faster, "{}", v.summary);
        assert_eq!(
            v.summary,
            "HTTP/3 is faster on a new connection by 5.00 ms (about 1 round trip) than HTTP/1.1 and \
             HTTP/2 (medians of 4 or more attempts each; the noise here is 0.40 ms). On a reused \
             connection the protocols are within noise. Name lookups (median 1.00 ms) are the same \
             work for every protocol and left out of the comparison."
        );
        let new = &v.comparisons[0];
        assert_eq!(new.leaders, vec![Protocol::H3]);
        assert!(new.leads(Protocol::H3) && !new.leads(Protocol::H1));
        // Twice the spread without each protocol's slowest: 0.2 ms.
        assert_eq!(new.noise, Some(Micros(400)));
    }

    #[test]
    fn a_difference_inside_the_spread_or_the_floor_is_not_called() {
        // Reused medians differ by 3 ms, but one protocol's attempts spread over 5 ms.
        let wide = result(vec![
            rounds(Protocol::H1, &[1_000; 4], &[10_000, 12_000]),
            rounds(Protocol::H2, &[1_000; 4], &[10_000, 9_000]),
        ]);
        assert_eq!(verdict(&wide).kind, VerdictKind::Faster);
        // One slow outlier does not hide the difference; two wide ones do.
        let mut outlier = wide.clone();
        outlier.runs[0].attempts[1].phases.total.end_us = Micros(17_500);
        assert_eq!(verdict(&outlier).kind, VerdictKind::Faster);
        let mut spread = outlier.clone();
        spread.runs[0].attempts[3].phases.total.end_us = Micros(15_000);
        assert_eq!(verdict(&spread).kind, VerdictKind::NoDifference);
        // Tight spreads, but 0.4 ms apart: under the floor.
        let close = result(vec![
            rounds(Protocol::H1, &[1_000; 4], &[1_000, 1_400]),
            rounds(Protocol::H2, &[1_000; 4], &[1_000, 1_000]),
        ]);
        let v = verdict(&close);
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
    }

    #[test]
    fn a_difference_of_a_few_percent_is_not_called_however_tight() {
        // 22 ms against 22.8 ms: over 0.5 ms and tight, but under 5% of 22 ms.
        let close = result(vec![
            rounds(Protocol::H1, &[1_000; 4], &[22_000, 22_000]),
            rounds(Protocol::H2, &[1_000; 4], &[22_800, 22_800]),
        ]);
        let v = verdict(&close);
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
        // 1.5 ms of 22 is over 5%: called.
        let apart = result(vec![
            rounds(Protocol::H1, &[1_000; 4], &[22_000, 22_000]),
            rounds(Protocol::H2, &[1_000; 4], &[23_500, 23_500]),
        ]);
        assert_eq!(verdict(&apart).kind, VerdictKind::Faster);
        assert_eq!(floor(Micros(22_000)), Micros(1_100));
        assert_eq!(floor(Micros(4_000)), NOISE_FLOOR);
    }

    #[test]
    fn a_difference_at_the_floor_gets_the_same_answer_each_run() {
        // HTTP/3's new connections about 1 ms slower of 22 ms, as Caddy's
        // were: the floor is 1.1 ms and the spread 0.3 ms. Whether a run's
        // gap lands under the floor or just over it, the answer is the same.
        let sample = |protocol, offset: u64| {
            let totals = [22_000, 22_100, 22_200, 22_300, 22_900];
            ProtocolSample::of(protocol, totals.map(|t| Micros(t + offset)).to_vec()).unwrap()
        };
        for gap in [900, 1_000, 1_100, 1_200, 1_300] {
            let c = compare(
                ConnState::New,
                vec![sample(Protocol::H2, 0), sample(Protocol::H3, gap)],
            );
            assert!(!c.differs(), "{gap}: {c:?}");
            assert_eq!(c.slight(), vec![(Protocol::H3, Micros(gap))]);
            let said = slight(&c).unwrap();
            assert!(
                said.starts_with("HTTP/3 is about ")
                    && said.contains(
                        " slower on a new connection than HTTP/2, inside the 1.11 ms floor"
                    ),
                "{said}"
            );
        }
        // Clear of the floor plus the spread: called.
        let c = compare(
            ConnState::New,
            vec![sample(Protocol::H2, 0), sample(Protocol::H3, 1_500)],
        );
        assert_eq!(c.margin, Some(Micros(1_500)));
        assert!(c.slight().is_empty());
        // Inside the noise: neither called nor slight.
        let c = compare(
            ConnState::New,
            vec![sample(Protocol::H2, 0), sample(Protocol::H3, 500)],
        );
        assert!(!c.differs() && c.slight().is_empty());
    }

    #[test]
    fn a_slight_difference_is_said_beside_no_meaningful_difference() {
        // Reused attempts 1.0 ms apart of 22 ms with a 40 µs noise.
        let v = verdict(&result(vec![
            rounds(Protocol::H1, &[1_000; 4], &[22_000, 22_000]),
            rounds(Protocol::H2, &[1_000; 4], &[22_000, 23_000]),
        ]));
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
        assert!(
            v.summary
                .contains("HTTP/2 is about 1.00 ms slower on a reused connection than HTTP/1.1"),
            "{}",
            v.summary
        );
    }

    #[test]
    fn one_new_connection_per_protocol_calls_nothing_about_new_connections() {
        // The first h1 connection 5 ms slower, once: one sample has no spread.
        let r = result(vec![
            rounds(
                Protocol::H1,
                &[15_000],
                &[1_000, 1_000, 1_010, 1_020, 1_030],
            ),
            rounds(
                Protocol::H2,
                &[10_000],
                &[3_000, 3_010, 3_020, 3_000, 3_040],
            ),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::Faster, "{}", v.summary);
        assert!(
            v.summary
                .starts_with("HTTP/1.1 is faster on a reused connection by 2.00 ms"),
            "{}",
            v.summary
        );
        assert!(
            v.summary.contains(
                "Too few new connections (1 per protocol) to tell the protocols apart (a difference \
                 needs 4 of each): measure more rounds."
            ),
            "{}",
            v.summary
        );
        assert!(!v.comparisons[0].differs() && !v.comparisons[0].enough());

        // Under --resumed one session spans the rounds: more rounds add no full handshake.
        let mut resumed = r.clone();
        resumed.options.mode = ConnectionMode::Resumed;
        let v = verdict(&resumed);
        assert!(
            v.summary.contains(
                "(a difference needs 4 of each): --resumed keeps one TLS session across rounds, so \
                 more rounds add no full handshake; compare new connections with --cold."
            ) && !v.summary.contains("measure more rounds"),
            "{}",
            v.summary
        );
    }

    #[test]
    fn three_of_a_kind_are_too_few_and_four_are_enough() {
        let three = result(vec![
            rounds(Protocol::H1, &[20_000; 3], &[1_000]),
            rounds(Protocol::H2, &[10_000; 3], &[1_000]),
        ]);
        let v = verdict(&three);
        assert_eq!(v.kind, VerdictKind::NotComparable, "{}", v.summary);
        assert!(
            v.summary
                .starts_with("Too few new connections (3 per protocol)"),
            "{}",
            v.summary
        );
        let four = result(vec![
            rounds(Protocol::H1, &[20_000; 4], &[1_000]),
            rounds(Protocol::H2, &[10_000; 4], &[1_000]),
        ]);
        let v = verdict(&four);
        assert_eq!(v.kind, VerdictKind::Faster, "{}", v.summary);
    }

    #[test]
    fn the_name_lookup_does_not_decide_a_protocol_verdict() {
        // HTTP/1.1's lookups 30 ms slower (a cold cache), everything else equal.
        let mut h1 = rounds(Protocol::H1, &[10_000; 4], &[1_000, 1_000]);
        for a in h1.attempts.iter_mut().filter(|a| a.phases.dns.is_some()) {
            let dns = a.phases.dns.as_mut().unwrap();
            dns.end_us = Micros(dns.end_us.0 + 30_000);
            a.phases.total.end_us = Micros(a.phases.total.end_us.0 + 30_000);
        }
        let r = result(vec![
            h1,
            rounds(Protocol::H2, &[10_000; 4], &[1_000, 1_000]),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::NoDifference, "{}", v.summary);
        assert!(
            v.summary.ends_with(
                "Name lookups (median 1.00 ms) are the same work for every protocol and left out of the comparison."
            ),
            "{}",
            v.summary
        );
    }

    #[test]
    fn a_wait_on_a_names_other_addresses_does_not_move_the_verdict() {
        // HTTP/3's new connections waited 250 ms on a silent [::1] first.
        let h3 = |address_wait: u64| {
            let attempts = (1..=4)
                .map(|n| {
                    let mut a = quic(n, 12_000, 1_000);
                    if address_wait > 0 {
                        a.phases.total.end_us = Micros(a.phases.total.end_us.0 + address_wait);
                        a.quic = Some(crate::schema::QuicInfo {
                            address_wait_us: Some(Micros(address_wait)),
                            ..Default::default()
                        });
                    }
                    a
                })
                .collect();
            run(Protocol::H3, attempts)
        };
        let h2 = || rounds(Protocol::H2, &[10_000; 4], &[1_000]);
        let clean = verdict(&result(vec![h2(), h3(0)]));
        let waited = verdict(&result(vec![h2(), h3(250_000)]));
        assert_eq!(waited.kind, clean.kind, "{}", waited.summary);
        assert!(
            waited.summary.starts_with(&clean.summary),
            "{}",
            waited.summary
        );
        assert!(
            waited.summary.ends_with(
                "4 of HTTP/3's new connections waited a median 250 ms on the name's other addresses \
                 before one answered: the client's address order, not the protocol, so it is left \
                 out of the comparison."
            ),
            "{}",
            waited.summary
        );
    }

    #[test]
    fn single_attempts_call_nothing() {
        let r = result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 1_000, 9_000, 10_000)]),
            run(Protocol::H2, vec![fresh(1, 0, 1_000, 1_000, 10_000)]),
        ]);
        let v = verdict(&r);
        assert_eq!(v.kind, VerdictKind::NotComparable);
        assert!(
            v.summary
                .starts_with("Too few new connections (1 per protocol)"),
            "{}",
            v.summary
        );
    }

    #[test]
    fn a_protocol_the_server_does_not_offer_is_named() {
        let mut h2 = run(Protocol::H2, Vec::new());
        h2.not_offered = Some(NotOffered {
            offered: vec!["h2".into(), "http/1.1".into()],
            chosen: Some("http/1.1".into()),
            closed: false,
        });
        let v = verdict(&result(vec![
            rounds(Protocol::H1, &[1_000; 4], &[1_000, 1_000]),
            h2,
        ]));
        assert_eq!(v.kind, VerdictKind::NotComparable);
        assert!(
            v.summary
                .starts_with("Only HTTP/1.1 was measured: this server does not offer HTTP/2."),
            "{}",
            v.summary
        );
    }

    #[test]
    fn error_answers_name_no_winner() {
        let not_found = |p, wait| {
            let mut a = rounds(p, &[1_000], &[wait, wait, wait]);
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
        assert!(!v.rule_applies());
        let v = verdict(&result(vec![
            refused(Protocol::H1),
            rounds(Protocol::H2, &[1_000], &[1_000, 1_000]),
        ]));
        assert_eq!(v.kind, VerdictKind::NotComparable);
        assert!(v.summary.starts_with(
            "Only HTTP/2 answered successfully, so there is nothing to compare it with. \
             Over HTTP/2 on new and reused connections together, "
        ));
        assert!(!v.rule_applies(), "nothing was weighed by the rule");
        let v = verdict(&result(vec![run(
            Protocol::H2,
            vec![fresh(1, 0, 1_000, 1_000, 10_000)],
        )]));
        assert!(
            v.summary
                .ends_with("Over HTTP/2 on new connections, 10.0 ms of the 12.6 ms median is the server's wait for the first byte."),
            "{}",
            v.summary
        );
    }

    #[test]
    fn lists() {
        assert_eq!(list::<&str>(&[]), "");
        assert_eq!(list(&["a"]), "a");
        assert_eq!(list(&["a", "b", "c"]), "a, b and c");
    }
}
