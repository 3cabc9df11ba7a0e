//! Live counters of a running bench, read by progress bars and the API.

use crate::probe::trace;
use h123_shared::Protocol;
use h123_shared::bench::BenchProgress;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Counters the workers bump as they go; cheap to update, safe to read from
/// anywhere. Clones share the same counters.
#[derive(Clone, Debug, Default)]
pub struct BenchLive(Arc<Counters>);

#[derive(Debug, Default)]
struct Counters {
    current: Mutex<Option<(Protocol, Instant)>>,
    protocols_done: AtomicU32,
    warming_up: AtomicBool,
    requests: AtomicU64,
    errors: AtomicU64,
    cancelled: AtomicBool,
}

impl BenchLive {
    /// How far the bench has come.
    pub fn snapshot(&self) -> BenchProgress {
        let current = *self.0.current.lock().unwrap_or_else(|p| p.into_inner());
        BenchProgress {
            protocol: current.map(|(p, _)| p),
            protocols_done: self.0.protocols_done.load(Ordering::Relaxed),
            warming_up: self.0.warming_up.load(Ordering::Relaxed),
            requests: self.0.requests.load(Ordering::Relaxed),
            errors: self.0.errors.load(Ordering::Relaxed),
            elapsed_ms: current.map_or(0, |(_, since)| {
                trace::now().saturating_duration_since(since).as_millis() as u64
            }),
        }
    }

    /// Asks the bench to stop: workers send nothing new, requests in flight
    /// finish (within the request timeout), protocols not yet started are skipped,
    /// and the result so far comes back.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`BenchLive::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }

    /// A protocol starts; its warm-up (if any) begins now.
    pub(super) fn start(&self, protocol: Protocol, warming_up: bool) {
        self.0.requests.store(0, Ordering::Relaxed);
        self.0.errors.store(0, Ordering::Relaxed);
        self.0.warming_up.store(warming_up, Ordering::Relaxed);
        *self.0.current.lock().unwrap_or_else(|p| p.into_inner()) = Some((protocol, trace::now()));
    }

    /// The warm-up is over: measuring starts now.
    pub(super) fn measuring(&self) {
        self.0.warming_up.store(false, Ordering::Relaxed);
        if let Some((_, since)) = self
            .0
            .current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            *since = trace::now();
        }
    }

    /// One counted request finished.
    pub(super) fn count(&self, error: bool) {
        self.0.requests.fetch_add(1, Ordering::Relaxed);
        if error {
            self.0.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The current protocol is done.
    pub(super) fn finish(&self) {
        self.0.protocols_done.fetch_add(1, Ordering::Relaxed);
        *self.0.current.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}
