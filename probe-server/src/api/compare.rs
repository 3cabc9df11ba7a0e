//! `/api/v1/compare/{a}/{b}`: two finished probes side by side, and what differs between them;
//! `/view`: the same drawn as the comparison page shows it.

use super::conditional::{Representation, respond};
use super::error::{ApiError, Result};
use super::probes::load;
use crate::server::AppState;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use h123_shared::api::{ApiError as ErrorBody, ProbeComparison, ProbeRecord, ProbeStatus};

/// Both records and their comparison: per protocol and connection state, each metric's
/// median in A and in B, a difference called only beyond the measured noise.
#[utoipa::path(
    get,
    path = "/api/v1/compare/{a}/{b}",
    tag = "probes",
    params(("a" = String, Path, description = "The first probe's id (the \"before\")"),
           ("b" = String, Path, description = "The second probe's id (the \"after\")"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "Both records and the comparison", body = ProbeComparison,
            headers(("ETag" = String, description = "The same for as long as both records are"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 409, description = "A probe is still running (`still_running`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn compare_get(
    State(state): State<AppState>,
    ids: std::result::Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    headers: HeaderMap,
) -> Result<Response> {
    let (compared, settled) = compared(&state, ids).await?;
    let body = serde_json::to_vec(&compared).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(respond(&headers, Representation::json(body, settled)))
}

/// The comparison as its page shows it, drawn on the server: the markup of
/// `/compare/{a}/{b}`'s page (the Leptos component `h123_frontend::pages::compare`), which the
/// page fetches when a static host served it.
#[utoipa::path(
    get,
    path = "/api/v1/compare/{a}/{b}/view",
    tag = "probes",
    params(("a" = String, Path, description = "The first probe's id (the \"before\")"),
           ("b" = String, Path, description = "The second probe's id (the \"after\")"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "The comparison's markup, a fragment of HTML (`<section id=\"comparison\" data-title ...>` and what follows it)",
            body = String, content_type = "text/html",
            headers(("ETag" = String, description = "Changes whenever the markup does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 409, description = "A probe is still running (`still_running`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn compare_view(
    State(state): State<AppState>,
    ids: std::result::Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    headers: HeaderMap,
) -> Result<Response> {
    let (compared, _) = compared(&state, ids).await?;
    let html =
        h123_frontend::pages::render(|| h123_frontend::pages::compare::compare_page(&compared));
    // Drawn by this server's version: revalidated every time.
    let representation = Representation::new(html.into_bytes(), "text/html; charset=utf-8", false);
    Ok(respond(&headers, representation))
}

/// The comparison at `ids`, and whether it is settled: cached forever only once neither record
/// can change (a browser measurement may still come).
async fn compared(
    state: &AppState,
    ids: std::result::Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
) -> Result<(ProbeComparison, bool)> {
    let Ok(Path((a, b))) = ids else {
        return Err(ApiError::NotFound("no comparison at this path".to_owned()));
    };
    let a = finished(state, &a).await?;
    let b = finished(state, &b).await?;
    let now = crate::probe::trace::unix_ms();
    let settled = a.settled(now) && b.settled(now);
    Ok((ProbeComparison::of(a, b), settled))
}

/// Probe `id`'s record, once it has finished.
async fn finished(state: &AppState, id: &str) -> Result<ProbeRecord> {
    let record = load(state, id).await?;
    if record.status == ProbeStatus::Running {
        return Err(ApiError::StillRunning(record.id));
    }
    Ok(record)
}
