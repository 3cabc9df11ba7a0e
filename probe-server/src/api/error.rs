//! The API's one error type: each variant's status and stable code, rendered as
//! `{"error":{"code","message"}}`.

use crate::probe::plan::PlanError;
use crate::server::limit::RateDecision;
use crate::store::StoreError;
use axum::Json;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use h123_shared::api::{ApiError as ErrorBody, ApiErrorBody};

/// `Result` with an [`ApiError`].
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

/// Everything an API call can answer with besides success.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 `invalid_json`: the body is not JSON.
    #[error("the body is not valid JSON: {0}")]
    InvalidJson(String),
    /// 422 `invalid_body`: JSON of the wrong shape (unknown field, wrong type).
    #[error("the body does not match the expected shape: {0}")]
    InvalidBody(String),
    /// 408 `request_timeout`: the body did not arrive within the server's time limit.
    #[error("the request body did not arrive in time")]
    RequestTimeout,
    /// 414 `uri_too_long`: the request path is longer than the server reads.
    #[error("the path is longer than {0} bytes")]
    UriTooLong(usize),
    /// 415 `unsupported_media_type`: the body is not declared as JSON.
    #[error("send the body as JSON with `Content-Type: application/json`")]
    UnsupportedMediaType,
    /// 413 `payload_too_large`: the body is over the size limit.
    #[error("the body is larger than the server accepts ({0} bytes)")]
    PayloadTooLarge(usize),
    /// 400 `invalid_body`: the body could not be read.
    #[error("the body could not be read: {0}")]
    UnreadableBody(String),
    /// 422 with the plan error's own code (`invalid_url`, `unsupported_scheme`, `out_of_range`,
    /// `method_not_allowed`, `invalid_request_body`, ...); 413 `body_too_large` for a request
    /// body over the server's cap.
    #[error("{0}")]
    Plan(#[from] PlanError),
    /// 422 `unknown_vantage`: a vantage the server does not have, or a malformed name.
    #[error("{0}")]
    UnknownVantage(String),
    /// 403 `blocked_target`: the target is not allowed, and why.
    #[error("blocked target: {0}")]
    BlockedTarget(String),
    /// 403 `cross_site`: a page on another site asked for `GET /probe` (its `Sec-Fetch-Site`
    /// said so): scrapes are for Prometheus and scripts, never for a stranger's `<img>`.
    #[error(
        "a page on another site may not start a scrape: GET /probe is for Prometheus and scripts (this request's Sec-Fetch-Site is cross-site)"
    )]
    CrossSite,
    /// 403 `bench_disabled`: this server runs no benches (started without `--enable-bench`).
    #[error("this server does not run benches: its operator did not start it with --enable-bench")]
    BenchDisabled,
    /// 409 `bench_busy`: a bench is running; one runs at a time. `Retry-After` says when to try again.
    #[error("a bench is running already and benches run one at a time: try again in about {0} s")]
    BenchBusy(u64),
    /// 409 `still_running`: the probe named has not finished, so there is nothing final to compare yet.
    #[error("probe `{0}` is still running: compare it once it has finished")]
    StillRunning(String),
    /// 409 `still_running`: the probe named has not finished, so it has no preview picture yet.
    #[error("probe `{0}` is still running: its picture is drawn once it has finished")]
    NoPictureYet(String),
    /// 403 `not_owner`: only the owner token a probe was made under may add to it.
    #[error("only the owner token this probe was made under may add a browser measurement to it")]
    NotOwner,
    /// 409 `probe_running`: the probe has not finished yet.
    #[error("probe `{0}` is still running: measure from the browser once it has finished")]
    ProbeRunning(String),
    /// 409 `browser_exists`: the probe has its browser measurement already (one per probe).
    #[error("probe `{0}` has its browser measurement already; make a new probe to measure again")]
    BrowserExists(String),
    /// 409 `browser_window_closed`: the probe is older than the day in which one may be added.
    #[error("probe `{0}` is over a day old: a browser measurement can no longer be added to it")]
    BrowserWindowClosed(String),
    /// 422 `invalid_browser_run`: a browser measurement that cannot be what a browser measured.
    #[error("invalid browser measurement: {0}")]
    InvalidBrowserRun(String),
    /// 400 `invalid_owner_token`: the `X-H123-Owner` (or `Authorization: Bearer`) token is malformed.
    #[error("the owner token must be 22 to 128 characters of A-Z, a-z, 0-9, `-` and `_`")]
    InvalidOwnerToken,
    /// 400 `invalid_query`: a query parameter is malformed or out of range.
    #[error("{0}")]
    InvalidQuery(String),
    /// 404 `not_found`: no such probe or bench, or no such API path.
    #[error("{0}")]
    NotFound(String),
    /// 405 `method_not_allowed`.
    #[error("method not allowed on this path")]
    MethodNotAllowed,
    /// 429 `rate_limited`: too many requests from this client.
    #[error("too many requests: try again in {} s", .0.retry_after_secs)]
    RateLimited(RateDecision),
    /// 429 `egress_budget_spent`: this client's bytes from targets for now
    /// are spent (`--client-bytes-per-minute`); the seconds until they are back.
    #[error(
        "your probes have used the bytes this server fetches for one client per minute: try again in {0} s"
    )]
    EgressSpent(u64),
    /// 503 `server_bytes_spent`: the bytes the whole server fetches from targets per minute
    /// are spent (`--server-bytes-per-minute`); the seconds until they are back.
    #[error("this server has fetched all it fetches from targets in a minute: try again in {0} s")]
    ServerBytesSpent(u64),
    /// 429 `egress_share_spent`: a monitor's client has used its share of the monitors' bytes
    /// per minute (only a monitor's run meets it, and records it as a missed slot).
    #[error("this client's share of the monitors' bytes per minute is spent: try again in {0} s")]
    EgressShareSpent(u64),
    /// 429 `too_many_probes`: this client has its maximum of probes in flight.
    #[error("you have {0} probes in flight already, the most allowed: wait for one to finish")]
    TooManyProbes(usize),
    /// 429 `too_many_streams`: this client holds its maximum of event streams open.
    #[error(
        "you have {0} event streams open already, the most allowed: close one (a finished probe's stream ends by itself)"
    )]
    TooManyStreams(usize),
    /// 503 `server_busy`: every running slot and queue place is taken.
    #[error("the server is at capacity: try again shortly")]
    ServerBusy,
    /// 503 `store_unavailable`: the database cannot be reached now.
    #[error("the server's database is unavailable: try again shortly")]
    StoreUnavailable(String),
    /// 503 `shutting_down`: the server is stopping.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// 401 `unauthorized`: an agent's request without a token this server
    /// knows (or naming another agent than its token's).
    #[error("{0}")]
    Unauthorized(String),
    /// 426 `agent_version_unsupported`: the agent's version is not one this server works with.
    #[error(
        "agent version {agent} is not supported by this server (version {server}): run an h123 agent of version {}.x",
        h123_shared::agent::major_minor(.server)
    )]
    AgentVersion {
        /// What the agent said it runs.
        agent: String,
        /// The server's own version.
        server: String,
    },
    /// 413 `too_many_events`: an agent's job posted more events than a probe can make.
    #[error("a job may post at most {0} events")]
    TooManyEvents(usize),
    /// 422 with the spec's code (`invalid_interval`, `invalid_threshold`, `invalid_body`): a
    /// monitor request that cannot be taken.
    #[error("{}", .0.message)]
    InvalidMonitor(h123_shared::monitor::SpecError),
    /// 403 `not_owner`: only the owner token a monitor was made under may change it.
    #[error("only the owner token this monitor was made under may pause, resume or delete it")]
    NotMonitorOwner,
    /// 429 `too_many_monitors`: the owner's or the server's monitors are at their bound.
    #[error("{0}")]
    TooManyMonitors(String),
    /// 500 `internal`: a fault on our side; the details are logged, not sent.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::InvalidJson(_)
            | ApiError::UnreadableBody(_)
            | ApiError::InvalidQuery(_)
            | ApiError::InvalidOwnerToken => StatusCode::BAD_REQUEST,
            ApiError::Plan(PlanError::BodyTooLarge { .. }) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::InvalidBody(_)
            | ApiError::Plan(_)
            | ApiError::UnknownVantage(_)
            | ApiError::InvalidBrowserRun(_)
            | ApiError::InvalidMonitor(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::UriTooLong(_) => StatusCode::URI_TOO_LONG,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BlockedTarget(_)
            | ApiError::CrossSite
            | ApiError::BenchDisabled
            | ApiError::NotOwner
            | ApiError::NotMonitorOwner => StatusCode::FORBIDDEN,
            ApiError::BenchBusy(_)
            | ApiError::StillRunning(_)
            | ApiError::NoPictureYet(_)
            | ApiError::ProbeRunning(_)
            | ApiError::BrowserExists(_)
            | ApiError::BrowserWindowClosed(_) => StatusCode::CONFLICT,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::RateLimited(_)
            | ApiError::TooManyProbes(_)
            | ApiError::TooManyStreams(_)
            | ApiError::EgressSpent(_)
            | ApiError::EgressShareSpent(_)
            | ApiError::TooManyMonitors(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::ServerBusy
            | ApiError::ServerBytesSpent(_)
            | ApiError::ShuttingDown
            | ApiError::StoreUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::AgentVersion { .. } => StatusCode::UPGRADE_REQUIRED,
            ApiError::TooManyEvents(_) => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }

    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::InvalidJson(_) => "invalid_json",
            ApiError::InvalidBody(_) | ApiError::UnreadableBody(_) => "invalid_body",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::RequestTimeout => "request_timeout",
            ApiError::UriTooLong(_) => "uri_too_long",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::Plan(e) => e.code(),
            ApiError::UnknownVantage(_) => "unknown_vantage",
            ApiError::BlockedTarget(_) => "blocked_target",
            ApiError::CrossSite => "cross_site",
            ApiError::BenchDisabled => "bench_disabled",
            ApiError::BenchBusy(_) => "bench_busy",
            ApiError::StillRunning(_) | ApiError::NoPictureYet(_) => "still_running",
            ApiError::NotOwner => "not_owner",
            ApiError::ProbeRunning(_) => "probe_running",
            ApiError::BrowserExists(_) => "browser_exists",
            ApiError::BrowserWindowClosed(_) => "browser_window_closed",
            ApiError::InvalidBrowserRun(_) => "invalid_browser_run",
            ApiError::InvalidQuery(_) => "invalid_query",
            ApiError::InvalidOwnerToken => "invalid_owner_token",
            ApiError::NotFound(_) => "not_found",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::RateLimited(_) => "rate_limited",
            ApiError::TooManyProbes(_) => "too_many_probes",
            ApiError::TooManyStreams(_) => "too_many_streams",
            ApiError::EgressSpent(_) => "egress_budget_spent",
            ApiError::EgressShareSpent(_) => "egress_share_spent",
            ApiError::ServerBytesSpent(_) => "server_bytes_spent",
            ApiError::ServerBusy => "server_busy",
            ApiError::ShuttingDown => "shutting_down",
            ApiError::StoreUnavailable(_) => "store_unavailable",
            ApiError::Internal(_) => "internal",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::AgentVersion { .. } => "agent_version_unsupported",
            ApiError::TooManyEvents(_) => "too_many_events",
            ApiError::InvalidMonitor(e) => e.code,
            ApiError::TooManyMonitors(_) => "too_many_monitors",
            ApiError::NotMonitorOwner => "not_owner",
        }
    }

    /// A 404 for probe `id`.
    pub fn no_probe(id: &str) -> Self {
        let shown: String = id.chars().take(40).collect();
        ApiError::NotFound(format!("no probe with id `{shown}`"))
    }

    /// A 404 for monitor `id`.
    pub fn no_monitor(id: &str) -> Self {
        let shown: String = id.chars().take(40).collect();
        ApiError::NotFound(format!("no monitor with id `{shown}`"))
    }

    /// A 404 for bench `id`.
    pub fn no_bench(id: &str) -> Self {
        let shown: String = id.chars().take(40).collect();
        ApiError::NotFound(format!("no bench with id `{shown}`"))
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::UnknownCursor(c) => {
                ApiError::InvalidQuery(format!("`before` names no stored record: `{c}`"))
            }
            StoreError::Unavailable(why) => ApiError::StoreUnavailable(why),
            other => ApiError::Internal(other.to_string()),
        }
    }
}

