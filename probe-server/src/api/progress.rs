//! A probe's progress as typed items: its events (history first, then live) and its final
//! record, from wherever the probe is: running here (the registry), running at another instance
//! (the shared database), or finished (replayed from its record).
//!
//! A stream holds no copy of a live history: it reads from a cursor over the shared one (here)
//! or a batch at a time (from the database); only a finished record's replay is built at once.

use super::error::{ApiError, Result};
use crate::server::AppState;
use crate::server::cluster::Cluster;
use crate::server::registry::LiveProbe;
use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use h123_shared::agent::VantageEvent;
use h123_shared::api::{ProbeEvent, ProbeRecord, ProbeStatus};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// The record as stored (a running probe's as it was created).
pub async fn stored(state: &AppState, id: &str) -> Result<ProbeRecord> {
    if !crate::store::is_valid_id(id) {
        return Err(ApiError::no_probe(id));
    }
    let mut record = state
        .store
        .get(id.to_owned())
        .await?
        .ok_or_else(|| ApiError::no_probe(id))?;
    // Records stored before analyses existed get theirs computed on read.
    if record.status != ProbeStatus::Running && record.result.analysis.is_none() {
        record.result = h123_shared::analysis::analyzed(record.result);
    }
    Ok(record)
}

/// One step of a probe's progress.
#[derive(Clone, Debug)]
pub enum Progress {
    /// The probe's event at this index (its runner's numbering, the SSE `id`), shared with the
    /// history it comes from.
    Event(usize, Arc<VantageEvent>),
    /// The final record: the probe finished, nothing follows.
    Done(Arc<ProbeRecord>),
}

/// Where a probe's progress comes from.
pub enum Source {
    /// Running here: its events are in the registry.
    Local(Arc<LiveProbe>),
    /// Running at another instance: its events come through the database. The record is as
    /// stored when the probe was created.
    Remote(Cluster, ProbeRecord),
    /// Finished (or left running by no instance): its progress is replayed from the record.
    Record(ProbeRecord),
}

impl Source {
    /// Where probe `id`'s progress comes from.
    ///
    /// # Errors
    /// 404 when there is no such probe; the store's error when it cannot be read.
    pub async fn find(state: &AppState, id: &str) -> Result<Source> {
        if let Some(live) = state.registry.get(id) {
            return Ok(Source::Local(live));
        }
        let record = stored(state, id).await?;
        if record.status == ProbeStatus::Running
            && let Some(cluster) = &state.cluster
        {
            return Ok(Source::Remote(cluster.clone(), record));
        }
        Ok(Source::Record(record))
    }

    /// The record to fold this source's progress (from index 0) into: a probe running here as it
    /// stands (its finished attempts folded in, which its events then replace, never duplicate),
    /// another instance's as stored, a finished one's whole.
    pub fn record(&self) -> ProbeRecord {
        match self {
            Source::Local(live) => live.record(),
            Source::Remote(_, record) | Source::Record(record) => record.clone(),
        }
    }

    /// The record to fold into (as [`Source::record`] gives it) and the progress so far, without
    /// waiting for more: every event published yet, then `Done` when the probe has finished (a
    /// finished record has nothing to fold in).
    ///
    /// # Errors
    /// The database's error when another instance's events cannot be read.
    pub async fn so_far(self) -> Result<(ProbeRecord, Vec<Progress>)> {
        match self {
            Source::Local(live) => {
                // The record first, then the events: every event it holds is among them.
                let record = live.record();
                let update = live.read_from(0);
                let mut progress: Vec<Progress> = update
                    .events
                    .into_iter()
                    .enumerate()
                    .map(|(i, event)| Progress::Event(i, event))
                    .collect();
                progress.extend(update.done.map(Progress::Done));
                Ok((record, progress))
            }
            Source::Remote(cluster, record) => {
                let events = published_events(&cluster, &record.id).await?;
                let progress = events
                    .into_iter()
                    .enumerate()
                    .map(|(i, event)| Progress::Event(i, Arc::new(event)))
                    .collect();
                Ok((record, progress))
            }
            Source::Record(record) => Ok((record, Vec::new())),
        }
    }

    /// The progress from event index `from` on, ending after `Done` (or early, when a probe
    /// running here is dropped without finishing).
    pub fn follow(self, state: AppState, from: usize) -> BoxStream<'static, Progress> {
        match self {
            Source::Local(live) => live_stream(live, from).boxed(),
            Source::Remote(cluster, record) => {
                remote_stream(state, cluster, record.id, from).boxed()
            }
            Source::Record(record) => replay(record, from).boxed(),
        }
    }
}

/// Most published events read from the database at once.
pub const EVENT_BATCH: i64 = 256;

/// Every event the instance running probe `id` has published so far, in order.
///
/// # Errors
/// The database's error, or an internal one for an event that does not read back.
pub async fn published_events(cluster: &Cluster, id: &str) -> Result<Vec<VantageEvent>> {
    let mut events = Vec::new();
    loop {
        let rows = cluster
            .store
            .read_events(id, events.len(), EVENT_BATCH)
            .await?;
        let last = rows.len() < EVENT_BATCH as usize;
        for (_, json) in rows {
            let event = serde_json::from_str::<VantageEvent>(&json)
                .map_err(|e| ApiError::Internal(format!("probe {id}: a published event: {e}")))?;
            events.push(event);
        }
        if last {
            return Ok(events);
        }
    }
}

