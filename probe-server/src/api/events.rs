//! The Server-Sent Events stream of one probe: history first, then live events, then `done`.

use super::error::Result;
use super::progress::{Progress, Source};
use crate::server::AppState;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use futures_util::stream::Stream;
use h123_shared::agent::VantageEvent;
use h123_shared::api::{ProbeEvent, ProbeRecord};
use std::convert::Infallible;
use std::time::Duration;

/// The SSE response for probe `id`, starting at event index `from`.
///
/// # Errors
/// 404 when there is no such probe.
pub async fn event_stream(state: &AppState, id: &str, from: usize) -> Result<Response> {
    let progress = Source::find(state, id).await?.follow(state.clone(), from);
    Ok(sse(progress.map(|item| {
        Ok(match item {
            Progress::Event(index, tagged) => to_event(index, &tagged),
            Progress::Done(record) => done_event(&record),
        })
    })))
}

/// An event stream as the response: kept alive by a comment every 15 s, never cached.
pub fn sse(stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
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
        ProbeEvent::Discovery { .. } => "discovery",
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
