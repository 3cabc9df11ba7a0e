//! Content negotiation: which of brotli, gzip or identity a client's `Accept-Encoding` allows
//! (the web UI's files have precompressed copies), and gzip for answers made per request.

use axum::http::{HeaderMap, header};
use flate2::Compression;
use flate2::write::GzEncoder;
use std::io::Write as _;

/// A representation's content coding, in order of preference.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Brotli (`br`), from the `.br` file beside the original.
    Brotli,
    /// gzip, from the `.gz` file beside the original.
    Gzip,
    /// The file as it is.
    Identity,
}

impl Encoding {
    /// The codings tried for a file, most preferred first.
    pub const PREFERENCE: [Encoding; 3] = [Encoding::Brotli, Encoding::Gzip, Encoding::Identity];

    /// The `Content-Encoding` token (`None` for identity, which is not sent).
    pub fn token(self) -> Option<&'static str> {
        match self {
            Encoding::Brotli => Some("br"),
            Encoding::Gzip => Some("gzip"),
            Encoding::Identity => None,
        }
    }

    /// The suffix of the precompressed file beside the original (`""` for identity).
    pub fn suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => ".br",
            Encoding::Gzip => ".gz",
            Encoding::Identity => "",
        }
    }
}

/// Whether the request's `Accept-Encoding` allows `encoding` (RFC 9110
/// section 12.5.3): a coding is acceptable when it, or `*`, is listed with a
/// non-zero weight, and an explicit entry wins over `*`. Identity is always
/// acceptable: a client that refused it too would get nothing at all.
pub fn accepts(headers: &HeaderMap, encoding: Encoding) -> bool {
    let Some(token) = encoding.token() else {
        return true;
    };
    let mut wildcard = None;
    for item in headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
    {
        let mut parts = item.split(';');
        let name = parts.next().unwrap_or("").trim();
        let weight_ok = parts
            .filter_map(|p| p.trim().strip_prefix("q=").or(p.trim().strip_prefix("Q=")))
            .all(|q| q.trim().parse::<f32>().is_ok_and(|q| q > 0.0));
        if name.eq_ignore_ascii_case(token)
            || (encoding == Encoding::Gzip && name.eq_ignore_ascii_case("x-gzip"))
        {
            return weight_ok;
        }
        if name == "*" {
            wildcard = Some(weight_ok);
        }
    }
    wildcard.unwrap_or(false)
}

/// Bodies shorter than this are sent as they are: gzip would save too little to pay for itself.
const GZIP_FROM_BYTES: usize = 1024;

/// Whether an answer of `len` bytes made per request is worth gzipping for this client: it
/// accepts gzip and the body is long enough.
pub fn wants_gzip(headers: &HeaderMap, len: usize) -> bool {
    len >= GZIP_FROM_BYTES && accepts(headers, Encoding::Gzip)
}

/// `body` gzipped at level 6 (a fraction of the bytes for little CPU: for answers made per
/// request, where the UI's files have their precompressed copies), or `None` if encoding failed.
pub fn gzip(body: &[u8]) -> Option<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 4), Compression::default());
    encoder.write_all(body).ok()?;
    encoder.finish().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(value).unwrap(),
        );
        headers
    }

    #[test]
    fn listed_codings_with_weight_are_accepted() {
        let chrome = with("gzip, deflate, br, zstd");
        assert!(accepts(&chrome, Encoding::Brotli));
        assert!(accepts(&chrome, Encoding::Gzip));
        let gzip_only = with("gzip");
        assert!(!accepts(&gzip_only, Encoding::Brotli));
        assert!(accepts(&gzip_only, Encoding::Gzip));
    }

    #[test]
    fn zero_weights_refuse_and_the_wildcard_fills_in() {
        let refused = with("br;q=0, gzip;q=0.5");
        assert!(!accepts(&refused, Encoding::Brotli));
        assert!(accepts(&refused, Encoding::Gzip));
        let any = with("*");
        assert!(accepts(&any, Encoding::Brotli));
        let any_but_br = with("br;q=0, *;q=1");
        assert!(!accepts(&any_but_br, Encoding::Brotli));
        assert!(accepts(&any_but_br, Encoding::Gzip));
    }

    #[test]
    fn no_header_means_identity_only() {
        let none = HeaderMap::new();
        assert!(!accepts(&none, Encoding::Brotli));
        assert!(!accepts(&none, Encoding::Gzip));
        assert!(accepts(&none, Encoding::Identity));
    }
}
