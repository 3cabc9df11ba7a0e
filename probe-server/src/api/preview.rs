//! A probe's link preview picture (`/api/v1/probes/{id}/preview.png`): the waterfall drawn at
//! the size link previews show ([`super::svg::preview`]) and rasterised to PNG on the server, for
//! the unfurlers of chats and social sites, which show no SVG.
//!
//! Only a finished probe has one (a running one answers 409 `still_running`). Drawing costs CPU
//! (tens of milliseconds), so at most [`MAX_RENDERS`] are drawn at once, off the async threads,
//! and each picture is kept ([`cache`]) under the hash of the drawing it rasterises: a record
//! that cannot change is drawn once, and a picture never outlives what it shows.

pub mod cache;
pub mod raster;

use super::conditional::{Representation, etag, respond};
use super::error::{ApiError, Result};
use super::extract::ProbeId;
use super::probes::load;
use super::svg::{HEIGHT, WIDTH, preview};
use crate::server::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use h123_shared::api::{ApiError as ErrorBody, ProbeRecord, ProbeStatus};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The most pictures drawn at once, over all clients.
pub const MAX_RENDERS: usize = 2;

/// How long a request waits for a drawing place before `503 server_busy`.
const RENDER_WAIT: Duration = Duration::from_secs(5);

/// The pictures drawn so far and the places to draw more.
pub struct Previews {
    /// The pictures, by the hash of their drawing.
    pub cache: cache::PictureCache,
    renders: Arc<Semaphore>,
}

impl Default for Previews {
    fn default() -> Self {
        Previews {
            cache: cache::PictureCache::default(),
            renders: Arc::new(Semaphore::new(MAX_RENDERS)),
        }
    }
}

/// `record`'s preview picture as PNG, from the cache or drawn now.
///
/// # Errors
/// `503 server_busy` when no drawing place frees up in time; `500` when drawing fails.
pub async fn picture(state: &AppState, record: &ProbeRecord) -> Result<Arc<[u8]>> {
    let svg = preview(record);
    let key = etag(svg.as_bytes());
    let previews = &state.previews;
    if let Some(png) = previews.cache.get(&key) {
        return Ok(png);
    }
    let permit = tokio::time::timeout(RENDER_WAIT, previews.renders.clone().acquire_owned())
        .await
        .map_err(|_| ApiError::ServerBusy)?
        .map_err(|_| ApiError::ServerBusy)?;
    let png = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        raster::png(&svg, WIDTH, HEIGHT)
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
    .map_err(ApiError::Internal)?;
    let png: Arc<[u8]> = png.into();
    previews.cache.insert(key, png.clone());
    Ok(png)
}

/// The link preview picture: the waterfall as a 1200×630 PNG (the URL, the verdict and a bar
/// per attempt, coloured by phase), for the chats and sites that show no SVG.
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}/preview.png",
    tag = "exports",
    params(("id" = String, Path, description = "The probe's id")),
    responses(
        (status = 200, description = "The picture", body = Vec<u8>, content_type = "image/png",
            headers(("ETag" = String, description = "Changes whenever the record does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 409, description = "The probe is still running (`still_running`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads or drawings in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_preview_png(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    if record.status == ProbeStatus::Running {
        return Err(ApiError::NoPictureYet(record.id));
    }
    let png = picture(&state, &record).await?;
    // The owner's browser measurement may still join it for a while.
    let settled = record.settled(crate::probe::trace::unix_ms());
    Ok(respond(
        &headers,
        Representation::new(png.to_vec(), "image/png", settled),
    ))
}
