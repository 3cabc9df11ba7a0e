//! Conditional GETs: a strong `ETag` from the body's hash, `If-None-Match` to 304,
//! and caching that follows the record's life (a record that can no longer change is cached forever);
//! gzip for clients that accept it (records are JSON that shrinks about sixfold), with its own `ETag`.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::encoding::{gzip, wants_gzip};

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

/// 200 with the body (gzipped when the client accepts it and it is worth it), or 304 when the
/// client's copy is current.
pub fn respond(request_headers: &HeaderMap, rep: Representation) -> Response {
    let plain_tag = etag(&rep.body);
    // Each coding is its own representation, so its own tag: `"…-gzip"` for the gzipped one.
    let gzip_tag = format!("{}-gzip\"", plain_tag.trim_end_matches('"'));
    // A PNG is compressed already.
    let wants_gzip = rep.content_type != "image/png" && wants_gzip(request_headers, rep.body.len());
    let current = if wants_gzip { &gzip_tag } else { &plain_tag };
    let not_modified = matches(request_headers, current);
    let (mut response, tag, gzipped) = if not_modified {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        (r, current.clone(), false)
    } else {
        match wants_gzip.then(|| gzip(&rep.body)).flatten() {
            Some(body) => (Response::new(Body::from(body)), gzip_tag, true),
            None => (Response::new(Body::from(rep.body)), plain_tag, false),
        }
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if gzipped {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
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

    #[tokio::test]
    async fn a_client_that_accepts_gzip_gets_it_under_its_own_tag() {
        use std::io::Read as _;
        let body = br#"{"attempts":[1,2,3]}"#.repeat(100);
        let rep = || Representation::json(body.clone(), false);
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("gzip, deflate, br"),
        );
        let response = respond(&headers, rep());
        assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(response.headers()[header::VARY], "accept-encoding");
        let tag = response.headers()[header::ETAG]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(tag.ends_with("-gzip\""), "{tag}");
        let sent = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        assert!(sent.len() * 10 < body.len(), "{} bytes", sent.len());
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&sent[..])
            .read_to_end(&mut unzipped)
            .unwrap();
        assert_eq!(unzipped, body);

        // Revalidating the gzipped copy: 304 while gzip is accepted; the plain tag does not match it.
        headers.insert(header::IF_NONE_MATCH, HeaderValue::from_str(&tag).unwrap());
        assert_eq!(respond(&headers, rep()).status(), StatusCode::NOT_MODIFIED);
        headers.remove(header::ACCEPT_ENCODING);
        let plain = respond(&headers, rep());
        assert_eq!(plain.status(), StatusCode::OK);
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        assert_eq!(plain.headers()[header::ETAG], etag(&body).as_str());

        // A short body is not worth it.
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        let short = respond(&headers, Representation::json(b"{}".to_vec(), false));
        assert!(short.headers().get(header::CONTENT_ENCODING).is_none());
    }
}
