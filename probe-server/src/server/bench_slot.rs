//! The one bench a server runs at a time: admission, its live progress,
//! running it to the end, and storing its final record.
//!
//! One at a time because a bench is meant to saturate something: two at
//! once would measure each other (and the server's own CPU), not the target.

use super::AppState;
use crate::bench::{BenchLimits, BenchLive, BenchPlan, Bencher};
use crate::probe::egress::Egress;
use crate::probe::trace::{now, unix_ms};
use h123_shared::api::{BenchRecord, ProbeStatus};
use h123_shared::bench::BenchResult;
use h123_shared::sweep::SweepStep;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::task::AbortHandle;

/// Set-up and drain allowance per protocol on top of its warm-up and duration.
const PER_PROTOCOL_SLACK: Duration = Duration::from_secs(5);

/// The server's bench slot: empty, or the bench running now.
#[derive(Default)]
pub struct BenchSlot {
    current: Mutex<Option<Arc<LiveBench>>>,
}

/// The bench running now.
pub struct LiveBench {
    record: BenchRecord,
    /// The counters the engine updates and the API reads.
    pub live: BenchLive,
    started: Instant,
    expected: Duration,
    limit: Duration,
    finished: AtomicBool,
    task: Mutex<Option<AbortHandle>>,
    /// A sweep's finished steps so far.
    steps: Mutex<Vec<SweepStep>>,
}

/// A bench is running already; try again after about this many seconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Busy {
    /// Seconds until the running bench is expected to end (at least 1).
    pub retry_after_secs: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl BenchSlot {
    /// Takes the slot for `record` (status `running`) and `plan`, unless a bench holds it.
    ///
    /// # Errors
    /// [`Busy`] while another bench runs.
    pub fn try_start(
        &self,
        record: BenchRecord,
        plan: &BenchPlan,
        limits: &BenchLimits,
    ) -> Result<Arc<LiveBench>, Busy> {
        let mut current = lock(&self.current);
        if let Some(running) = current.as_ref() {
            return Err(Busy {
                retry_after_secs: running.remaining().as_secs().max(1),
            });
        }
        let (expected, limit) = durations(plan, limits);
        let bench = Arc::new(LiveBench {
            record,
            live: BenchLive::default(),
            started: now(),
            expected,
            limit,
            finished: AtomicBool::new(false),
            task: Mutex::new(None),
            steps: Mutex::new(Vec::new()),
        });
        *current = Some(bench.clone());
        Ok(bench)
    }

    /// The running bench, if its id is `id`.
    pub fn get(&self, id: &str) -> Option<Arc<LiveBench>> {
        lock(&self.current)
            .as_ref()
            .filter(|b| b.record.id == id)
            .cloned()
    }

    /// The running bench, if any.
    pub fn current(&self) -> Option<Arc<LiveBench>> {
        lock(&self.current).clone()
    }

    /// Empties the slot if bench `id` holds it (its record is in the store by then).
    pub fn release(&self, id: &str) {
        let mut current = lock(&self.current);
        if current.as_ref().is_some_and(|b| b.record.id == id) {
            *current = None;
        }
    }
}

/// How long a bench of `plan` should take (warm-up plus measured time per
/// protocol), and the limit after which it is stopped and stored as cancelled.
fn durations(plan: &BenchPlan, limits: &BenchLimits) -> (Duration, Duration) {
    let options = plan.options();
    let per_protocol = Duration::from_millis(crate::bench::plan::per_protocol_ms(options, limits));
    let runs = options.protocols.len() * plan.steps.len().max(1);
    let protocols = u32::try_from(runs).unwrap_or(u32::MAX);
    let expected = per_protocol.saturating_mul(protocols);
    let drain = Duration::from_millis(options.timeout_ms) + PER_PROTOCOL_SLACK;
    (expected, expected + drain.saturating_mul(protocols))
}

impl LiveBench {
    /// The record as it stands: `running`, with the progress so far.
    pub fn record(&self) -> BenchRecord {
        BenchRecord {
            progress: Some(self.live.snapshot()),
            steps: lock(&self.steps).clone(),
            ..self.record.clone()
        }
    }