/// The `RateLimit-*` headers of a rate decision.
pub fn rate_headers(decision: &RateDecision, headers: &mut HeaderMap) {
    headers.insert("ratelimit-limit", HeaderValue::from(decision.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(decision.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(decision.reset_secs));
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        match &self {
            ApiError::Internal(detail) => eprintln!("h123 serve: internal error: {detail}"),
            ApiError::StoreUnavailable(why) => eprintln!("h123 serve: {why}"),
            _ => {}
        }
        let body = ErrorBody {
            error: ApiErrorBody {
                code: self.code().to_owned(),
                message: self.to_string(),
            },
        };
        let mut response = (status, Json(body)).into_response();
        let headers = response.headers_mut();
        match &self {
            ApiError::RateLimited(decision) => {
                rate_headers(decision, headers);
                headers.insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(decision.retry_after_secs),
                );
            }
            ApiError::EgressSpent(secs)
            | ApiError::EgressShareSpent(secs)
            | ApiError::ServerBytesSpent(secs) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*secs));
            }
            ApiError::TooManyProbes(_) | ApiError::TooManyStreams(_) | ApiError::ServerBusy => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(2u32));
            }
            ApiError::StoreUnavailable(_) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(5u32));
            }
            ApiError::ShuttingDown => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(10u32));
            }
            ApiError::BenchBusy(secs) => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*secs));
            }
            ApiError::Unauthorized(_) => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"h123 agents\""),
                );
            }
            _ => {}
        }
        response
    }
}
