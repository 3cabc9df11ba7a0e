//! HTTP listeners over TCP: TLS (h1 or h2 by ALPN) and plaintext (h1 or h2c prior knowledge).

use std::convert::Infallible;
use std::time::Duration;

use http::HeaderValue;
use http::header::{ALT_SVC, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::routes::route;

/// Longest a client may take to finish the TLS handshake before the connection is dropped.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// Accepts TLS connections forever and serves each with [`serve_http`], adding `alt_svc`
/// (the HTTP/3 advertisement) to every response when given. Connection tasks live in a
/// `JoinSet` owned by this future: aborting it ends them all.
pub(crate) async fn serve_tls(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    alt_svc: Option<HeaderValue>,
) {
    let mut connections = JoinSet::new();
    loop {
        let Some(stream) = crate::net::accept(&listener, &mut connections).await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let alt_svc = alt_svc.clone();
        connections.spawn(async move {
            // Failed or abandoned handshakes (e.g. a client that rejected our CA) are normal here.
            let handshake = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream));
            if let Ok(Ok(tls)) = handshake.await {
                serve_http(tls, alt_svc).await;
            }
        });
    }
}

/// Accepts plaintext connections forever: HTTP/1.1, or HTTP/2 with prior knowledge (h2c).
pub(crate) async fn serve_plain(listener: TcpListener) {
    let mut connections = JoinSet::new();
    loop {
        let Some(stream) = crate::net::accept(&listener, &mut connections).await else {
            continue;
        };
        connections.spawn(serve_http(stream, None));
    }
}

/// Serves one connection with hyper-util's auto server, which picks HTTP/2 when the client
/// opens with the HTTP/2 preface (as it does after ALPN `h2`, or with h2c prior knowledge)
/// and HTTP/1.1 otherwise. Errors (clients going away, bodies failed on purpose) end the
/// connection quietly.
pub(crate) async fn serve_http<I>(io: I, alt_svc: Option<HeaderValue>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| {
        let alt_svc = alt_svc.clone();
        async move {
            let mut response = match crate::upload::read_delay(request.uri()) {
                Some(delay) => {
                    let content_type = request.headers().get(CONTENT_TYPE).cloned();
                    match crate::upload::read_hyper(request.into_body(), delay).await {
                        Ok(received) => received.answer(content_type.as_ref()),
                        Err(_) => crate::upload::cut_short(),
                    }
                }
                None => route(request).await,
            };
            if let Some(value) = alt_svc {
                response.headers_mut().insert(ALT_SVC, value);
            }
            Ok::<_, Infallible>(response)
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new());
    builder
        .http2()
        .timer(TokioTimer::new())
        .initial_stream_window_size(crate::upload::UPLOAD_WINDOW);
    let _ = builder.serve_connection(TokioIo::new(io), service).await;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;
    use http::Request;
    use http_body_util::{BodyExt as _, Empty};
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use rustls::pki_types::ServerName;
    use tokio::net::TcpStream;
    use tokio_rustls::TlsConnector;

    use crate::{TargetConfig, TestTarget};

    async fn tls_connect(
        target: &TestTarget,
        config: Arc<rustls::ClientConfig>,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let tcp = TcpStream::connect(target.https_addr).await?;
        tcp.set_nodelay(true)?;
        let name = ServerName::try_from("target.h123.test").unwrap();
        TlsConnector::from(config).connect(name, tcp).await
    }

    /// Reads a body that must fail; returns how many bytes came before the failure.
    async fn received_before_error(response: http::Response<hyper::body::Incoming>) -> usize {
        let mut body = response.into_body();
        let mut received = 0;
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => received += frame.into_data().map_or(0, |d| d.len()),
                Err(_) => return received,
            }
        }
        panic!("body ended cleanly after {received} bytes");
    }

    #[tokio::test]
    async fn h1_and_h2_over_tls_with_resumption() {
        let target = TestTarget::start(TargetConfig::default()).await.unwrap();

        let h1_config = Arc::new(target.ca.client_config(&[b"http/1.1"]).unwrap());
        let tls = tls_connect(&target, h1_config.clone()).await.unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .unwrap();
        tokio::spawn(conn);
        let request = Request::get("/bytes/100")
            .header("host", "target.h123.test")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.version(), http::Version::HTTP_11);
        assert_eq!(response.headers()["x-h123-target"], "1");
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body.len(), 100);

        // A second connection with the same client config resumes the session.
        let tls = tls_connect(&target, h1_config).await.unwrap();
        assert_eq!(
            tls.get_ref().1.handshake_kind(),
            Some(rustls::HandshakeKind::Resumed)
        );

        let h2_config = Arc::new(target.ca.client_config(&[b"h2", b"http/1.1"]).unwrap());
        let tls = tls_connect(&target, h2_config).await.unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
                .await
                .unwrap();
        tokio::spawn(conn);
        let uri = format!(
            "https://target.h123.test:{}/status/201",
            target.https_addr.port()
        );
        let request = Request::get(uri).body(Empty::<Bytes>::new()).unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.version(), http::Version::HTTP_2);
        assert_eq!(response.status(), 201);

        // close-mid-body resets the h2 stream.
        let uri = format!(
            "https://target.h123.test:{}/close-mid-body/100000",
            target.https_addr.port()
        );
        let request = Request::get(uri).body(Empty::<Bytes>::new()).unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(received_before_error(response).await, 50_000);
    }

    #[tokio::test]
    async fn wrong_ca_fails_verification() {
        let target = TestTarget::start(TargetConfig::default()).await.unwrap();
        let config = Arc::new(target.ca.wrong_client_config(&[b"h2"]).unwrap());
        let err = tls_connect(&target, config).await.unwrap_err();
        assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    }

    #[tokio::test]
    async fn plaintext_h1_and_h2c() {
        let target = TestTarget::start(TargetConfig::default()).await.unwrap();

        let tcp = TcpStream::connect(target.http_addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .unwrap();
        tokio::spawn(conn);
        let request = Request::get("/close-mid-body/100000")
            .header("host", "localhost")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.headers()["content-length"], "100000");
        assert_eq!(received_before_error(response).await, 50_000);

        let tcp = TcpStream::connect(target.http_addr).await.unwrap();
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
                .await
                .unwrap();
        tokio::spawn(conn);
        let uri = format!("http://localhost:{}/redirect/2", target.http_addr.port());
        let request = Request::get(uri).body(Empty::<Bytes>::new()).unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.version(), http::Version::HTTP_2);
        assert_eq!(response.status(), 302);
        assert_eq!(response.headers()["location"], "/redirect/1");
    }
}
