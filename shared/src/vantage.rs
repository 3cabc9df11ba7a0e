//! Vantage points: the places one probe is measured from (the server itself,
//! and `h123 agent`s elsewhere), and what comparing them shows.
//!
//! Each vantage's result is a whole [`ProbeResult`] with its own verdict. The
//! [`matrix`] puts them side by side (a row per vantage, a cell per protocol
//! and connection state, the faster protocol marked only where that vantage's
//! verdict calls a difference), and [`findings`] says where the answer to
//! "would HTTP/3 help" depends on the place, under the same significance rule.

use crate::chain::{Chain, ConnState, all_chains};
use crate::diagnosis::{Evidence, Finding, Severity};
use crate::format::ms;
use crate::json::ReadJson;
use crate::schema::{Micros, ProbeResult, Protocol};
use crate::stats::percentile;
use crate::verdict::{SIGNIFICANCE_RULE, StateComparison, verdict};
use serde::{Deserialize, Serialize};

/// The name of the server's own vantage unless it is configured otherwise.
pub const OWN_VANTAGE: &str = "server";

/// The longest vantage name accepted.
pub const MAX_NAME_LEN: usize = 32;

/// The connection states the matrix shows: what a first visit costs and what
/// a page's later requests cost.
pub const MATRIX_STATES: [ConnState; 2] = [ConnState::New, ConnState::Reused];

/// A place probes run from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Vantage {
    /// Short stable name, e.g. `server` or `fra1` (see [`valid_name`]).
    pub name: String,
    /// What people read, e.g. "Frankfurt, DE".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Tags to select vantages by, e.g. `eu`, `datacenter`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl Vantage {
    /// A vantage with only a name.
    pub fn named(name: impl Into<String>) -> Self {
        Vantage {
            name: name.into(),
            label: None,
            tags: Vec::new(),
        }
    }

    /// The label when there is one, else the name.
    pub fn shown(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }
}

/// Whether `name` can name a vantage: 1 to [`MAX_NAME_LEN`] ASCII letters,
/// digits, `-` and `_`, starting with a letter or digit (it appears in URLs,
/// file names and CLI lists).
pub fn valid_name(name: &str) -> bool {
    name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// One vantage's part of a probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VantageRun {
    /// Where it ran.
    pub vantage: Vantage,
    /// Its result: partial while it runs, absent when the vantage never ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ProbeResult>,
    /// Why there is no (complete) result, when there is none: the vantage
    /// was offline, or went away while it ran the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// One cell of the matrix: a protocol in a connection state at one vantage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MatrixCell {
    /// The protocol.
    pub protocol: Protocol,
    /// The connection state.
    pub state: ConnState,
    /// Successful attempts counted.
    pub count: usize,
    /// Median total of those attempts (whole redirect chains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Micros>,
    /// Median time to first byte of those attempts' last hops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb: Option<Micros>,
    /// Whether this protocol is faster here beyond the noise (this vantage's
    /// verdict calls a difference in this state and it leads).
    pub faster: bool,
}

/// One vantage's row of the matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MatrixRow {
    /// The vantage.
    pub vantage: Vantage,
    /// Why the row has no figures, when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Per protocol, per state of [`MATRIX_STATES`], in that order.
    pub cells: Vec<MatrixCell>,
}

/// Where a vantage's verdict comparisons come from: [`computed`] (the CLI, over
/// any result) or [`stored`] (the web UI, which never recomputes what the
/// record's analysis holds).
pub type Comparisons = fn(&ProbeResult) -> Vec<StateComparison>;

/// A result's verdict comparisons, computed.
pub fn computed(result: &ProbeResult) -> Vec<StateComparison> {
    verdict(result).comparisons
}

/// A result's verdict comparisons as its stored analysis holds them (the
/// server analyzes every vantage's finished result); none without one, so
/// nothing is marked or found for it.
pub fn stored(result: &ProbeResult) -> Vec<StateComparison> {
    result
        .analysis
        .as_ref()
        .map(|a| a.verdict.comparisons.clone())
        .unwrap_or_default()
}

