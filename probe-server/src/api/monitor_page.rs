//! A monitor's pages, drawn whole by the server (no WebAssembly: `index.html`'s loader loads no
//! bundle under `/m/`): `/m/{id}` (its status, a chart per metric over a window with a table
//! each, its alert deliveries and badges; `?range=1h|6h|24h|7d|30d`) and `/m/{id}/status` (a
//! public monitor's status page). Read under the API's read limits, as a permalink's page is,
//! from the monitor's rollups (`store::history`: a bounded number of rows); the figures and the
//! page as drawn are kept until its next run, at most 10 s (`api::monitor_cache`);
//! an unknown monitor, an unlisted one's status page, a bad window or a busy server get a page
//! saying so with its HTTP status.

use super::monitor_cache::{Kept, Key};
use super::permalink_page::{self, Preview};
use crate::server::AppState;
use crate::store::history::Lines;
use crate::store::monitor_rows::StoredMonitor;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use h123_frontend::pages::{self, monitor as markup};
use h123_shared::Visibility;
use h123_shared::monitor::{PointState, SeriesMetric};
use h123_shared::monitor_status::MonitorStatus;
use std::path::PathBuf;
use std::sync::Arc;

/// Buckets a page's chart has at most: about six pixels each.
const PAGE_BUCKETS: u64 = 120;

/// How long a status whose latest slot is running is kept: its run may end any moment.
const RUNNING_KEPT_MS: u64 = 1000;

/// Deliveries a page lists.
const PAGE_DELIVERIES: usize = 20;

/// The shell a page is drawn in when the server has no built UI.
const BARE_SHELL: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\" /><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" /><title>h123</title></head><body><main id=\"main\"><!--h123:summary--><!--/h123:summary--></main></body></html>";

/// `GET /m/{id}`: the monitor page.
pub async fn monitor_page(
    root: Option<Arc<PathBuf>>,
    State(state): State<AppState>,
    request: Request,
) -> Response {
    let (parts, _body) = request.into_parts();
    let id = parts.uri.path().strip_prefix("/m/").unwrap_or_default();
    let range = match range_of(parts.uri.query()) {
        Ok(range) => range,
        Err(why) => {
            return problem(&root, &parts, StatusCode::BAD_REQUEST, "Not a window", &why).await;
        }
    };
    let loaded = match load(&state, id, &parts, Some(range)).await {
        Ok(loaded) => loaded,
        Err((status, why)) => return problem(&root, &parts, status, "No monitor here", &why).await,
    };
    let Loaded {
        stored,
        firing,
        kept,
    } = loaded;
    let monitor = stored.redacted();
    let status = &kept.status;
    // Drawn once per kept answer: a flood of one page costs a copy, not a drawing.
    let body = match kept.page.get() {
        Some(body) => body,
        None => {
            let deliveries = state
                .store
                .deliveries(monitor.id.clone(), PAGE_DELIVERIES)
                .await
                .unwrap_or_default();
            let data = markup::MonitorPageData {
                monitor: monitor.clone(),
                firing,
                status: status.as_ref().clone(),
                range: range.0,
                series: kept.series.as_ref().clone(),
                deliveries,
            };
            let drawn = pages::render(|| markup::monitor_page(data));
            kept.page.get_or_init(|| drawn)
        }
    };
    let preview = preview(&monitor, status, format!("/m/{}", monitor.id));
    page(&root, &parts, StatusCode::OK, &preview, body).await
}

/// `GET /m/{id}/status`: a public monitor's status page.
pub async fn status_page(
    root: Option<Arc<PathBuf>>,
    State(state): State<AppState>,
    request: Request,
) -> Response {
    let (parts, _body) = request.into_parts();
    let path = parts.uri.path();
    let id = path
        .strip_prefix("/m/")
        .and_then(|rest| rest.strip_suffix("/status"))
        .unwrap_or_default();
    let Loaded { stored, kept, .. } = match load(&state, id, &parts, None).await {
        Ok(loaded) => loaded,
        Err((status, why)) => return problem(&root, &parts, status, "No monitor here", &why).await,
    };
    let monitor = stored.redacted();
    if monitor.spec.options.visibility != Visibility::Public {
        let why = "This monitor is unlisted: only public monitors have a status page. Its owner can see it at its /m/ link.";
        return problem(&root, &parts, StatusCode::NOT_FOUND, "No status page", why).await;
    }
    let body = pages::render(|| markup::status_page(&monitor, &kept.status));
    let preview = preview(&monitor, &kept.status, format!("/m/{}/status", monitor.id));
    page(&root, &parts, StatusCode::OK, &preview, &body).await
}

/// A monitor with its status (and its series, for a page), read for a page.
struct Loaded {
    stored: StoredMonitor,
    firing: Vec<String>,
    kept: Kept,
}

