//! `/api/v1/monitors`: a probe repeated on a schedule (create, list, read, pause, resume,
//! delete) and its history as a series (`shared::monitor`; the scheduler is
//! `server::schedule`).

use super::error::{ApiError, Result, rate_headers};
use super::extract::{ApiJson, ClientIp, OwnerToken};
use super::probes::{creation_admitted, guard_target};
use super::vantages;
use crate::probe::plan::Plan;
use crate::server::AppState;
use crate::server::owner;
use crate::store::history::Lines;
use crate::store::monitor_rows::{DeliveryLog, MonitorsOf, StoredMonitor};
use crate::store::{is_valid_id, new_id};
use axum::extract::{FromRequest, FromRequestParts, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use h123_shared::Protocol;
use h123_shared::api::ApiError as ErrorBody;
use h123_shared::monitor::{
    self, Monitor, MonitorCreated, MonitorList, MonitorRequest, Series, SeriesMetric,
};
use h123_shared::monitor_status::MonitorStatus;
use serde::Deserialize;

/// The default window of a series: the last day.
const DAY_MS: u64 = 24 * 3600 * 1000;

/// The longest window one series may cover: 400 days.
const MAX_WINDOW_MS: u64 = 400 * DAY_MS;

/// The `{id}` of a monitor path; an undecodable one is a JSON 404, like an unknown one.
pub struct MonitorId(pub String);

impl<S: Send + Sync> FromRequestParts<S> for MonitorId {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(MonitorId(id)),
            Err(_) => Err(ApiError::NotFound("no monitor at this path".to_owned())),
        }
    }
}

