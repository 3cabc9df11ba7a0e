//! `GET /probe?target=URL&module=NAME`: blackbox_exporter's scrape contract,
//! so a Prometheus job made for blackbox scrapes h123 by changing the
//! address, and one scrape measures every protocol (`module=compare`).
//!
//! A scrape is a probe like any other: the safety policy, the per-probe
//! byte budget, the client's bytes per minute and a fair running slot all
//! apply, and scrapes have their own per-client rate. Nothing is stored.

use super::error::{ApiError, Result};
use super::extract::ClientIp;
use crate::probe::plan::Plan;
use crate::server::AppState;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use h123_shared::api::ApiError as ErrorBody;
use h123_shared::blackbox::{self, Module};
use h123_shared::{ProbeOptions, ProbeResult, Protocol, RequestBody};
use serde::Deserialize;
use std::fmt::Write;
use std::time::Duration;

/// How long a scrape may take when Prometheus does not say (its default
/// scrape timeout), and how much of Prometheus' timeout is kept for the
/// answer's way back (blackbox's default offset).
const DEFAULT_SCRAPE_TIMEOUT: Duration = Duration::from_secs(10);
const TIMEOUT_OFFSET: Duration = Duration::from_millis(500);

/// The query a scrape sends.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct ScrapeQuery {
    /// The URL to probe; `http://` is assumed without a scheme, as blackbox does.
    pub target: Option<String>,
    /// A module name (`compare`, `http_2xx`, `h1`, `h2`, `h3`); `http_2xx` when absent.
    pub module: Option<String>,
    /// `true`: the probe's log, the metrics and the module as text, for people.
    pub debug: Option<String>,
}

/// Probes `target` as `module` says and answers in the Prometheus text format.
#[utoipa::path(
    get,
    path = "/probe",
    tag = "operations",
    params(ScrapeQuery),
    responses(
        (status = 200, description = "Prometheus text exposition format 0.0.4: blackbox_exporter's `probe_*` series for the module's primary protocol and h123's per-protocol `h123_*` series", body = String,
        content_type = "text/plain"),
        (status = 400, description = "No target, an unknown module or options the server refuses (`invalid_query`, `invalid_options`)", body = ErrorBody),
        (status = 403, description = "The target is one the safety policy forbids, or one the module may not send its headers to (`blocked_target`), or a page on another site asked (`cross_site`: its `Sec-Fetch-Site` header)", body = ErrorBody),
        (status = 429, description = "Too many scrapes, or bytes from targets, from this client (`rate_limited`, `egress_budget_spent`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "The whole server's bytes from targets per minute are spent (`server_bytes_spent`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn probe_scrape(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    query: std::result::Result<Query<ScrapeQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response> {
    // A browser says where a request comes from (fetch metadata); Prometheus and scripts send
    // nothing, and a page on this server's own site may still scrape.
    if headers
        .get("sec-fetch-site")
        .is_some_and(|site| site.as_bytes() == b"cross-site")
    {
        state.metrics.rejected("scrape_cross_site");
        return Err(ApiError::CrossSite);
    }
    let Query(query) = query.map_err(|e| ApiError::InvalidQuery(e.body_text()))?;
    if state.is_shutting_down() {
        return Err(ApiError::ShuttingDown);
    }
    let client = state.client_key(ip);
    let decision = state.scrape_limiter.check(client);
    if !decision.allowed {
        state.metrics.rejected("scrape_rate");
        return Err(ApiError::RateLimited(decision));
    }
    let name = query.module.as_deref().unwrap_or("http_2xx");
    let modules = &state.config.modules;
    let module = modules.iter().find(|m| m.name == name).ok_or_else(|| {
        let known: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
        ApiError::InvalidQuery(format!(
            "unknown module {name:?}: this server has {}",
            known.join(", ")
        ))
    })?;
    let target = query
        .target
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::InvalidQuery("the target parameter is missing".into()))?;
    let budget = scrape_budget(&headers, module);
    let mut plan = Plan::new(options(target, module, budget), &state.config.limits)?;
    let host = plan.url.host_str().unwrap_or_default();
    let port = plan.url.port_or_known_default().unwrap_or_default();
    if !module.may_send_to(host, port) {
        state.metrics.rejected("scrape_module_target");
        return Err(ApiError::BlockedTarget(format!(
            "module {name} sends its headers only to {}",
            module.targets.join(", ")
        )));
    }
    super::probes::guard_target(&state, &mut plan).await?;
    let reservation = match plan.egress.clone() {
        Some(egress) => Some(super::probes::reserve_egress(
            &state,
            &state.egress_quota,
            client,
            egress,
        )?),
        None => None,
    };
    let started = crate::probe::trace::now();
    let run = async {
        let _slot = state.slots.acquire(client).await;
        state.engine.run(&plan).await
    };
    let result = tokio::time::timeout(budget, run).await;
    let took = crate::probe::trace::between(started, crate::probe::trace::now());
    if let Some(egress) = &plan.egress {
        state.metrics.target_bytes(egress.used());
    }
    drop(reservation);
    let mut result = result.unwrap_or_else(|_| timed_out(&plan.options));
    h123_shared::redact::redact_result(&mut result);
    let metrics = blackbox::exposition(&result, module, took);
    let debug = query.debug.as_deref() == Some("true");
    let body = if debug {
        debug_text(&result, module, &metrics, budget)
    } else {
        metrics
    };
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(if debug {
            "text/plain; charset=utf-8"
        } else {
            "text/plain; version=0.0.4; charset=utf-8"
        }),
    );
    Ok(response)
}

