//! `/api/v1/probes/{id}/view`: a probe's result as the page's markup, drawn on the server (as
//! it stands, or as Server-Sent Events while the probe runs), so the page needs no renderer of
//! its own; `/r/{id}` puts the same markup in its shell.
//!
//! A probe's live view is drawn once per batch of progress for all its viewers ([`feed`]):
//! the probe's progress folded into one state (its record and the partial results so far,
//! bounded by the record's limits), whatever progress is ready at once one drawing, drawings
//! at least [`VIEW_INTERVAL`] apart; a slow reader only gets fewer (what waits is the latest
//! drawing, never a queue of them).

pub mod feed;
pub mod fold;

use super::conditional::{Representation, respond};
use super::error::Result;
use super::extract::ProbeId;
use super::progress::Source;
use crate::probe::trace::unix_ms;
use crate::server::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use fold::View;
use futures_util::StreamExt;
use h123_shared::api::ApiError as ErrorBody;
use std::convert::Infallible;
use std::time::Duration;

/// Shortest time between two drawings of one probe's live view.
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
        (status = 429, description = "Too many reads from this client (`rate_limited`), or its most event streams open already (`too_many_streams`, 16 by default); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "The server holds its most event streams open (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_view_events(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
) -> Result<Response> {
    let feed = match state.views.get(&id) {
        Some(feed) => feed,
        None => {
            let source = Source::find(&state, &id).await?;
            state.views.join(&state, &id, source)
        }
    };
    let body = Body::from_stream(feed.view().map(Ok::<_, Infallible>));
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::CACHE_CONTROL, "no-cache"),
    ];
    Ok((headers, body).into_response())
}
