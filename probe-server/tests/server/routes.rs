//! The router walked: every route of the table answers as its class says (with and without a
//! web UI), every other method on its path and every unrouted path is light, every documented
//! operation is in the table, and a route mounted outside the table is refused, not unbounded.

use crate::support::*;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use axum::routing::get;
use h123::api::route_class::{self, Class};
use h123::server::ServerConfig;
use std::net::SocketAddr;
use tower::ServiceExt;

/// A request for `path` (its parameters filled in) by `method`, as client [`CLIENT`].
fn request(method: &Method, path: &str) -> Request<Body> {
    let id = "aaaaaaaaaaaaaaaaaaaaaa";
    let path = path
        .replace("{id}", id)
        .replace("{a}", id)
        .replace("{b}", id)
        .replace("{*rest}", "nothing/here");
    let mut request = Request::builder()
        .method(method.clone())
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from("{}"))
        .expect("request");
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(SocketAddr::new(CLIENT, 40000)));
    request
}

/// The class the guard gave the answer to `method` on `path`.
async fn classed(app: &axum::Router, method: &Method, path: &str) -> (Option<Class>, StatusCode) {
    let response = app
        .clone()
        .oneshot(request(method, path))
        .await
        .expect("infallible");
    (
        response.extensions().get::<Class>().copied(),
        response.status(),
    )
}

#[tokio::test]
async fn every_route_has_its_class_and_nothing_goes_unclassified() {
    let dir = tempfile::tempdir().unwrap();
    let web = tempfile::tempdir().unwrap();
    std::fs::write(
        web.path().join("index.html"),
        "<!doctype html><title>ui</title>",
    )
    .unwrap();
    let state = state(ServerConfig::default(), &dir);
    let apps = [
        ("no UI", h123::api::app(state.clone())),
        (
            "a UI",
            h123::api::app_with_web_root(state.clone(), Some(web.path())),
        ),
    ];
    for (ui, app) in &apps {
        for route in route_class::table() {
            let (class, status) = classed(app, &route.method, route.path).await;
            assert_eq!(
                class,
                Some(route.class),
                "{ui}: {} {} ({status})",
                route.method,
                route.path
            );
            assert!(!status.is_server_error(), "{ui}: {} {status}", route.path);
            // A method the path does not route: a JSON 405, classed light.
            let unrouted = [Method::PUT, Method::DELETE]
                .into_iter()
                .find(|m| {
                    !route_class::table()
                        .iter()
                        .any(|r| r.path == route.path && r.method == *m)
                })
                .expect("a method the path does not route");
            let (other, status) = classed(app, &unrouted, route.path).await;
            assert_eq!(other, Some(Class::Light), "{ui}: {unrouted} {}", route.path);
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{}", route.path);
        }
        for path in ["/", "/index.html", "/b/abc/def", "/no/such/page.js"] {
            let (class, _) = classed(app, &Method::GET, path).await;
            assert_eq!(class, Some(route_class::FALLBACK), "{ui}: {path}");
        }
    }
    // Everything the OpenAPI document describes is a route of the table.
    let document = h123::api::openapi::document();
    for (path, operations) in document["paths"].as_object().expect("paths") {
        for method in operations.as_object().expect("operations").keys() {
            let method: Method = method.to_uppercase().parse().expect("a method");
            assert!(
                route_class::table()
                    .iter()
                    .any(|r| r.path == path && r.method == method),
                "{method} {path} is documented but not in the route table"
            );
        }
    }
}

#[tokio::test]
async fn a_route_mounted_outside_the_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = state(ServerConfig::default(), &dir);
    let app = axum::Router::new()
        .route("/api/v1/unclassified", get(|| async { "unbounded" }))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            h123::api::read_limit::guard,
        ))
        .with_state(state);
    let response = app
        .oneshot(request(&Method::GET, "/api/v1/unclassified"))
        .await
        .expect("infallible");
    let answer = collect(response).await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(answer.code(), "internal");
}
