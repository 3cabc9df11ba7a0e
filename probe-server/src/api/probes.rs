//! `/api/v1/probes`: create a probe, read it (JSON, events, HAR, curl, SVG), list recent ones.

use super::conditional::{Representation, respond};
use super::error::{ApiError, Result, rate_headers};
use super::events::event_stream;
use super::extract::{ApiJson, ClientIp, OwnerToken, ProbeId};
use super::progress::{Source, published_events};
use super::svg;
use super::vantages;
use crate::probe::plan::Plan;
use crate::server::AppState;
use crate::server::owner;
use crate::server::partial;
use crate::server::queue::AgentPost;
use crate::server::registry::LiveProbe;
use crate::server::registry::Refusal;
use crate::server::{dispatch, runner};
use crate::store::new_id;
use axum::extract::{FromRequest, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use h123_shared::api::{
    ApiError as ErrorBody, MonitorLink, ProbeCreated, ProbeLinks, ProbeList, ProbeRecord,
    ProbeStatus,
};
use h123_shared::{ProbeOptions, ProbeResult};
use serde::Deserialize;
use std::fmt::Write as _;
use std::sync::Arc;

/// Largest `limit` of one list page.
pub const MAX_PAGE: usize = 100;

/// Query of `GET /api/v1/probes` and `GET /api/v1/benches`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// Return records older than this id (the previous page's `next_before`).
    pub before: Option<String>,
}

impl ListQuery {
    /// The page size asked for (20 by default), checked against [`MAX_PAGE`].
    ///
    /// # Errors
    /// `invalid_query` when it is out of range.
    pub fn page_size(&self) -> Result<usize> {
        page_size(self.limit)
    }
}

/// A list's page size: `limit`, 20 by default, checked against [`MAX_PAGE`].
///
/// # Errors
/// `invalid_query` when it is out of range.
pub fn page_size(limit: Option<u32>) -> Result<usize> {
    let limit = limit.unwrap_or(20) as usize;
    if (1..=MAX_PAGE).contains(&limit) {
        Ok(limit)
    } else {
        Err(ApiError::InvalidQuery(format!(
            "limit must be between 1 and {MAX_PAGE} (got {limit})"
        )))
    }
}

/// The `before=` of the next page: the last id of a full page, none after the last page.
pub fn next_before(count: usize, limit: usize, last_id: Option<&String>) -> Option<String> {
    last_id.filter(|_| count == limit).cloned()
}

