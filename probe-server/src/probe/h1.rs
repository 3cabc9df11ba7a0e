//! HTTP/1.1 over hyper's low-level client connection: one request at a time,
//! kept alive between attempts.

use super::connection::{ConnectSettings, Connection, Opened, Target, TaskGuard, open_tcp_tls};
use super::failure::from_hyper;
use super::http::{Exchange, RequestSpec, UriForm, build_request, timed_exchange};
use super::trace::AttemptTrace;
use super::wire::WireTap;
use bytes::Bytes;
use h123_shared::{Failure, Phase, TtfbSource};
use http_body_util::Empty;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use std::time::Duration;

/// An HTTP/1.1 connection.
pub struct H1 {
    sender: http1::SendRequest<Empty<Bytes>>,
    tap: Arc<WireTap>,
    _task: TaskGuard,
}

impl Connection for H1 {
    async fn open(
        target: &Target<'_>,
        settings: &ConnectSettings,
        trace: &mut AttemptTrace,
    ) -> Result<Opened<Self>, Failure> {
        let tap = WireTap::http1();
        let (io, opened) =
            open_tcp_tls(target, settings, &[b"http/1.1"], tap.clone(), trace).await?;
        let (sender, conn) = http1::handshake(TokioIo::new(io))
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
        let request = build_request(spec, UriForm::Origin)?;
        let send = || self.sender.send_request(request);
        timed_exchange(send, &self.tap, TtfbSource::TransportRead, spec, trace, out).await
    }
}
