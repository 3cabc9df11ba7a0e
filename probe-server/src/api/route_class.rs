//! Every route the server mounts, with the class that bounds it: the one table [`super::app`]
//! builds its router from and the guard ([`super::read_limit`]) classifies each request by.
//!
//! A route is its method and its path pattern (axum's `MatchedPath`); `HEAD` is its `GET`.
//! A request no route matches (the web UI's files) is [`FALLBACK`]; another method on a known
//! path is answered by a JSON 405 and counts as [`Class::Light`]. A route mounted outside this
//! table has no class, and the guard refuses it (`500`), so it cannot go unbounded.

use super::{
    agent, benches, browser, compare, config, health, metrics, monitor_page, monitors, openapi,
    preview, probes, scrape, static_files, vantages, view,
};
use crate::server::AppState;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::Method;
use axum::routing::{MethodRouter, delete, get, post};
use std::path::PathBuf;
use std::sync::Arc;

/// What a route costs, and so which limits bound it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// `/healthz`: one small store query, never refused, so a load balancer or an operator can
    /// always tell the server is up; the connection caps bound it.
    Health,
    /// A small answer from memory or a file (the configuration, the vantages, the OpenAPI
    /// document, the metrics, unknown API paths, the web UI's files): the light rate per client.
    Light,
    /// A creation (a probe, a bench, a browser measurement): the creation rate and the
    /// admission caps, checked by its handler.
    Create,
    /// A whole record, export, drawing, list or comparison built per request (JSON, HAR, curl,
    /// SVG, the view): the read rate per client, then a place among the expensive reads in
    /// flight (waited for up to 5 s, then `503`).
    Record,
    /// A permalink's page: the light rate for its shell, then a record's read (rate and place,
    /// not waited for); when the read is refused the plain shell is served.
    Page,
    /// An event stream held open (a probe's JSON events, its drawn view): the read rate to
    /// open it, then a place among the client's and the server's open streams while it lasts.
    Stream,
    /// An agent's claim or post: its token checked first (`401` before any work), its body
    /// bounded by the record cap.
    Agent,
    /// A `/probe` scrape: a probe answered at once, bounded by the scrape rate per client,
    /// the client's bytes per minute and a fair running slot, checked by its handler.
    Scrape,
}

impl Class {
    /// The class's name in the metrics and the documentation.
    pub fn name(self) -> &'static str {
        match self {
            Class::Health => "health",
            Class::Light => "light",
            Class::Create => "create",
            Class::Record => "record",
            Class::Page => "page",
            Class::Stream => "stream",
            Class::Agent => "agent",
            Class::Scrape => "scrape",
        }
    }
}

/// The class of a request that matched no route: the web UI's files and its SPA fallback.
pub const FALLBACK: Class = Class::Light;

/// What a route's handler is built with.
pub struct Mount {
    /// Largest `POST /api/v1/probes` body, in bytes.
    pub probe_body_limit: usize,
    /// The web UI's files (`--web-root`), or `None` for the built-in page.
    pub web_root: Option<Arc<PathBuf>>,
}

/// One route: a method on a path pattern, its class, and its handler.
pub struct Route {
    /// The method (`GET` also answers `HEAD`).
    pub method: Method,
    /// The path pattern, as axum writes it (`/api/v1/probes/{id}`).
    pub path: &'static str,
    /// What bounds it.
    pub class: Class,
    /// Its handler, made for a mount.
    pub handler: fn(&Mount) -> MethodRouter<AppState>,
}

