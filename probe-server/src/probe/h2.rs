//! HTTP/2 over hyper's low-level client connection: TLS with ALPN `h2`, or
//! prior knowledge (h2c) for http URLs; one stream per attempt. A bench's
//! load goes through the h2 crate directly (see [`H2Handle`]).

use super::connection::{ConnectSettings, Connection, Opened, Target, TaskGuard, open_tcp_tls};
use super::failure::{describe, failure, from_hyper, timed_out};
use super::http::{
    Exchange, MAX_HEADER_SECTION, RequestSpec, UriForm, build_request, timed_exchange,
};
use super::trace::{self, AttemptTrace};
use super::wire::WireTap;
use crate::probe::load::{Load, Reply};
use bytes::Bytes;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, FailureKind, Phase, TtfbSource};
use http_body_util::Full;
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::ClientConfig;
use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// An HTTP/2 connection.
pub struct H2 {
    sender: http2::SendRequest<Full<Bytes>>,
    tap: Arc<WireTap>,
    _task: TaskGuard,
}

/// What an HTTP/2 connection offers in TLS, as curl and browsers do: `h2`,
/// then `http/1.1`, so a server without HTTP/2 answers with its choice (and
/// the run says the server does not offer HTTP/2) instead of failing the handshake.
const ALPN: &[&[u8]] = &[b"h2", b"http/1.1"];

/// The flow-control windows of a load connection, as hyper's client (the
/// probe's attempts) opens them: 2 MiB per stream, 5 MiB in all. The h2
/// crate's default of 64 KiB would hold a large body to 64 KiB per round trip.
const STREAM_WINDOW: u32 = 2 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 5 * 1024 * 1024;

impl Connection for H2 {
    type Setup = Arc<ClientConfig>;

    const ALPN: &'static [&'static [u8]] = ALPN;

    fn prepare(settings: &ConnectSettings) -> Result<Arc<ClientConfig>, Failure> {
        Ok(settings.tls_config(ALPN))
    }

    async fn open(
        target: &Target<'_>,
        settings: &ConnectSettings,
        config: Arc<ClientConfig>,
        trace: &mut AttemptTrace,
    ) -> Result<Opened<Self>, Failure> {
        let tap = WireTap::http2();
        let (io, opened) = open_tcp_tls(target, settings, config, tap.clone(), trace).await?;
        check_alpn(&opened)?;
        // The connection preface and SETTINGS go out first: the start of the
        // first request's `send`.
        trace.record(TraceEvent::RequestStart);
        let (mut sender, conn) = http2::Builder::new(TokioExecutor::new())
            .max_header_list_size(MAX_HEADER_SECTION as u32)
            .handshake(TokioIo::new(io))
            .await
            .map_err(|e| from_hyper(Phase::Send, &e))?;
        let task = TaskGuard(tokio::spawn(async move {
            let _ = conn.await;
        }));
        tokio::time::timeout(settings.phase_limit, sender.ready())
            .await
            .map_err(|_| timed_out(Phase::Send, settings.phase_limit))?
            .map_err(|e| from_hyper(Phase::Send, &e))?;
        Ok(Opened {
            conn: H2 {
                sender,
                tap,
                _task: task,
            },
            local: opened.local,
            remote: opened.remote,
            tls: opened.tls,
            chain: opened.chain,
            proxy: opened.proxy,
            tcp_at_connect: opened.tcp_at_connect,
        })
    }

    async fn ready(&mut self, limit: Duration) -> bool {
        matches!(
            tokio::time::timeout(limit, self.sender.ready()).await,
            Ok(Ok(()))
        )
    }

    async fn exchange(
        &mut self,
        spec: &RequestSpec,
        trace: &mut AttemptTrace,
        out: &mut Exchange,
    ) -> Result<(), Failure> {
        let request = build_request(spec, UriForm::Absolute)?;
        let send = || self.sender.send_request(request);
        timed_exchange(
            send,
            &self.tap,
            TtfbSource::Http2HeadersFrame,
            spec,
            trace,
            out,
        )
        .await?;
        // A body cut at the cap resets only its stream: the connection stays usable.
        out.reusable = true;
        Ok(())
    }
}

