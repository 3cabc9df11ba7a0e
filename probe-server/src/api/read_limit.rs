//! The guard every request passes: its route's class ([`route_class`]) picks the limits that
//! bound it, so nothing the server answers goes unbounded.
//!
//! A record can be large, and serialising it (or its HAR, or drawing its page) costs memory and
//! CPU per reader; without a bound, a few clients reading one big record in a loop could
//! exhaust the server. So records, exports, lists and comparisons take a token of the client's
//! read rate and a place among the expensive reads in flight; event streams take a token and a
//! place among the client's and the server's open streams, held while the stream lasts (a
//! stream holds no copy of the history: it reads from a cursor over the shared one, and a
//! drawn view is drawn once per probe for all its viewers, `view::feed`); light answers take
//! a token of the light rate; `/healthz` takes nothing. Creation has its own limiter, in its
//! handlers, and agents their tokens.

use super::error::ApiError;
use super::route_class::{self, Class};
use crate::server::AppState;
use crate::server::stream_cap::{Refused, StreamPlace};
use axum::body::Body;
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

/// How long a read waits for an in-flight place before `503 server_busy`.
pub const READ_QUEUE_WAIT: Duration = Duration::from_secs(5);

/// The middleware: the request's class, then its limits; the class rides on the response's
/// extensions (never on the wire), so a test can see how each route was bounded.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let class = match request.extensions().get::<MatchedPath>() {
        Some(path) => route_class::class_of(request.method(), path.as_str()),
        None => Some(route_class::FALLBACK),
    };
    let Some(class) = class else {
        let route = request
            .extensions()
            .get::<MatchedPath>()
            .map_or("", |p| p.as_str());
        let error = ApiError::Internal(format!("route {route} has no class"));
        return error.into_response();
    };
    let mut response = admit(&state, class, request, next).await;
    response.extensions_mut().insert(class);
    response
}

async fn admit(state: &AppState, class: Class, request: Request, next: Next) -> Response {
    let client = state.client_key(client_ip(&request));
    match class {
        Class::Health | Class::Create | Class::Agent | Class::Scrape => next.run(request).await,
        Class::Light | Class::Page => {
            let decision = state.light_limiter.check(client);
            if !decision.allowed {
                state.metrics.rejected("light_rate");
                return ApiError::RateLimited(decision).into_response();
            }
            next.run(request).await
        }
        Class::Record | Class::Stream => {
            let decision = state.read_limiter.check(client);
            if !decision.allowed {
                state.metrics.rejected("read_rate");
                return ApiError::RateLimited(decision).into_response();
            }
            if class == Class::Stream {
                return match state.streams.open(client) {
                    Ok(place) => holding(next.run(request).await, place),
                    Err(Refused::Client(cap)) => {
                        state.metrics.rejected("streams_client");
                        ApiError::TooManyStreams(cap).into_response()
                    }
                    Err(Refused::Server) => {
                        state.metrics.rejected("streams_busy");
                        ApiError::ServerBusy.into_response()
                    }
                };
            }
            let permit =
                tokio::time::timeout(READ_QUEUE_WAIT, state.reads.clone().acquire_owned()).await;
            match permit {
                Ok(Ok(_permit)) => next.run(request).await,
                _ => {
                    state.metrics.rejected("reads_busy");
                    ApiError::ServerBusy.into_response()
                }
            }
        }
    }
}

/// The client's address (`0.0.0.0` when unknown, as in tests without a socket).
pub fn client_ip(request: &Request) -> IpAddr {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

/// `response` with `place` held until its body ends or is dropped (a stream's reader left).
fn holding(response: Response, place: StreamPlace) -> Response {
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            let _held = &place;
            chunk
        });
        Body::from_stream(stream)
    })
}
