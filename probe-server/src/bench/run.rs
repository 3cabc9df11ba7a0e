//! One protocol's run: open the connections, start the workers, count.

use super::BenchLive;
use super::plan::BenchPlan;
use super::schedule::{Schedule, Ticket};
use super::tally::{Outcome, Sample, Tally};
use crate::probe::connection::{ConnectSettings, Target};
use crate::probe::failure::{failure, timed_out};
use crate::probe::load::{Load, Reply};
use crate::probe::trace;
use futures_util::future::join_all;
use h123_shared::bench::BenchRun;
use h123_shared::{Failure, FailureKind, Phase, Protocol};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio::sync::Mutex;

/// Where and how to connect, shared by every worker of a run.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// Host name or literal, for SNI and certificate checks.
    pub host: String,
    /// Whether TLS is used.
    pub https: bool,
    /// Resolved addresses, in order.
    pub addrs: Vec<SocketAddr>,
    /// Policy, trust and limits.
    pub settings: ConnectSettings,
}

impl Endpoint {
    fn target(&self) -> Target<'_> {
        Target {
            host: &self.host,
            https: self.https,
            addrs: &self.addrs,
            tunnel: None,
        }
    }
}

/// One connection shared by some workers; replaced once when it breaks
/// (the generation tells a worker whether someone else already did).
struct Lane<H> {
    state: Mutex<(u64, Option<H>)>,
}

/// What every thread and worker of a run shares.
struct Shared {
    plan: BenchPlan,
    endpoint: Arc<Endpoint>,
    tally: Tally,
    opened: AtomicU64,
    live: BenchLive,
}

impl Shared {
    /// Opens a connection, counting it.
    async fn open<C: Load>(&self) -> Result<C::Handle, Failure> {
        // Each setup phase has the request timeout as its own limit (and fails
        // naming itself); this one only catches a setup that stalls in between.
        let limit = self.plan.timeout * 3;
        let handle = tokio::time::timeout(
            limit,
            C::open_for_load(&self.endpoint.target(), &self.endpoint.settings),
        )
        .await
        .map_err(|_| timed_out(Phase::Connect, limit))??;
        self.opened.fetch_add(1, Ordering::Relaxed);
        Ok(handle)
    }
}

/// A worker's view of its thread: the shared state, the schedule, its lane.
struct Seat<C: Load> {
    shared: Arc<Shared>,
    schedule: Arc<Schedule>,
    lane: Option<Arc<Lane<C::Handle>>>,
    thread: usize,
}

impl<C: Load> Seat<C> {
    /// The lane's connection, opening a new one if it is missing or is the
    /// broken generation `broken`.
    async fn lane_handle(&self, broken: Option<u64>) -> Result<(u64, C::Handle), Failure> {
        let Some(lane) = &self.lane else {
            return self.shared.open::<C>().await.map(|h| (0, h));
        };
        let mut state = lane.state.lock().await;
        if let Some(handle) = &state.1
            && Some(state.0) != broken
        {
            return Ok((state.0, handle.clone()));
        }
        state.1 = None;
        let handle = self.shared.open::<C>().await?;
        state.0 += 1;
        state.1 = Some(handle.clone());
        Ok((state.0, handle))
    }
}

/// How threads split the work: lane `l` lives on thread `l % threads`, and a
/// worker on the thread of its lane, so a worker and its connection's task
/// never wake each other across threads.
#[derive(Copy, Clone, Debug)]
struct Layout {
    threads: usize,
    lanes: usize,
    workers: usize,
}

impl Layout {
    fn new(plan: &BenchPlan, protocol: Protocol) -> Self {
        let workers = plan.options().concurrency as usize;
        let lanes = plan.connections(protocol) as usize;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let units = if lanes == 0 { workers } else { lanes };
        Layout {
            threads: cores.min(units).max(1),
            lanes,
            workers,
        }
    }

    fn thread_of_worker(&self, worker: usize) -> usize {
        if self.lanes == 0 {
            worker % self.threads
        } else {
            (worker % self.lanes) % self.threads
        }
    }
}

/// Runs `plan` for protocol `C` against `endpoint`, on one single-threaded
/// runtime per core (as wrk runs one event loop per thread).
pub async fn run<C: Load>(
    protocol: Protocol,
    plan: &BenchPlan,
    endpoint: Arc<Endpoint>,
    live: &BenchLive,
) -> BenchRun {
    let mut run = BenchRun::new(protocol);
    let layout = Layout::new(plan, protocol);
    let shared = Arc::new(Shared {
        plan: plan.clone(),
        endpoint,
        tally: Tally::new(layout.threads),
        opened: AtomicU64::new(0),
        live: live.clone(),
    });
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::unbounded_channel();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut gos = Vec::new();
    for thread in 0..layout.threads {
        let (go_tx, go_rx) = std::sync::mpsc::channel::<Option<Arc<Schedule>>>();
        let (shared, ready, done) = (shared.clone(), ready_tx.clone(), done_tx.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("h123-bench-{thread}"))
            .spawn(move || {
                thread_main::<C>(shared, layout, thread, &ready, &go_rx);
                let _ = done.send(());
            });
        if let Err(e) = spawned {
            let _ = ready_tx.send(Err(failure(Phase::Connect, FailureKind::Io, e.to_string())));
        }
        gos.push(go_tx);
    }
    drop((ready_tx, done_tx));
    // Connections open before the clock starts, as wrk and h2load do.
    let mut failures = Vec::new();
    let mut any_open = layout.lanes == 0;
    for _ in 0..layout.threads {
        match ready_rx.recv().await {
            Some(Ok(opened)) => any_open |= opened > 0,
            Some(Err(f)) => failures.push(f),
            None => break,
        }
    }
    let failed = (!any_open).then(|| failures.into_iter().next()).flatten();
    let schedule = failed.is_none().then(|| {
        Arc::new(Schedule::new(
            trace::now(),
            plan.warmup,
            plan.stop,
            plan.options().rate,
        ))
    });
    if schedule.is_some() {
        live.start(protocol, !plan.warmup.is_zero());
    }
    for go in gos {
        let _ = go.send(schedule.clone());
    }
    let measuring = schedule.as_ref().map(|schedule| {
        let (live, at) = (live.clone(), schedule.measure_start());
        tokio::spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            live.measuring();
        })
    });
    while done_rx.recv().await.is_some() {}
    if let Some(task) = measuring {
        task.abort();
    }
    run.connections_opened = shared.opened.load(Ordering::Relaxed);
    match (schedule, failed, Arc::try_unwrap(shared)) {
        (Some(schedule), _, Ok(shared)) => {
            live.finish();
            shared.tally.finish(&mut run, schedule.measure_start());
        }
        (_, failure, _) => {
            run.failure = failure.or_else(|| {
                Some(failure_of(
                    FailureKind::Io,
                    "the bench threads did not finish",
                ))
            });
        }
    }
    run
}

