//! Counting: latency histograms (HDR) and counters, sharded so workers rarely
//! share a lock, merged into a [`BenchRun`] at the end.

use h123_shared::Micros;
use h123_shared::bench::{
    BenchRun, HistogramBucket, LatencySummary, PercentilePoint, count_error, status_error,
};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Significant figures the histograms keep (0.1% resolution).
const SIGNIFICANT_FIGURES: u8 = 3;
/// Percentiles of the latency curve: 0, then 100·(1 − 10^(−k/4)) up to 99.999, then 100.
const CURVE_STEPS: u32 = 20;
/// Buckets of the latency histogram.
const BUCKETS: usize = 20;

/// What one shard has counted.
#[derive(Debug)]
pub struct Shard {
    latency: Histogram<u64>,
    ttfb: Histogram<u64>,
    successes: u64,
    errors: BTreeMap<String, u64>,
    statuses: Vec<(u16, u64)>,
    body_bytes: u64,
    first_send: Option<Instant>,
    last_send: Option<Instant>,
    last_done: Option<Instant>,
}

/// One finished request.
#[derive(Debug)]
pub struct Sample {
    /// When it was sent (or meant to be sent, at a fixed rate).
    pub start: Instant,
    /// When it actually left.
    pub sent: Instant,
    /// When it ended.
    pub done: Instant,
    /// How it ended.
    pub outcome: Outcome,
}

/// How a request ended.
#[derive(Debug)]
pub enum Outcome {
    /// A response arrived and was read.
    Response {
        /// Its status.
        status: u16,
        /// When its headers arrived.
        headers_at: Instant,
        /// Body bytes.
        body_bytes: u64,
    },
    /// It failed, of this kind (`timeout`, `reset`, ...).
    Failed(&'static str),
}

impl Shard {
    fn new() -> Self {
        let histogram = || {
            Histogram::new(SIGNIFICANT_FIGURES).unwrap_or_else(|_| unreachable!("3 is in 0..=5"))
        };
        Shard {
            latency: histogram(),
            ttfb: histogram(),
            successes: 0,
            errors: BTreeMap::new(),
            statuses: Vec::new(),
            body_bytes: 0,
            first_send: None,
            last_send: None,
            last_done: None,
        }
    }

    /// Counts `sample`; returns whether it was an error.
    pub fn record(&mut self, sample: &Sample) -> bool {
        self.first_send = Some(self.first_send.map_or(sample.sent, |t| t.min(sample.sent)));
        self.last_send = Some(self.last_send.map_or(sample.sent, |t| t.max(sample.sent)));
        self.last_done = Some(self.last_done.map_or(sample.done, |t| t.max(sample.done)));
        match sample.outcome {
            Outcome::Response {
                status,
                headers_at,
                body_bytes,
            } => {
                record(&mut self.latency, micros(sample.done - sample.start));
                record(&mut self.ttfb, micros(headers_at - sample.start));
                self.body_bytes += body_bytes;
                match self.statuses.iter_mut().find(|(s, _)| *s == status) {
                    Some((_, n)) => *n += 1,
                    None => self.statuses.push((status, 1)),
                }
                match status_error(status) {
                    Some(kind) => {
                        count_error(&mut self.errors, &kind, 1);
                        true
                    }
                    None => {
                        self.successes += 1;
                        false
                    }
                }
            }
            Outcome::Failed(kind) => {
                count_error(&mut self.errors, kind, 1);
                true
            }
        }
    }
}

/// Records `value`, growing the histogram as needed (its initial range is small).
fn record(h: &mut Histogram<u64>, value: u64) {
    if h.record(value).is_err() {
        h.saturating_record(value);
    }
}

fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

/// The shards of one protocol's run.
#[derive(Debug)]
pub struct Tally {
    shards: Vec<Mutex<Shard>>,
}

impl Tally {
    /// A tally with `shards` shards (at least one).
    pub fn new(shards: usize) -> Self {
        Tally {
            shards: (0..shards.max(1))
                .map(|_| Mutex::new(Shard::new()))
                .collect(),
        }
    }

