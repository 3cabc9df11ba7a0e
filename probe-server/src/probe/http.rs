//! What h1 and h2 share over hyper: the request, the timed exchange, the
//! capped body read and the response facts.

use super::failure::{failure, from_hyper, timed_out};
use super::trace::AttemptTrace;
use super::wire::WireTap;
use bytes::Bytes;
use h123_shared::migration::Migration;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, FailureKind, Header, Phase, ResponseInfo, TcpInfo, TtfbSource};
use http::header::{HOST, HeaderName, HeaderValue, USER_AGENT};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use std::future::Future;
use std::time::Duration;
use url::Url;

/// Largest response header section read from a target, in bytes (h1 read
/// buffer, h2 `SETTINGS_MAX_HEADER_LIST_SIZE`, h3 `SETTINGS_MAX_FIELD_SECTION_SIZE`):
/// a larger one fails the exchange as a protocol error.
pub const MAX_HEADER_SECTION: usize = 64 * 1024;
/// Most response header lines an HTTP/1.1 head may have.
pub const MAX_RESPONSE_HEADERS: usize = 128;
/// Most response header bytes (names plus values) kept per attempt; past
/// it the headers are cut and the response says `headers_truncated`.
pub const STORED_HEADER_BUDGET: usize = 16 * 1024;
/// Most response headers kept in a result.
const MAX_HEADERS: usize = 100;
/// Longest header value kept, in bytes.
const MAX_HEADER_VALUE: usize = 4096;
/// Headers the engine reads back from a stored response (redirects,
/// HTTP/3 discovery, server timing): kept first when the budget is short.
const WANTED_HEADERS: &[&str] = &["location", "alt-svc", "server-timing", "content-type"];

/// One request as the engine sends it, validated.
#[derive(Clone, Debug)]
pub struct RequestSpec {
    /// The method.
    pub method: http::Method,
    /// Absolute URL.
    pub url: Url,
    /// Extra headers (with a body, its `Content-Type`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The request body; empty for none.
    pub body: Bytes,
    /// Body bytes read at most.
    pub max_body: u64,
    /// Limit on each phase.
    pub phase_limit: Duration,
}

/// Whether the request line carries the path only (HTTP/1.1) or the whole URI.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UriForm {
    /// `GET /path HTTP/1.1` plus a Host header.
    Origin,
    /// `:scheme`, `:authority` and `:path` from the absolute URI.
    Absolute,
}

/// What an exchange learnt, filled in as it goes so a failure keeps it.
#[derive(Debug, Default)]
pub struct Exchange {
    /// Response facts, once headers arrived.
    pub response: Option<ResponseInfo>,
    /// How the first byte was observed.
    pub ttfb_source: Option<TtfbSource>,
    /// Whether the connection can take another request afterwards.
    pub reusable: bool,
    /// The kernel's TCP facts once the response's first byte was seen.
    pub tcp_at_first_byte: Option<TcpInfo>,
    /// The kernel's TCP facts after the last body byte, or after a failure.
    pub tcp_at_end: Option<TcpInfo>,
    /// What became of the connection when it moved mid-response (HTTP/3).
    pub migration: Option<Migration>,
    /// Whether the server closed the connection cleanly before any byte of
    /// a response (curl's "Empty reply from server").
    pub unanswered: bool,
}

/// Builds the hyper request for `spec`; hyper adds `Content-Length` for a
/// body (h1, h2) and h3 sends the bytes as DATA frames itself.
pub fn build_request(
    spec: &RequestSpec,
    form: UriForm,
) -> Result<http::Request<Full<Bytes>>, Failure> {
    let uri = match form {
        UriForm::Origin => &spec.url[url::Position::BeforePath..url::Position::AfterQuery],
        UriForm::Absolute => &spec.url[..url::Position::AfterQuery],
    };
    let mut builder = http::Request::builder()
        .method(spec.method.clone())
        .uri(uri);
    if form == UriForm::Origin {
        let authority = &spec.url[url::Position::BeforeHost..url::Position::BeforePath];
        builder = builder.header(HOST, authority);
    }
    builder = builder.header(USER_AGENT, concat!("h123/", env!("CARGO_PKG_VERSION")));
    let mut request = builder.body(Full::new(spec.body.clone())).map_err(|e| {
        failure(
            Phase::Send,
            FailureKind::Protocol,
            format!("bad request: {e}"),
        )
    })?;
    for (name, value) in &spec.headers {
        request.headers_mut().insert(name.clone(), value.clone());
    }
    Ok(request)
}

