//! What a load of requests needs of a protocol (the bench's, and a probe's bursts of requests at
//! once): connections set up like a probe's, as cheap, shareable handles that send requests
//! without recording phases. Each protocol's engine implements it; the bench only uses it.

use crate::probe::connection::{ConnectSettings, Target};
use crate::probe::http::RequestSpec;
use h123_shared::Failure;
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