/// Fails as `unsupported` in the tls phase unless TLS negotiated `h2` (over
/// plain TCP, h2c is prior knowledge): the server does not offer HTTP/2.
fn check_alpn(opened: &Opened<()>) -> Result<(), Failure> {
    match &opened.tls {
        Some(tls) if tls.alpn.as_deref() != Some("h2") => Err(failure(
            Phase::Tls,
            FailureKind::Unsupported,
            format!(
                "the server does not offer HTTP/2 (ALPN: {})",
                tls.alpn.as_deref().unwrap_or("none agreed")
            ),
        )),
        _ => Ok(()),
    }
}

/// A bench worker's share of an HTTP/2 connection. A bench drives the h2
/// crate directly: streams go from the worker to the connection task with
/// no dispatcher task between them (hyper's client adds one per connection).
#[derive(Clone)]
pub struct H2Handle {
    sender: h2::client::SendRequest<Bytes>,
    closed: Arc<AtomicBool>,
    _task: Arc<TaskGuard>,
}

impl Load for H2 {
    const ONE_AT_A_TIME: bool = false;

    type Handle = H2Handle;

    async fn open_for_load(
        target: &Target<'_>,
        settings: &ConnectSettings,
    ) -> Result<H2Handle, Failure> {
        let mut scratch = AttemptTrace::start();
        let config = settings.tls_config(ALPN);
        let (io, opened) =
            open_tcp_tls(target, settings, config, WireTap::silent(), &mut scratch).await?;
        check_alpn(&opened)?;
        let (sender, connection) = h2::client::Builder::new()
            .max_header_list_size(MAX_HEADER_SECTION as u32)
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .handshake(io)
            .await
            .map_err(|e| h2_failure(Phase::Send, &e))?;
        let closed = Arc::new(AtomicBool::new(false));
        let task = {
            let closed = closed.clone();
            TaskGuard(tokio::spawn(async move {
                let _ = connection.await;
                closed.store(true, Ordering::Relaxed);
            }))
        };
        let sender = tokio::time::timeout(settings.phase_limit, sender.ready())
            .await
            .map_err(|_| timed_out(Phase::Send, settings.phase_limit))?
            .map_err(|e| h2_failure(Phase::Send, &e))?;
        Ok(H2Handle {
            sender,
            closed,
            _task: Arc::new(task),
        })
    }

    async fn send(handle: &mut H2Handle, spec: &RequestSpec) -> Result<Reply, Failure> {
        let request = build_request(spec, UriForm::Absolute)?.map(|_| ());
        poll_fn(|cx| handle.sender.poll_ready(cx))
            .await
            .map_err(|e| h2_failure(Phase::Send, &e))?;
        let (response, _) = handle
            .sender
            .send_request(request, true)
            .map_err(|e| h2_failure(Phase::Send, &e))?;
        let response = response.await.map_err(|e| h2_failure(Phase::Wait, &e))?;
        let headers_at = trace::now();
        let status = response.status().as_u16();
        let mut body = response.into_body();
        let mut body_bytes = 0u64;
        while body_bytes < spec.max_body
            && let Some(chunk) = body.data().await
        {
            let chunk = chunk.map_err(|e| h2_failure(Phase::Receive, &e))?;
            body_bytes += chunk.len() as u64;
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        Ok(Reply {
            status,
            headers_at,
            body_bytes,
        })
    }

    fn is_closed(handle: &H2Handle) -> bool {
        handle.closed.load(Ordering::Relaxed)
    }
}

fn h2_failure(phase: Phase, err: &h2::Error) -> Failure {
    let kind = if err.is_io() {
        FailureKind::Io
    } else if err.is_reset() || err.is_go_away() {
        FailureKind::Reset
    } else {
        FailureKind::Protocol
    };
    failure(phase, kind, describe(err))
}
