//! `GET /api/v1/config`: what this server offers, so clients can adapt
//! (the web UI shows its load comparison form only when benches are enabled).

use crate::server::AppState;
use axum::Json;
use axum::extract::State;
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