    /// The final record of this bench: `status`, finished now, with
    /// `result` (or a sweep's steps so far).
    pub fn finished_record(&self, status: ProbeStatus, result: Option<BenchResult>) -> BenchRecord {
        BenchRecord {
            status,
            finished_at_unix_ms: Some(unix_ms()),
            progress: None,
            result,
            steps: lock(&self.steps).clone(),
            ..self.record.clone()
        }
    }

    /// Time left until the expected end.
    fn remaining(&self) -> Duration {
        self.expected.saturating_sub(now() - self.started)
    }

    /// Whether its final record is stored (or being stored): readers should
    /// ask the store, even while the slot is still taken.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::SeqCst)
    }

    /// Claims the right to store the final record; only the first caller
    /// (the runner at the end, or shutdown) gets `true`.
    fn claim_finish(&self) -> bool {
        !self.finished.swap(true, Ordering::SeqCst)
    }

    /// Stops the engine (its threads and its task), if it still runs.
    fn abort(&self) {
        self.live.cancel();
        if let Some(task) = lock(&self.task).take() {
            task.abort();
        }
    }
}

/// Runs the admitted `bench` in the background and stores its outcome.
pub fn spawn(state: AppState, bench: Arc<LiveBench>, plan: BenchPlan) {
    let task = tokio::spawn(run(state, bench.clone(), plan));
    *lock(&bench.task) = Some(task.abort_handle());
}

async fn run(state: AppState, bench: Arc<LiveBench>, plan: BenchPlan) {
    let Some(bencher) = state.bencher.clone() else {
        return;
    };
    // One byte budget for the whole bench: every protocol, every sweep step.
    let max_bytes = state
        .config
        .bench
        .as_ref()
        .map_or(u64::MAX, |b| b.max_bytes);
    let egress = Egress::new(max_bytes);
    let bencher = bencher.with_egress(egress.clone());
    let engine = measure(&bencher, &plan, &bench);
    tokio::pin!(engine);
    let over = async {
        tokio::select! {
            () = tokio::time::sleep(bench.limit) => format!(
                "stopped at the server's time limit for this bench ({} s)",
                bench.limit.as_secs()
            ),
            () = egress.spent() => format!(
                "stopped at the server's byte budget for a bench ({max_bytes} bytes from the target)"
            ),
        }
    };
    let record = tokio::select! {
        result = &mut engine => bench.finished_record(ProbeStatus::Done, result),
        reason = over => {
            // Over its time or byte limit: the engine stops sending, lets requests
            // in flight finish (within the request timeout) and returns what it measured.
            bench.live.cancel();
            BenchRecord {
                cancel_reason: Some(reason),
                ..bench.finished_record(ProbeStatus::Cancelled, engine.await)
            }
        }
    };
    state.metrics.target_bytes(egress.used());
    if bench.claim_finish()
        && let Err(e) = state.store.finish_bench(record.clone()).await
    {
        eprintln!("h123 serve: cannot store bench {}: {e}", record.id);
    }
    state.bench.release(&record.id);
}

/// Runs `plan`: its one bench, or each step of a sweep in turn (kept on
/// `bench` as it ends, so readers see the curve grow), stopping early when
/// cancelled.
async fn measure(bencher: &Bencher, plan: &BenchPlan, bench: &LiveBench) -> Option<BenchResult> {
    if plan.steps.is_empty() {
        return Some(bencher.run(plan, &bench.live).await);
    }
    for (value, step) in &plan.steps {
        if bench.live.is_cancelled() {
            break;
        }
        let result = bencher.run(step, &bench.live).await;
        lock(&bench.steps).push(SweepStep {
            value: *value,
            result,
        });
    }
    None
}

/// At shutdown: stores the running bench, if any, as cancelled and stops it.
/// Returns whether there was one.
pub async fn cancel(state: &AppState) -> bool {
    let Some(bench) = state.bench.current() else {
        return false;
    };
    let record = bench.finished_record(ProbeStatus::Cancelled, None);
    let stored = bench.claim_finish() && state.store.finish_bench(record.clone()).await.is_ok();
    bench.abort();
    state.bench.release(&record.id);
    stored
}