/// A page of a list as JSON, which caches must revalidate (new records arrive at any time).
pub fn list_page(page: impl serde::Serialize) -> Response {
    let mut response = axum::Json(page).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Starts a probe and answers at once with its id and links.
#[utoipa::path(
    post,
    path = "/api/v1/probes",
    tag = "probes",
    params(("X-H123-Owner" = Option<String>, Header,
        description = "An owner token (22 to 128 base64url characters) to make the probe under; without it a new one is made. `Authorization: Bearer TOKEN` works too.")),
    request_body(content = ProbeOptions, content_type = "application/json",
        description = "What to measure; every field but `url` is optional. `visibility` is `unlisted` (the default: only the owner's list shows it, the permalink opens it for anyone) or `public`. `authorization`, `proxy-authorization` and `cookie` headers, URL passwords and credential-looking headers and query parameters (`api_key`, `token`, `sig`, `X-Api-Key`, `*-Token`, ...; keep one by naming it in `keep_secret`) are sent by the probe but redacted from everything stored or served.",
        example = json!({"url": "https://example.com/", "protocols": ["h1", "h2", "h3"], "repeat": 3})),
    responses(
        (status = 202, description = "Accepted and started; follow `links.events` for progress.", body = ProbeCreated,
            headers(("Location" = String, description = "The probe's JSON record"),
                    ("RateLimit-Limit" = u32, description = "Requests allowed in a burst"),
                    ("RateLimit-Remaining" = u32, description = "Requests left now"),
                    ("RateLimit-Reset" = u64, description = "Seconds until the limit is whole again")),
            links(
                ("record" = (operation_id = "probes_get", parameters(("id" = "$response.body#/id")))),
                ("events" = (operation_id = "probes_events", parameters(("id" = "$response.body#/id")))),
                ("har" = (operation_id = "probes_har", parameters(("id" = "$response.body#/id")))),
                ("curl" = (operation_id = "probes_curl", parameters(("id" = "$response.body#/id")))),
                ("waterfall" = (operation_id = "probes_svg", parameters(("id" = "$response.body#/id")))),
            )),
        (status = 400, description = "The body is not JSON (`invalid_json`), or the owner token is malformed (`invalid_owner_token`).", body = ErrorBody),
        (status = 403, description = "The target is not allowed (`blocked_target`), with the reason.", body = ErrorBody),
        (status = 408, description = "The body did not arrive within the time limit (`request_timeout`).", body = ErrorBody),
        (status = 413, description = "The body is too large (`payload_too_large`), or the request body in it is over the server's `--max-request-body` (`body_too_large`).", body = ErrorBody),
        (status = 415, description = "The body is not declared as JSON.", body = ErrorBody),
        (status = 422, description = "Invalid options: `invalid_body` (unknown field, wrong type), `invalid_url`, `unsupported_scheme`, `out_of_range`, `invalid_header`, `forbidden_header` (framing, hop-by-hop, proxy or pseudo-header), `method_not_allowed` (outside the server's `--allow-methods`, see `/api/v1/config`), `invalid_request_body` (neither or both of text and base64, bad base64, a body with GET or HEAD), `unknown_vantage` (a name `GET /api/v1/vantages` does not list), ...", body = ErrorBody),
        (status = 429, description = "`rate_limited`, `too_many_probes` or `egress_budget_spent` (the client's bytes from targets per minute are spent); see `Retry-After`.", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`server_busy` (queue full), `server_bytes_spent` (the whole server's bytes from targets per minute are spent) or `shutting_down`.", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn probes_create(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    OwnerToken(token): OwnerToken,
    request: Request,
) -> Result<Response> {
    if state.is_shutting_down() {
        return Err(ApiError::ShuttingDown);
    }
    let decision = creation_admitted(&state, client).await?;
    let client = state.client_key(client);
    let ApiJson(options) = ApiJson::<ProbeOptions>::from_request(request, &()).await?;
    let token = OwnerToken(token).or_new()?;
    let launch = Launch {
        client,
        payer: client,
        quota: state.egress_quota.clone(),
        per_client: state.config.per_client_probes,
        owner_hash: owner::token_hash(&token),
        monitor: None,
        gate: None,
    };
    let id = launch.start(&state, options).await?.id();
    let links = ProbeLinks::for_id(&id);
    let location = HeaderValue::from_str(&links.self_)
        .map_err(|e| ApiError::Internal(format!("location header: {e}")))?;
    let body = ProbeCreated {
        id,
        status: ProbeStatus::Running,
        links,
        owner_token: token,
    };
    let mut response = (StatusCode::ACCEPTED, axum::Json(body)).into_response();
    response.headers_mut().insert(header::LOCATION, location);
    rate_headers(&decision, response.headers_mut());
    Ok(response)
}

/// Who a probe is started for, and what it is linked to.
pub struct Launch {
    /// The client it counts against for its fair slot and its place in the queue.
    pub client: crate::server::client::ClientKey,
    /// The client whose bytes per minute in `quota` its budget is taken from: the client
    /// itself, or for a monitor's run the client that made the monitor.
    pub payer: crate::server::client::ClientKey,
    /// The bytes per minute its budget is taken from: the clients' (`--client-bytes-per-minute`)
    /// or, for a monitor's run, its client's share of all monitors' (`--monitor-bytes-per-minute`).
    pub quota: Arc<crate::server::egress_quota::EgressQuota>,
    /// How many of the client's probes may be in flight at once.
    pub per_client: usize,
    /// The SHA-256 of the owner token it is stored under.
    pub owner_hash: String,
    /// The monitor whose run it is.
    pub monitor: Option<MonitorLink>,
    /// Its own say on the addresses the server's run dials (a monitor's run's per-site cap).
    pub gate: Option<Arc<dyn crate::probe::guard::DialGate>>,
}

impl Launch {
    /// Starts a probe of `options`: checked against the server's limits and safety policy,
    /// registered, stored (on disk before this returns), run by this server and queued for
    /// its agents.
    ///
    /// # Errors
    /// Invalid options, a blocked target, a spent byte budget, a full queue, the store's failure.
    pub async fn start(
        self,
        state: &AppState,
        mut options: ProbeOptions,
    ) -> Result<Arc<LiveProbe>> {
        options.vantages = vantages::checked(state, &options.vantages)?;
        let own = state.config.vantage.name.clone();
        let server_runs = options.vantages.is_empty() || options.vantages.contains(&own);
        let agents: Vec<String> = options
            .vantages
            .iter()
            .filter(|name| **name != own)
            .cloned()
            .collect();
        // What agents get: the options as sent (the plan moves a body's bytes out).
        let sent = (!agents.is_empty()).then(|| options.clone());
        let mut plan = Plan::new(options, &state.config.limits)?;
        guard_target(state, &mut plan).await?;
        plan.gate = self.gate;
        // The server's own run takes its whole byte budget from its quota now;
        // what it does not receive comes back when it ends.
        let reservation = match plan.egress.clone().filter(|_| server_runs) {
            Some(egress) => Some(reserve_egress(state, &self.quota, self.payer, egress)?),
            None => None,
        };
        let id = new_id().map_err(|e| ApiError::Internal(format!("random source: {e}")))?;
        let now = crate::probe::trace::unix_ms();
        // The plan keeps the real credentials (the probe sends them); the record never has them.
        let mut options = plan.options.clone();
        h123_shared::redact::redact_options(&mut options);
        let record = ProbeRecord {
            id: id.clone(),
            status: ProbeStatus::Running,
            created_at_unix_ms: now,
            options: options.clone(),
            result: ProbeResult::empty(options, now, Some(state.config.vantage.clone())),
            queued_ms: None,
            cancel_reason: None,
            vantages: if agents.is_empty() {
                Vec::new()
            } else {
                vantages::runs(state, &plan.options.vantages)
            },
            browser: None,
            monitor: self.monitor,
        };
        let config = &state.config;
        let live = state
            .registry
            .try_insert(
                record.clone(),
                self.client,
                self.per_client,
                config.max_running + config.max_queued,
            )
            .map_err(|refusal| match refusal {
                Refusal::Client => {
                    state.metrics.rejected("client_probes");
                    ApiError::TooManyProbes(self.per_client)
                }
                Refusal::Full => {
                    state.metrics.rejected("queue_full");
                    ApiError::ServerBusy
                }
            })?;
        if let Err(e) = state.store.insert(record, Some(self.owner_hash)).await {
            state.registry.remove(&id);
            return Err(e.into());
        }
        state.relay.follow(live.clone());
        if let Some(sent) = sent {
            for agent in &agents {
                let queued = state
                    .jobs
                    .enqueue(
                        &state.agents,
                        &id,
                        agent,
                        &sent,
                        state.config.max_probe_time,
                    )
                    .await;
                if let Err(e) = queued {
                    // The vantage fails, with the reason; the probe goes on at the others.
                    let outcome =
                        AgentPost::Outcome(Err(format!("cannot queue agent {agent}'s job: {e}")));
                    dispatch::apply(state, &id, agent, outcome).await;
                }
            }
        }
        if server_runs {
            runner::spawn(state.clone(), live.clone(), plan, reservation);
        }
        Ok(live)
    }
}

/// Takes one of `client`'s creations from the creation rate (probes, and a browser measurement
/// added to one), or says how long to wait.
///
/// # Errors
/// `rate_limited` when the client's bucket is empty; the store's error when PostgreSQL holds it.
pub async fn creation_admitted(
    state: &AppState,
    client: std::net::IpAddr,
) -> Result<crate::server::limit::RateDecision> {
    let decision = state.limiter.check(state.client_key(client)).await?;
    if !decision.allowed {
        state.metrics.rejected("rate");
        return Err(ApiError::RateLimited(decision));
    }
    Ok(decision)
}

/// Checks `plan`'s target against the server's safety policy (a DNS server
/// named in the request is checked too; the server's own is trusted and
/// filled in where the plan names none).
pub async fn guard_target(state: &AppState, plan: &mut Plan) -> Result<()> {
    state
        .config
        .guard
        .check(plan, &state.lookups)
        .await
        .map_err(ApiError::BlockedTarget)?;
    if plan.dns_server.is_none() {
        plan.dns_server = state.config.dns_server;
    }
    Ok(())
}

/// Takes a probe's whole byte budget from the server's bytes per minute and from `client`'s in
/// `quota`; both come back, less what the probe received, when the reservation is dropped.
///
/// # Errors
/// `server_bytes_spent`, `egress_budget_spent`, or `egress_share_spent` when a shared quota's
/// client share is.
pub fn reserve_egress(
    state: &AppState,
    quota: &Arc<crate::server::egress_quota::EgressQuota>,
    client: crate::server::client::ClientKey,
    egress: std::sync::Arc<crate::probe::egress::Egress>,
) -> Result<crate::server::egress_quota::Reservation> {
    let whole = state
        .server_egress
        .reserve_whole(egress.clone())
        .map_err(|spent| {
            state.metrics.rejected("server_bytes");
            ApiError::ServerBytesSpent(crate::server::limit::whole_secs(spent.wait))
        })?;
    let mine = quota.reserve(client, egress).map_err(|spent| {
        state.metrics.rejected("client_bytes");
        let secs = crate::server::limit::whole_secs(spent.wait);
        match spent.share {
            true => ApiError::EgressShareSpent(secs),
            false => ApiError::EgressSpent(secs),
        }
    })?;
    Ok(mine.within(whole))
}

/// The record: running (partial) or finished, from memory or the store. A
/// probe another instance runs reads as that instance's own copy does: its
/// published events are folded into the stored record.
pub async fn load(state: &AppState, id: &str) -> Result<ProbeRecord> {
    match Source::find(state, id).await? {
        Source::Local(live) => Ok(live.record()),
        Source::Remote(cluster, mut record) => {
            let events = published_events(&cluster, id).await?;
            partial::fold(&mut record, &events);
            Ok(record)
        }
        Source::Record(record) => Ok(record),
    }
}

/// The probe's record: options, status and (partial while running) result.
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}",
    tag = "probes",
    params(("id" = String, Path, description = "The probe's id"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "The record", body = ProbeRecord,
            headers(("ETag" = String, description = "Changes whenever the record does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_get(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    let body = serde_json::to_vec(&record).map_err(|e| ApiError::Internal(e.to_string()))?;
    // A finished record may still gain its owner's browser measurement for a while.
    let settled = record.settled(crate::probe::trace::unix_ms());
    Ok(respond(&headers, Representation::json(body, settled)))
}

/// Recent probes, newest first: the public ones, plus the caller's own when it
/// sends the owner token it got at creation.
#[utoipa::path(
    get,
    path = "/api/v1/probes",
    tag = "probes",
    params(ListQuery,
        ("X-H123-Owner" = Option<String>, Header,
            description = "The owner token from `POST /api/v1/probes`: adds the probes made under it (public or not). `Authorization: Bearer TOKEN` works too.")),
    responses(
        (status = 200, description = "A page of probes", body = ProbeList),
        (status = 400, description = "Bad `limit` or unknown `before` (`invalid_query`), or a malformed owner token (`invalid_owner_token`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_list(
    State(state): State<AppState>,
    OwnerToken(token): OwnerToken,
    query: std::result::Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response> {
    let Query(query) = query.map_err(|e| ApiError::InvalidQuery(e.body_text()))?;
    let limit = query.page_size()?;
    let owner_hash = token.as_deref().map(owner::token_hash);
    let items = state.store.list(limit, query.before, owner_hash).await?;
    let next_before = next_before(items.len(), limit, items.last().map(|s| &s.id));
    Ok(list_page(ProbeList { items, next_before }))
}

/// Live progress as Server-Sent Events: `phase`, `attempt` and `skipped` events
/// (each a `ProbeEvent`), then one `done` event carrying the final `ProbeRecord`.
/// A late client gets everything from the start; `Last-Event-ID` resumes.
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}/events",
    tag = "probes",
    params(("id" = String, Path, description = "The probe's id"),
           ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event id")),
    responses(
        (status = 200, description = "An event stream; each `data:` is a ProbeEvent, the last (`event: done`) a ProbeRecord",
            content_type = "text/event-stream", body = String),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`), or its most event streams open already (`too_many_streams`, 16 by default); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "The server holds its most event streams open (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_events(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    headers: HeaderMap,
) -> Result<Response> {
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map(|last| last.saturating_add(1))
        .unwrap_or(0);
    event_stream(&state, &id, resume).await
}

/// The probe as a HAR 1.2 document (opens in browser dev tools and HAR viewers):
/// a page per protocol, or for a probe across vantages a page per vantage and
/// protocol (`fra1/h2`), each entry naming its vantage in `_vantage`.
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}/har",
    tag = "exports",
    params(("id" = String, Path, description = "The probe's id")),
    responses(
        (status = 200, description = "HAR 1.2", body = Object, content_type = "application/json",
            headers(("ETag" = String, description = "Changes whenever the record does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_har(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    let mut har = if record.vantages.is_empty() {
        h123_shared::har::to_har(&record.result)
    } else {
        h123_shared::har::vantages::to_har(&record.vantages)
    };
    if let Some(run) = &record.browser {
        h123_shared::har::browser::add(&mut har, run, &record.options.url);
    }
    let body = serde_json::to_vec_pretty(&har).map_err(|e| ApiError::Internal(e.to_string()))?;
    // The owner's browser measurement may still join it for a while.
    let settled = record.settled(crate::probe::trace::unix_ms());
    let mut rep = Representation::json(body, settled);
    rep.disposition = Some(format!("inline; filename=\"h123-{}.har\"", record.id));
    Ok(respond(&headers, rep))
}

/// curl's `-w` timers per attempt, and the equivalent curl command per protocol.
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}/curl",
    tag = "exports",
    params(("id" = String, Path, description = "The probe's id")),
    responses(
        (status = 200, description = "`name: seconds` lines per attempt, as `curl -w` prints them", body = String,
            content_type = "text/plain",
            headers(("ETag" = String, description = "Changes whenever the record does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_curl(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    let text = curl_text(&record);
    Ok(respond(
        &headers,
        Representation::new(
            text.into_bytes(),
            "text/plain; charset=utf-8",
            record.status != ProbeStatus::Running,
        ),
    ))
}

/// The curl export: a commented block per attempt, then the commands.
pub fn curl_text(record: &ProbeRecord) -> String {
    let mut out = format!(
        "# h123 probe {} of {} ({})\n",
        record.id,
        record.options.url,
        record.status.as_str()
    );
    for run in &record.result.runs {
        if let Some(reason) = &run.skipped {
            let _ = writeln!(out, "\n# {} skipped: {reason}", run.protocol);
        }
        for chain in h123_shared::chain::chains(run) {
            let _ = writeln!(
                out,
                "\n# {} attempt {}: {}",
                run.protocol,
                chain.attempt(),
                h123_shared::curl::chain_heading(&chain)
            );
            if let Some(f) = chain.failure() {
                let _ = writeln!(out, "# failed in {}: {}", f.phase.as_str(), f.message);
            }
            out.push_str(&h123_shared::curl::curl_format(&chain));
        }
    }
    out.push_str("\n# the same requests with curl:\n");
    for protocol in &record.options.protocols {
        let _ = writeln!(
            out,
            "{}",
            h123_shared::curl::curl_command(&record.options, *protocol)
        );
    }
    out
}

/// The waterfall as an SVG picture, for chats and issues; a probe across
/// vantages is a labelled group per vantage on one time axis.
#[utoipa::path(
    get,
    path = "/api/v1/probes/{id}/waterfall.svg",
    tag = "exports",
    params(("id" = String, Path, description = "The probe's id")),
    responses(
        (status = 200, description = "The waterfall", body = String, content_type = "image/svg+xml",
            headers(("ETag" = String, description = "Changes whenever the record does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such probe (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn probes_svg(
    State(state): State<AppState>,
    ProbeId(id): ProbeId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    let picture = svg::render(&record);
    // The owner's browser measurement may still join it for a while.
    let settled = record.settled(crate::probe::trace::unix_ms());
    Ok(respond(
        &headers,
        Representation::new(picture.into_bytes(), "image/svg+xml", settled),
    ))
}