/// Sends a request by calling `send` (hyper queues the request as soon as
/// it is called, so the tap is armed first), timing send and wait from the
/// wire tap, then reads the body up to the cap, recording each step. The
/// TCP facts are read after the first byte's and the last byte's
/// timestamps, so they are not in `wait`, nor after the attempt's end.
pub async fn timed_exchange<S, F>(
    send: S,
    tap: &WireTap,
    ttfb_source: TtfbSource,
    spec: &RequestSpec,
    trace: &mut AttemptTrace,
    out: &mut Exchange,
) -> Result<(), Failure>
where
    S: FnOnce() -> F,
    F: Future<Output = hyper::Result<http::Response<Incoming>>>,
{
    let result = async {
        tap.arm();
        trace.record_once(TraceEvent::RequestStart);
        let sent = tokio::time::timeout(spec.phase_limit, send()).await;
        let marks = tap.marks();
        if let Some(at) = marks.written {
            trace.record_instant(TraceEvent::RequestWritten, at);
        }
        if let Some(at) = marks.first_byte {
            trace.record_instant(TraceEvent::FirstByte, at);
        }
        let phase = trace.open_phase().unwrap_or(Phase::Send);
        let response = match sent {
            Err(_) => return Err(timed_out(phase, spec.phase_limit)),
            Ok(Err(e)) => {
                out.unanswered = e.is_incomplete_message() && marks.first_byte.is_none();
                return Err(from_hyper(phase, &e));
            }
            Ok(Ok(response)) => response,
        };
        out.ttfb_source = Some(ttfb_source);
        if !trace.has(TraceEvent::RequestWritten) {
            trace.record(TraceEvent::RequestWritten);
        }
        if !trace.has(TraceEvent::FirstByte) {
            trace.record(TraceEvent::FirstByte);
            out.ttfb_source = Some(TtfbSource::ResponseHeaders);
        }
        out.tcp_at_first_byte = tap.tcp_info();
        let (parts, body) = response.into_parts();
        out.response = Some(response_facts(&parts));
        let (bytes, truncated) = read_body(body, spec, trace).await?;
        if let Some(r) = out.response.as_mut() {
            r.body_bytes = bytes;
            r.truncated = truncated;
        }
        out.reusable = !truncated;
        Ok(())
    }
    .await;
    out.tcp_at_end = tap.tcp_info();
    result
}

async fn read_body(
    mut body: Incoming,
    spec: &RequestSpec,
    trace: &mut AttemptTrace,
) -> Result<(u64, bool), Failure> {
    let read = async {
        let mut bytes = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| from_hyper(Phase::Receive, &e))?;
            if let Some(data) = frame.data_ref() {
                bytes += data.len() as u64;
                if bytes >= spec.max_body && !hyper::body::Body::is_end_stream(&body) {
                    return Ok((bytes, true));
                }
            }
        }
        Ok((bytes, false))
    };
    let result = tokio::time::timeout(spec.phase_limit, read)
        .await
        .map_err(|_| timed_out(Phase::Receive, spec.phase_limit))?;
    if result.is_ok() {
        trace.record(TraceEvent::BodyDone);
    }
    result.map_err(|mut f: Failure| {
        f.message = format!("body cut short: {}", f.message);
        f
    })
}

/// The facts kept of a response head: at most [`MAX_HEADERS`] headers,
/// each value cut at [`MAX_HEADER_VALUE`] bytes, [`STORED_HEADER_BUDGET`]
/// bytes in all. When they do not all fit, the ones the engine reads back
/// (`Location`, `Alt-Svc`, ...) go first and `headers_truncated` is set.
pub fn response_facts(parts: &http::response::Parts) -> ResponseInfo {
    let (headers, headers_truncated) = kept_headers(&parts.headers);
    ResponseInfo {
        status: parts.status.as_u16(),
        http_version: version_name(parts.version).to_owned(),
        headers,
        headers_truncated,
        body_bytes: 0,
        truncated: false,
    }
}

