//! `/api/v1/agent/...`: where `h123 agent`s claim jobs, stream their events
//! and post their results. Every call needs `Authorization: Bearer TOKEN`
//! (a token given to the server with `--agent NAME=TOKEN`) and the agent's
//! version in `h123-agent-version`.

use super::error::{ApiError, Result};
use super::extract::{ApiJson, ProbeId};
use crate::server::AppState;
use crate::server::dispatch;
use crate::server::jobs::{MAX_JOB_EVENTS, NotHeld};
use crate::server::metrics::AgentJobEvent;
use crate::server::queue::{Posted, QueueError};
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use h123_shared::agent::{AgentClaim, AgentJob, AgentReport, VERSION_HEADER};
use h123_shared::api::{ApiError as ErrorBody, ProbeEvent};
use h123_shared::redact;
use std::time::Duration;

/// Longest a claim waits for a job before answering 204 (a long poll).
pub const CLAIM_WAIT: Duration = Duration::from_secs(25);

/// Largest body of an agent's events or result: a whole record, plus room.
pub const MAX_AGENT_BODY: usize = crate::probe::budget::MAX_RECORD_BYTES + 64 * 1024;

/// The agent a request comes from, by its token; refuses a request without a
/// known token (401) or from an agent version this server does not support (426).
fn authenticated(state: &AppState, headers: &HeaderMap) -> Result<(String, String)> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .ok_or_else(|| {
            ApiError::Unauthorized(
                "agents send `Authorization: Bearer TOKEN` with a token the server knows".into(),
            )
        })?;
    let name = state
        .agents
        .authenticate(token)
        .ok_or_else(|| {
            ApiError::Unauthorized("this token is not an agent's of this server".into())
        })?
        .to_owned();
    let version: String = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown")
        .chars()
        .take(64)
        .collect();
    if !crate::server::agents::version_supported(&version) {
        return Err(ApiError::AgentVersion {
            agent: version,
            server: env!("CARGO_PKG_VERSION").to_owned(),
        });
    }
    Ok((name, version))
}

