//! `/upload`: reads the request body, optionally after holding it unread for
//! `?read_delay_ms=N`, and answers with what arrived (byte count and SHA-256),
//! so tests check that a body came whole and that a late reader holds the sender.
//!
//! The hold only reaches a client through the buffers between the two: the
//! flow-control windows of h2 and h3 (kept at [`UPLOAD_WINDOW`] by this target)
//! and, for h1, the kernel's socket buffers (see [`crate::TestTarget::narrow_addr`]).

use std::time::Duration;

use bytes::{Buf, Bytes};
use http::header::CONTENT_TYPE;
use http::{HeaderName, HeaderValue, Response, StatusCode, Uri};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};

use crate::body::TargetBody;
use crate::routes::TARGET_HEADER;

/// The request flow-control window of the target's h2 streams and h3 streams,
/// in bytes: a body larger than it waits for the route to read. It is a little
/// under the 10^6-byte bodies the tests send, so after a hold only their last
/// ~17 KB still has to move: `send` then shows the hold, not a megabyte's transfer.
pub const UPLOAD_WINDOW: u32 = 960 * 1024;

/// Response header with how long `/upload` really held the body unread, in
/// microseconds (its own clock, as `/delay` reports its sleep).
pub const HELD_HEADER: HeaderName = HeaderName::from_static("x-upload-held-us");

/// Response header with the number of body bytes `/upload` read.
pub const BYTES_HEADER: HeaderName = HeaderName::from_static("x-upload-bytes");

/// Response header with the SHA-256 (lowercase hex) of what `/upload` read.
pub const SHA256_HEADER: HeaderName = HeaderName::from_static("x-upload-sha256");

/// What `/upload` read of a request body.
#[derive(Debug, Default)]
pub struct Received {
    chunks: Vec<Bytes>,
    held: Duration,
}

impl Received {
    /// Adds a chunk; hashing waits for the answer, so reading (which opens
    /// the sender's flow-control window) is not slowed by it.
    pub fn add(&mut self, chunk: Bytes) {
        self.chunks.push(chunk);
    }

    /// The answer: 200 with `{"bytes": n, "sha256": "<hex>", "content_type": "..."}`,
    /// the first two also as [`BYTES_HEADER`] and [`SHA256_HEADER`] (a probe keeps
    /// response headers, not bodies).
    pub fn answer(self, content_type: Option<&HeaderValue>) -> Response<TargetBody> {
        let bytes: u64 = self.chunks.iter().map(|c| c.len() as u64).sum();
        let held = self.held;
        let mut hash = Sha256::new();
        for chunk in &self.chunks {
            hash.update(chunk);
        }
        let sha256: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let content_type = content_type
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        let json = format!(
            "{{\"bytes\":{},\"sha256\":\"{sha256}\",\"content_type\":\"{content_type}\"}}\n",
            bytes
        );
        let mut response = Response::new(TargetBody::full(json));
        *response.status_mut() = StatusCode::OK;
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(TARGET_HEADER, HeaderValue::from_static("1"));
        headers.insert(BYTES_HEADER, HeaderValue::from(bytes));
        headers.insert(HELD_HEADER, HeaderValue::from(held.as_micros() as u64));
        if let Ok(hash) = HeaderValue::from_str(&sha256) {
            headers.insert(SHA256_HEADER, hash);
        }
        response
    }
}

/// A 400 for a request body that broke off.
pub fn cut_short() -> Response<TargetBody> {
    let mut response = Response::new(TargetBody::full("request body cut short\n"));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
        .headers_mut()
        .insert(TARGET_HEADER, HeaderValue::from_static("1"));
    response
}

/// How long `/upload` holds the body unread: `Some` for `/upload` (zero
/// without `read_delay_ms`), `None` for any other path.
pub fn read_delay(uri: &Uri) -> Option<Duration> {
    if uri.path() != "/upload" {
        return None;
    }
    let ms = uri
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("read_delay_ms="))
        .and_then(|ms| ms.parse::<u64>().ok())
        .unwrap_or(0)
        .min(crate::routes::MAX_DELAY_MS);
    Some(Duration::from_millis(ms))
}

/// Waits `delay` (no sleep at all for zero) before the first read; returns
/// how long it really waited.
pub async fn hold(delay: Duration) -> Duration {
    if delay.is_zero() {
        return Duration::ZERO;
    }
    let start = crate::clock::now();
    tokio::time::sleep(delay).await;
    start.elapsed()
}

/// Reads a hyper body whole (h1, h2) after [`hold`]ing it for `delay`.
pub async fn read_hyper<B>(body: B, delay: Duration) -> Result<Received, B::Error>
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    let held = hold(delay).await;
    let mut body = body;
    let mut received = Received {
        held,
        ..Received::default()
    };
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            received.add(data);
        }
    }
    Ok(received)
}

/// Reads an h3 request body whole after [`hold`]ing it for `delay`.
pub async fn read_h3<S>(
    stream: &mut h3::server::RequestStream<S, Bytes>,
    delay: Duration,
) -> Result<Received, h3::error::StreamError>
where
    S: h3::quic::BidiStream<Bytes>,
{
    let held = hold(delay).await;
    let mut received = Received {
        held,
        ..Received::default()
    };
    while let Some(mut chunk) = stream.recv_data().await? {
        let len = chunk.remaining();
        received.add(chunk.copy_to_bytes(len));
    }
    Ok(received)
}
