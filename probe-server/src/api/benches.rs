//! `/api/v1/benches`: start a bench (load comparison), read it while it runs
//! and after, list recent ones. Only with `h123 serve --enable-bench`, one at
//! a time, and only against the addresses listed with `--bench-target`.

use super::conditional::{Representation, respond};
use super::error::{ApiError, Result, rate_headers};
use super::extract::{ApiJson, BenchId, ClientIp, OwnerToken};
use super::probes::{ListQuery, list_page, next_before};
use crate::bench::BenchPlan;
use crate::server::AppState;
use crate::server::target_guard::check_bench;
use crate::server::{bench_slot, owner};
use crate::store::{is_valid_id, new_id};
use axum::extract::{FromRequest, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use h123_shared::api::{
    ApiError as ErrorBody, BenchCreated, BenchLinks, BenchList, BenchRecord, ProbeStatus,
};
use h123_shared::bench::BenchOptions;
use h123_shared::redact;

/// Starts a bench and answers at once with its id and links.
#[utoipa::path(
    post,
    path = "/api/v1/benches",
    tag = "benches",
    params(("X-H123-Owner" = Option<String>, Header,
        description = "An owner token (22 to 128 base64url characters) to make the bench under; without it a new one is made. `Authorization: Bearer TOKEN` works too.")),
    request_body(content = BenchOptions, content_type = "application/json",
        description = "What to load and how; every field but `url` is optional. Set `duration_ms` or `requests`. `visibility` is `unlisted` (the default: only the owner's list shows it, the permalink opens it for anyone) or `public`; `authorization`, `proxy-authorization` and `cookie` headers, URL passwords and credential-looking headers and query parameters (`api_key`, `token`, `X-Api-Key`, ...; keep one by naming it in `keep_secret`) are sent but redacted from everything stored or served. `sweep` (\"rtt=0,50,100ms\" or \"loss=0,1,5%\") runs the whole bench at each step, on top of `network`; it needs network conditions enabled.",
        example = json!({"url": "https://10.0.0.7:8443/", "protocols": ["h1", "h2", "h3"], "concurrency": 16, "duration_ms": 10000})),
    responses(
        (status = 202, description = "Accepted and started; poll `links.self` until `status` is no longer `running`.", body = BenchCreated,
            headers(("Location" = String, description = "The bench's JSON record"),
                    ("RateLimit-Limit" = u32, description = "Requests allowed in a burst"),
                    ("RateLimit-Remaining" = u32, description = "Requests left now"),
                    ("RateLimit-Reset" = u64, description = "Seconds until the limit is whole again")),
            links(("record" = (operation_id = "benches_get", parameters(("id" = "$response.body#/id")))))),
        (status = 400, description = "The body is not JSON (`invalid_json`).", body = ErrorBody),
        (status = 403, description = "`bench_disabled`: the server was started without `--enable-bench`; `blocked_target`: the URL's host has no address on the server's bench list (`--bench-target`).", body = ErrorBody),
        (status = 409, description = "`bench_busy`: a bench is running; benches run one at a time. `Retry-After` estimates when it ends.", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the running bench should end"))),
        (status = 413, description = "The body is too large.", body = ErrorBody),
        (status = 415, description = "The body is not declared as JSON.", body = ErrorBody),
        (status = 422, description = "Invalid options: `invalid_body` (unknown field, wrong type, a bad sweep), `invalid_url`, `unsupported_scheme`, `no_protocols`, `out_of_range` (naming the field, or a bench planned to take longer than `max_total_ms`), `forbidden_header` (framing, hop-by-hop, proxy or pseudo-header), `network_not_allowed` (a network or sweep on a server without `--allow-network`), ...", body = ErrorBody),
        (status = 429, description = "`rate_limited` (the same per-client budget as probes); see `Retry-After`.", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "`shutting_down`.", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
pub async fn benches_create(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    OwnerToken(token): OwnerToken,
    request: Request,
) -> Result<Response> {
    if state.is_shutting_down() {
        return Err(ApiError::ShuttingDown);
    }
    let Some(bench) = state.config.bench.as_ref() else {
        return Err(ApiError::BenchDisabled);
    };
    let decision = state.limiter.check(state.client_key(client)).await?;
    if !decision.allowed {
        state.metrics.rejected("rate");
        return Err(ApiError::RateLimited(decision));
    }
    let ApiJson(options) = ApiJson::<BenchOptions>::from_request(request, &()).await?;
    let plan = BenchPlan::new(options, &bench.limits)?;
    // A courtesy: the engine checks every address it dials against the same list.
    let url = url::Url::parse(&plan.options().url).map_err(|e| {
        ApiError::Plan(crate::probe::plan::PlanError::InvalidUrl {
            url: plan.options().url.chars().take(100).collect(),
            reason: e.to_string(),
        })
    })?;
    check_bench(&bench.targets, &url, state.config.dns_server)
        .await
        .map_err(ApiError::BlockedTarget)?;
    let id = new_id().map_err(|e| ApiError::Internal(format!("random source: {e}")))?;
    let token = OwnerToken(token).or_new()?;
    // The plan keeps the real credentials (the bench sends them); the record never has them.
    let mut options = plan.options().clone();
    redact::redact_bench_options(&mut options);
    let record = BenchRecord {
        id: id.clone(),
        status: ProbeStatus::Running,
        created_at_unix_ms: crate::probe::trace::unix_ms(),
        finished_at_unix_ms: None,
        options,
        progress: None,
        result: None,
        steps: Vec::new(),
        cancel_reason: None,
    };
    let live = state
        .bench
        .try_start(record.clone(), &plan, &bench.limits)
        .map_err(|busy| {
            state.metrics.rejected("bench_busy");
            ApiError::BenchBusy(busy.retry_after_secs)
        })?;
    let owner_hash = Some(owner::token_hash(&token));
    if let Err(e) = state.store.insert_bench(record, owner_hash).await {
        state.bench.release(&id);
        return Err(e.into());
    }
    bench_slot::spawn(state.clone(), live, plan);
    let links = BenchLinks::for_id(&id);
    let location = HeaderValue::from_str(&links.self_)
        .map_err(|e| ApiError::Internal(format!("location header: {e}")))?;
    let body = BenchCreated {
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

/// The record: running (with progress) or finished, from memory or the store; redacted (a
/// running sweep's steps carry the options the bench runs with).
pub async fn load(state: &AppState, id: &str) -> Result<BenchRecord> {
    if !is_valid_id(id) {
        return Err(ApiError::no_bench(id));
    }
    let mut record = match state.bench.get(id).filter(|b| !b.is_finished()) {
        Some(live) => live.record(),
        None => state
            .store
            .get_bench(id.to_owned())
            .await?
            .ok_or_else(|| ApiError::no_bench(id))?,
    };
    redact::redact_bench_record(&mut record);
    Ok(record)
}

/// The bench's record: options, status, progress while it runs, the result once done.
#[utoipa::path(
    get,
    path = "/api/v1/benches/{id}",
    tag = "benches",
    params(("id" = String, Path, description = "The bench's id"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "The record", body = BenchRecord,
            headers(("ETag" = String, description = "Changes whenever the record does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such bench (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn benches_get(
    State(state): State<AppState>,
    BenchId(id): BenchId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    let body = serde_json::to_vec(&record).map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(respond(
        &headers,
        Representation::json(body, record.status != ProbeStatus::Running),
    ))
}

/// The bench as its page shows it, drawn on the server: the markup of `/b/{id}`'s bench
/// (`<div id="bench" ...>`, the Leptos component `h123_frontend::pages::bench`), as it stands (a running bench's with its
/// progress), which the page polls while the bench runs.
#[utoipa::path(
    get,
    path = "/api/v1/benches/{id}/view",
    tag = "benches",
    params(("id" = String, Path, description = "The bench's id"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "The bench's markup, a fragment of HTML (`<div id=\"bench\" data-id data-status ...>`)",
            body = String, content_type = "text/html",
            headers(("ETag" = String, description = "Changes whenever the markup does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such bench (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn benches_view(
    State(state): State<AppState>,
    BenchId(id): BenchId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    let html = h123_frontend::pages::render(|| h123_frontend::pages::bench::bench_page(&record));
    // Drawn by this server's version: revalidated every time.
    let representation = Representation::new(html.into_bytes(), "text/html; charset=utf-8", false);
    Ok(respond(&headers, representation))
}

/// A sweep's decay chart as an SVG picture: requests per second at each
/// step, a line per protocol, the model's ceiling where one applies; while
/// the sweep runs, the steps finished so far.
#[utoipa::path(
    get,
    path = "/api/v1/benches/{id}/decay.svg",
    tag = "exports",
    params(("id" = String, Path, description = "The bench's id"),
           ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier answer")),
    responses(
        (status = 200, description = "The decay chart", body = String, content_type = "image/svg+xml",
            headers(("ETag" = String, description = "Changes whenever the record does"))),
        (status = 304, description = "Unchanged since the given ETag"),
        (status = 404, description = "No such bench, or a bench without a sweep (`not_found`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn benches_decay_svg(
    State(state): State<AppState>,
    BenchId(id): BenchId,
    headers: HeaderMap,
) -> Result<Response> {
    let record = load(&state, &id).await?;
    let sweep = record.sweep_result().ok_or_else(|| {
        ApiError::NotFound(format!(
            "bench `{id}` is not a sweep: only a sweep has a decay chart"
        ))
    })?;
    let picture = super::decay_svg::render(&sweep);
    Ok(respond(
        &headers,
        Representation::new(
            picture.into_bytes(),
            "image/svg+xml",
            record.status != ProbeStatus::Running,
        ),
    ))
}

/// Recent benches, newest first: the public ones and the caller's own.
#[utoipa::path(
    get,
    path = "/api/v1/benches",
    tag = "benches",
    params(ListQuery,
        ("X-H123-Owner" = Option<String>, Header,
            description = "The owner token from `POST /api/v1/benches`: adds the benches made under it (public or not). `Authorization: Bearer TOKEN` works too.")),
    responses(
        (status = 200, description = "A page of benches", body = BenchList),
        (status = 400, description = "Bad `limit` or unknown `before` (`invalid_query`)", body = ErrorBody),
        (status = 414, description = "The path is too long (`uri_too_long`)", body = ErrorBody),
        (status = 429, description = "Too many reads from this client (`rate_limited`); see `Retry-After`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 503, description = "Too many reads in flight (`server_busy`)", body = ErrorBody),
    )
)]
pub async fn benches_list(
    State(state): State<AppState>,
    OwnerToken(token): OwnerToken,
    query: std::result::Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response> {
    let Query(query) = query.map_err(|e| ApiError::InvalidQuery(e.body_text()))?;
    let limit = query.page_size()?;
    let owner_hash = token.as_deref().map(owner::token_hash);
    let items = state
        .store
        .list_benches(limit, query.before, owner_hash)
        .await?;
    let next_before = next_before(items.len(), limit, items.last().map(|s| &s.id));
    Ok(list_page(BenchList { items, next_before }))
}
