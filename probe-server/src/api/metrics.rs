//! `GET /metrics` (Prometheus text), and the middleware that counts every request.

use super::encoding;
use super::error::ApiError;
use crate::server::AppState;
use crate::server::agents::{constant_time_eq, digest};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use h123_shared::api::ApiError as ErrorBody;

/// Prometheus metrics: probes by protocol and outcome, phase durations, API requests and latency,
/// rejections, and each public monitor's phase histograms and runs (at most 200 by id; unlisted
/// ones only under `_other`); gzipped for a client that accepts it; only for the operator's bearer
/// token when the server has one (`--metrics-token`).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses(
        (status = 200, description = "Prometheus text exposition format 0.0.4 (gzip when `Accept-Encoding` allows it); monitors labelled by id only when public, unlisted ones summed under `monitor=\"_other\"`", body = String,
        content_type = "text/plain"),
        (status = 401, description = "The server was started with `--metrics-token` and the request has no `Authorization: Bearer` with it (`unauthorized`)", body = ErrorBody),
        (status = 429, description = "Too many light requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn metrics_get(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(expected) = &state.config.metrics_token {
        let offered = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        if !offered.is_some_and(|token| constant_time_eq(&digest(token.trim()), expected)) {
            let why = "/metrics is the operator's: send its bearer token (--metrics-token)";
            return ApiError::Unauthorized(why.to_owned()).into_response();
        }
    }
    let text = state.metrics.render(state.gauges());
    let gzipped = encoding::wants_gzip(&headers, text.len())
        .then(|| encoding::gzip(text.as_bytes()))
        .flatten();
    let mut response = match gzipped {
        Some(body) => {
            let mut response = body.into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            response
        }
        None => text.into_response(),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    response
}

/// Counts the request by route pattern and status, and times it (until the
/// response head is ready; an event stream's body is not included).
pub async fn track(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| {
            if request.uri().path().starts_with("/api/") {
                "/api/(unknown)".to_owned()
            } else {
                "(static)".to_owned()
            }
        });
    let started = crate::probe::trace::now();
    let response = next.run(request).await;
    let took = crate::probe::trace::now().saturating_duration_since(started);
    state
        .metrics
        .request(&route, response.status().as_u16(), took);
    response
}