/// Creates a monitor.
#[utoipa::path(
    post,
    path = "/api/v1/monitors",
    tag = "monitors",
    params(("X-H123-Owner" = Option<String>, Header,
        description = "An owner token (22 to 128 base64url characters) to make the monitor under; without it a new one is made. `Authorization: Bearer TOKEN` works too.")),
    request_body(content = MonitorRequest, content_type = "application/json",
        description = "What to probe and how often. `every` is a whole number of `s`, `m` or `h` (at least the server's shortest interval, see `GET /api/v1/config`, at most 24h). `options` takes any probe option but `url`, `protocols` and `vantages`, which go at the top level. `thresholds` maps a gate (`total`, `ttfb.p95`, `h3:tls`, as `h123 probe --slo`) to a duration; every run is judged on them. Each run is a normal probe record linked to its monitor, with the monitor's visibility.",
        example = json!({"url": "https://example.com/", "protocols": ["h2", "h3"], "every": "5m", "thresholds": {"total": "300ms", "ttfb.p95": "150ms"}})),
    responses(
        (status = 201, description = "Created; its first run is at `monitor.next_slot_unix_ms`.", body = MonitorCreated,
            headers(("Location" = String, description = "The monitor's JSON"),
                    ("RateLimit-Limit" = u32, description = "Requests allowed in a burst"),
                    ("RateLimit-Remaining" = u32, description = "Requests left now"),
                    ("RateLimit-Reset" = u64, description = "Seconds until the limit is whole again")),
            links(("monitor" = (operation_id = "monitors_get", parameters(("id" = "$response.body#/monitor/id")))),
                  ("series" = (operation_id = "monitors_series", parameters(("id" = "$response.body#/monitor/id")))))),
        (status = 400, description = "The body is not JSON (`invalid_json`), or a malformed owner token (`invalid_owner_token`).", body = ErrorBody),
        (status = 403, description = "`blocked_target`: the URL is refused by the server's safety policy.", body = ErrorBody),
        (status = 413, description = "The body is too large.", body = ErrorBody),
        (status = 415, description = "The body is not declared as JSON.", body = ErrorBody),
        (status = 422, description = "`invalid_body` (unknown field, wrong type, `url` inside `options`), `invalid_interval`, `invalid_threshold`, or any probe option's code (`invalid_url`, `out_of_range`, `unknown_vantage`, ...).", body = ErrorBody),
        (status = 429, description = "`rate_limited` (the same per-client budget as probes; see `Retry-After`), or `too_many_monitors` (the owner's, the client's or the server's monitors are at their bound).", body = ErrorBody,
            headers(("Retry-After" = Option<u64>, description = "Seconds to wait, when rate limited"))),
        (status = 503, description = "`shutting_down`, or `store_unavailable`.", body = ErrorBody),
    )
)]
pub async fn monitors_create(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    OwnerToken(token): OwnerToken,
    request: Request,
) -> Result<Response> {
    if state.is_shutting_down() {
        return Err(ApiError::ShuttingDown);
    }
    let decision = creation_admitted(&state, client).await?;
    let ApiJson(asked) = ApiJson::<MonitorRequest>::from_request(request, &()).await?;
    let limits = state.config.monitors;
    let mut spec = asked
        .spec(limits.min_every_ms)
        .map_err(ApiError::InvalidMonitor)?;
    spec.options.vantages = vantages::checked(&state, &spec.options.vantages)?;
    // Checked now as a probe of it would be (each run checks again: names move).
    let mut plan = Plan::new(spec.options.clone(), &state.config.limits)?;
    guard_target(&state, &mut plan).await?;
    for target in &spec.alerts {
        crate::server::alerts::checked_address(&state, target.url().0)
            .await
            .map_err(|why| ApiError::BlockedTarget(format!("alerts: {why}")))?;
    }
    let token = OwnerToken(token).or_new()?;
    let owner_hash = owner::token_hash(&token);
    let made_by = state.client_key(client).to_string();
    if state.store.count_monitors(MonitorsOf::All).await? >= limits.max_total {
        return Err(ApiError::TooManyMonitors(format!(
            "this server keeps at most {} monitors, and has them",
            limits.max_total
        )));
    }
    let of_owner = MonitorsOf::Owner(owner_hash.clone());
    if state.store.count_monitors(of_owner).await? >= limits.per_owner {
        return Err(ApiError::TooManyMonitors(format!(
            "an owner token may hold at most {} monitors: delete one first",
            limits.per_owner
        )));
    }
    let of_client = MonitorsOf::Client(made_by.clone());
    if state.store.count_monitors(of_client).await? >= limits.per_client {
        return Err(ApiError::TooManyMonitors(format!(
            "one client (an IPv4 address or an IPv6 network) may make at most {} monitors, \
             and {made_by} has made them: delete one first",
            limits.per_client
        )));
    }
    let id = new_id().map_err(|e| ApiError::Internal(format!("random source: {e}")))?;
    let now = crate::probe::trace::unix_ms();
    let next_slot_unix_ms = monitor::first_slot(&id, now, spec.every_ms);
    // Made as an owner token is: 256 random bits.
    let webhook_secret = match spec.alerts.iter().any(|t| t.webhook.is_some()) {
        true => Some(OwnerToken(None).or_new()?),
        false => None,
    };
    let stored = StoredMonitor {
        monitor: Monitor {
            id: id.clone(),
            created_at_unix_ms: now,
            spec,
            paused: false,
            next_slot_unix_ms,
        },
        owner_hash: Some(owner_hash),
        client: Some(made_by),
        alert_secret: webhook_secret.clone(),
        alert_state: h123_shared::alert::AlertState::default(),
    };
    state.store.insert_monitor(stored.clone()).await?;
    let location = HeaderValue::from_str(&format!("/api/v1/monitors/{id}"))
        .map_err(|e| ApiError::Internal(format!("location header: {e}")))?;
    let body = MonitorCreated {
        monitor: stored.redacted(),
        owner_token: token,
        webhook_secret,
    };
    let mut response = (StatusCode::CREATED, axum::Json(body)).into_response();
    response.headers_mut().insert(header::LOCATION, location);
    rate_headers(&decision, response.headers_mut());
    Ok(response)
}

/// Query of `GET /api/v1/monitors`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MonitorListQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

