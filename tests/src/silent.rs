//! A TCP listener that accepts connections and never reads or writes (for timeout tests),
//! and a reserved address where nothing listens (for refused connections).

use std::net::{IpAddr, SocketAddr};

use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// Accepts connections forever and holds each open, untouched, until the server stops.
pub(crate) async fn serve(listener: TcpListener) {
    let mut connections = JoinSet::new();
    loop {
        let Some(stream) = crate::net::accept(&listener, &mut connections).await else {
            continue;
        };
        connections.spawn(async move {
            let _held = stream;
            std::future::pending::<()>().await;
        });
    }
}

/// An address on `ip` where nothing listens: bind port 0, note the address, close the listener.
/// Another process could take the port later, but the kernel does not reuse it right away.
pub(crate) async fn refused_addr(ip: IpAddr) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(SocketAddr::new(ip, 0)).await?;
    listener.local_addr()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::AsyncReadExt as _;
    use tokio::net::TcpStream;

    use crate::{TargetConfig, TestTarget};

    #[tokio::test]
    async fn silent_holds_and_refused_refuses() {
        let target = TestTarget::start(TargetConfig::default()).await.unwrap();
        let mut stream = TcpStream::connect(target.silent_addr).await.unwrap();
        let mut buf = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_millis(200), stream.read(&mut buf)).await;
        assert!(read.is_err(), "silent server answered: {read:?}");

        let err = TcpStream::connect(target.refused_addr).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    }
}