struct Cursor {
    live: Arc<LiveProbe>,
    changed: watch::Receiver<u64>,
    next: usize,
    pending: VecDeque<Progress>,
    finished: bool,
}

/// The events of a probe running here from `from` on, then `Done`.
fn live_stream(
    live: Arc<LiveProbe>,
    from: usize,
) -> impl futures_util::Stream<Item = Progress> + Send + 'static {
    let cursor = Cursor {
        changed: live.subscribe(),
        live,
        next: from,
        pending: VecDeque::new(),
        finished: false,
    };
    stream::unfold(cursor, |mut c| async move {
        loop {
            if let Some(item) = c.pending.pop_front() {
                return Some((item, c));
            }
            if c.finished {
                return None;
            }
            // Mark the current version seen before reading, so no change is missed.
            c.changed.borrow_and_update();
            let update = c.live.read_from(c.next);
            for event in update.events {
                c.pending.push_back(Progress::Event(c.next, event));
                c.next += 1;
            }
            if let Some(record) = update.done {
                c.pending.push_back(Progress::Done(record));
                c.finished = true;
                continue;
            }
            if c.pending.is_empty() && c.changed.changed().await.is_err() {
                // The probe was dropped without finishing; end the stream.
                return None;
            }
        }
    })
}

/// Longest a remote stream waits before looking again, should a
/// notification be lost.
const REMOTE_RECHECK: Duration = Duration::from_secs(1);

struct Remote {
    state: AppState,
    cluster: Cluster,
    id: String,
    news: broadcast::Receiver<String>,
    next: usize,
    pending: VecDeque<Progress>,
    finished: bool,
}

impl Remote {
    /// Queues the published events from `next` on; whether there were any.
    async fn read(&mut self) -> bool {
        let Ok(rows) = self
            .cluster
            .store
            .read_events(&self.id, self.next, EVENT_BATCH)
            .await
        else {
            return false;
        };
        for (index, json) in &rows {
            if let Ok(tagged) = serde_json::from_str::<VantageEvent>(json) {
                self.pending
                    .push_back(Progress::Event(*index, Arc::new(tagged)));
            }
            self.next = index + 1;
        }
        !rows.is_empty()
    }

    /// Waits for news of this probe's events, or a while.
    async fn wait(&mut self) {
        let news = async {
            loop {
                match self.news.recv().await {
                    Ok(id) if id.is_empty() || id == self.id => return,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => return,
                    Err(broadcast::error::RecvError::Closed) => {
                        std::future::pending::<()>().await;
                    }
                }
            }
        };
        let _ = tokio::time::timeout(REMOTE_RECHECK, news).await;
    }
}

/// The live events of probe `id`, which another instance runs, as that
/// instance publishes them (same indices), then `Done` once its record is
/// stored finished.
fn remote_stream(
    state: AppState,
    cluster: Cluster,
    id: String,
    from: usize,
) -> impl futures_util::Stream<Item = Progress> + Send + 'static {
    let remote = Remote {
        news: cluster.signals.events.subscribe(),
        state,
        cluster,
        id,
        next: from,
        pending: VecDeque::new(),
        finished: false,
    };
    stream::unfold(remote, |mut r| async move {
        loop {
            if let Some(item) = r.pending.pop_front() {
                return Some((item, r));
            }
            if r.finished {
                return None;
            }
            if r.read().await {
                continue;
            }
            if let Ok(record) = stored(&r.state, &r.id).await
                && record.status != ProbeStatus::Running
            {
                // Its last events were published before the record was stored.
                while r.read().await {}
                r.pending.push_back(Progress::Done(Arc::new(record)));
                r.finished = true;
                continue;
            }
            r.wait().await;
        }
    })
}

/// The events of a finished probe, rebuilt from its record: one `Attempt` per
/// attempt and one `Skipped` per skipped protocol, in run order, from index
/// `from` on, then `Done`. (Phase events are not stored; the attempts carry every phase.)
fn replay(record: ProbeRecord, from: usize) -> impl futures_util::Stream<Item = Progress> {
    let mut events = Vec::new();
    for run in &record.result.runs {
        if let Some(reason) = &run.skipped {
            events.push(ProbeEvent::Skipped {
                protocol: run.protocol,
                reason: reason.clone(),
            });
        }
        for attempt in &run.attempts {
            events.push(ProbeEvent::Attempt {
                protocol: run.protocol,
                attempt: Box::new(attempt.clone()),
            });
        }
    }
    let mut out: Vec<Progress> = events
        .into_iter()
        .enumerate()
        .skip(from)
        .map(|(i, event)| {
            let tagged = VantageEvent {
                vantage: None,
                event,
            };
            Progress::Event(i, Arc::new(tagged))
        })
        .collect();
    out.push(Progress::Done(Arc::new(record)));
    stream::iter(out)
}
