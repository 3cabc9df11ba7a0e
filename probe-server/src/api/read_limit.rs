//! Reads of records (JSON, HAR, curl, SVG, lists, event streams) get their own per-client rate and a cap on expensive ones in flight.
//!
//! A record can be large, and serialising it (or its HAR) costs memory and
//! CPU per reader; without a bound, a few clients reading one big record in
//! a loop could exhaust the server. Creation has its own limiter
//! (`probes_create`); this one counts only `GET`s of probes, benches and comparisons (two
//! whole records and their comparison built at once).
//! Event streams count against the rate but not the in-flight cap (a stream
//! holds no copy of the history: it reads from a cursor over the shared one; a
//! view stream holds one folded state, bounded by the record's limits, and draws
//! it at most every `view::VIEW_INTERVAL`).

use super::error::ApiError;
use crate::server::AppState;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// How long a read waits for an in-flight place before `503 server_busy`.
pub const READ_QUEUE_WAIT: Duration = Duration::from_secs(5);

/// Whether a request is a read this module limits, and whether it is an
/// expensive one (a whole record or export built in memory).
fn classify(method: &Method, path: &str) -> Option<bool> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    let rest = path
        .strip_prefix("/api/v1/probes")
        .or_else(|| path.strip_prefix("/api/v1/benches"))
        .or_else(|| path.strip_prefix("/api/v1/compare/"))?;
    if rest.ends_with("/events") {
        return Some(false);
    }
    Some(true)
}

/// The middleware: per-client read rate, then a place among the expensive reads in flight.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(expensive) = classify(request.method(), request.uri().path()) else {
        return next.run(request).await;
    };
    let ip = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let decision = state.read_limiter.check(state.client_key(ip));
    if !decision.allowed {
        state.metrics.rejected("read_rate");
        return ApiError::RateLimited(decision).into_response();
    }
    if !expensive {
        return next.run(request).await;
    }
    let permit = tokio::time::timeout(READ_QUEUE_WAIT, state.reads.clone().acquire_owned()).await;
    match permit {
        Ok(Ok(_permit)) => next.run(request).await,
        _ => {
            state.metrics.rejected("reads_busy");
            ApiError::ServerBusy.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_record_reads_are_limited_and_streams_are_cheap() {
        let get = Method::GET;
        assert_eq!(classify(&get, "/api/v1/probes"), Some(true));
        assert_eq!(classify(&get, "/api/v1/probes/abc/har"), Some(true));
        assert_eq!(classify(&get, "/api/v1/benches/abc"), Some(true));
        assert_eq!(classify(&get, "/api/v1/compare/abc/def"), Some(true));
        assert_eq!(classify(&get, "/api/v1/probes/abc/events"), Some(false));
        assert_eq!(classify(&get, "/api/v1/probes/abc/view"), Some(true));
        assert_eq!(
            classify(&get, "/api/v1/probes/abc/view/events"),
            Some(false)
        );
        assert_eq!(classify(&Method::POST, "/api/v1/probes"), None);
        assert_eq!(classify(&get, "/healthz"), None);
        assert_eq!(classify(&get, "/api/openapi.json"), None);
    }
}
