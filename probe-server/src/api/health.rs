//! `GET /healthz`: liveness, and whether the store answers.

use crate::server::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

/// The health answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok`, or `degraded` when the store does not answer.
    pub status: String,
    /// Probes accepted and not yet finished.
    pub in_flight: usize,
    /// The server's version.
    pub version: String,
    /// The store's back end: `sqlite` or `postgres`.
    pub store: String,
    /// This server instance's id, when several share a PostgreSQL store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

/// Liveness and store health.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    responses(
        (status = 200, description = "Serving", body = Health),
        (status = 503, description = "The store does not answer", body = Health),
    )
)]
pub async fn health_get(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let store_ok = state.store.list(1, None, None).await.is_ok();
    let health = Health {
        status: if store_ok { "ok" } else { "degraded" }.to_owned(),
        in_flight: state.gauges().in_flight,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        store: state.store.kind().to_owned(),
        instance: state.store.instance_id().map(str::to_owned),
    };
    let status = if store_ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(health))
}
