//! Slow-TLS front: a TCP relay to the HTTPS listener that holds back the server's first flight.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Size of the buffer the server's first flight is read into.
const FIRST_READ_BYTES: usize = 16 * 1024;

/// How long each first flight was really held, in the order they were forwarded.
pub(crate) type Holds = Arc<Mutex<Vec<Duration>>>;

/// Accepts connections forever and relays each to `upstream` with [`relay`], recording its
/// hold in `holds`.
pub(crate) async fn serve(
    listener: TcpListener,
    upstream: SocketAddr,
    delay: Duration,
    holds: Holds,
) {
    let mut connections = JoinSet::new();
    loop {
        let Some(client) = crate::net::accept(&listener, &mut connections).await else {
            continue;
        };
        let holds = holds.clone();
        connections.spawn(async move {
            // A relay ends with an error whenever either side goes away; nothing to report.
            let _ = relay(client, upstream, delay, &holds).await;
        });
    }
}

/// Pipes bytes both ways between `client` and a new connection to `upstream`. The first chunk
/// the server sends (its handshake flight: ServerHello and, in TLS 1.3, everything up to
/// Finished) is held for `delay` before being forwarded; everything after that passes through
/// untouched, so only the handshake gets slower. The hold, from reading that flight to
/// forwarding it, goes into `holds`.
async fn relay(
    client: TcpStream,
    upstream: SocketAddr,
    delay: Duration,
    holds: &Holds,
) -> std::io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    server.set_nodelay(true)?;
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();

    let upstream_direction = async {
        tokio::io::copy(&mut client_read, &mut server_write).await?;
        server_write.shutdown().await
    };
    let downstream_direction = async {
        let mut first = vec![0u8; FIRST_READ_BYTES];
        let n = server_read.read(&mut first).await?;
        if n > 0 {
            let read = crate::clock::now();
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let held = crate::clock::now().saturating_duration_since(read);
            if let Ok(mut all) = holds.lock() {
                all.push(held);
            }
            client_write.write_all(&first[..n]).await?;
            tokio::io::copy(&mut server_read, &mut client_write).await?;
        }
        client_write.shutdown().await
    };
    tokio::try_join!(upstream_direction, downstream_direction)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use rustls::pki_types::ServerName;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpStream;
    use tokio_rustls::TlsConnector;

    use crate::clock;
    use crate::{TargetConfig, TestTarget};

    /// Time of a TLS handshake with `addr`, then a GET / over HTTP/1.1 on it.
    async fn handshake_time(target: &TestTarget, addr: std::net::SocketAddr) -> Duration {
        let config = Arc::new(target.ca.client_config(&[b"http/1.1"]).unwrap());
        let tcp = TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let started = clock::now();
        let name = ServerName::try_from("localhost").unwrap();
        let mut tls = TlsConnector::from(config).connect(name, tcp).await.unwrap();
        let elapsed = clock::now() - started;
        tls.write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = Vec::new();
        tls.read_to_end(&mut response).await.unwrap();
        let response = String::from_utf8_lossy(&response);
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.contains("x-h123-target: 1"), "{response}");
        elapsed
    }

    #[tokio::test]
    async fn slow_front_delays_the_handshake_only() {
        let config = TargetConfig {
            slow_tls_delay: Duration::from_millis(150),
            ..TargetConfig::default()
        };
        let target = TestTarget::start(config).await.unwrap();
        let direct = handshake_time(&target, target.https_addr).await;
        let slow = handshake_time(&target, target.slow_tls_addr).await;
        assert!(direct < Duration::from_millis(100), "direct {direct:?}");
        assert!(slow >= Duration::from_millis(150), "slow {slow:?}");
        assert!(
            slow < Duration::from_millis(150) + direct + Duration::from_millis(100),
            "slow {slow:?}"
        );
    }
}
