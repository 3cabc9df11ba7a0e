//! `GET /api/v1/config`: what this server offers, so clients can adapt
//! (the web UI shows its load comparison form only when benches are enabled), and
//! `GET /api/v1/config/view`: the home page's forms as this server offers them.

use super::conditional::{Representation, respond};
use crate::server::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use h123_frontend::pages::home::{HomeForm, home_page};
use h123_shared::api::ApiError as ErrorBody;
use h123_shared::api::ServerInfo;

/// The server's version, the methods and body size its probes may use, and
/// whether it runs benches, with their bounds.
#[utoipa::path(
    get,
    path = "/api/v1/config",
    tag = "operations",
    responses(
        (status = 200, description = "What this server offers", body = ServerInfo),
        (status = 429, description = "Too many light requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn config_get(State(state): State<AppState>) -> Json<ServerInfo> {
    Json(server_info(&state))
}

/// The home page's forms as this server offers them, drawn on the server: the markup `/` carries
/// (the Leptos component `h123_frontend::pages::home`), which the home page fetches when a static
/// host served it.
#[utoipa::path(
    get,
    path = "/api/v1/config/view",
    tag = "operations",
    params(("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "The home page's markup, a fragment of HTML (`<form class=\"probe-form\" ...>`, the load comparison form when the server runs benches, and the recent results' frame)",
            body = String, content_type = "text/html",
            headers(("ETag" = String, description = "Changes whenever the markup does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 429, description = "Too many light requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn config_view(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let html = home_markup(&state);
    // Drawn by this server's version: revalidated every time.
    let representation = Representation::new(html.into_bytes(), "text/html; charset=utf-8", false);
    respond(&headers, representation)
}

/// The home page's forms and the recent results' frame, as this server offers them.
pub fn home_markup(state: &AppState) -> String {
    let form = HomeForm::of(&server_info(state));
    h123_frontend::pages::render(move || home_page(&form))
}

/// What this server offers (the config's answer, and what the home page is drawn for).
pub fn server_info(state: &AppState) -> ServerInfo {
    let bench = state.config.bench.as_ref();
    ServerInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        bench_enabled: bench.is_some(),
        bench_limits: bench.map(|b| b.limits),
        allowed_methods: state.config.limits.allowed_methods.clone(),
        max_request_body: state.config.limits.max_request_body,
        network_enabled: state.config.limits.allow_network,
        public_targets_only: !state.config.guard.policy.allows_private(),
        bench_targets: bench
            .map(|b| b.targets.iter().map(ToString::to_string).collect())
            .unwrap_or_default(),
    }
}
