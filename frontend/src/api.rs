//! Every HTTP call the UI makes to the REST API under `/api/v1`.

use gloo_net::http::{Request, Response};
use h123_shared::ProbeOptions;
use h123_shared::api::{
    ApiError, ApiErrorBody, BenchCreated, ProbeCreated, ProbeList, VantageInfo, VantageList,
};
use h123_shared::bench::BenchOptions;
use h123_shared::browser::BrowserRun;
use h123_shared::json::{self, ReadJson};

/// Why a call did not give the expected answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The request did not complete (server unreachable, connection lost) or
    /// its answer could not be read.
    Fetch(String),
    /// The API answered with an error.
    Api {
        /// HTTP status code.
        status: u16,
        /// Seconds to wait before retrying, from `Retry-After` (429).
        retry_after_secs: Option<u64>,
        /// The error body (synthesized when the answer was not JSON).
        error: ApiError,
    },
}

impl Error {
    /// The API's stable error code, if the API answered.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Fetch(_) => None,
            Error::Api { error, .. } => Some(&error.error.code),
        }
    }
}

/// The result of an API call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

thread_local! {
    static API_BASE: String = configured_base();
}

/// `window.h123.api`, which `h123-config.js` beside `index.html` sets: the
/// API's base URL when the UI is served from elsewhere (a static host or a
/// CDN); empty (this page's own origin) when unset.
fn configured_base() -> String {
    let config = web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &"h123".into()).ok())
        .filter(|c| c.is_object())
        .and_then(|c| js_sys::Reflect::get(&c, &"api".into()).ok())
        .and_then(|api| api.as_string())
        .unwrap_or_default();
    config.trim_end_matches('/').to_owned()
}

/// The address of API path `path` (`/api/...`), on the configured API base.
pub fn api_url(path: &str) -> String {
    API_BASE.with(|base| format!("{base}{path}"))
}

/// `POST /api/v1/probes`: starts a probe.
///
/// # Errors
/// [`Error::Api`] when the options are refused (4xx) or the server fails.
pub async fn create_probe(options: &ProbeOptions) -> Result<ProbeCreated> {
    let json = serde_json::to_string(options).map_err(|e| Error::Fetch(e.to_string()))?;
    create_probe_from(&json).await
}

/// `POST /api/v1/probes` with the options as JSON text (a result's own, to run it again).
///
/// # Errors
/// As [`create_probe`].
pub async fn create_probe_from(options_json: &str) -> Result<ProbeCreated> {
    let mut builder = Request::post(&api_url("/api/v1/probes"));
    if let Some(token) = owner_token() {
        builder = builder.header(OWNER_HEADER, &token);
    }
    let request = builder
        .header("content-type", "application/json")
        .body(options_json)
        .map_err(|e| Error::Fetch(e.to_string()))?;
    let created: ProbeCreated = read(&answer(request.send().await).await?)?;
    remember_owner_token(&created.owner_token);
    remember_mine(&created.id);
    Ok(created)
}

/// `GET /api/v1/probes/{id}/view`: the result as its page shows it, drawn by the server.
///
/// # Errors
/// [`Error::Api`] with status 404 for an unknown id.
pub async fn view(id: &str) -> Result<String> {
    answer(
        Request::get(&format!("{}/view", record_url(id)))
            .send()
            .await,
    )
    .await
}

/// Where the ids of the probes this browser made are kept in `localStorage` (the newest
/// [`MINE_KEPT`], space-separated): only on those may it add its own measurement.
const MINE_KEY: &str = "h123.mine";

/// How many of this browser's probe ids are remembered.
const MINE_KEPT: usize = 50;

fn remember_mine(id: &str) {
    let Some(storage) = storage() else {
        return;
    };
    let kept = storage
        .get_item(MINE_KEY)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut ids: Vec<&str> = kept
        .split(' ')
        .filter(|k| !k.is_empty() && *k != id)
        .collect();
    ids.insert(0, id);
    ids.truncate(MINE_KEPT);
    let _ = storage.set_item(MINE_KEY, &ids.join(" "));
}

/// Whether this browser made probe `id` (so its owner token may add to it).
pub fn is_mine(id: &str) -> bool {
    storage()
        .and_then(|s| s.get_item(MINE_KEY).ok().flatten())
        .is_some_and(|kept| kept.split(' ').any(|k| k == id))
}

/// `POST /api/v1/probes/{id}/browser`: stores this browser's measurement with probe `id`.
///
/// # Errors
/// [`Error::Api`]: 403 (`not_owner`), 409 (`probe_running`, `browser_exists`), 422.
pub async fn attach_browser(id: &str, run: &BrowserRun) -> Result<()> {
    let mut builder = Request::post(&format!("{}/browser", record_url(id)));
    if let Some(token) = owner_token() {
        builder = builder.header(OWNER_HEADER, &token);
    }
    let request = builder.json(run).map_err(|e| Error::Fetch(e.to_string()))?;
    answer(request.send().await).await.map(drop)
}

