//! The API's accept loop: connection caps per client and overall, header, idle and body time limits, graceful stop.
//!
//! A public listener must let go of what does not talk: a socket that sends
//! nothing is closed once the header timeout passes, one that trickles its
//! header is closed by hyper's header-read timeout, an idle keep-alive
//! connection (no byte either way) once the idle timeout passes, and a body
//! that takes too long fails the request. Connections beyond a client's cap
//! or the server's are answered `503` with the API's error body and closed.

use super::client::ClientKey;
use super::forwarded::TrustedProxies;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

/// How the listener treats connections.
#[derive(Clone, Debug)]
pub struct ListenerConfig {
    /// Longest a client may take to send a request's whole header (and its first byte).
    pub header_timeout: Duration,
    /// Longest a connection may stay without a byte read or written.
    pub idle_timeout: Duration,
    /// Longest a request body may take to arrive.
    pub body_timeout: Duration,
    /// Open connections one client may hold.
    pub max_conns_per_client: usize,
    /// Open connections over all clients.
    pub max_conns: usize,
    /// IPv6 clients are grouped by this prefix length.
    pub ipv6_prefix: u8,
    /// Reverse proxies whose `X-Forwarded-For` names the client; their own
    /// connections count only toward `max_conns`.
    pub trusted_proxies: TrustedProxies,
}

impl Default for ListenerConfig {
    fn default() -> Self {
        ListenerConfig {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_timeout: Duration::from_secs(10),
            max_conns_per_client: 64,
            max_conns: 4096,
            ipv6_prefix: super::client::DEFAULT_IPV6_PREFIX,
            trusted_proxies: TrustedProxies::default(),
        }
    }
}

/// Open connections, per client and in all.
#[derive(Default)]
struct Conns {
    total: usize,
    per_client: HashMap<ClientKey, usize>,
}

/// A counted connection; uncounted when dropped.
struct ConnPermit {
    conns: Arc<Mutex<Conns>>,
    client: ClientKey,
}

impl Drop for ConnPermit {
    fn drop(&mut self) {
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        conns.total = conns.total.saturating_sub(1);
        if let Some(n) = conns.per_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                conns.per_client.remove(&self.client);
            }
        }
    }
}

/// A place for a connection of `client`, which may hold `per_client` at once.
fn admit(
    conns: &Arc<Mutex<Conns>>,
    client: ClientKey,
    per_client: usize,
    config: &ListenerConfig,
) -> Option<ConnPermit> {
    let mut guard = conns.lock().unwrap_or_else(|e| e.into_inner());
    let mine = guard.per_client.get(&client).copied().unwrap_or(0);
    if guard.total >= config.max_conns || mine >= per_client {
        return None;
    }
    guard.total += 1;
    *guard.per_client.entry(client).or_insert(0) += 1;
    Some(ConnPermit {
        conns: conns.clone(),
        client,
    })
}

/// What the connection's watchdog needs to know about its traffic.
struct Activity {
    /// Milliseconds since the connection was accepted, at the last byte read or written.
    last_ms: AtomicU64,
    /// Whether any byte was read yet.
    read_any: AtomicBool,
    origin: std::time::Instant,
}