/// Waits up to 25 s for a probe job for the calling agent.
#[utoipa::path(
    post,
    path = "/api/v1/agent/claim",
    tag = "agents",
    params(("Authorization" = String, Header, description = "`Bearer TOKEN`: the agent's token (`h123 serve --agent NAME=TOKEN`)"),
           ("h123-agent-version" = String, Header, description = "The agent's h123 version: the server's `major.minor` is required")),
    request_body(content = AgentClaim, content_type = "application/json"),
    responses(
        (status = 200, description = "A job: run its options, post events and the result under its `job_id` before the lease runs out", body = AgentJob),
        (status = 204, description = "No job within the wait: claim again"),
        (status = 401, description = "No token, an unknown one, or a `name` that is not the token's agent (`unauthorized`)", body = ErrorBody),
        (status = 422, description = "The body does not match `AgentClaim` (`invalid_body`)", body = ErrorBody),
        (status = 426, description = "The agent's version is not supported (`agent_version_unsupported`), naming both versions", body = ErrorBody),
    )
)]
pub async fn agent_claim(State(state): State<AppState>, request: Request) -> Result<Response> {
    let (name, version) = authenticated(&state, request.headers())?;
    let ApiJson(claim) = ApiJson::<AgentClaim>::from_request(request, &()).await?;
    if claim.name != name {
        return Err(ApiError::Unauthorized(format!(
            "this token is not agent `{}`'s",
            claim.name.chars().take(40).collect::<String>()
        )));
    }
    let label = claim.label.map(|l| l.chars().take(80).collect());
    let tags = claim
        .tags
        .into_iter()
        .take(16)
        .map(|t| t.chars().take(32).collect())
        .collect();
    state.agents.note_seen(&name, label, tags, &version);
    if state.is_shutting_down() {
        return Err(ApiError::ShuttingDown);
    }
    let wait = CLAIM_WAIT.min(state.jobs.lease() / 2);
    match state
        .jobs
        .claim(&state.agents, &name, wait)
        .await
        .map_err(|e| queue_error(&name, e))?
    {
        Some(mut job) => {
            // The agent keeps this server's rules on every address it dials, as well as its own.
            job.rules = state.config.guard.policy.rules();
            state.metrics.agent_job(AgentJobEvent::Claimed);
            state.agents.touch(&name);
            Ok(axum::Json(job).into_response())
        }
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}

/// A batch of the job's phase events (empty: only renew the lease).
#[utoipa::path(
    post,
    path = "/api/v1/agent/jobs/{id}/events",
    tag = "agents",
    params(("id" = String, Path, description = "The job's id"),
           ("Authorization" = String, Header, description = "`Bearer TOKEN`: the agent's token"),
           ("h123-agent-version" = String, Header, description = "The agent's h123 version")),
    request_body(content = Vec<ProbeEvent>, content_type = "application/json"),
    responses(
        (status = 204, description = "Taken; the lease is renewed"),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
        (status = 404, description = "No such job held by this agent (`not_found`): its lease ran out, or it is another's", body = ErrorBody),
        (status = 413, description = "Over the body size (`payload_too_large`) or the job's event count (`too_many_events`)", body = ErrorBody),
        (status = 426, description = "`agent_version_unsupported`", body = ErrorBody),
    )
)]
pub async fn agent_events(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    request: Request,
) -> Result<Response> {
    let (name, _) = authenticated(&state, request.headers())?;
    let ApiJson(events) = ApiJson::<Vec<ProbeEvent>>::from_request(request, &()).await?;
    let mut events = events;
    // Redacted with nothing kept: the probe's own `keep_secret` applies when its record is stored.
    events
        .iter_mut()
        .for_each(|event| redact::redact_event(event, &[]));
    let posted = state
        .jobs
        .post_events(&id, &name, events)
        .await
        .map_err(|e| queue_error(&id, e))?;
    state.agents.touch(&name);
    take_in(&state, &name, posted).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// The job's end: its result, or why the agent did not run it.
#[utoipa::path(
    post,
    path = "/api/v1/agent/jobs/{id}/result",
    tag = "agents",
    params(("id" = String, Path, description = "The job's id"),
           ("Authorization" = String, Header, description = "`Bearer TOKEN`: the agent's token"),
           ("h123-agent-version" = String, Header, description = "The agent's h123 version")),
    request_body(content = AgentReport, content_type = "application/json",
        description = "`result` (redacted, stamped with the agent's vantage and analyzed by the server) or `problem`"),
    responses(
        (status = 204, description = "Stored with the probe; the job is over"),
        (status = 401, description = "`unauthorized`", body = ErrorBody),
        (status = 404, description = "No such job held by this agent (`not_found`)", body = ErrorBody),
        (status = 413, description = "Over the record's size (`payload_too_large`)", body = ErrorBody),
        (status = 422, description = "Neither `result` nor `problem` (`invalid_body`)", body = ErrorBody),
        (status = 426, description = "`agent_version_unsupported`", body = ErrorBody),
    )
)]
pub async fn agent_result(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    request: Request,
) -> Result<Response> {
    let (name, _) = authenticated(&state, request.headers())?;
    let ApiJson(report) = ApiJson::<AgentReport>::from_request(request, &()).await?;
    let outcome = match (report.result, report.problem) {
        (Some(mut result), None) => {
            // Redacted before it is kept anywhere, the database's queue included, with nothing
            // kept (the agent's options are replaced by the record's later).
            result.options.keep_secret.clear();
            redact::redact_result(&mut result);
            Ok(result)
        }
        (None, Some(problem)) => Err(format!(
            "agent {name}: {}",
            redact::redact_urls_in(&problem.chars().take(500).collect::<String>(), &[])
        )),
        _ => {
            return Err(ApiError::InvalidBody(
                "a report has either `result` or `problem`".into(),
            ));
        }
    };
    let posted = state
        .jobs
        .finish(&id, &name, outcome)
        .await
        .map_err(|e| queue_error(&id, e))?;
    state.metrics.agent_job(AgentJobEvent::Reported);
    state.agents.touch(&name);
    take_in(&state, &name, posted).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Takes in a post the queue handed back (in memory); a shared queue left it
/// for the instance that holds the probe.
async fn take_in(state: &AppState, agent: &str, posted: Posted) {
    if let Posted::Here { probe_id, post } = posted {
        dispatch::apply(state, &probe_id, agent, post).await;
    }
}

/// The API error for a failed queue call about job (or agent) `id`.
fn queue_error(id: &str, e: QueueError) -> ApiError {
    match e {
        QueueError::NotHeld(NotHeld::Unknown) => ApiError::NotFound(format!(
            "no job `{}` held by this agent (its lease may have run out)",
            id.chars().take(40).collect::<String>()
        )),
        QueueError::NotHeld(NotHeld::TooManyEvents) => ApiError::TooManyEvents(MAX_JOB_EVENTS),
        QueueError::Store(e) => e.into(),
        QueueError::Random(e) => ApiError::Internal(format!("random source: {e}")),
    }
}