/// Lists monitors, newest first: the public ones and the caller's own.
#[utoipa::path(
    get,
    path = "/api/v1/monitors",
    tag = "monitors",
    params(MonitorListQuery,
        ("X-H123-Owner" = Option<String>, Header, description = "Include this owner token's unlisted monitors")),
    responses(
        (status = 200, description = "Newest first", body = MonitorList),
        (status = 400, description = "A bad `limit` (`invalid_query`) or owner token (`invalid_owner_token`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn monitors_list(
    State(state): State<AppState>,
    OwnerToken(token): OwnerToken,
    query: std::result::Result<Query<MonitorListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response> {
    let Query(query) = query.map_err(|e| ApiError::InvalidQuery(e.body_text()))?;
    let limit = super::probes::page_size(query.limit)?;
    let owner_hash = token.as_deref().map(owner::token_hash);
    let items = state
        .store
        .list_monitors(limit, owner_hash)
        .await?
        .iter()
        .map(StoredMonitor::redacted)
        .collect();
    Ok(axum::Json(MonitorList { items }).into_response())
}

/// The stored monitor `id`, or a 404.
async fn stored(state: &AppState, id: &str) -> Result<StoredMonitor> {
    if !is_valid_id(id) {
        return Err(ApiError::no_monitor(id));
    }
    state
        .store
        .get_monitor(id.to_owned())
        .await?
        .ok_or_else(|| ApiError::no_monitor(id))
}

/// Reads a monitor.
#[utoipa::path(
    get,
    path = "/api/v1/monitors/{id}",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id")),
    responses(
        (status = 200, description = "The monitor (its options redacted as every record's are)", body = Monitor),
        (status = 404, description = "No such monitor (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn monitors_get(
    State(state): State<AppState>,
    MonitorId(id): MonitorId,
) -> Result<Response> {
    Ok(axum::Json(stored(&state, &id).await?.redacted()).into_response())
}

/// The monitor `id` when `token` owns it.
async fn owned(state: &AppState, id: &str, token: Option<String>) -> Result<StoredMonitor> {
    let stored = stored(state, id).await?;
    let given = token.as_deref().map(owner::token_hash);
    if given.is_none() || given != stored.owner_hash {
        return Err(ApiError::NotMonitorOwner);
    }
    Ok(stored)
}

/// Pauses a monitor: its runs are held (not missed) until it is resumed.
#[utoipa::path(
    post,
    path = "/api/v1/monitors/{id}/pause",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id"),
        ("X-H123-Owner" = String, Header, description = "The owner token the monitor was made under")),
    responses(
        (status = 200, description = "Paused", body = Monitor),
        (status = 400, description = "A malformed owner token (`invalid_owner_token`)", body = ErrorBody),
        (status = 403, description = "Not the monitor's owner token (`not_owner`)", body = ErrorBody),
        (status = 404, description = "No such monitor (`not_found`)", body = ErrorBody),
        (status = 429, description = "Too many requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`store_unavailable`", body = ErrorBody),
    )
)]
pub async fn monitors_pause(
    State(state): State<AppState>,
    OwnerToken(token): OwnerToken,
    MonitorId(id): MonitorId,
) -> Result<Response> {
    set_paused(&state, &id, token, true).await
}

/// Resumes a paused monitor at its next slot from now.
#[utoipa::path(
    post,
    path = "/api/v1/monitors/{id}/resume",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id"),
        ("X-H123-Owner" = String, Header, description = "The owner token the monitor was made under")),
    responses(
        (status = 200, description = "Running again", body = Monitor),
        (status = 400, description = "A malformed owner token (`invalid_owner_token`)", body = ErrorBody),
        (status = 403, description = "Not the monitor's owner token (`not_owner`)", body = ErrorBody),
        (status = 404, description = "No such monitor (`not_found`)", body = ErrorBody),
        (status = 429, description = "Too many requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`store_unavailable`", body = ErrorBody),
    )
)]
pub async fn monitors_resume(
    State(state): State<AppState>,
    OwnerToken(token): OwnerToken,
    MonitorId(id): MonitorId,
) -> Result<Response> {
    set_paused(&state, &id, token, false).await
}

/// Pauses or resumes monitor `id` for the holder of `token`: a paused monitor keeps its next
/// slot; a resumed one goes on at its next slot from now (the slots while paused were held,
/// not missed).
async fn set_paused(
    state: &AppState,
    id: &str,
    token: Option<String>,
    paused: bool,
) -> Result<Response> {
    let mut stored = owned(state, id, token).await?;
    let m = &stored.monitor;
    let next = match paused {
        true => m.next_slot_unix_ms,
        false => {
            let anchor = monitor::first_slot(&m.id, m.created_at_unix_ms, m.spec.every_ms);
            monitor::slot_at_or_after(anchor, m.spec.every_ms, crate::probe::trace::unix_ms())
        }
    };
    state
        .store
        .set_monitor_paused(id.to_owned(), paused, next)
        .await?;
    stored.monitor.paused = paused;
    stored.monitor.next_slot_unix_ms = next;
    Ok(axum::Json(stored.redacted()).into_response())
}

