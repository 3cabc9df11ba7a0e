//! Conditional GETs: a strong `ETag` from the body's hash, `If-None-Match` to 304,
//! and caching that follows the record's life (a record that can no longer change is cached forever).

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

/// A body ready to send, with what the headers need.
#[derive(Debug)]
pub struct Representation {
    /// The bytes.
    pub body: Vec<u8>,
    /// Its media type.
    pub content_type: &'static str,
    /// Whether it can never change (cached forever) rather than may (revalidated each time).
    pub immutable: bool,
    /// A `Content-Disposition`, if any.
    pub disposition: Option<String>,
}

impl Representation {
    /// A representation of `body` as `content_type`.
    pub fn new(body: Vec<u8>, content_type: &'static str, immutable: bool) -> Self {
        Representation {
            body,
            content_type,
            immutable,
            disposition: None,
        }
    }

    /// A JSON representation.
    pub fn json(body: Vec<u8>, immutable: bool) -> Self {
        Representation::new(body, "application/json", immutable)
    }
}

/// The strong ETag of `body` (64-bit FNV-1a, stable across restarts and builds).
pub fn etag(body: &[u8]) -> String {
    let hash = body.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("\"{hash:016x}-{}\"", body.len())
}

/// Whether `If-None-Match` in `headers` matches `tag` (`*` matches anything; weak
/// comparison, as RFC 9110 asks for this header).
pub fn matches(headers: &HeaderMap, tag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == tag)
}

/// 200 with the body, or 304 when the client's copy is current.
pub fn respond(request_headers: &HeaderMap, rep: Representation) -> Response {
    let tag = etag(&rep.body);
    let not_modified = matches(request_headers, &tag);
    let mut response = if not_modified {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        Response::new(Body::from(rep.body))
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    let cache = if rep.immutable {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    if !not_modified {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(rep.content_type),
        );
        if let Some(value) = rep.disposition.and_then(|d| HeaderValue::from_str(&d).ok()) {
            headers.insert(header::CONTENT_DISPOSITION, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_differ_by_body_and_match_lists() {
        let a = etag(b"one");
        assert_ne!(a, etag(b"two"));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_str(&format!("\"x\", W/{a}")).unwrap(),
        );
        assert!(matches(&headers, &a));
        assert!(!matches(&headers, &etag(b"two")));
        let response = respond(&headers, Representation::json(b"one".to_vec(), true));
        assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(response.headers()[header::ETAG], a.as_str());
    }
}
