//! Cross-origin reads of the API (`--cors-origin`): a web UI on a static
//! host or CDN, or anyone's page, may call the API from the origins listed
//! (`*` for any). The API has no ambient credentials (no cookies: an owner
//! token travels in a header the caller sets), so no origin is ever allowed
//! credentials, and listing an origin grants it only what a direct caller
//! has. Without the flag the API sends no CORS headers (same origin only).

use axum::http::{HeaderName, HeaderValue, Method, header};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(3600);

/// An origin allowed to read the API: `scheme://host[:port]`, or any (`*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsOrigin {
    /// Every origin.
    Any,
    /// One origin, as browsers send it in `Origin`.
    Exact(HeaderValue),
}

impl FromStr for CorsOrigin {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text == "*" {
            return Ok(CorsOrigin::Any);
        }
        let bad = |why: &str| format!("--cors-origin `{text}`: {why}");
        let url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("must be http:// or https://"));
        }
        if url.host().is_none()
            || !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
            || url.path() != "/"
        {
            return Err(bad(
                "must be an origin, scheme://host[:port], with no path (or `*`)",
            ));
        }
        let origin = url.origin().ascii_serialization();
        HeaderValue::from_str(&origin)
            .map(CorsOrigin::Exact)
            .map_err(|e| bad(&e.to_string()))
    }
}

impl fmt::Display for CorsOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorsOrigin::Any => f.write_str("*"),
            CorsOrigin::Exact(origin) => f.write_str(origin.to_str().unwrap_or("?")),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_read_as_browsers_send_them() {
        let exact = |text: &str| text.parse::<CorsOrigin>().map(|o| o.to_string());
        assert_eq!(exact("https://ui.example"), Ok("https://ui.example".into()));
        assert_eq!(
            exact("https://UI.example:443/"),
            Ok("https://ui.example".into())
        );
        assert_eq!(
            exact("http://127.0.0.1:8081"),
            Ok("http://127.0.0.1:8081".into())
        );
        assert_eq!(exact("*"), Ok("*".into()));
        for bad in [
            "ui.example",
            "ftp://ui.example",
            "https://ui.example/app",
            "https://ui.example?x=1",
            "https://user@ui.example",
            "",
        ] {
            let error = exact(bad).unwrap_err();
            assert!(
                error.starts_with(&format!("--cors-origin `{bad}`")),
                "{error}"
            );
        }
    }
}
