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
pub mod monitor_cache;
pub mod monitor_page;
pub mod monitors;
pub mod openapi;
pub mod permalink_page;
pub mod preview;
pub mod probes;
pub mod progress;
pub mod read_limit;
pub mod rendered_page;
pub mod route_class;
pub mod scrape;
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
use axum::routing::MethodRouter;
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

/// The whole application: API, metrics, health and the web UI from `web_root`, every route
/// mounted from [`route_class::table`] and bounded by its class.
pub fn app_with_web_root(state: AppState, web_root: Option<&Path>) -> Router {
    // The UI's policy allows the inline scripts of the index.html served, by hash.
    let ui = std::sync::Arc::new(security::UiPolicy::new(web_root));
    let mount = route_class::Mount {
        probe_body_limit: probe_body_limit(state.config.limits.max_request_body),
        web_root: web_root.map(|root| std::sync::Arc::new(root.to_path_buf())),
    };
    let mut api = Router::new();
    let table = route_class::table();
    for (i, route) in table.iter().enumerate() {
        if table[..i].iter().any(|r| r.path == route.path) {
            continue;
        }
        // A path's methods in one method router, with one JSON 405 for the others.
        let handlers = table
            .iter()
            .filter(|r| r.path == route.path)
            .fold(MethodRouter::new(), |all, r| all.merge((r.handler)(&mount)));
        api = api.route(route.path, methods(handlers));
    }
    // The guard wraps every route (each sees its `MatchedPath`) and the UI's fallback.
    let guard = || middleware::from_fn_with_state(state.clone(), read_limit::guard);
    let api = api
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(guard());
    // Outermost on the API: a preflight is answered before any limit counts it.
    let api = match cors::layer(&state.config.cors_origins) {
        Some(cors) => api.layer(cors),
        None => api,
    };
    api.merge(static_files::router(mount.web_root).layer(guard()))
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

/// Any `GET` under `/api` that names no endpoint: a JSON 404.
pub async fn api_not_found(uri: Uri) -> Response {
    let path: String = uri.path().chars().take(200).collect();
    ApiError::NotFound(format!("no API endpoint at {path}")).into_response()
}