    /// The shard worker `worker` writes to.
    pub fn shard(&self, worker: usize) -> MutexGuard<'_, Shard> {
        self.shards[worker % self.shards.len()]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Merges the shards into `run`; `measure_start` opens the measured window.
    pub fn finish(self, run: &mut BenchRun, measure_start: Instant) {
        let mut all = Shard::new();
        for shard in self.shards {
            let shard = shard.into_inner().unwrap_or_else(|p| p.into_inner());
            let _ = all.latency.add(&shard.latency);
            let _ = all.ttfb.add(&shard.ttfb);
            all.successes += shard.successes;
            for (kind, n) in shard.errors {
                count_error(&mut all.errors, &kind, n);
            }
            for (status, n) in shard.statuses {
                *run.statuses.entry(status).or_default() += n;
            }
            all.body_bytes += shard.body_bytes;
            all.first_send = earliest(all.first_send, shard.first_send);
            all.last_send = all.last_send.max(shard.last_send);
            all.last_done = all.last_done.max(shard.last_done);
        }
        run.successes = all.successes;
        run.errors = all.errors.values().sum();
        run.requests = run.successes + run.errors;
        run.errors_by_kind = all.errors;
        run.body_bytes = all.body_bytes;
        if let Some(done) = all.last_done {
            run.elapsed_us = Micros(micros(done.saturating_duration_since(measure_start)));
        }
        if let (Some(first), Some(last)) = (all.first_send, all.last_send)
            && run.requests > 1
            && last > first
        {
            run.send_rate = (run.requests - 1) as f64 / (last - first).as_secs_f64();
        }
        run.latency = summary(&all.latency);
        run.ttfb = summary(&all.ttfb);
        run.latency_percentiles = curve(&all.latency);
        run.latency_histogram = buckets(&all.latency);
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn summary(h: &Histogram<u64>) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let at = |q: f64| Micros(h.value_at_quantile(q));
    LatencySummary {
        count: h.len(),
        min: Micros(h.min()),
        mean: Micros(h.mean().round() as u64),
        stdev: Micros(h.stdev().round() as u64),
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        p999: at(0.999),
        max: Micros(h.max()),
    }
}

fn curve(h: &Histogram<u64>) -> Vec<PercentilePoint> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut points: Vec<PercentilePoint> = (0..CURVE_STEPS)
        .map(|k| {
            let q = 1.0 - 10f64.powf(-(k as f64) / 4.0);
            PercentilePoint {
                percentile: q * 100.0,
                value: Micros(h.value_at_quantile(q)),
            }
        })
        .collect();
    points.push(PercentilePoint {
        percentile: 100.0,
        value: Micros(h.max()),
    });
    points
}

fn buckets(h: &Histogram<u64>) -> Vec<HistogramBucket> {
    if h.is_empty() {
        return Vec::new();
    }
    let (lo, hi) = (h.min().max(1) as f64, h.max().max(1) as f64);
    let step = (hi / lo).powf(1.0 / BUCKETS as f64);
    let mut out: Vec<HistogramBucket> = (1..=BUCKETS)
        .map(|i| HistogramBucket {
            upper: Micros(if i == BUCKETS {
                h.max()
            } else {
                (lo * step.powi(i as i32)).round() as u64
            }),
            count: 0,
        })
        .collect();
    out.dedup_by_key(|b| b.upper);
    for value in h.iter_recorded() {
        let v = h.highest_equivalent(value.value_iterated_to()).min(h.max());
        let i = out.partition_point(|b| b.upper.0 < v).min(out.len() - 1);
        out[i].count += value.count_at_value();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::Protocol;

    fn sample(base: Instant, start_ms: u64, took_ms: u64, status: u16) -> Sample {
        let start = base + Duration::from_millis(start_ms);
        Sample {
            start,
            sent: start,
            done: start + Duration::from_millis(took_ms),
            outcome: Outcome::Response {
                status,
                headers_at: start + Duration::from_millis(took_ms / 2),
                body_bytes: 10,
            },
        }
    }

    #[test]
    fn shards_merge_into_counts_percentiles_and_rates() {
        let base = crate::probe::trace::now();
        let tally = Tally::new(4);
        for i in 0..100u64 {
            let status = if i % 10 == 0 { 500 } else { 200 };
            tally
                .shard(i as usize)
                .record(&sample(base, i * 10, i + 1, status));
        }
        tally.shard(0).record(&Sample {
            start: base,
            sent: base,
            done: base + Duration::from_millis(1),
            outcome: Outcome::Failed("reset"),
        });
        let mut run = BenchRun::new(Protocol::H1);
        tally.finish(&mut run, base);
        assert_eq!(run.requests, 101);
        assert_eq!(run.successes, 90);
        assert_eq!(run.errors, 11);
        assert_eq!(run.errors_by_kind["status 500"], 10);
        assert_eq!(run.errors_by_kind["reset"], 1);
        assert_eq!(run.statuses[&200], 90);
        assert_eq!(run.body_bytes, 1000);
        assert_eq!(run.latency.count, 100, "failures have no latency");
        assert_eq!(run.latency.min, Micros(1000));
        assert!(
            (50_000..=51_100).contains(&run.latency.p50.0),
            "{:?}",
            run.latency
        );
        assert_eq!(run.latency.max.0 / 1000, 100);
        // 101 sends over 990 ms.
        assert!((run.send_rate - 101.0).abs() < 0.5, "{}", run.send_rate);
        assert_eq!(run.elapsed_us.0 / 1000, 1090);
        let counted: u64 = run.latency_histogram.iter().map(|b| b.count).sum();
        assert_eq!(counted, 100, "{:?}", run.latency_histogram);
        let curve = &run.latency_percentiles;
        assert_eq!(curve.first().unwrap().percentile, 0.0);
        assert_eq!(curve.last().unwrap().percentile, 100.0);
        assert!(curve.windows(2).all(|w| w[0].value <= w[1].value));
    }
}