impl Activity {
    fn touch(&self) {
        let ms = crate::probe::trace::now()
            .saturating_duration_since(self.origin)
            .as_millis();
        self.last_ms
            .store(u64::try_from(ms).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

/// The TCP stream, noting every byte moved.
struct Tracked {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.read_any.store(true, Ordering::Relaxed);
            self.activity.touch();
        }
        poll
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        poll
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A request body that fails once its whole deadline has passed (a total
/// limit, unlike a per-frame one a trickling client could stretch).
struct DeadlineBody {
    inner: hyper::body::Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

/// The error of a request body that did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within the time limit")]
pub struct BodyTimeout;

impl http_body::Body for DeadlineBody {
    type Data = bytes::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Resolves when the connection should be closed for silence: no first byte
/// within the header timeout, or no byte either way for the idle timeout.
async fn watchdog(activity: Arc<Activity>, config: ListenerConfig) {
    loop {
        let deadline = if activity.read_any.load(Ordering::Relaxed) {
            Duration::from_millis(activity.last_ms.load(Ordering::Relaxed)) + config.idle_timeout
        } else {
            config.header_timeout
        };
        let at = activity.origin + deadline;
        if crate::probe::trace::now() >= at {
            return;
        }
        tokio::time::sleep_until(at.into()).await;
    }
}

/// The answer to a connection over its cap, written once, best effort, before closing.
const OVER_CAP: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/json\r\n\
retry-after: 5\r\n\
connection: close\r\n\
content-length: 101\r\n\r\n\
{\"error\":{\"code\":\"too_many_connections\",\"message\":\"too many open connections: close some and retry\"}}";

/// Serves `router` on `listener` until `stop` resolves, then lets open
/// connections finish their requests (graceful shutdown) and returns once all are closed.
///
/// # Errors
/// Never for a single connection's failure; only if accepting itself fails unrecoverably.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: ListenerConfig,
    stop: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let conns = Arc::new(Mutex::new(Conns::default()));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors and the like: wait a little rather than spin.
                    eprintln!("h123 serve: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while tasks.try_join_next().is_some() {}
        let client = ClientKey::new(peer.ip(), config.ipv6_prefix);
        let per_client = if config.trusted_proxies.trusts(peer.ip()) {
            usize::MAX
        } else {
            config.max_conns_per_client
        };
        let Some(permit) = admit(&conns, client, per_client, &config) else {
            let _ = stream.try_write(OVER_CAP);
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        tasks.spawn(connection(
            stream,
            peer,
            router.clone(),
            config.clone(),
            stop_rx.clone(),
            permit,
        ));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    config: ListenerConfig,
    mut stop: tokio::sync::watch::Receiver<bool>,
    _permit: ConnPermit,
) {
    let activity = Arc::new(Activity {
        last_ms: AtomicU64::new(0),
        read_any: AtomicBool::new(false),
        origin: crate::probe::trace::now(),
    });
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: activity.clone(),
    });
    let body_timeout = config.body_timeout;
    let proxies = config.trusted_proxies.clone();
    let service =
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let mut request = request.map(|body| {
                axum::body::Body::new(DeadlineBody {
                    inner: body,
                    deadline: Box::pin(tokio::time::sleep(body_timeout)),
                })
            });
            // The client's address for every limit and log: the TCP peer, or
            // the client a trusted proxy names.
            let client = proxies.client(peer.ip(), request.headers());
            request
                .extensions_mut()
                .insert(ConnectInfo(SocketAddr::new(client, peer.port())));
            router.clone().oneshot(request)
        });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout);
    builder.http2().timer(TokioTimer::new());
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let silence = watchdog(activity, config);
    tokio::pin!(silence);
    let mut stopping = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            () = &mut silence => return,
            changed = stop.wait_for(|s| *s), if !stopping => {
                let _ = changed;
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    #[test]
    fn connection_caps_count_per_client_and_overall() {
        let conns = Arc::new(Mutex::new(Conns::default()));
        let config = ListenerConfig {
            max_conns_per_client: 2,
            max_conns: 3,
            ..ListenerConfig::default()
        };
        let a = ClientKey::new(IpAddr::from([10, 0, 0, 1]), 64);
        let b = ClientKey::new(IpAddr::from([10, 0, 0, 2]), 64);
        let a1 = admit(&conns, a, 2, &config).expect("first");
        let _a2 = admit(&conns, a, 2, &config).expect("second");
        assert!(admit(&conns, a, 2, &config).is_none(), "per-client cap");
        let _b1 = admit(&conns, b, 2, &config).expect("another client");
        assert!(admit(&conns, b, 2, &config).is_none(), "overall cap");
        drop(a1);
        assert!(
            admit(&conns, b, 2, &config).is_some(),
            "a closed one frees a place"
        );
        assert_eq!(
            OVER_CAP.split(|&b| b == b'\n').next_back().map(<[u8]>::len),
            Some(101)
        );
    }
}