/// The vantage x protocol matrix of a probe's runs, in their order. A row
/// without a result (or with nothing that succeeded) keeps its place and says why.
pub fn matrix(runs: &[VantageRun]) -> Vec<MatrixRow> {
    matrix_with(runs, computed)
}

/// [`matrix`], over the comparisons `comparisons` gives for each result.
pub fn matrix_with(runs: &[VantageRun], comparisons: Comparisons) -> Vec<MatrixRow> {
    runs.iter().map(|run| row(run, comparisons)).collect()
}

fn row(run: &VantageRun, comparisons: Comparisons) -> MatrixRow {
    let Some(result) = &run.result else {
        return MatrixRow {
            vantage: run.vantage.clone(),
            problem: Some(
                run.problem
                    .clone()
                    .unwrap_or_else(|| "no result from this vantage".into()),
            ),
            cells: Vec::new(),
        };
    };
    let comparisons = comparisons(result);
    let good: Vec<Chain> = all_chains(result).filter(Chain::succeeded).collect();
    let cells = result
        .runs
        .iter()
        .flat_map(|run| MATRIX_STATES.map(|state| (run.protocol, state)))
        .map(|(protocol, state)| cell(protocol, state, &good, &comparisons))
        .collect();
    let problem = run.problem.clone().or_else(|| {
        good.is_empty()
            .then(|| "nothing succeeded from this vantage".to_string())
    });
    MatrixRow {
        vantage: run.vantage.clone(),
        problem,
        cells,
    }
}

fn cell(
    protocol: Protocol,
    state: ConnState,
    good: &[Chain],
    comparisons: &[StateComparison],
) -> MatrixCell {
    let mine = || {
        good.iter()
            .filter(move |c| c.protocol == protocol && c.state() == state)
    };
    let median = |mut values: Vec<Micros>| {
        values.sort_unstable();
        (!values.is_empty()).then(|| percentile(&values, 50))
    };
    MatrixCell {
        protocol,
        state,
        count: mine().count(),
        total: median(mine().map(Chain::total).collect()),
        ttfb: median(mine().filter_map(Chain::ttfb).collect()),
        faster: comparisons
            .iter()
            .any(|c| c.state == state && c.leads(protocol)),
    }
}

/// What one vantage's verdict says in one state.
enum Call {
    /// These protocols lead by this margin.
    Leads(Vec<Protocol>, Micros),
    /// Compared, and within noise.
    Even,
}

/// The call of `comparisons` (one vantage's verdict) in `state`, when it
/// compared protocols there against a measured spread.
fn call_at(comparisons: &[StateComparison], state: ConnState) -> Option<Call> {
    let comparison = comparisons
        .iter()
        .find(|c| c.state == state)
        .filter(|c| c.enough())?;
    Some(match comparison.margin {
        Some(margin) => Call::Leads(comparison.leaders.clone(), margin),
        None => Call::Even,
    })
}

