//! Request routing, independent of the transport: `route(request) -> response`.

use std::time::Duration;

use http::header::{
    ALLOW, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE,
};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};

use crate::body::TargetBody;
use crate::clock;

/// Header present on every response of the target.
pub const TARGET_HEADER: HeaderName = HeaderName::from_static("x-h123-target");

/// Largest body `/bytes/{n}`, `/drip/{n}/{ms}` and `/close-mid-body/{n}` produce (100 MiB);
/// larger `n` are capped to it.
pub const MAX_BODY_BYTES: u64 = 100 * 1024 * 1024;

/// Longest delay or drip span accepted, in milliseconds (5 minutes); longer asks get a 400.
pub const MAX_DELAY_MS: u64 = 300_000;

/// Most headers `/headers/{n}/{len}` answers with; larger `n` get a 400.
pub const MAX_HEADERS: usize = 1000;

/// Longest header value `/headers/{n}/{len}` answers with; longer `len` get a 400.
pub const MAX_HEADER_LEN: usize = 100_000;

/// Body of `/`.
pub const ROOT_BODY: &str = "h123 test target\n";

/// `Server-Timing` value of `/server-timing`.
pub const SERVER_TIMING_SAMPLE: &str = "db;dur=12.5;desc=\"query\", app;dur=30";

/// Answers one request. Only the method, URI and headers are looked at; the request body is ignored.
///
/// Routes (GET and HEAD unless said otherwise; other methods get 405):
/// - `/`: a small text body.
/// - `/delay/{ms}`: waits `ms` before answering (no sleep at all for 0) and reports the wait it
///   measured as `Server-Timing: delay;dur=<ms, 3 decimals>`.
/// - `/tao/{ms}`: as `/delay/{ms}`, with `Timing-Allow-Origin: *`, so a browser on any page shows
///   the request's phases (without it, a cross-origin page sees only the total).
/// - `/bytes/{n}`: `n` bytes (capped at [`MAX_BODY_BYTES`]), with `content-length`.
/// - `/drip/{n}/{ms}`: headers at once, then `n` bytes in ~10 ms steps, the last at `ms`.
/// - `/close-mid-body/{n}`: `content-length: n`, sends `n/2` bytes, then fails the body.
/// - `/status/{code}`: that status (200..=599) with a small body.
/// - `/redirect/{k}`: 302 to `/redirect/{k-1}`; `/redirect/0` is a 200.
/// - `/redirect-to?url=<percent-encoded URL>`: 302 to that URL.
/// - `/redirect-with/{code}`: that redirect status (301, 302, 303, 307, 308) to `/upload`,
///   for any method.
/// - `/upload` (any method; served by the transports, which own the body): see [`crate::upload`].
/// - `/server-timing`: 200 with [`SERVER_TIMING_SAMPLE`] as `Server-Timing`.
/// - `/echo-headers`: 200 with each request header `name: value` answered as
///   `x-echo-name: value` (how a test sees what the probe sent).
/// - `/headers/{n}/{len}`: a hostile answer: `n` headers (at most [`MAX_HEADERS`]) named
///   `x-h123-fill-{i}`, each with `len` bytes of value (at most [`MAX_HEADER_LEN`]); with
///   `?loop` it is a 302 to itself, so a probe that follows redirects meets it on every hop.
/// - `/auth`: 200 with `Set-Cookie:` [`AUTH_SET_COOKIE`] when the request has `authorization`
///   and `cookie` headers, else 401.
/// - anything else: 404. Malformed numbers: 400.
///
/// Every response carries [`TARGET_HEADER`]`: 1`. HEAD gets the same headers as GET
/// (including `content-length`) and an empty body.
pub async fn route<B>(request: Request<B>) -> Response<TargetBody> {
    let (parts, _) = request.into_parts();
    let mut response = if parts.uri.path() == "/echo-headers" {
        echo_headers(&parts.headers)
    } else {
        dispatch(&parts.method, &parts.uri, &parts.headers).await
    };
    if parts.method == Method::HEAD {
        *response.body_mut() = TargetBody::empty();
    }
    response
        .headers_mut()
        .insert(TARGET_HEADER, HeaderValue::from_static("1"));
    response
}