/// The response headers kept within the budget, and whether any was cut or left out.
pub fn kept_headers(map: &http::HeaderMap) -> (Vec<Header>, bool) {
    let wanted = |name: &HeaderName| WANTED_HEADERS.contains(&name.as_str());
    let total: usize = map.iter().map(|(n, v)| n.as_str().len() + v.len()).sum();
    let fits = total <= STORED_HEADER_BUDGET && map.len() <= MAX_HEADERS;
    let ordered: Vec<_> = if fits {
        map.iter().collect()
    } else {
        map.iter()
            .filter(|(n, _)| wanted(n))
            .chain(map.iter().filter(|(n, _)| !wanted(n)))
            .collect()
    };
    let mut truncated = !fits;
    let mut left = STORED_HEADER_BUDGET;
    let mut kept = Vec::new();
    for (name, value) in ordered.into_iter().take(MAX_HEADERS) {
        let mut value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        let room = left
            .saturating_sub(name.as_str().len())
            .min(MAX_HEADER_VALUE);
        if value.len() > room {
            truncated = true;
            if room == 0 {
                continue;
            }
            let mut cut = room;
            while !value.is_char_boundary(cut) {
                cut -= 1;
            }
            value.truncate(cut);
        }
        left -= name.as_str().len() + value.len();
        kept.push(Header {
            name: name.as_str().to_owned(),
            value,
        });
    }
    (kept, truncated)
}

fn version_name(version: http::Version) -> &'static str {
    match version {
        http::Version::HTTP_09 => "HTTP/0.9",
        http::Version::HTTP_10 => "HTTP/1.0",
        http::Version::HTTP_11 => "HTTP/1.1",
        http::Version::HTTP_2 => "HTTP/2",
        http::Version::HTTP_3 => "HTTP/3",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(url: &str) -> RequestSpec {
        RequestSpec {
            method: http::Method::GET,
            url: Url::parse(url).unwrap(),
            headers: vec![(
                HeaderName::from_static("x-a"),
                HeaderValue::from_static("1"),
            )],
            body: Bytes::new(),
            max_body: 10,
            phase_limit: Duration::from_secs(1),
        }
    }

    #[test]
    fn origin_form_has_path_and_host() {
        let req = build_request(
            &spec("https://example.com:8443/a/b?c=d#frag"),
            UriForm::Origin,
        )
        .unwrap();
        assert_eq!(req.uri(), "/a/b?c=d");
        assert_eq!(req.headers()[HOST], "example.com:8443");
        assert_eq!(req.headers()["x-a"], "1");
    }

    #[test]
    fn absolute_form_keeps_authority_and_drops_fragment() {
        let req = build_request(&spec("https://example.com/x#frag"), UriForm::Absolute).unwrap();
        assert_eq!(req.uri(), "https://example.com/x");
        assert!(req.headers().get(HOST).is_none());
    }

    #[test]
    fn long_header_values_are_cut_on_a_char_boundary() {
        let (mut parts, _) = http::Response::new(()).into_parts();
        let long = "é".repeat(3000);
        parts
            .headers
            .insert("x-long", HeaderValue::from_str(&long).unwrap());
        let facts = response_facts(&parts);
        assert!(facts.headers[0].value.len() <= MAX_HEADER_VALUE);
        assert!(facts.headers_truncated);
        assert_eq!(facts.http_version, "HTTP/1.1");
    }

    #[test]
    fn headers_fit_a_budget_and_the_engines_own_come_first() {
        let (mut parts, _) = http::Response::new(()).into_parts();
        parts
            .headers
            .insert("x-small", HeaderValue::from_static("1"));
        let facts = response_facts(&parts);
        assert!(!facts.headers_truncated);
        let fill = HeaderValue::from_str(&"h".repeat(4000)).unwrap();
        for i in 0..97 {
            parts.headers.insert(
                HeaderName::try_from(format!("x-fill-{i}")).unwrap(),
                fill.clone(),
            );
        }
        parts
            .headers
            .insert("location", HeaderValue::from_static("/next"));
        let facts = response_facts(&parts);
        assert!(facts.headers_truncated);
        let bytes: usize = facts
            .headers
            .iter()
            .map(|h| h.name.len() + h.value.len())
            .sum();
        assert!(bytes <= STORED_HEADER_BUDGET, "{bytes}");
        assert!(
            bytes > STORED_HEADER_BUDGET - 4100,
            "the budget is used: {bytes}"
        );
        assert_eq!(facts.header("location"), Some("/next"));
        assert_eq!(facts.headers[0].name, "location");
    }
}