fn names(protocols: &[Protocol]) -> String {
    protocols
        .iter()
        .map(|p| p.http_version())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Where the faster protocol depends on the vantage: for each state of
/// [`MATRIX_STATES`], a vantage whose verdict calls a difference next to one
/// whose verdict does not (`vantage_dependent`), or two that call different
/// leaders (`vantage_disagrees`). Only verdicts with enough attempts to call
/// a difference count, so no difference inside the noise is called.
pub fn findings(runs: &[VantageRun]) -> Vec<Finding> {
    findings_with(runs, computed)
}

/// [`findings`], over the comparisons `comparisons` gives for each result.
pub fn findings_with(runs: &[VantageRun], comparisons: Comparisons) -> Vec<Finding> {
    let verdicts: Vec<(&Vantage, Vec<StateComparison>)> = runs
        .iter()
        .filter_map(|r| Some((&r.vantage, comparisons(r.result.as_ref()?))))
        .collect();
    let mut out = Vec::new();
    for state in MATRIX_STATES {
        let calls: Vec<(&Vantage, Call)> = verdicts
            .iter()
            .filter_map(|(v, comparisons)| Some((*v, call_at(comparisons, state)?)))
            .collect();
        let leading: Vec<(&Vantage, &Vec<Protocol>, Micros)> = calls
            .iter()
            .filter_map(|(v, c)| match c {
                Call::Leads(p, m) => Some((*v, p, *m)),
                Call::Even => None,
            })
            .collect();
        let even: Vec<&str> = calls
            .iter()
            .filter(|(_, c)| matches!(c, Call::Even))
            .map(|(v, _)| v.shown())
            .collect();
        let Some(&(first, leaders, margin)) = leading.first() else {
            continue;
        };
        if let Some(&(other, others, other_margin)) = leading.iter().find(|(_, p, _)| *p != leaders)
        {
            out.push(Finding {
                id: "vantage_disagrees".into(),
                severity: Severity::Info,
                title: format!(
                    "On {} {} is faster at {} but {} at {}",
                    state.phrase(),
                    names(leaders),
                    first.shown(),
                    names(others),
                    other.shown()
                ),
                evidence: Evidence {
                    protocol: leaders[0],
                    attempt: None,
                    phase: None,
                    duration: Some(margin),
                    detail: format!(
                        "By {} at {} and by {} at {}. {SIGNIFICANCE_RULE}",
                        ms(margin),
                        first.shown(),
                        ms(other_margin),
                        other.shown()
                    ),
                },
                next_step: "The better protocol depends on where users are: measure from \
                            vantages near your users (h123 agent) before switching."
                    .into(),
            });
        } else if !even.is_empty() {
            out.push(Finding {
                id: "vantage_dependent".into(),
                severity: Severity::Info,
                title: format!(
                    "{} saves {} on {} at {} but nothing beyond noise at {}",
                    names(leaders),
                    ms(margin),
                    state.phrase(),
                    first.shown(),
                    even.join(", ")
                ),
                evidence: Evidence {
                    protocol: leaders[0],
                    attempt: None,
                    phase: None,
                    duration: Some(margin),
                    detail: format!(
                        "Each vantage's own verdict, over its own attempts. {SIGNIFICANCE_RULE}"
                    ),
                },
                next_step: "The gain grows with distance from the origin: it matters for users \
                            far from it, less for those near it."
                    .into(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, result, reused, run};

    /// Four rounds per protocol, each a new connection (TLS `h2_tls` and
    /// `h3_tls` µs, no TCP connect for HTTP/3) followed by two reused
    /// requests, with waits around 5 ms.
    fn probed(name: &str, h2_tls: u64, h3_tls: u64) -> VantageRun {
        let attempts = |connect: u64, tls: u64| {
            (0..4u32)
                .flat_map(|i| {
                    let n = i * 3;
                    [
                        fresh(n + 1, 1_000, connect, tls, 5_000 + u64::from(i) * 100),
                        reused(n + 2, 5_000 + u64::from(i) * 150),
                        reused(n + 3, 5_050 + u64::from(i) * 100),
                    ]
                })
                .collect()
        };
        let mut result = result(vec![
            run(Protocol::H2, attempts(h2_tls / 2, h2_tls / 2)),
            run(Protocol::H3, attempts(0, h3_tls)),
        ]);
        result.options.rounds = 4;
        result.options.repeat = 3;
        assert!((1..=12).all(|n| result.options.opens_connection(n) == (n % 3 == 1)));
        VantageRun {
            vantage: Vantage::named(name),
            result: Some(result),
            problem: None,
        }
    }

    fn cell(row: &MatrixRow, protocol: Protocol, state: ConnState) -> &MatrixCell {
        row.cells
            .iter()
            .find(|c| c.protocol == protocol && c.state == state)
            .unwrap()
    }

    #[test]
    fn names_are_short_url_safe_words() {
        assert!(valid_name("fra1"));
        assert!(valid_name("us-east_2"));
        assert!(!valid_name(""));
        assert!(!valid_name("-x"));
        assert!(!valid_name("a b"));
        assert!(!valid_name("é"));
        assert!(!valid_name(&"a".repeat(MAX_NAME_LEN + 1)));
        assert!(valid_name(&"a".repeat(MAX_NAME_LEN)));
    }

    #[test]
    fn the_matrix_marks_the_faster_protocol_only_where_a_verdict_calls_it() {
        // Far from the origin HTTP/3 saves a 40 ms round trip; near it, 0.4 ms (inside the floor).
        let runs = [
            probed("far", 80_000, 40_000),
            probed("near", 2_000, 1_600),
            VantageRun {
                vantage: Vantage::named("gone"),
                result: None,
                problem: Some("the agent went offline".into()),
            },
        ];
        let rows = matrix(&runs);
        assert_eq!(rows.len(), 3);
        let far = &rows[0];
        assert_eq!(far.cells.len(), 4, "2 protocols x new, reused");
        let h3_new = cell(far, Protocol::H3, ConnState::New);
        assert!(h3_new.faster);
        assert_eq!(h3_new.count, 4);
        // 1 ms DNS + 40 ms QUIC + 50 µs send + 5.1 ms wait (median) + 0.5 ms receive.
        assert_eq!(h3_new.total, Some(Micros(46_650)));
        assert!(!cell(far, Protocol::H2, ConnState::New).faster);
        assert!(!cell(far, Protocol::H3, ConnState::Reused).faster);
        assert!(!cell(far, Protocol::H2, ConnState::Reused).faster);
        assert_eq!(
            cell(far, Protocol::H2, ConnState::Reused).ttfb,
            cell(&rows[1], Protocol::H2, ConnState::Reused).ttfb,
            "the same server wait from both places"
        );
        assert!(rows[1].cells.iter().all(|c| !c.faster));
        assert_eq!(rows[2].problem.as_deref(), Some("the agent went offline"));
        assert!(rows[2].cells.is_empty());
    }

    #[test]
    fn a_gain_at_one_vantage_and_none_at_another_is_one_finding() {
        let runs = [probed("far", 80_000, 40_000), probed("near", 2_000, 1_600)];
        let found = findings(&runs);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, "vantage_dependent");
        assert_eq!(
            found[0].title,
            "HTTP/3 saves 40.0 ms on a new connection at far but nothing beyond noise at near"
        );
        assert!(found[0].evidence.detail.contains(SIGNIFICANCE_RULE));
    }

    #[test]
    fn the_stored_analysis_gives_the_same_matrix_and_findings() {
        let mut runs = vec![
            probed("far", 80_000, 40_000),
            probed("near", 2_000, 1_600),
            probed("sfo1", 10_000, 40_000),
        ];
        let unanalyzed = matrix_with(&runs, stored);
        assert!(
            unanalyzed.iter().flat_map(|r| &r.cells).all(|c| !c.faster),
            "without an analysis nothing is marked"
        );
        assert!(findings_with(&runs, stored).is_empty());
        for run in &mut runs {
            run.result = run.result.take().map(crate::analysis::analyzed);
        }
        assert_eq!(matrix_with(&runs, stored), matrix(&runs));
        assert_eq!(findings_with(&runs, stored), findings(&runs));
        assert!(
            matrix(&runs)
                .iter()
                .flat_map(|r| &r.cells)
                .any(|c| c.faster)
        );
        assert!(!findings(&runs).is_empty());
    }

    #[test]
    fn opposite_leaders_are_named_and_even_places_say_nothing() {
        let runs = [
            probed("sfo1", 80_000, 40_000),
            probed("fra1", 10_000, 40_000),
        ];
        let found = findings(&runs);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, "vantage_disagrees");
        assert_eq!(
            found[0].title,
            "On a new connection HTTP/3 is faster at sfo1 but HTTP/2 at fra1"
        );
        let even = [probed("a", 2_000, 1_600), probed("b", 2_000, 2_000)];
        assert!(findings(&even).is_empty());
        assert!(
            findings(&runs[..1]).is_empty(),
            "one vantage compares with nothing"
        );
    }
}
