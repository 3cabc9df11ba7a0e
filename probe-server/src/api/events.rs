//! The Server-Sent Events stream of one probe: history first, then live events, then `done`.

use super::error::Result;
use super::probes::stored;
use crate::server::AppState;
use crate::server::cluster::Cluster;
use crate::server::registry::LiveProbe;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use h123_shared::agent::VantageEvent;
use h123_shared::api::{ProbeEvent, ProbeRecord, ProbeStatus};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// The SSE response for probe `id`, starting at event index `from`.
///
/// # Errors
/// 404 when there is no such probe.
pub async fn event_stream(state: &AppState, id: &str, from: usize) -> Result<Response> {
    if let Some(live) = state.registry.get(id) {
        let stream = live_stream(live, from);
        return Ok(sse(stream));
    }
    let record = stored(state, id).await?;
    if record.status == ProbeStatus::Running
        && let Some(cluster) = &state.cluster
    {
        // Another instance runs it: its events come through the database.
        let stream = remote_stream(state.clone(), cluster.clone(), id.to_owned(), from);
        return Ok(sse(stream));
    }
    Ok(sse(replay(record, from)))
}

fn sse(stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    let mut response = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-cache"),
    );
    response
}

/// One SSE event for a probe event at index `index`: its data is the
/// event's JSON, with `vantage` when the probe runs at several vantages.
pub fn to_event(index: usize, tagged: &VantageEvent) -> Event {
    let name = match &tagged.event {
        ProbeEvent::Phase { .. } => "phase",
        ProbeEvent::Attempt { .. } => "attempt",
        ProbeEvent::Skipped { .. } => "skipped",
        ProbeEvent::Stopped { .. } => "stopped",
    };
    let data = serde_json::to_string(tagged).unwrap_or_else(|_| "{}".to_owned());
    Event::default()
        .event(name)
        .id(index.to_string())
        .data(data)
}

fn done_event(record: &ProbeRecord) -> Event {
    let data = serde_json::to_string(record).unwrap_or_else(|_| "{}".to_owned());
    Event::default().event("done").data(data)
}

struct Cursor {
    live: Arc<LiveProbe>,
    changed: watch::Receiver<u64>,
    next: usize,
    pending: VecDeque<Event>,
    finished: bool,
}

fn live_stream(
    live: Arc<LiveProbe>,
    from: usize,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
    let cursor = Cursor {
        changed: live.subscribe(),
        live,
        next: from,
        pending: VecDeque::new(),
        finished: false,
    };
    stream::unfold(cursor, |mut c| async move {
        loop {
            if let Some(event) = c.pending.pop_front() {
                return Some((Ok(event), c));
            }
            if c.finished {
                return None;
            }
            // Mark the current version seen before reading, so no change is missed.
            c.changed.borrow_and_update();
            let update = c.live.read_from(c.next);
            for event in &update.events {
                c.pending.push_back(to_event(c.next, event));
                c.next += 1;
            }
            if let Some(record) = update.done {
                c.pending.push_back(done_event(&record));
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

/// Most published events read from the database at once.
pub const EVENT_BATCH: i64 = 256;

/// Longest a remote stream waits before looking again, should a
/// notification be lost.
const REMOTE_RECHECK: Duration = Duration::from_secs(1);

struct Remote {
    state: AppState,
    cluster: Cluster,
    id: String,
    news: broadcast::Receiver<String>,
    next: usize,
    pending: VecDeque<Event>,
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
                self.pending.push_back(to_event(*index, &tagged));
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
/// instance publishes them (same indices), then `done` once its record is
/// stored finished.
fn remote_stream(
    state: AppState,
    cluster: Cluster,
    id: String,
    from: usize,
) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
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
            if let Some(event) = r.pending.pop_front() {
                return Some((Ok(event), r));
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
                r.pending.push_back(done_event(&record));
                r.finished = true;
                continue;
            }
            r.wait().await;
        }
    })
}

/// The events of a finished probe, rebuilt from its record: one `attempt` per
/// attempt and one `skipped` per skipped protocol, in run order, then `done`.
/// (Phase events are not stored; the attempts carry every phase.)
fn replay(record: ProbeRecord, from: usize) -> impl Stream<Item = Result<Event, Infallible>> {
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
    let mut out: Vec<Result<Event, Infallible>> = events
        .iter()
        .enumerate()
        .skip(from)
        .map(|(i, event)| {
            let tagged = VantageEvent {
                vantage: None,
                event: event.clone(),
            };
            Ok(to_event(i, &tagged))
        })
        .collect();
    out.push(Ok(done_event(&record)));
    stream::iter(out)
}
