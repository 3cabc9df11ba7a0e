//! Behind a trusted reverse proxy (`--trusted-proxy`), the real `h123 serve`
//! counts each forwarded client on its own, believes only the hops the proxy
//! appended, ignores the header from anyone else, and does not cap the
//! proxy's own connections per client.

use crate::support::*;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The trusted proxy (the address this test connects from as "the proxy").
const PROXY: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
/// A client that connects directly, not trusted.
const DIRECT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
/// Another direct client, with no earlier connection the server may not have counted out yet
/// (it counts a connection out when it has closed it, a moment after the client read the end).
const DIRECT_FRESH: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));

/// A connection to `server` from `from`.
async fn open(server: SocketAddr, from: IpAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    socket.connect(server).await.unwrap()
}

/// Sends `GET path` on `stream` (with `X-Forwarded-For: forwarded` when given)
/// and returns the answer's status code, or 0 when the server closed without one.
async fn ask(mut stream: TcpStream, path: &str, forwarded: Option<&str>) -> u16 {
    let header = forwarded.map_or(String::new(), |f| format!("x-forwarded-for: {f}\r\n"));
    let request = format!("GET {path} HTTP/1.1\r\nhost: h123\r\n{header}connection: close\r\n\r\n");
    // A refused connection may already be closed: its answer is still read.
    let _ = stream.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer)
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// The statuses of `n` reads of the probe list from `from`, as `forwarded` says.
async fn reads(server: SocketAddr, from: IpAddr, forwarded: Option<&str>, n: usize) -> Vec<u16> {
    let mut codes = Vec::new();
    for _ in 0..n {
        codes.push(ask(open(server, from).await, "/api/v1/probes", forwarded).await);
    }
    codes
}

/// The statuses of `n` connections from `from`, all open at once, in the order they were
/// opened. The last is asked first and each answer closes its connection, so every
/// connection is answered while all those opened before it are still open, however late a
/// busy server accepts them.
async fn held_at_once(server: SocketAddr, from: IpAddr, n: usize) -> Vec<u16> {
    let mut held = Vec::new();
    for _ in 0..n {
        held.push(open(server, from).await);
    }
    let mut codes = Vec::new();
    for stream in held.into_iter().rev() {
        codes.push(ask(stream, "/healthz", None).await);
    }
    codes.reverse();
    codes
}

#[tokio::test]
async fn limits_follow_the_client_a_trusted_proxy_names() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &target,
        &dir.path().join("h123.db"),
        &[
            "--trusted-proxy",
            "127.0.0.1/32",
            "--read-rate-burst",
            "3",
            "--read-rate-per-minute",
            "1",
            "--max-conns-per-client",
            "2",
        ],
    )
    .await;
    let addr = server.addr;

    // Each forwarded client has its own reads.
    assert_eq!(
        reads(addr, PROXY, Some("198.51.100.1"), 4).await,
        [200, 200, 200, 429]
    );
    assert_eq!(reads(addr, PROXY, Some("198.51.100.2"), 1).await, [200]);
    // What the client wrote left of the proxy's own entry is not believed.
    assert_eq!(
        reads(addr, PROXY, Some("203.0.113.50, 198.51.100.1"), 1).await,
        [429],
        "the forged first hop does not buy new reads"
    );
    // A direct client's header is never read: it is its own address.
    assert_eq!(
        reads(addr, DIRECT, Some("198.51.100.3"), 3).await,
        [200, 200, 200]
    );
    assert_eq!(
        reads(addr, DIRECT, Some("198.51.100.4"), 1).await,
        [429],
        "a new header from an untrusted peer is the same client"
    );

    // The proxy carries many clients: its connections are not capped per client.
    assert_eq!(
        held_at_once(addr, PROXY, 4).await,
        [200, 200, 200, 200],
        "the proxy's four connections"
    );
    assert_eq!(
        held_at_once(addr, DIRECT_FRESH, 3).await,
        [200, 200, 503],
        "a direct client holds two"
    );
}