/// Deletes a monitor, its history and its series on this instance's `/metrics` (its runs' probe
/// records stay, as every record does).
#[utoipa::path(
    delete,
    path = "/api/v1/monitors/{id}",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id"),
        ("X-H123-Owner" = String, Header, description = "The owner token the monitor was made under")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "A malformed owner token (`invalid_owner_token`)", body = ErrorBody),
        (status = 403, description = "Not the monitor's owner token (`not_owner`)", body = ErrorBody),
        (status = 404, description = "No such monitor (`not_found`)", body = ErrorBody),
        (status = 429, description = "Too many requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`store_unavailable`", body = ErrorBody),
    )
)]
pub async fn monitors_delete(
    State(state): State<AppState>,
    OwnerToken(token): OwnerToken,
    MonitorId(id): MonitorId,
) -> Result<Response> {
    owned(&state, &id, token).await?;
    if !state.store.delete_monitor(id.clone()).await? {
        return Err(ApiError::no_monitor(&id));
    }
    state.metrics.monitor_deleted(&id);
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Query of `GET /api/v1/monitors/{id}/series`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeriesQuery {
    /// `total` (new connections, the default), `ttfb`, `dns`, `connect`, `tls` or `reused_total`.
    pub metric: Option<String>,
    /// Only this protocol's line (`h1`, `h2`, `h3`).
    pub protocol: Option<String>,
    /// Only this vantage's lines.
    pub vantage: Option<String>,
    /// The window's start, milliseconds since the Unix epoch (default: a day before `to`).
    #[param(minimum = 0)]
    pub from: Option<u64>,
    /// The window's end, exclusive (default: now).
    #[param(minimum = 0)]
    pub to: Option<u64>,
}

/// One metric of a monitor's runs over a window: a line per protocol and vantage, bucketed.
#[utoipa::path(
    get,
    path = "/api/v1/monitors/{id}/series",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id"), SeriesQuery),
    responses(
        (status = 200, description = "The series: buckets of the monitor's interval, or longer so a window has at most 1,000; each with its runs, failures, breaches and min, median, p95 and max of the metric over the runs that succeeded; a bucket of one run links its probe. Missed slots apart; the window's verdict when two protocols answered.", body = Series),
        (status = 400, description = "A bad metric, protocol or window (`invalid_query`)", body = ErrorBody),
        (status = 404, description = "No such monitor (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn monitors_series(
    State(state): State<AppState>,
    MonitorId(id): MonitorId,
    query: std::result::Result<Query<SeriesQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response> {
    let Query(query) = query.map_err(|e| ApiError::InvalidQuery(e.body_text()))?;
    let metric = match query.metric.as_deref() {
        None => SeriesMetric::Total,
        Some(name) => SeriesMetric::parse(name).ok_or_else(|| {
            ApiError::InvalidQuery(format!(
                "metric must be one of total, ttfb, dns, connect, tls, reused_total, not `{}`",
                name.chars().take(40).collect::<String>()
            ))
        })?,
    };
    let protocol = match query.protocol.as_deref() {
        None => None,
        Some(name) => Some(
            Protocol::ALL
                .into_iter()
                .find(|p| p.as_str() == name)
                .ok_or_else(|| {
                    ApiError::InvalidQuery("protocol must be h1, h2 or h3".to_owned())
                })?,
        ),
    };
    let to = query.to.unwrap_or_else(crate::probe::trace::unix_ms);
    let from = query.from.unwrap_or(to.saturating_sub(DAY_MS));
    if from >= to || to - from > MAX_WINDOW_MS {
        return Err(ApiError::InvalidQuery(
            "the window needs from < to, at most 400 days apart".to_owned(),
        ));
    }
    let stored = stored(&state, &id).await?;
    let lines = Lines {
        protocol,
        vantage: query.vantage,
    };
    let (mut series, _rows) = state
        .store
        .monitor_series(
            &id,
            stored.monitor.spec.every_ms,
            &[metric],
            (from, to),
            monitor::MAX_BUCKETS,
            &lines,
        )
        .await?;
    Ok(axum::Json(series.remove(0)).into_response())
}

/// Where a monitor stands: each protocol's last run per vantage, and its uptime and p95 total
/// over the last 24 h, 7 d and 30 d (what its status page shows).
#[utoipa::path(
    get,
    path = "/api/v1/monitors/{id}/status",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id")),
    responses(
        (status = 200, description = "A row per protocol and vantage that ran in the last 30 days: the last run (state, total, status, breaches, what failed, its probe) and, per window, runs, runs up (every attempt answered without an HTTP error) and the p95 total over those; missed slots per window; `latest`, the latest slot while its run is under way (`running`, since its claim) or was cut short by a stop (`cancelled`, with why), absent once its run's points are in", body = MonitorStatus),
        (status = 404, description = "No such monitor (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn monitors_status(
    State(state): State<AppState>,
    MonitorId(id): MonitorId,
) -> Result<Response> {
    let stored = stored(&state, &id).await?;
    let kept = super::monitor_page::figures(&state, &stored, None).await?;
    Ok(axum::Json(kept.status.as_ref()).into_response())
}

/// The latest tries to deliver a monitor's notifications, newest first.
#[utoipa::path(
    get,
    path = "/api/v1/monitors/{id}/deliveries",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id")),
    responses(
        (status = 200, description = "Up to 100 tries, newest first: when, where (scheme, host and port only), which condition, firing or resolved, the try's number, the answer's status or why there was none", body = Vec<DeliveryLog>),
        (status = 404, description = "No such monitor (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn monitors_deliveries(
    State(state): State<AppState>,
    MonitorId(id): MonitorId,
) -> Result<Response> {
    stored(&state, &id).await?;
    let log = state.store.deliveries(id, 100).await?;
    Ok(axum::Json(log).into_response())
}

/// The `{id}` and `{file}` of a badge path: a monitor id and `h1.svg`, `h2.svg` or `h3.svg`.
pub struct BadgePath(pub String, pub String);

impl<S: Send + Sync> FromRequestParts<S> for BadgePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<(String, String)>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path((id, file))) => Ok(BadgePath(id, file)),
            Err(_) => Err(ApiError::NotFound("no badge at this path".to_owned())),
        }
    }
}

/// How long a badge may be cached: it changes at most once a run.
const BADGE_MAX_AGE_SECS: u64 = 60;

/// A monitor's badge for one protocol: its last run's total, or what went wrong, as SVG.
#[utoipa::path(
    get,
    path = "/badge/{id}/{file}",
    tag = "monitors",
    params(("id" = String, Path, description = "The monitor's id"),
        ("file" = String, Path, description = "`h1.svg`, `h2.svg` or `h3.svg`")),
    responses(
        (status = 200, description = "The badge: `h3 | 42.0 ms` (green), `42.0 ms over` a threshold or an HTTP error (amber), `failing` or `not offered` (red), `no runs` (grey); cacheable for a minute", content_type = "image/svg+xml", body = String),
        (status = 404, description = "No such monitor, or not one of its protocols (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn monitors_badge(
    State(state): State<AppState>,
    BadgePath(id, file): BadgePath,
) -> Result<Response> {
    let stored = stored(&state, &id).await?;
    let spec = &stored.monitor.spec;
    let protocol = file
        .strip_suffix(".svg")
        .and_then(|name| spec.options.protocols.iter().find(|p| p.as_str() == name))
        .copied()
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "monitor {id} has no badge `{}`",
                file.chars().take(40).collect::<String>()
            ))
        })?;
    // The last run falls within two intervals, unless the monitor is paused or new.
    let to = crate::probe::trace::unix_ms() + 1;
    let from = to.saturating_sub(2 * spec.every_ms + 60_000);
    let points = state.store.points(id, from, to, Some(protocol)).await?;
    let latest = points.iter().rev().find(|p| p.protocol.is_some());
    let (value, tone) = h123_shared::badge::of_latest(latest);
    let label = protocol.as_str().to_owned();
    let svg = h123_frontend::pages::render_picture(|| {
        h123_frontend::pages::monitor::badge::badge(label, value, tone)
    });
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml".to_owned()),
            (
                header::CACHE_CONTROL,
                format!("public, max-age={BADGE_MAX_AGE_SECS}"),
            ),
        ],
        svg,
    )
        .into_response())
}
