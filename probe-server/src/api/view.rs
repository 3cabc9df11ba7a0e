//! `/api/v1/probes/{id}/view`: a probe's result as the page's markup, drawn on the server (as
//! it stands, or as Server-Sent Events while the probe runs), so the page needs no renderer of
//! its own; `/r/{id}` puts the same markup in its shell.
//!
//! A stream folds the probe's progress into one state (its record and the partial results so
//! far, bounded by the record's limits) and draws it again per batch: whatever progress is ready
//! at once is one drawing, and drawings are at least [`VIEW_INTERVAL`] apart, so a client that
//! holds many streams costs a bounded number of drawings a second each, and a slow reader only
//! gets fewer (what waits is the shared history, never a queue of drawings).

pub mod fold;

use super::conditional::{Representation, respond};
use super::error::Result;
use super::events::sse;
use super::extract::ProbeId;
use super::progress::{Progress, Source};
use crate::probe::trace::unix_ms;
use crate::server::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::response::sse::Event;
use fold::View;
use futures_util::stream::{self, BoxStream, Stream};
use futures_util::{FutureExt, StreamExt};
use h123_shared::api::ApiError as ErrorBody;
use std::convert::Infallible;
use std::time::Duration;

/// Shortest time between two drawings of one stream's view.
pub const VIEW_INTERVAL: Duration = Duration::from_millis(100);

/// Probe `id`'s page as it stands: its record with every event published so far folded in
/// (the final record once it finished).
///
/// # Errors
/// 404 when there is no such probe; the store's or database's error when it cannot be read.
pub async fn so_far(state: &AppState, id: &str) -> Result<View> {
    let (record, progress) = Source::find(state, id).await?.so_far().await?;
    let mut view = View::new(record);
    for step in progress {
        view.apply(step);
    }
    Ok(view)
}

/// The probe's result as HTML: the markup of `/r/{id}`'s result (`<div id="result" ...>`),
/// as it stands (a running probe's with its attempts so far, those in flight as far as they got).
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}/view",
    tag = "probes",
    params(("id" = String, Path, description = "The probe's id"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "The result's markup, a fragment of HTML (`<div id=\"result\" data-id data-status ...>`)",
            body = String, content_type = "text/html",
            headers(("ETag" = String, description = "Changes whenever the markup does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_view(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    headers: HeaderMap,
) -> Result<Response> {
    let html = so_far(&state, &id).await?.markup(unix_ms());
    // Drawn for now (and by this server's version): revalidated every time.
    let representation = Representation::new(html.into_bytes(), "text/html; charset=utf-8", false);
    Ok(respond(&headers, representation))
}

/// The probe's result as HTML, live: a `view` event (data: the whole markup, as
/// `GET /api/v1/probes/{id}/view` gives it) whenever progress arrived, drawings at least
/// 100 ms apart, then one `done` event with the final record's markup, and the stream ends.
/// A finished probe's stream is its `done` event alone.
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}/view/events",
    tag = "probes",
    params(("id" = String, Path, description = "The probe's id")),
    responses(
        (status = 200, description = "An event stream; each `data:` is the result's markup (`event: view`), the last (`event: done`) the final one",
            content_type = "text/event-stream", body = String),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_view_events(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
) -> Result<Response> {
    let source = Source::find(&state, &id).await?;
    // The record first, then the events from the first: every event it holds is among them.
    let view = View::new(source.record());
    let progress = if view.is_finished() {
        stream::empty().boxed()
    } else {
        source.follow(state, 0)
    };
    Ok(sse(view_stream(view, progress)))
}

/// One stream's state: the view so far and the progress still to fold in.
struct Following {
    view: View,
    progress: BoxStream<'static, Progress>,
    drawn: bool,
}

/// `view` drawn as `view` events while `progress` folds into it, then as `done`.
fn view_stream(
    view: View,
    progress: BoxStream<'static, Progress>,
) -> impl Stream<Item = std::result::Result<Event, Infallible>> + Send + 'static {
    let following = Following {
        view,
        progress,
        drawn: false,
    };
    stream::unfold(Some(following), |following| async move {
        let mut f = following?;
        if !f.view.is_finished() {
            if f.drawn {
                tokio::time::sleep(VIEW_INTERVAL).await;
            }
            if !fold_ready(&mut f.view, &mut f.progress).await {
                // The probe was dropped without finishing; end the stream.
                return None;
            }
        }
        let html = f.view.markup(unix_ms());
        if f.view.is_finished() {
            return Some((Ok(Event::default().event("done").data(html)), None));
        }
        f.drawn = true;
        Some((Ok(Event::default().event("view").data(html)), Some(f)))
    })
}

/// Folds the next step of `progress` into `view`, then every one ready at once after it;
/// `false` when the progress ended first.
async fn fold_ready(view: &mut View, progress: &mut BoxStream<'static, Progress>) -> bool {
    let Some(first) = progress.next().await else {
        return false;
    };
    view.apply(first);
    while let Some(Some(next)) = progress.next().now_or_never() {
        view.apply(next);
    }
    true
}