/// Reads monitor `id`, its status and, for a page over `range`, its series (kept, or read from
/// its rollups: a bounded number of rows) under the read limits, or the status and reason to
/// answer instead.
async fn load(
    state: &AppState,
    id: &str,
    parts: &Parts,
    range: Option<(&'static str, u64)>,
) -> Result<Loaded, (StatusCode, String)> {
    if !crate::store::is_valid_id(id) {
        return Err((StatusCode::NOT_FOUND, "No monitor has this id.".to_owned()));
    }
    let Some(_permit) = permalink_page::admitted(state, parts) else {
        return Err((
            StatusCode::SERVICE_UNAVAILABLE,
            "The server is answering too many reads just now (from you, or from everyone): try again in a few seconds.".to_owned(),
        ));
    };
    let unavailable = |e: crate::store::StoreError| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("The store could not be read: {e}"),
        )
    };
    let stored = state
        .store
        .get_monitor(id.to_owned())
        .await
        .map_err(unavailable)?
        .ok_or_else(|| {
            (
                StatusCode::NOT_FOUND,
                format!("No monitor has the id {id}: it may have been deleted."),
            )
        })?;
    let kept = figures(state, &stored, range).await.map_err(unavailable)?;
    let firing = stored.alert_state.firing.iter().cloned().collect();
    Ok(Loaded {
        stored,
        firing,
        kept,
    })
}

/// Monitor `stored`'s status and, for a page over `range`, its series: kept (see
/// [`super::monitor_cache`]: until its next run, at most 10 s) or read now and kept.
///
/// # Errors
/// When the store fails.
pub async fn figures(
    state: &AppState,
    stored: &StoredMonitor,
    range: Option<(&'static str, u64)>,
) -> Result<Kept, crate::store::StoreError> {
    let monitor = &stored.monitor;
    let now = crate::probe::trace::unix_ms();
    let key = Key {
        id: monitor.id.clone(),
        range: range.map(|(name, _)| name),
    };
    if let Some(kept) = state.monitor_cache.get(&key, now) {
        return Ok(kept);
    }
    let every = monitor.spec.every_ms;
    let next_slot = monitor.next_slot_unix_ms;
    let (status, _rows) = state
        .store
        .monitor_status(&monitor.id, every, next_slot, now)
        .await?;
    let series = match range {
        Some((_, length)) => {
            let window = (now.saturating_sub(length), now + 1);
            let lines = Lines::default();
            let metrics = SeriesMetric::ALL;
            let (series, _rows) = state
                .store
                .monitor_series(&monitor.id, every, &metrics, window, PAGE_BUCKETS, &lines)
                .await?;
            series
        }
        None => Vec::new(),
    };
    let kept = Kept {
        status: Arc::new(status),
        series: Arc::new(series),
        page: Arc::default(),
    };
    // A paused monitor runs no more: kept for the longest. A run under way may end any
    // moment: "running" is kept a second at most.
    let running = kept
        .status
        .latest
        .as_ref()
        .is_some_and(|latest| latest.state == PointState::Running);
    let next = match (running, monitor.paused) {
        (true, _) => now + RUNNING_KEPT_MS,
        (false, true) => u64::MAX,
        (false, false) => monitor.next_slot_unix_ms,
    };
    state.monitor_cache.put(key, kept.clone(), now, next);
    Ok(kept)
}

/// The window `?range=` names (the last day without one), or why it is not one.
fn range_of(query: Option<&str>) -> Result<(&'static str, u64), String> {
    let asked = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("range="));
    let Some(asked) = asked else {
        return Ok(markup::RANGES[2]);
    };
    markup::RANGES
        .into_iter()
        .find(|(name, _)| *name == asked)
        .ok_or_else(|| {
            let names: Vec<&str> = markup::RANGES.iter().map(|(n, _)| *n).collect();
            format!("The window must be one of {}.", names.join(", "))
        })
}

/// A monitor page's link preview: its URL and how each protocol's last run went.
fn preview(
    monitor: &h123_shared::monitor::Monitor,
    status: &MonitorStatus,
    url: String,
) -> Preview {
    let lines: Vec<String> = status
        .rows
        .iter()
        .map(|row| {
            let day = &row.windows[0];
            format!(
                "{} up {} over 24 h",
                row.protocol.http_version(),
                day.uptime_text()
            )
        })
        .collect();
    let first = monitor
        .spec
        .options
        .protocols
        .first()
        .map_or("h3", |p| p.as_str());
    Preview {
        title: format!(
            "h123 monitor: {}",
            h123_shared::format::shorten(&monitor.spec.options.url, 200)
        ),
        description: match lines.is_empty() {
            true => "No runs yet.".to_owned(),
            false => lines.join("; "),
        },
        image: format!("/badge/{}/{first}.svg", monitor.id),
        url,
        data: None,
    }
}

/// `body` in the web UI's shell (or a bare one without a built UI), as an HTML response.
async fn page(
    root: &Option<Arc<PathBuf>>,
    parts: &Parts,
    status: StatusCode,
    preview: &Preview,
    body: &str,
) -> Response {
    let shell = match root {
        Some(root) => super::permalink_page::shell(root).await,
        None => None,
    };
    let shell = shell.unwrap_or_else(|| BARE_SHELL.to_owned());
    let html = permalink_page::drawn_page(&shell, preview, body, &parts.headers);
    if status == StatusCode::OK {
        return super::static_files::page_response(html, &parts.headers, &parts.method);
    }
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if status == StatusCode::SERVICE_UNAVAILABLE {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
    }
    response
}

/// A page saying what went wrong, with `status`.
async fn problem(
    root: &Option<Arc<PathBuf>>,
    parts: &Parts,
    status: StatusCode,
    title: &str,
    why: &str,
) -> Response {
    let preview = Preview {
        title: format!("h123: {title}"),
        description: why.to_owned(),
        image: String::new(),
        url: parts.uri.path().to_owned(),
        data: None,
    };
    let body = pages::render(|| markup::problem(title.to_owned(), why.to_owned()));
    page(root, parts, status, &preview, &body).await
}
