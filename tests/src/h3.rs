//! The HTTP/3 listener: QUIC on the HTTPS port number over UDP, same CA and
//! routes, with session tickets and 0-RTT; or a black hole that drops every
//! datagram, to play a network that blocks UDP.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::BodyExt as _;
use quinn::crypto::rustls::QuicServerConfig;
use tokio::net::UdpSocket;
use tokio::task::JoinSet;

use crate::ca::TestCa;
use crate::routes::route;

/// A QUIC endpoint serving HTTP/3 on `addr` (UDP), following clients that
/// move to a new address when `migration` is on.
pub(crate) fn endpoint(
    addr: SocketAddr,
    ca: &TestCa,
    require_client_cert: bool,
    migration: bool,
) -> anyhow::Result<quinn::Endpoint> {
    let mut tls = ca.server_config_with(&[b"h3"], require_client_cert)?;
    // rustls accepts 0-RTT only with stateful resumption: no stateless tickets.
    tls.ticketer = Arc::new(StatefulResumptionOnly);
    tls.max_early_data_size = u32::MAX;
    // A 0-RTT response can beat the new tickets to the client; a reserve per handshake
    // keeps every later connection resumable, as with servers that send several.
    tls.send_tls13_tickets = 8;
    let crypto = QuicServerConfig::try_from(tls).context("QUIC TLS configuration")?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    // A request body larger than the stream window waits for `/upload` to read it.
    let mut transport = quinn::TransportConfig::default();
    transport.stream_receive_window(crate::upload::UPLOAD_WINDOW.into());
    config.transport_config(Arc::new(transport));
    config.migration(migration);
    quinn::Endpoint::server(config, addr).with_context(|| format!("binding QUIC on {addr}"))
}

/// A ticketer that issues no stateless tickets, so sessions resume from the
/// server's session cache and 0-RTT can be accepted.
#[derive(Debug)]
struct StatefulResumptionOnly;

impl rustls::server::ProducesTickets for StatefulResumptionOnly {
    fn enabled(&self) -> bool {
        false
    }

    fn lifetime(&self) -> u32 {
        0
    }

    fn encrypt(&self, _plain: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn decrypt(&self, _cipher: &[u8]) -> Option<Vec<u8>> {
        None
    }
}

/// Accepts QUIC connections forever; 0-RTT requests are served too.
pub(crate) async fn serve(endpoint: quinn::Endpoint) {
    let mut connections = JoinSet::new();
    while let Some(incoming) = endpoint.accept().await {
        while connections.try_join_next().is_some() {}
        connections.spawn(async move {
            let Ok(connecting) = incoming.accept() else {
                return;
            };
            let connection = match connecting.into_0rtt() {
                Ok((connection, _accepted)) => connection,
                Err(connecting) => match connecting.await {
                    Ok(connection) => connection,
                    Err(_) => return,
                },
            };
            serve_connection(connection).await;
        });
    }
}

async fn serve_connection(connection: quinn::Connection) {
    let Ok(mut h3) =
        h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(connection)).await
    else {
        return;
    };
    let mut requests = JoinSet::new();
    while let Ok(Some(resolver)) = h3.accept().await {
        while requests.try_join_next().is_some() {}
        requests.spawn(async move {
            if let Ok((request, stream)) = resolver.resolve_request().await {
                serve_request(request, stream).await;
            }
        });
    }
}

async fn serve_request<S>(
    request: http::Request<()>,
    mut stream: h3::server::RequestStream<S, Bytes>,
) where
    S: h3::quic::BidiStream<Bytes>,
{
    let response = match crate::upload::read_delay(request.uri()) {
        Some(delay) => {
            let content_type = request.headers().get(http::header::CONTENT_TYPE).cloned();
            match crate::upload::read_h3(&mut stream, delay).await {
                Ok(received) => received.answer(content_type.as_ref()),
                Err(_) => crate::upload::cut_short(),
            }
        }
        None => route(request).await,
    };
    let (parts, mut body) = response.into_parts();
    if stream
        .send_response(http::Response::from_parts(parts, ()))
        .await
        .is_err()
    {
        return;
    }
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data()
                    && stream.send_data(data).await.is_err()
                {
                    return;
                }
            }
            Err(_) => {
                // A body failed on purpose (close-mid-body): reset the stream.
                stream.stop_stream(h3::error::Code::H3_INTERNAL_ERROR);
                return;
            }
        }
    }
    let _ = stream.finish().await;
}

/// Reads and discards every datagram on `socket`: QUIC clients hear nothing.
pub(crate) async fn black_hole(socket: UdpSocket) {
    let mut buf = vec![0u8; 65_536];
    while socket.recv_from(&mut buf).await.is_ok() {}
}
