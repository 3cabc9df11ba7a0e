//! Cross-origin reads of the API (`--cors-origin`): a web UI on a static
//! host or CDN, or anyone's page, may call the API from the origins listed
//! (`*` for any). The API has no ambient credentials (no cookies: an owner
//! token travels in a header the caller sets), so no origin is ever allowed
//! credentials, and listing an origin grants it only what a direct caller
//! has. Without the flag the API sends no CORS headers (same origin only).

use crate::server::cors_origin::CorsOrigin;
use axum::http::{HeaderName, Method, header};
use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(3600);

/// The CORS layer for `origins`, or `None` when none is allowed.
pub fn layer(origins: &[CorsOrigin]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.contains(&CorsOrigin::Any) {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| match o {
            CorsOrigin::Exact(origin) => Some(origin.clone()),
            CorsOrigin::Any => None,
        }))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
                header::IF_NONE_MATCH,
                HeaderName::from_static("x-h123-owner"),
                HeaderName::from_static("last-event-id"),
            ])
            .expose_headers([
                header::ETAG,
                header::LOCATION,
                header::RETRY_AFTER,
                HeaderName::from_static("ratelimit-limit"),
                HeaderName::from_static("ratelimit-remaining"),
                HeaderName::from_static("ratelimit-reset"),
            ])
            .max_age(PREFLIGHT_MAX_AGE),
    )
}