/// How long the scrape may take: Prometheus' timeout (its header) less the
/// offset, at most the default and the module's own timeout.
fn scrape_budget(headers: &HeaderMap, module: &Module) -> Duration {
    let module_limit = module
        .timeout_ms
        .map_or(Duration::MAX, Duration::from_millis);
    headers
        .get("x-prometheus-scrape-timeout-seconds")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .map_or(DEFAULT_SCRAPE_TIMEOUT, |secs| {
            Duration::from_secs_f64(secs.min(DEFAULT_SCRAPE_TIMEOUT.as_secs_f64()))
        })
        .saturating_sub(TIMEOUT_OFFSET)
        .min(module_limit)
        .max(Duration::from_millis(500))
}

/// The probe a scrape makes: the module's protocols, a whole default probe
/// or one request each, within the scrape's time.
fn options(target: &str, module: &Module, budget: Duration) -> ProbeOptions {
    let url = if target.contains("://") {
        target.to_owned()
    } else {
        format!("http://{target}")
    };
    let mut protocols: Vec<Protocol> = module.protocols.clone();
    protocols.sort();
    let defaults = ProbeOptions::default();
    let timeout_ms = u64::try_from(budget.as_millis()).unwrap_or(u64::MAX);
    ProbeOptions {
        url,
        protocols,
        method: module.method,
        headers: module.headers.clone(),
        body: module.body.as_ref().map(|text| RequestBody {
            text: Some(text.clone()),
            ..Default::default()
        }),
        family: module.family,
        rounds: if module.full { defaults.rounds } else { 1 },
        repeat: if module.full { defaults.repeat } else { 1 },
        timeout_ms,
        phase_timeout_ms: defaults.phase_timeout_ms.min(timeout_ms),
        ..defaults
    }
}

/// The result of a scrape that ran out of time: nothing measured, said so.
fn timed_out(options: &ProbeOptions) -> ProbeResult {
    ProbeResult::empty(options.clone(), crate::probe::trace::unix_ms(), None)
}

/// `debug=true`: the probe's attempts, the metrics and the module, as blackbox lays them out.
fn debug_text(result: &ProbeResult, module: &Module, metrics: &str, budget: Duration) -> String {
    let mut out = String::from("Logs for the probe:\n");
    for run in &result.runs {
        let why = run
            .not_offered
            .as_ref()
            .map(|n| n.reason(run.protocol))
            .or_else(|| run.skipped.clone())
            .or_else(|| run.stopped.clone());
        if let Some(why) = why {
            let _ = writeln!(out, "{}: {why}", run.protocol.http_version());
        }
        for a in &run.attempts {
            let outcome = match (&a.failure, &a.response) {
                (Some(f), _) => format!("failed in {}: {}", f.phase.as_str(), f.message),
                (None, Some(r)) => format!("status {}, {} body bytes", r.status, r.body_bytes),
                (None, None) => "no answer".to_owned(),
            };
            let _ = writeln!(
                out,
                "{} attempt {} hop {} {}: {outcome}, total {}",
                run.protocol.http_version(),
                a.attempt,
                a.hop,
                a.url,
                h123_shared::format::ms(a.phases.total.duration())
            );
        }
    }
    let _ = write!(
        out,
        "\nMetrics that would have been returned:\n{metrics}\nModule configuration:\nname: {}\nprotocols: {}\nwhole probe: {}\ntimeout: {} ms\nabout: {}\n",
        module.name,
        Protocol::versions(&module.protocols),
        module.full,
        budget.as_millis(),
        module.about
    );
    out
}
