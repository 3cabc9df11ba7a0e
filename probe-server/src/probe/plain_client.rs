//! A plain HTTP/1.1 client (nothing timed, nothing recorded) over a socket already connected:
//! h123's own calls, the CLI's to an h123 server and a monitor's webhooks (dialled at an address
//! the safety policy allowed).

use crate::probe::tls::TrustSettings;
use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use url::Url;

/// Something both a TCP and a TLS stream are.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// An HTTP/1.1 client over `tcp` to `url`'s host, in TLS checked against `trust` when its
/// scheme is `https`; its connection is driven in the background.
pub async fn over(
    tcp: TcpStream,
    url: &Url,
    trust: &TrustSettings,
) -> Result<SendRequest<Full<Bytes>>, String> {
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Stream> = if url.scheme() == "https" {
        let host = url.host_str().unwrap_or_default().trim_matches(['[', ']']);
        let name = rustls_pki_types::ServerName::try_from(host.to_owned())
            .map_err(|e| format!("host `{host}`: {e}"))?;
        let config = trust.client_config(&[b"http/1.1"], false, None);
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS failed: {e}"))?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    Ok(sender)
}
