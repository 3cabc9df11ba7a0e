//! HTTP/1.1 over hyper's low-level client connection: one request at a time,
//! kept alive between attempts.

use super::connection::{ConnectSettings, Connection, Opened, Target, TaskGuard, open_tcp_tls};
use super::failure::from_hyper;
use super::http::{
    Exchange, MAX_HEADER_SECTION, MAX_RESPONSE_HEADERS, RequestSpec, UriForm, build_request,
    timed_exchange,
};
use super::trace::AttemptTrace;
use super::wire::WireTap;
use bytes::Bytes;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, Phase, TtfbSource};
use http_body_util::Full;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use std::sync::Arc;
use std::time::Duration;

/// An HTTP/1.1 connection.
pub struct H1 {
    sender: http1::SendRequest<Full<Bytes>>,
    tap: Arc<WireTap>,
    _task: TaskGuard,
}

impl H1 {
    /// Opens a connection under `config` whose I/O reports to `tap`.
    async fn open_tapped(
        target: &Target<'_>,
        settings: &ConnectSettings,
        config: Arc<ClientConfig>,
        trace: &mut AttemptTrace,
        tap: Arc<WireTap>,
    ) -> Result<Opened<Self>, Failure> {
        let (io, opened) = open_tcp_tls(target, settings, config, tap.clone(), trace).await?;
        // The HTTP layer's setup is the first part of the first request's `send`.
        trace.record(TraceEvent::RequestStart);
        // A response head over the header-section cap fails the exchange
        // instead of growing the read buffer (hyper's default is ~400 KiB).
        let (sender, conn) = http1::Builder::new()
            .max_headers(MAX_RESPONSE_HEADERS)
            .max_buf_size(MAX_HEADER_SECTION)
            .handshake(TokioIo::new(io))
            .await
            .map_err(|e| from_hyper(Phase::Send, &e))?;
        let task = TaskGuard(tokio::spawn(async move {
            let _ = conn.await;
        }));
        Ok(Opened {
            conn: H1 {
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
}

/// The one ALPN an HTTP/1.1 connection offers.
pub(super) const ALPN: &[&[u8]] = &[b"http/1.1"];

impl Connection for H1 {
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
        H1::open_tapped(target, settings, config, trace, WireTap::http1()).await
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
        let request = build_request(spec, UriForm::Origin)?;
        let send = || self.sender.send_request(request);
        timed_exchange(send, &self.tap, TtfbSource::TransportRead, spec, trace, out).await
    }
}
