//! `GET /api/v1/vantages`: the places this server can measure from, and the
//! check of a probe's `vantages` against them.

use super::error::{ApiError, Result};
use crate::server::AppState;
use axum::Json;
use axum::extract::State;
use h123_shared::api::ApiError as ErrorBody;
use h123_shared::api::{VantageInfo, VantageKind, VantageList};
use h123_shared::vantage::{VantageRun, valid_name};

/// Most vantages one probe may ask for.
pub const MAX_VANTAGES: usize = 8;

/// Every vantage this server knows: the server's own first, then every
/// configured agent by name (online when heard from within its lease).
#[utoipa::path(
    get,
    path = "/api/v1/vantages",
    tag = "probes",
    responses(
        (status = 200, description = "The vantages a probe may name in `vantages`", body = VantageList),
        (status = 429, description = "Too many light requests from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn vantages_get(State(state): State<AppState>) -> Json<VantageList> {
    let mut items = vec![VantageInfo {
        vantage: state.config.vantage.clone(),
        kind: VantageKind::Server,
        version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        online: true,
        last_seen_ms_ago: None,
    }];
    items.extend(state.agents.list());
    Json(VantageList { items })
}

/// A record's runs for the vantages `names` (checked), in order, none begun.
pub fn runs(state: &AppState, names: &[String]) -> Vec<VantageRun> {
    names
        .iter()
        .map(|name| VantageRun {
            vantage: if *name == state.config.vantage.name {
                state.config.vantage.clone()
            } else {
                state.agents.vantage(name)
            },
            result: None,
            problem: None,
        })
        .collect()
}

/// `asked` without repeats, in order, when every name is a vantage of this
/// server; empty stays empty (the server's own).
///
/// # Errors
/// [`ApiError::UnknownVantage`] naming the first unknown or malformed name
/// and the known ones, or when more than [`MAX_VANTAGES`] are asked for.
pub fn checked(state: &AppState, asked: &[String]) -> Result<Vec<String>> {
    let own = &state.config.vantage.name;
    let mut names: Vec<String> = Vec::new();
    for name in asked {
        if !valid_name(name) {
            let shown: String = name.chars().take(40).collect();
            return Err(ApiError::UnknownVantage(format!(
                "`{shown}` is not a vantage name (letters, digits, `-` and `_`, at most 32)"
            )));
        }
        if name != own && !state.agents.contains(name) {
            let mut known = vec![own.clone()];
            known.extend(state.agents.list().into_iter().map(|a| a.vantage.name));
            return Err(ApiError::UnknownVantage(format!(
                "this server has no vantage `{name}`; it has: {} (see GET /api/v1/vantages)",
                known.join(", ")
            )));
        }
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    if names.len() > MAX_VANTAGES {
        return Err(ApiError::UnknownVantage(format!(
            "at most {MAX_VANTAGES} vantages per probe"
        )));
    }
    Ok(names)
}
