//! HTTP/2 over hyper's low-level client connection: TLS with ALPN `h2`, or
//! prior knowledge (h2c) for http URLs; one stream per attempt.

use super::connection::{ConnectSettings, Connection, Opened, Target, TaskGuard, open_tcp_tls};
use super::failure::{failure, from_hyper, timed_out};
use super::http::{Exchange, RequestSpec, UriForm, build_request, timed_exchange};
use super::trace::AttemptTrace;
use super::wire::WireTap;
use crate::bench::load::{Load, Reply, hyper_reply};
use bytes::Bytes;
use h123_shared::{Failure, FailureKind, Phase, TtfbSource};
use http_body_util::Empty;
use hyper::client::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::sync::Arc;
use std::time::Duration;

/// An HTTP/2 connection.
pub struct H2 {
    sender: http2::SendRequest<Empty<Bytes>>,
    tap: Arc<WireTap>,
    _task: TaskGuard,
}

impl H2 {
    /// Opens a connection whose I/O reports to `tap`.
    async fn open_tapped(
        target: &Target<'_>,
        settings: &ConnectSettings,
        trace: &mut AttemptTrace,
        tap: Arc<WireTap>,
    ) -> Result<Opened<Self>, Failure> {
        let (io, opened) = open_tcp_tls(target, settings, &[b"h2"], tap.clone(), trace).await?;
        if let Some(tls) = &opened.tls
            && tls.alpn.as_deref() != Some("h2")
        {
            return Err(failure(
                Phase::Tls,
                FailureKind::Unsupported,
                format!(
                    "the server did not agree to HTTP/2 (ALPN: {})",
                    tls.alpn.as_deref().unwrap_or("none")
                ),
            ));
        }
        let (mut sender, conn) = http2::handshake(TokioExecutor::new(), TokioIo::new(io))
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
        })
    }
}

impl Connection for H2 {
    async fn open(
        target: &Target<'_>,
        settings: &ConnectSettings,
        trace: &mut AttemptTrace,
    ) -> Result<Opened<Self>, Failure> {
        H2::open_tapped(target, settings, trace, WireTap::http2()).await
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

/// A bench worker's share of an HTTP/2 connection: its own sender clone, so
/// workers open streams side by side.
#[derive(Clone)]
pub struct H2Handle {
    sender: http2::SendRequest<Empty<Bytes>>,
    _task: Arc<TaskGuard>,
}

impl Load for H2 {
    const ONE_AT_A_TIME: bool = false;

    type Handle = H2Handle;

    async fn open_for_load(target: &Target<'_>, settings: &ConnectSettings) -> Result<H2, Failure> {
        let mut scratch = AttemptTrace::start();
        H2::open_tapped(target, settings, &mut scratch, WireTap::silent())
            .await
            .map(|opened| opened.conn)
    }

    fn into_handle(self) -> H2Handle {
        H2Handle {
            sender: self.sender,
            _task: Arc::new(self._task),
        }
    }

    async fn send(handle: &mut H2Handle, spec: &RequestSpec) -> Result<Reply, Failure> {
        let request = build_request(spec, UriForm::Absolute)?;
        handle
            .sender
            .ready()
            .await
            .map_err(|e| from_hyper(Phase::Send, &e))?;
        let response = handle
            .sender
            .send_request(request)
            .await
            .map_err(|e| from_hyper(Phase::Wait, &e))?;
        hyper_reply(response).await
    }

    fn is_closed(handle: &H2Handle) -> bool {
        handle.sender.is_closed()
    }
}