/// The header that carries this browser's owner token.
const OWNER_HEADER: &str = "X-H123-Owner";

/// Where the owner token is kept in `localStorage`.
const OWNER_KEY: &str = "h123.owner_token";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// This browser's owner token: the one the server returned for its first
/// probe, sent with every later one so a single token lists them all.
fn owner_token() -> Option<String> {
    storage()?.get_item(OWNER_KEY).ok().flatten()
}

fn remember_owner_token(token: &str) {
    if owner_token().as_deref() != Some(token)
        && let Some(storage) = storage()
    {
        let _ = storage.set_item(OWNER_KEY, token);
    }
}

/// `GET /api/v1/compare/{a}/{b}/view`: two finished probes and what differs between them, as
/// the comparison page shows it, drawn by the server.
///
/// # Errors
/// [`Error::Api`] with status 404 for an unknown id, 409 (`still_running`) while either runs.
pub async fn comparison_view(a: &str, b: &str) -> Result<String> {
    let url = api_url(&format!("/api/v1/compare/{a}/{b}/view"));
    answer(Request::get(&url).send().await).await
}

/// `GET /api/v1/probes?limit=`: the most recent probes, newest first: the
/// public ones and this browser's own (by its owner token).
///
/// # Errors
/// As any call: [`Error::Fetch`] or [`Error::Api`].
pub async fn recent_probes(limit: u32) -> Result<ProbeList> {
    let url = api_url(&format!("/api/v1/probes?limit={limit}"));
    let mut request = Request::get(&url);
    if let Some(token) = owner_token() {
        request = request.header(OWNER_HEADER, &token);
    }
    read(&answer(request.send().await).await?)
}

/// `GET /api/v1/config/view`: the home page's forms as the server offers them, drawn by it.
///
/// # Errors
/// As any call: [`Error::Fetch`] or [`Error::Api`].
pub async fn home_view() -> Result<String> {
    answer(Request::get(&api_url("/api/v1/config/view")).send().await).await
}

/// `GET /api/v1/vantages`: the places this server can measure from, the
/// server's own first, with their health.
///
/// # Errors
/// As any call: [`Error::Fetch`] or [`Error::Api`].
pub async fn vantages() -> Result<Vec<VantageInfo>> {
    let list: VantageList =
        read(&answer(Request::get(&api_url("/api/v1/vantages")).send().await).await?)?;
    Ok(list.items)
}

/// `POST /api/v1/benches`: starts a bench.
///
/// # Errors
/// [`Error::Api`] when benches are off (403), one runs already (409), or the options are refused.
pub async fn create_bench(options: &BenchOptions) -> Result<BenchCreated> {
    let mut builder = Request::post(&api_url("/api/v1/benches"));
    if let Some(token) = owner_token() {
        builder = builder.header(OWNER_HEADER, &token);
    }
    let request = builder
        .json(options)
        .map_err(|e| Error::Fetch(e.to_string()))?;
    let created: BenchCreated = read(&answer(request.send().await).await?)?;
    remember_owner_token(&created.owner_token);
    Ok(created)
}

/// `GET /api/v1/benches/{id}/view`: the bench as its page shows it, drawn by the server (with
/// its progress while it runs).
///
/// # Errors
/// [`Error::Api`] with status 404 for an unknown id.
pub async fn bench_view(id: &str) -> Result<String> {
    let url = api_url(&format!("/api/v1/benches/{id}/view"));
    answer(Request::get(&url).send().await).await
}

/// The JSON record's address.
fn record_url(id: &str) -> String {
    api_url(&format!("/api/v1/probes/{id}"))
}

/// The body of a successful answer, or the API error it carries.
async fn answer(sent: Result<Response, gloo_net::Error>) -> Result<String> {
    let response = sent.map_err(|e| Error::Fetch(e.to_string()))?;
    let body = response.text().await;
    if response.ok() {
        return body.map_err(|e| Error::Fetch(e.to_string()));
    }
    let status = response.status();
    let retry_after_secs = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.trim().parse().ok());
    let error = body
        .ok()
        .and_then(|text| json::from_str::<ApiError>(&text).ok())
        .unwrap_or_else(|| ApiError {
            error: ApiErrorBody {
                code: format!("http_{status}"),
                message: format!("The server answered {status} {}.", response.status_text()),
            },
        });
    Err(Error::Api {
        status,
        retry_after_secs,
        error,
    })
}

/// Reads an answer's JSON `text` as a `T`.
fn read<T: ReadJson>(text: &str) -> Result<T> {
    json::from_str(text).map_err(|e| Error::Fetch(e.to_string()))
}