/// Every route the server mounts, in the order they are documented.
pub fn table() -> &'static [Route] {
    use Class::*;
    static TABLE: std::sync::OnceLock<Vec<Route>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        vec![
            r(Method::GET, "/api/v1/probes", Record, |_| {
                get(probes::probes_list)
            }),
            r(Method::POST, "/api/v1/probes", Create, |m| {
                post(probes::probes_create).layer(DefaultBodyLimit::max(m.probe_body_limit))
            }),
            r(Method::GET, "/api/v1/probes/{id}", Record, |_| {
                get(probes::probes_get)
            }),
            r(Method::POST, "/api/v1/probes/{id}/browser", Create, |_| {
                post(browser::browser_post)
            }),
            r(Method::GET, "/api/v1/probes/{id}/events", Stream, |_| {
                get(probes::probes_events)
            }),
            r(Method::GET, "/api/v1/probes/{id}/view", Record, |_| {
                get(view::probes_view)
            }),
            r(
                Method::GET,
                "/api/v1/probes/{id}/view/events",
                Stream,
                |_| get(view::probes_view_events),
            ),
            r(Method::GET, "/api/v1/probes/{id}/har", Record, |_| {
                get(probes::probes_har)
            }),
            r(Method::GET, "/api/v1/probes/{id}/curl", Record, |_| {
                get(probes::probes_curl)
            }),
            r(
                Method::GET,
                "/api/v1/probes/{id}/waterfall.svg",
                Record,
                |_| get(probes::probes_svg),
            ),
            r(
                Method::GET,
                "/api/v1/probes/{id}/preview.png",
                Record,
                |_| get(preview::probes_preview_png),
            ),
            r(Method::GET, "/api/v1/benches", Record, |_| {
                get(benches::benches_list)
            }),
            r(Method::POST, "/api/v1/benches", Create, |_| {
                post(benches::benches_create)
            }),
            r(Method::GET, "/api/v1/benches/{id}", Record, |_| {
                get(benches::benches_get)
            }),
            r(Method::GET, "/api/v1/benches/{id}/view", Record, |_| {
                get(benches::benches_view)
            }),
            r(
                Method::GET,
                "/api/v1/benches/{id}/decay.svg",
                Record,
                |_| get(benches::benches_decay_svg),
            ),
            r(Method::GET, "/api/v1/monitors", Record, |_| {
                get(monitors::monitors_list)
            }),
            r(Method::POST, "/api/v1/monitors", Create, |_| {
                post(monitors::monitors_create)
            }),
            r(Method::GET, "/api/v1/monitors/{id}", Record, |_| {
                get(monitors::monitors_get)
            }),
            r(Method::DELETE, "/api/v1/monitors/{id}", Create, |_| {
                delete(monitors::monitors_delete)
            }),
            r(Method::POST, "/api/v1/monitors/{id}/pause", Create, |_| {
                post(monitors::monitors_pause)
            }),
            r(Method::POST, "/api/v1/monitors/{id}/resume", Create, |_| {
                post(monitors::monitors_resume)
            }),
            r(Method::GET, "/api/v1/monitors/{id}/series", Record, |_| {
                get(monitors::monitors_series)
            }),
            r(Method::GET, "/api/v1/monitors/{id}/status", Record, |_| {
                get(monitors::monitors_status)
            }),
            r(
                Method::GET,
                "/api/v1/monitors/{id}/deliveries",
                Record,
                |_| get(monitors::monitors_deliveries),
            ),
            r(Method::GET, "/badge/{id}/{file}", Record, |_| {
                get(monitors::monitors_badge)
            }),
            r(Method::GET, "/api/v1/compare/{a}/{b}", Record, |_| {
                get(compare::compare_get)
            }),
            r(Method::GET, "/api/v1/compare/{a}/{b}/view", Record, |_| {
                get(compare::compare_view)
            }),
            r(Method::GET, "/api/v1/config", Light, |_| {
                get(config::config_get)
            }),
            r(Method::GET, "/api/v1/config/view", Light, |_| {
                get(config::config_view)
            }),
            r(Method::GET, "/api/v1/vantages", Light, |_| {
                get(vantages::vantages_get)
            }),
            r(Method::POST, "/api/v1/agent/claim", Agent, |_| {
                post(agent::agent_claim)
            }),
            r(
                Method::POST,
                "/api/v1/agent/jobs/{id}/events",
                Agent,
                |_| post(agent::agent_events).layer(DefaultBodyLimit::max(agent::MAX_AGENT_BODY)),
            ),
            r(
                Method::POST,
                "/api/v1/agent/jobs/{id}/result",
                Agent,
                |_| post(agent::agent_result).layer(DefaultBodyLimit::max(agent::MAX_AGENT_BODY)),
            ),
            r(Method::GET, "/api/openapi.json", Light, |_| {
                get(openapi::openapi_get)
            }),
            r(Method::GET, "/api", Light, |_| get(super::api_not_found)),
            r(Method::GET, "/api/{*rest}", Light, |_| {
                get(super::api_not_found)
            }),
            r(Method::GET, "/healthz", Health, |_| get(health::health_get)),
            r(Method::GET, "/metrics", Light, |_| {
                get(metrics::metrics_get)
            }),
            r(Method::GET, "/probe", Scrape, |_| get(scrape::probe_scrape)),
            r(Method::GET, "/", Light, |m| {
                let root = m.web_root.clone();
                get(move |state: State<AppState>, request: Request| {
                    static_files::home_page(root.clone(), state, request)
                })
            }),
            r(Method::GET, "/r/{id}", Page, |m| {
                let root = m.web_root.clone();
                get(move |state: State<AppState>, request: Request| {
                    static_files::probe_page(root.clone(), state, request)
                })
            }),
            r(Method::GET, "/b/{id}", Page, |m| {
                let root = m.web_root.clone();
                get(move |state: State<AppState>, request: Request| {
                    static_files::bench_page(root.clone(), state, request)
                })
            }),
            r(Method::GET, "/m/{id}", Page, |m| {
                let root = m.web_root.clone();
                get(move |state: State<AppState>, request: Request| {
                    monitor_page::monitor_page(root.clone(), state, request)
                })
            }),
            r(Method::GET, "/m/{id}/status", Page, |m| {
                let root = m.web_root.clone();
                get(move |state: State<AppState>, request: Request| {
                    monitor_page::status_page(root.clone(), state, request)
                })
            }),
            r(Method::GET, "/compare/{a}/{b}", Page, |m| {
                let root = m.web_root.clone();
                get(move |state: State<AppState>, request: Request| {
                    static_files::comparison_page(root.clone(), state, request)
                })
            }),
        ]
    })
}

