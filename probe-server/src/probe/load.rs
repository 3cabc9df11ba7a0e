//! What a load of requests needs of a protocol (the bench's, and a probe's bursts of requests at
//! once): connections set up like a probe's, as cheap, shareable handles that send requests
//! without recording phases. Each protocol's engine implements it; the bench only uses it.

use crate::probe::connection::{ConnectSettings, Target};
use crate::probe::failure::from_hyper;
use crate::probe::http::RequestSpec;
use crate::probe::trace;
use h123_shared::{Failure, Phase};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::future::Future;
use std::time::Instant;

/// One response as a bench counts it.
#[derive(Debug)]
pub struct Reply {
    /// Response status.
    pub status: u16,
    /// When the response headers arrived.
    pub headers_at: Instant,
    /// Body bytes received.
    pub body_bytes: u64,
}

/// A protocol a bench can load: its connections split into handles, one per
/// worker; clones of a handle share the connection (as streams for HTTP/2
/// and HTTP/3; HTTP/1.1 has one worker per connection).
pub trait Load: Send + 'static {
    /// Whether a connection carries one request at a time (HTTP/1.1): then
    /// a failed exchange leaves it unusable and a new one is opened.
    const ONE_AT_A_TIME: bool;

    /// A worker's way to send requests over a connection.
    type Handle: Clone + Send + Sync + 'static;

    /// Opens a connection for load, set up as a probe's would be (same
    /// safety policy and TLS checks) but recording nothing, as a handle.
    fn open_for_load(
        target: &Target<'_>,
        settings: &ConnectSettings,
    ) -> impl Future<Output = Result<Self::Handle, Failure>> + Send;

    /// Sends `spec` and reads the response body to its end, or until it passes `spec.max_body`.
    fn send(
        handle: &mut Self::Handle,
        spec: &RequestSpec,
    ) -> impl Future<Output = Result<Reply, Failure>> + Send;

    /// Whether the connection is gone, so the next request needs a new one.
    fn is_closed(handle: &Self::Handle) -> bool;
}

/// Reads a hyper response body to its end (or past `max` bytes), counting its bytes.
async fn drain(mut body: Incoming, max: u64) -> Result<u64, Failure> {
    let mut bytes = 0u64;
    while bytes < max
        && let Some(frame) = body.frame().await
    {
        let frame = frame.map_err(|e| from_hyper(Phase::Receive, &e))?;
        if let Some(data) = frame.data_ref() {
            bytes += data.len() as u64;
        }
    }
    Ok(bytes)
}

/// The reply to a hyper response: headers are in, the body is read here (up to `max_body`).
pub async fn hyper_reply(
    response: http::Response<Incoming>,
    max_body: u64,
) -> Result<Reply, Failure> {
    let headers_at = trace::now();
    let status = response.status().as_u16();
    let body_bytes = drain(response.into_body(), max_body).await?;
    Ok(Reply {
        status,
        headers_at,
        body_bytes,
    })
}