/// Picks the handler for a path.
async fn dispatch(method: &Method, uri: &Uri, headers: &http::HeaderMap) -> Response<TargetBody> {
    if let Some(code) = uri.path().strip_prefix("/redirect-with/") {
        return redirect_with(code);
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        response
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let path = uri.path().strip_prefix('/').unwrap_or(uri.path());
    let segments: Vec<&str> = path.split('/').collect();
    match segments.as_slice() {
        [""] => text(StatusCode::OK, ROOT_BODY),
        ["delay", ms] => match parse_ms(ms) {
            Some(ms) => delay(ms).await,
            None => bad_request(),
        },
        ["tao", ms] => match parse_ms(ms) {
            Some(ms) => {
                let mut response = delay(ms).await;
                response
                    .headers_mut()
                    .insert("timing-allow-origin", HeaderValue::from_static("*"));
                response
            }
            None => bad_request(),
        },
        ["bytes", n] => match parse_len(n) {
            Some(n) => sized(StatusCode::OK, n, TargetBody::filler(n)),
            None => bad_request(),
        },
        ["drip", n, ms] => match (parse_len(n), parse_ms(ms)) {
            (Some(n), Some(ms)) => {
                let start = tokio::time::Instant::from_std(clock::now());
                let body = TargetBody::drip(n, Duration::from_millis(ms), start);
                sized(StatusCode::OK, n, body)
            }
            _ => bad_request(),
        },
        ["close-mid-body", n] => match parse_len(n) {
            Some(n) => sized(StatusCode::OK, n, TargetBody::failing_after(n / 2)),
            None => bad_request(),
        },
        ["status", code] => status(code),
        ["redirect", k] => match k.parse::<u64>() {
            Ok(0) => text(StatusCode::OK, "redirects done\n"),
            Ok(k) => match HeaderValue::try_from(format!("/redirect/{}", k - 1)) {
                Ok(location) => redirect(location),
                Err(_) => bad_request(),
            },
            Err(_) => bad_request(),
        },
        ["redirect-to"] => match redirect_target(uri.query()) {
            Some(location) => redirect(location),
            None => text(StatusCode::BAD_REQUEST, "want ?url=<percent-encoded URL>\n"),
        },
        ["auth"] => auth(headers),
        ["server-timing"] => {
            let mut response = text(StatusCode::OK, "server timing sample\n");
            response.headers_mut().insert(
                "server-timing",
                HeaderValue::from_static(SERVER_TIMING_SAMPLE),
            );
            response
        }
        ["headers", n, len] => match (n.parse::<usize>(), len.parse::<usize>()) {
            (Ok(n), Ok(len)) if n <= MAX_HEADERS && len <= MAX_HEADER_LEN => {
                let looping = uri.query() == Some("loop");
                hostile_headers(n, len, looping.then(|| uri.to_string()))
            }
            _ => bad_request(),
        },
        _ => text(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// `/echo-headers`: the request's headers, each as `x-echo-{name}`.
fn echo_headers(headers: &http::HeaderMap) -> Response<TargetBody> {
    let mut response = text(StatusCode::OK, "echo\n");
    for (name, value) in headers {
        if let Ok(echo) = HeaderName::try_from(format!("x-echo-{name}")) {
            response.headers_mut().append(echo, value.clone());
        }
    }
    response
}

/// `/headers/{n}/{len}`: `n` filler headers of `len` bytes each; a 302 to
/// `location` (the same path) when it is given.
fn hostile_headers(n: usize, len: usize, location: Option<String>) -> Response<TargetBody> {
    let mut response = match location.and_then(|l| HeaderValue::try_from(l).ok()) {
        Some(location) => redirect(location),
        None => text(StatusCode::OK, "many headers\n"),
    };
    let filler = HeaderValue::try_from("h".repeat(len)).unwrap_or(HeaderValue::from_static(""));
    for i in 0..n {
        if let Ok(name) = HeaderName::try_from(format!("x-h123-fill-{i}")) {
            response.headers_mut().insert(name, filler.clone());
        }
    }
    response
}

/// `/delay/{ms}`: sleeps, then reports the measured sleep.
async fn delay(ms: u64) -> Response<TargetBody> {
    let actual = if ms == 0 {
        Duration::ZERO
    } else {
        let started = clock::now();
        tokio::time::sleep(Duration::from_millis(ms)).await;
        clock::now().saturating_duration_since(started)
    };
    let mut response = text(StatusCode::OK, "delayed\n");
    let timing = format!("delay;dur={:.3}", actual.as_secs_f64() * 1000.0);
    if let Ok(value) = HeaderValue::try_from(timing) {
        response.headers_mut().insert("server-timing", value);
    }
    response
}

/// The `set-cookie` value `/auth` answers with (a secret a server must redact).
pub const AUTH_SET_COOKIE: &str = "sid=SETCOOKIE-SECRET-7f3a; Path=/; HttpOnly";

/// `/auth`: 200 with [`AUTH_SET_COOKIE`] when the request carries both an
/// `authorization` and a `cookie` header (so a probe shows it sent them), else 401.
fn auth(headers: &http::HeaderMap) -> Response<TargetBody> {
    if !(headers.contains_key(AUTHORIZATION) && headers.contains_key(COOKIE)) {
        return text(StatusCode::UNAUTHORIZED, "want authorization and cookie\n");
    }
    let mut response = text(StatusCode::OK, "welcome\n");
    response
        .headers_mut()
        .insert(SET_COOKIE, HeaderValue::from_static(AUTH_SET_COOKIE));
    response
}

/// `/status/{code}`.
fn status(code: &str) -> Response<TargetBody> {
    let Some(status) = code
        .parse::<u16>()
        .ok()
        .filter(|c| (200..=599).contains(c))
        .and_then(|c| StatusCode::from_u16(c).ok())
    else {
        return bad_request();
    };
    if matches!(status.as_u16(), 204 | 205 | 304) {
        // These statuses carry no body (and 204/304 no content-length).
        let mut response = Response::new(TargetBody::empty());
        *response.status_mut() = status;
        return response;
    }
    let body = format!("status {}\n", status.as_u16());
    let len = body.len() as u64;
    sized(status, len, TargetBody::full(body))
}

/// The `Location` of `/redirect-to`, from the `url` query parameter.
fn redirect_target(query: Option<&str>) -> Option<HeaderValue> {
    let encoded = query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("url="))?;
    let decoded = percent_decode(encoded)?;
    if decoded.is_empty() {
        return None;
    }
    HeaderValue::from_bytes(&decoded).ok()
}

/// Decodes `%XX` escapes (`+` stays a plus); `None` on a malformed escape.
fn percent_decode(input: &str) -> Option<Vec<u8>> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// A millisecond count up to [`MAX_DELAY_MS`].
fn parse_ms(s: &str) -> Option<u64> {
    s.parse::<u64>().ok().filter(|ms| *ms <= MAX_DELAY_MS)
}

/// A byte count, capped at [`MAX_BODY_BYTES`].
fn parse_len(s: &str) -> Option<u64> {
    s.parse::<u64>().ok().map(|n| n.min(MAX_BODY_BYTES))
}

/// A 302 to `location`.
fn redirect(location: HeaderValue) -> Response<TargetBody> {
    let mut response = text(StatusCode::FOUND, "redirecting\n");
    response.headers_mut().insert(LOCATION, location);
    response
}

/// `/redirect-with/{code}`: that redirect status (301, 302, 303, 307 or 308)
/// to `/upload`, for any method, without reading the request body.
fn redirect_with(code: &str) -> Response<TargetBody> {
    match code.parse::<u16>() {
        Ok(code @ (301..=303 | 307 | 308)) => {
            let mut response = redirect(HeaderValue::from_static("/upload"));
            *response.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::FOUND);
            response
        }
        _ => bad_request(),
    }
}

/// A 400 for malformed path parameters.
fn bad_request() -> Response<TargetBody> {
    text(StatusCode::BAD_REQUEST, "bad request\n")
}

/// A plain-text response.
fn text(status: StatusCode, body: &'static str) -> Response<TargetBody> {
    let mut response = sized(status, body.len() as u64, TargetBody::full(body));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// A response with an explicit `content-length` (kept for HEAD, where the body is dropped).
fn sized(status: StatusCode, len: u64, body: TargetBody) -> Response<TargetBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(len));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    async fn get(path: &str) -> Response<TargetBody> {
        route(Request::get(path).body(()).unwrap()).await
    }

    async fn body_len(response: Response<TargetBody>) -> Result<usize, crate::body::BodyError> {
        let mut body = response.into_body();
        let mut total = 0;
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame?.into_data() {
                total += data.len();
            }
        }
        Ok(total)
    }

    #[tokio::test]
    async fn root_and_not_found() {
        let response = get("/").await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()[TARGET_HEADER], "1");
        let response = get("/nope").await;
        assert_eq!(response.status(), 404);
        assert_eq!(response.headers()[TARGET_HEADER], "1");
        let response = route(Request::post("/").body(()).unwrap()).await;
        assert_eq!(response.status(), 405);
    }

    #[tokio::test]
    async fn delay_reports_what_it_did() {
        let started = clock::now();
        let response = get("/delay/50").await;
        let elapsed = clock::now() - started;
        assert!(elapsed >= Duration::from_millis(50), "{elapsed:?}");
        let timing = response.headers()["server-timing"].to_str().unwrap();
        let dur: f64 = timing.strip_prefix("delay;dur=").unwrap().parse().unwrap();
        assert!((50.0..60.0).contains(&dur), "{timing}");
        let zero = get("/delay/0").await;
        assert_eq!(zero.headers()["server-timing"], "delay;dur=0.000");
        assert!(!zero.headers().contains_key("timing-allow-origin"));
        let open = get("/tao/0").await;
        assert_eq!(open.headers()["timing-allow-origin"], "*");
        assert_eq!(open.headers()["server-timing"], "delay;dur=0.000");
        assert_eq!(get("/tao/x").await.status(), 400);
        assert_eq!(get("/delay/x").await.status(), 400);
        assert_eq!(get("/delay/999999999").await.status(), 400);
    }

    #[tokio::test]
    async fn bytes_have_exact_length() {
        let response = get("/bytes/200000").await;
        assert_eq!(response.headers()[CONTENT_LENGTH], "200000");
        assert_eq!(body_len(response).await.unwrap(), 200_000);
        assert_eq!(body_len(get("/bytes/0").await).await.unwrap(), 0);
        let capped = get("/bytes/999999999999").await;
        assert_eq!(
            capped.headers()[CONTENT_LENGTH],
            MAX_BODY_BYTES.to_string().as_str()
        );
    }

    #[tokio::test]
    async fn head_keeps_length_drops_body() {
        let response = route(Request::head("/bytes/1234").body(()).unwrap()).await;
        assert_eq!(response.headers()[CONTENT_LENGTH], "1234");
        assert_eq!(body_len(response).await.unwrap(), 0);
    }

    #[tokio::test]
    async fn drip_spreads_the_body() {
        let started = clock::now();
        let response = get("/drip/1000/100").await;
        assert!(clock::now() - started < Duration::from_millis(20));
        let mut body = response.into_body();
        let mut frames = 0;
        let mut total = 0;
        while let Some(frame) = body.frame().await {
            total += frame.unwrap().into_data().unwrap().len();
            frames += 1;
        }
        let elapsed = clock::now() - started;
        assert_eq!(total, 1000);
        assert_eq!(frames, 10);
        assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(150), "{elapsed:?}");
    }

    #[tokio::test]
    async fn close_mid_body_fails_after_half() {
        let response = get("/close-mid-body/1000").await;
        assert_eq!(response.headers()[CONTENT_LENGTH], "1000");
        let mut body = response.into_body();
        let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(first.len(), 500);
        assert!(body.frame().await.unwrap().is_err());
    }

    #[tokio::test]
    async fn status_and_redirects() {
        assert_eq!(get("/status/418").await.status(), 418);
        assert_eq!(get("/status/204").await.status(), 204);
        assert_eq!(get("/status/99").await.status(), 400);
        assert_eq!(get("/status/abc").await.status(), 400);
        let response = get("/redirect/3").await;
        assert_eq!(response.status(), 302);
        assert_eq!(response.headers()[LOCATION], "/redirect/2");
        assert_eq!(get("/redirect/0").await.status(), 200);
        let response = get("/redirect-to?url=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1").await;
        assert_eq!(response.status(), 302);
        assert_eq!(response.headers()[LOCATION], "https://example.com/a?b=1");
        assert_eq!(get("/redirect-to?url=%zz").await.status(), 400);
        assert_eq!(get("/redirect-to?url=%0d%0a").await.status(), 400);
        assert_eq!(get("/redirect-to").await.status(), 400);
        let response = get("/server-timing").await;
        assert_eq!(response.headers()["server-timing"], SERVER_TIMING_SAMPLE);
    }

    #[tokio::test]
    async fn echo_and_hostile_headers() {
        let request = Request::get("/echo-headers")
            .header("authorization", "Bearer x")
            .body(())
            .unwrap();
        let response = route(request).await;
        assert_eq!(response.headers()["x-echo-authorization"], "Bearer x");
        let response = get("/headers/97/4000").await;
        assert_eq!(response.status(), 200);
        let fill = response
            .headers()
            .iter()
            .filter(|(name, _)| name.as_str().starts_with("x-h123-fill-"))
            .map(|(_, value)| value.len())
            .collect::<Vec<_>>();
        assert_eq!(fill, vec![4000; 97]);
        let response = get("/headers/2/10?loop").await;
        assert_eq!(response.status(), 302);
        assert_eq!(response.headers()[LOCATION], "/headers/2/10?loop");
        assert_eq!(get("/headers/1001/1").await.status(), 400);
    }
}