fn r(
    method: Method,
    path: &'static str,
    class: Class,
    handler: fn(&Mount) -> MethodRouter<AppState>,
) -> Route {
    Route {
        method,
        path,
        class,
        handler,
    }
}

/// The class of a request for `method` that matched the route `path` (`None`: a route with no
/// class). A method the path does not have is answered by a 405 and is light.
pub fn class_of(method: &Method, path: &str) -> Option<Class> {
    let method = if method == Method::HEAD {
        &Method::GET
    } else {
        method
    };
    let mut known = false;
    for route in table().iter().filter(|r| r.path == path) {
        if route.method == *method {
            return Some(route.class);
        }
        known = true;
    }
    known.then_some(Class::Light)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_and_path_is_in_the_table_once() {
        let mut seen = std::collections::HashSet::new();
        for route in table() {
            assert!(
                seen.insert((route.method.clone(), route.path)),
                "{} {} twice",
                route.method,
                route.path
            );
        }
    }

    #[test]
    fn a_request_is_classed_by_its_route_and_method() {
        assert_eq!(
            class_of(&Method::GET, "/api/v1/probes"),
            Some(Class::Record)
        );
        assert_eq!(
            class_of(&Method::POST, "/api/v1/probes"),
            Some(Class::Create)
        );
        assert_eq!(
            class_of(&Method::HEAD, "/api/v1/probes/{id}/events"),
            Some(Class::Stream)
        );
        assert_eq!(
            class_of(&Method::DELETE, "/api/v1/probes/{id}"),
            Some(Class::Light),
            "a 405"
        );
        assert_eq!(class_of(&Method::GET, "/api/v1/nothing"), None);
    }
}
