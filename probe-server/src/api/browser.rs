//! `POST /api/v1/probes/{id}/browser`: the probe owner's own browser measurement of the URL,
//! stored once beside the finished record and compared with the server's there.

use super::error::{ApiError, Result};
use super::extract::{ApiJson, ClientIp, OwnerToken, ProbeId};
use super::probes::{creation_admitted, load};
use crate::server::AppState;
use crate::server::owner;
use crate::store::Attached;
use axum::extract::{FromRequest, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use h123_shared::api::{ApiError as ErrorBody, ProbeRecord, ProbeStatus};
use h123_shared::browser::{self, BrowserRun, MAX_USER_AGENT};

/// Adds the owner's browser measurement to a finished probe, once.
#[utoipa::path(
    post,
    path = "/api/v1/probes/{id}/browser",
    tag = "probes",
    params(("id" = String, Path, description = "The probe's id"),
           ("X-H123-Owner" = String, Header, description = "The owner token the probe was made under")),
    request_body(content = BrowserRun, content_type = "application/json",
        description = "What the browser's Resource Timing entries showed, request by request (1 to 10). `user_agent`, `measured_at_unix_ms` and `finding` are set by the server: the user agent from this request's `User-Agent`; no address is kept."),
    responses(
        (status = 201, description = "Stored; the record with its `browser` measurement and the finding comparing it with the server's", body = ProbeRecord),
        (status = 400, description = "Not JSON (`invalid_json`), or a malformed owner token (`invalid_owner_token`)", body = ErrorBody),
        (status = 403, description = "No owner token, or not the one the probe was made under (`not_owner`)", body = ErrorBody),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the time limit (`request_timeout`)", body = ErrorBody),
        (status = 409, description = "The probe is still running (`probe_running`), has its measurement already (`browser_exists`), or is over a day old (`browser_window_closed`)", body = ErrorBody),
        (status = 413, description = "The body is over 64 KiB (`payload_too_large`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 415, description = "The body is not declared as JSON", body = ErrorBody),
        (status = 422, description = "Not a measurement a browser could have made (`invalid_browser_run`, naming what), or the wrong shape (`invalid_body`)", body = ErrorBody),
        (status = 429, description = "`rate_limited` (the creation rate); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "The database is unavailable now (`store_unavailable`)", body = ErrorBody),
    )
)]
pub async fn browser_post(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    ProbeId(id): ProbeId,
    OwnerToken(token): OwnerToken,
    request: Request,
) -> Result<Response> {
    creation_admitted(&state, client).await?;
    let token = token.ok_or(ApiError::NotOwner)?;
    let user_agent = request
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(|ua| {
            ua.chars()
                .filter(|c| !c.is_control())
                .take(MAX_USER_AGENT)
                .collect()
        })
        .unwrap_or_default();
    let ApiJson(mut run) = ApiJson::<BrowserRun>::from_request(request, &()).await?;
    run.check().map_err(ApiError::InvalidBrowserRun)?;
    let mut record = load(&state, &id).await?;
    if record.status == ProbeStatus::Running {
        return Err(ApiError::ProbeRunning(id));
    }
    if record.browser.is_some() {
        return Err(ApiError::BrowserExists(id));
    }
    let now = crate::probe::trace::unix_ms();
    // Caches keep a settled record forever: it must stay as it is.
    if record.settled(now) {
        return Err(ApiError::BrowserWindowClosed(id));
    }
    run.user_agent = user_agent;
    run.measured_at_unix_ms = now;
    run.finding = Some(browser::compare(&run, &record.result));
    let outcome = state
        .store
        .attach_browser(id.clone(), owner::token_hash(&token), run.clone())
        .await?;
    match outcome {
        Attached::Stored => {
            record.browser = Some(run);
            Ok((StatusCode::CREATED, axum::Json(record)).into_response())
        }
        Attached::NoProbe => Err(ApiError::no_probe(&id)),
        Attached::NotOwner => Err(ApiError::NotOwner),
        Attached::Running => Err(ApiError::ProbeRunning(id)),
        Attached::Exists => Err(ApiError::BrowserExists(id)),
    }
}
