//! When requests go: as fast as responses return (closed loop), or at a fixed
//! arrival rate (open loop), with the warm-up first and the stop condition last.

use super::plan::Stop;
use crate::probe::trace;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The permission to send one request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// At a fixed rate, when the request is meant to leave; latency is
    /// measured from here even if the sender is late (no coordinated omission).
    pub intended: Option<Instant>,
    /// Whether the request is measured (not part of the warm-up).
    pub counted: bool,
}

/// Hands out tickets to the workers of one protocol's run.
#[derive(Debug)]
pub struct Schedule {
    start: Instant,
    measure_start: Instant,
    stop: Stop,
    /// Seconds between intended sends, at a fixed rate.
    interval: Option<f64>,
    warmup_tickets: u64,
    issued: AtomicU64,
}

impl Schedule {
    /// A schedule starting at `start`: `warmup` first, then measuring until `stop`,
    /// at `rate` requests per second if given.
    pub fn new(start: Instant, warmup: Duration, stop: Stop, rate: Option<u32>) -> Self {
        let interval = rate.map(|r| 1.0 / f64::from(r.max(1)));
        Schedule {
            start,
            measure_start: start + warmup,
            stop,
            warmup_tickets: interval.map_or(0, |i| (warmup.as_secs_f64() / i).ceil() as u64),
            interval,
            issued: AtomicU64::new(0),
        }
    }

    /// When the measured window opens.
    pub fn measure_start(&self) -> Instant {
        self.measure_start
    }

    /// The next ticket, or `None` when the run is over.
    pub fn next(&self) -> Option<Ticket> {
        match self.interval {
            Some(interval) => self.next_at_rate(interval),
            None => self.next_as_fast_as_possible(),
        }
    }

    fn next_at_rate(&self, interval: f64) -> Option<Ticket> {
        let i = self.issued.fetch_add(1, Ordering::Relaxed);
        let at = self.start + Duration::from_secs_f64(i as f64 * interval);
        let over = match self.stop {
            Stop::After(d) => at >= self.measure_start + d,
            Stop::Count(n) => i >= self.warmup_tickets + n,
        };
        (!over).then_some(Ticket {
            intended: Some(at),
            counted: i >= self.warmup_tickets,
        })
    }

    fn next_as_fast_as_possible(&self) -> Option<Ticket> {
        let now = trace::now();
        if now < self.measure_start {
            return Some(Ticket {
                intended: None,
                counted: false,
            });
        }
        let over = match self.stop {
            Stop::After(d) => now >= self.measure_start + d,
            Stop::Count(n) => self.issued.fetch_add(1, Ordering::Relaxed) >= n,
        };
        (!over).then_some(Ticket {
            intended: None,
            counted: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_rate_spaces_tickets_and_skips_the_warm_up() {
        let start = trace::now();
        let s = Schedule::new(start, Duration::from_millis(100), Stop::Count(3), Some(20));
        let tickets: Vec<Ticket> = std::iter::from_fn(|| s.next()).collect();
        assert_eq!(
            tickets.len(),
            2 + 3,
            "100 ms of warm-up at 20/s is 2 tickets"
        );
        assert!(!tickets[1].counted && tickets[2].counted);
        let gap = tickets[4].intended.unwrap() - tickets[3].intended.unwrap();
        assert_eq!(gap, Duration::from_millis(50));
        assert!(tickets[2].intended.unwrap() >= s.measure_start());
    }

    #[test]
    fn a_count_ends_a_closed_loop_run() {
        let s = Schedule::new(trace::now(), Duration::ZERO, Stop::Count(4), None);
        assert_eq!(std::iter::from_fn(|| s.next()).count(), 4);
        assert_eq!(s.next(), None);
    }

    #[test]
    fn a_duration_ends_an_open_loop_run_by_intended_time() {
        let s = Schedule::new(
            trace::now(),
            Duration::ZERO,
            Stop::After(Duration::from_secs(2)),
            Some(1000),
        );
        assert_eq!(std::iter::from_fn(|| s.next()).count(), 2000);
    }
}
