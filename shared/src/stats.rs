//! The metrics a comparison is taken over, and summary statistics of a sample.
//!
//! Percentiles use the **nearest-rank** method: the p-th percentile of `n`
//! sorted values is the value at 1-based rank `ceil(p / 100 * n)`. It is always
//! an observed value (never interpolated); the median is p50, which for an even
//! count is the lower of the two middle values.

use crate::json::ReadJson;
use crate::schema::{Attempt, Micros, Phase};
use serde::{Deserialize, Serialize};

/// What a statistic is taken over: a phase, time to first byte, or the total.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ReadJson,
)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// The dns phase.
    Dns,
    /// The connect phase.
    Connect,
    /// The proxy phase.
    Proxy,
    /// The tls phase.
    Tls,
    /// The quic phase.
    Quic,
    /// The send phase.
    Send,
    /// The wait phase.
    Wait,
    /// The receive phase.
    Receive,
    /// Time to first byte: from the attempt's start to the end of wait.
    Ttfb,
    /// The whole attempt.
    Total,
}

impl Metric {
    /// All metrics, phases first in timeline order, then `ttfb` and `total`.
    pub const ALL: [Metric; 10] = [
        Metric::Dns,
        Metric::Connect,
        Metric::Proxy,
        Metric::Tls,
        Metric::Quic,
        Metric::Send,
        Metric::Wait,
        Metric::Receive,
        Metric::Ttfb,
        Metric::Total,
    ];

    /// Lowercase name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self.phase() {
            Some(phase) => phase.as_str(),
            None if self == Metric::Ttfb => "ttfb",
            None => "total",
        }
    }

    /// The phase this metric is about, if it is one.
    pub fn phase(self) -> Option<Phase> {
        match self {
            Metric::Dns => Some(Phase::Dns),
            Metric::Connect => Some(Phase::Connect),
            Metric::Proxy => Some(Phase::Proxy),
            Metric::Tls => Some(Phase::Tls),
            Metric::Quic => Some(Phase::Quic),
            Metric::Send => Some(Phase::Send),
            Metric::Wait => Some(Phase::Wait),
            Metric::Receive => Some(Phase::Receive),
            Metric::Ttfb | Metric::Total => None,
        }
    }

    /// This metric's value for one attempt, if it applies (failures are not
    /// excluded here; [`run_stats`] does that).
    pub fn value(self, attempt: &Attempt) -> Option<Micros> {
        let phases = &attempt.phases;
        match self {
            Metric::Ttfb => phases
                .wait
                .map(|w| w.end_us.saturating_sub(phases.total.start_us)),
            Metric::Total => Some(phases.total.duration()),
            _ => self
                .phase()
                .and_then(|p| phases.get(p))
                .map(|s| s.duration()),
        }
    }
}

impl From<Phase> for Metric {
    fn from(phase: Phase) -> Self {
        match phase {
            Phase::Dns => Metric::Dns,
            Phase::Connect => Metric::Connect,
            Phase::Proxy => Metric::Proxy,
            Phase::Tls => Metric::Tls,
            Phase::Quic => Metric::Quic,
            Phase::Send => Metric::Send,
            Phase::Wait => Metric::Wait,
            Phase::Receive => Metric::Receive,
        }
    }
}

/// Summary of one metric's sample.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// Number of values (at least 1).
    pub count: usize,
    /// Smallest value.
    pub min: Micros,
    /// Nearest-rank 50th percentile.
    pub median: Micros,
    /// Nearest-rank 95th percentile.
    pub p95: Micros,
    /// Largest value.
    pub max: Micros,
    /// The largest value but one (the largest, when there is one value).
    #[serde(default)]
    pub next_to_max: Micros,
}

impl PhaseStats {
    /// The sample's spread (slowest less fastest), when it has two values or more: the noise a
    /// difference of medians must exceed.
    pub fn spread(&self) -> Option<Micros> {
        (self.count > 1).then(|| self.max.saturating_sub(self.min))
    }

    /// Statistics of a sample, or `None` when it is empty.
    pub fn from_values(mut values: Vec<Micros>) -> Option<PhaseStats> {
        values.sort_unstable();
        Some(PhaseStats {
            count: values.len(),
            min: *values.first()?,
            median: percentile(&values, 50),
            p95: percentile(&values, 95),
            max: *values.last()?,
            next_to_max: values[values.len().saturating_sub(2)],
        })
    }
}

/// The nearest-rank `p`-th percentile (`p` in 1..=100) of sorted values;
/// zero for an empty slice.
pub fn percentile(sorted: &[Micros], p: u32) -> Micros {
    if sorted.is_empty() {
        return Micros(0);
    }
    sorted[nearest_rank(sorted.len(), p) - 1]
}

/// The 1-based nearest rank of the `p`-th percentile (`p` in 1..=100) among
/// `n` sorted values (`n` at least 1): `ceil(p / 100 * n)`.
pub fn nearest_rank(n: usize, p: u32) -> usize {
    (p.clamp(1, 100) as usize * n)
        .div_ceil(100)
        .clamp(1, n.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(values: &[u64]) -> Vec<Micros> {
        values.iter().copied().map(Micros).collect()
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v = us(&[15, 20, 35, 40, 50]);
        assert_eq!(percentile(&v, 5), Micros(15));
        assert_eq!(percentile(&v, 30), Micros(20));
        assert_eq!(percentile(&v, 40), Micros(20));
        assert_eq!(percentile(&v, 50), Micros(35));
        assert_eq!(percentile(&v, 100), Micros(50));
        // Even count: the lower middle value.
        assert_eq!(percentile(&us(&[1, 2, 3, 4]), 50), Micros(2));
        // p95 of 20 values is rank 19; of 21 values, rank 20.
        let twenty: Vec<Micros> = (1..=20).map(Micros).collect();
        assert_eq!(percentile(&twenty, 95), Micros(19));
        let twenty_one: Vec<Micros> = (1..=21).map(Micros).collect();
        assert_eq!(percentile(&twenty_one, 95), Micros(20));
        assert_eq!(percentile(&[], 50), Micros(0));
    }

    #[test]
    fn stats_of_unsorted_values() {
        let s = PhaseStats::from_values(us(&[30, 10, 20])).unwrap();
        assert_eq!(
            s,
            PhaseStats {
                count: 3,
                min: Micros(10),
                median: Micros(20),
                p95: Micros(30),
                max: Micros(30),
                next_to_max: Micros(20),
            }
        );
        assert_eq!(PhaseStats::from_values(Vec::new()), None);
        let one = PhaseStats::from_values(us(&[7])).unwrap();
        assert_eq!(
            (one.min, one.median, one.p95, one.max),
            (Micros(7), Micros(7), Micros(7), Micros(7))
        );
    }
}
