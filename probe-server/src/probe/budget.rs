//! The record's size cap: a probe stops adding attempts before its stored record would pass it.

use h123_shared::{Attempt, ProbeOptions};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Largest serialised record (JSON), in bytes: what one probe may cost the
/// store, a reader and an event stream, whatever the target answers.
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;

/// Room kept for what surrounds the attempts: ids, status, times, the
/// runs' envelopes and HTTP/3 discovery.
const ENVELOPE_BYTES: usize = 32 * 1024;

/// Bytes one protocol's attempts may still take.
#[derive(Debug)]
pub struct RecordBudget {
    left: AtomicUsize,
}

impl RecordBudget {
    /// One protocol's share of the budget of a probe with these options:
    /// the cap less the envelope and the options (which a record holds
    /// twice, its own and its result's), split evenly between the protocols
    /// asked for, so that the first run cannot starve the others.
    pub fn share(options: &ProbeOptions) -> Self {
        Self::within(options, MAX_RECORD_BYTES)
    }

    /// One protocol's share, as [`RecordBudget::share`], of a result that
    /// may take `bytes` of its record (a vantage's part of a record that
    /// holds several results).
    pub fn within(options: &ProbeOptions, bytes: usize) -> Self {
        let options_bytes = serde_json::to_vec(options).map_or(0, |v| v.len());
        let total = bytes.saturating_sub(ENVELOPE_BYTES + 2 * options_bytes);
        RecordBudget {
            left: AtomicUsize::new(total / options.protocols.len().max(1)),
        }
    }

    /// Takes room for `attempt` and says `true`, or takes nothing and says
    /// `false` when it does not fit.
    pub fn take(&self, attempt: &Attempt) -> bool {
        let size = serde_json::to_vec(attempt).map_or(usize::MAX, |v| v.len() + 1);
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(size)
            })
            .is_ok()
    }

    /// Bytes still free.
    pub fn left(&self) -> usize {
        self.left.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_are_taken_until_the_cap() {
        let options = ProbeOptions {
            url: "https://example.com/".into(),
            ..ProbeOptions::default()
        };
        let budget = RecordBudget::share(&options);
        let start = budget.left();
        let protocols = options.protocols.len();
        assert!(start > (MAX_RECORD_BYTES - ENVELOPE_BYTES - 2048) / protocols);
        let attempt = Attempt::started(1, 0, "https://example.com/".into());
        let size = serde_json::to_vec(&attempt).unwrap().len() + 1;
        let mut taken = 0;
        while budget.take(&attempt) {
            taken += 1;
        }
        assert_eq!(taken, start / size);
        assert!(budget.left() < size);
    }
}