fn failure_of(kind: FailureKind, message: &str) -> Failure {
    failure(Phase::Connect, kind, message)
}

/// One bench thread: opens its lanes, reports how many opened, waits for the
/// go (the schedule), then runs its workers to the end.
fn thread_main<C: Load>(
    shared: Arc<Shared>,
    layout: Layout,
    thread: usize,
    ready: &tokio::sync::mpsc::UnboundedSender<Result<usize, Failure>>,
    go: &std::sync::mpsc::Receiver<Option<Arc<Schedule>>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = ready.send(Err(failure_of(FailureKind::Io, &e.to_string())));
            return;
        }
    };
    let mine: Vec<usize> = (0..layout.lanes)
        .filter(|l| l % layout.threads == thread)
        .collect();
    let opened = runtime.block_on(join_all(mine.iter().map(|_| shared.open::<C>())));
    let count = opened.iter().filter(|o| o.is_ok()).count();
    let first_failure = opened.iter().find_map(|o| o.as_ref().err().cloned());
    let _ = ready.send(match (count, first_failure) {
        (0, Some(f)) => Err(f),
        (n, _) => Ok(n),
    });
    let lanes: Vec<(usize, Arc<Lane<C::Handle>>)> = mine
        .into_iter()
        .zip(opened)
        .map(|(l, o)| {
            let lane = Lane {
                state: Mutex::new((0, o.ok())),
            };
            (l, Arc::new(lane))
        })
        .collect();
    let Ok(Some(schedule)) = go.recv() else {
        return;
    };
    runtime.block_on(async {
        let workers: Vec<_> = (0..layout.workers)
            .filter(|&w| layout.thread_of_worker(w) == thread)
            .map(|w| {
                let lane = (layout.lanes > 0).then(|| w % layout.lanes).and_then(|l| {
                    lanes
                        .iter()
                        .find(|(id, _)| *id == l)
                        .map(|(_, lane)| lane.clone())
                });
                tokio::spawn(worker(Seat::<C> {
                    shared: shared.clone(),
                    schedule: schedule.clone(),
                    lane,
                    thread,
                }))
            })
            .collect();
        join_all(workers).await;
    });
}

/// One worker: takes tickets and sends requests until the schedule ends.
async fn worker<C: Load>(seat: Seat<C>) {
    let cold = seat.lane.is_none();
    let mut current: Option<(u64, C::Handle)> = None;
    let mut broken = None;
    while !seat.shared.live.is_cancelled()
        && let Some(ticket) = seat.schedule.next()
    {
        if let Some(at) = ticket.intended {
            tokio::time::sleep_until(at.into()).await;
        }
        let sent = trace::now();
        let start = ticket.intended.unwrap_or(sent);
        let handle = match current.take() {
            Some(handle) => Ok(handle),
            None => seat.lane_handle(broken).await,
        };
        let result = match handle {
            Ok((generation, mut handle)) => {
                let result = send::<C>(&seat.shared, &mut handle).await;
                // HTTP/1.1 has no way back after a failed exchange, nor after the server
                // closed the connection with its response (replaced then, as wrk does);
                // streams have, unless the connection itself is gone.
                let spent = if C::ONE_AT_A_TIME {
                    result.is_err() || C::is_closed(&handle)
                } else {
                    result.is_err() && C::is_closed(&handle)
                };
                if cold || spent {
                    broken = Some(generation);
                } else {
                    current = Some((generation, handle));
                }
                result
            }
            Err(f) => Err(f),
        };
        record(&seat.shared, seat.thread, ticket, start, sent, result);
    }
}

async fn send<C: Load>(shared: &Shared, handle: &mut C::Handle) -> Result<Reply, Failure> {
    let limit = shared.plan.timeout;
    tokio::time::timeout(limit, C::send(handle, &shared.plan.request))
        .await
        .map_err(|_| timed_out(Phase::Wait, limit))?
}

fn record(
    shared: &Shared,
    index: usize,
    ticket: Ticket,
    start: Instant,
    sent: Instant,
    result: Result<Reply, Failure>,
) {
    if !ticket.counted {
        return;
    }
    let outcome = match result {
        Ok(reply) => Outcome::Response {
            status: reply.status,
            headers_at: reply.headers_at,
            body_bytes: reply.body_bytes,
        },
        Err(f) => Outcome::Failed(f.kind.as_str()),
    };
    let sample = Sample {
        start,
        sent,
        done: trace::now(),
        outcome,
    };
    let error = shared.tally.shard(index).record(&sample);
    shared.live.count(error);
}
