//! The HTTP API of `h123 serve`: one module per resource, merged in [`app`].
//!
//! Every error is `{"error":{"code","message"}}` ([`error::ApiError`]); unknown
//! paths under `/api` answer a JSON 404, everything else falls through to the
//! web UI.

pub mod agent;
pub mod benches;
pub mod browser;
pub mod compare;
pub mod conditional;
pub mod config;
pub mod cors;
pub mod decay_svg;
pub mod encoding;
pub mod error;
pub mod events;
pub mod extract;
pub mod health;
pub mod metrics;
pub mod openapi;
pub mod permalink_page;
pub mod probes;
pub mod progress;
pub mod read_limit;
pub mod security;
pub mod static_files;
pub mod svg;
pub mod vantages;
pub mod view;
pub mod web_root;

use crate::server::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::Uri;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use error::ApiError;
use std::path::Path;

/// Largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Largest `POST /api/v1/probes` body, in bytes: room for the options plus
/// a request body at the server's cap, base64-encoded (4 characters per 3 bytes).
pub fn probe_body_limit(max_request_body: u64) -> usize {
    let encoded = usize::try_from(max_request_body.div_ceil(3) * 4).unwrap_or(usize::MAX);
    MAX_BODY_BYTES.saturating_add(encoded)
}

/// The whole application: API, metrics, health and the web UI from `web_root`.
pub fn app_with_web_root(state: AppState, web_root: Option<&Path>) -> Router {
    // The UI's policy allows the inline scripts of the index.html served, by hash.
    let ui = std::sync::Arc::new(security::UiPolicy::new(web_root));
    let probe_json = probe_body_limit(state.config.limits.max_request_body);
    let api = Router::new()
        .route(
            "/api/v1/probes",
            methods(get(probes::probes_list).post(probes::probes_create))
                .layer(DefaultBodyLimit::max(probe_json)),
        )
        .route("/api/v1/probes/{id}", methods(get(probes::probes_get)))
        .route(
            "/api/v1/probes/{id}/browser",
            methods(axum::routing::post(browser::browser_post)),
        )
        .route(
            "/api/v1/probes/{id}/events",
            methods(get(probes::probes_events)),
        )
        .route("/api/v1/probes/{id}/view", methods(get(view::probes_view)))
        .route(
            "/api/v1/probes/{id}/view/events",
            methods(get(view::probes_view_events)),
        )
        .route("/api/v1/probes/{id}/har", methods(get(probes::probes_har)))
        .route(
            "/api/v1/probes/{id}/curl",
            methods(get(probes::probes_curl)),
        )
        .route(
            "/api/v1/probes/{id}/waterfall.svg",
            methods(get(probes::probes_svg)),
        )
        .route(
            "/api/v1/benches",
            methods(get(benches::benches_list).post(benches::benches_create)),
        )
        .route("/api/v1/benches/{id}", methods(get(benches::benches_get)))
        .route(
            "/api/v1/benches/{id}/decay.svg",
            methods(get(benches::benches_decay_svg)),
        )
        .route(
            "/api/v1/compare/{a}/{b}",
            methods(get(compare::compare_get)),
        )
        .route("/api/v1/config", methods(get(config::config_get)))
        .route("/api/v1/vantages", methods(get(vantages::vantages_get)))
        .route(
            "/api/v1/agent/claim",
            methods(axum::routing::post(agent::agent_claim)),
        )
        .route(
            "/api/v1/agent/jobs/{id}/events",
            methods(axum::routing::post(agent::agent_events))
                .layer(DefaultBodyLimit::max(agent::MAX_AGENT_BODY)),
        )
        .route(
            "/api/v1/agent/jobs/{id}/result",
            methods(axum::routing::post(agent::agent_result))
                .layer(DefaultBodyLimit::max(agent::MAX_AGENT_BODY)),
        )
        .route("/api/openapi.json", methods(get(openapi::openapi_get)))
        .route("/api", methods(get(api_not_found)))
        .route("/api/{*rest}", methods(get(api_not_found)))
        .route("/healthz", methods(get(health::health_get)))
        .route("/metrics", methods(get(metrics::metrics_get)));
    let api = api
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            read_limit::guard,
        ));
    // Outermost on the API: a preflight is answered before any limit counts it.
    let api = match cors::layer(&state.config.cors_origins) {
        Some(cors) => api.layer(cors),
        None => api,
    };
    api.merge(static_files::router(web_root))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .layer(middleware::from_fn(move |request, next| {
            security::harden(ui.clone(), request, next)
        }))
        .with_state(state)
}

/// The application without a web UI (the built-in page instead): what tests call with `oneshot`.
pub fn app(state: AppState) -> Router {
    app_with_web_root(state, None)
}

/// Any other method on a known path: a JSON 405.
fn methods(router: MethodRouter<AppState>) -> MethodRouter<AppState> {
    router.fallback(|| async { ApiError::MethodNotAllowed })
}

async fn api_not_found(uri: Uri) -> Response {
    let path: String = uri.path().chars().take(200).collect();
    ApiError::NotFound(format!("no API endpoint at {path}")).into_response()
}
