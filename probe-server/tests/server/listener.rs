//! The listener lets go: silent and trickling sockets are closed within the
//! header timeout while other clients are served at once, and a client over
//! its connection cap is answered 503 and closed (the real `h123 serve`, real sockets).

use crate::support::*;
use axum::http::{Method, StatusCode};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const HEADER_TIMEOUT_SECS: u64 = 2;

fn from(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

async fn connect(server: SocketAddr, client: IpAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(client, 0)).expect("bind");
    socket.connect(server).await.expect("connect")
}

/// Reads until the server closes (EOF or reset); returns what it sent.
async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return seen,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test]
async fn silent_and_trickling_sockets_are_closed_within_the_header_timeout() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let timeout = HEADER_TIMEOUT_SECS.to_string();
    let server = ServerProcess::start(
        &target,
        &dir.path().join("db.sqlite"),
        &["--header-timeout-secs", &timeout],
    )
    .await;
    let addr = server.addr;
    let limit = Duration::from_secs(HEADER_TIMEOUT_SECS) + Duration::from_millis(1500);

    let silent = tokio::spawn(async move {
        let started = h123::probe::trace::now();
        let mut stream = connect(addr, from(2)).await;
        until_closed(&mut stream).await;
        started.elapsed()
    });
    let trickle = tokio::spawn(async move {
        let started = h123::probe::trace::now();
        let mut stream = connect(addr, from(3)).await;
        let request = b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        for byte in request {
            if stream.write_all(&[*byte]).await.is_err() {
                break;
            }
            // Closed early? Stop trickling.
            let mut probe = [0u8; 1];
            if let Ok(Ok(0) | Err(_)) =
                tokio::time::timeout(Duration::from_millis(1000), stream.read(&mut probe)).await
            {
                break;
            }
            if started.elapsed() > Duration::from_secs(30) {
                break;
            }
        }
        until_closed(&mut stream).await;
        started.elapsed()
    });

    // Meanwhile another client is served at once, again and again.
    let mut slowest = Duration::ZERO;
    for _ in 0..6 {
        let started = h123::probe::trace::now();
        let answer = http(addr, from(4), Method::GET, "/healthz", None).await;
        assert_eq!(answer.status, StatusCode::OK);
        slowest = slowest.max(started.elapsed());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(
        slowest < Duration::from_millis(500),
        "healthz took {slowest:?}"
    );

    let silent = silent.await.unwrap();
    let trickle = trickle.await.unwrap();
    eprintln!(
        "header timeout {HEADER_TIMEOUT_SECS} s: silent socket closed after {silent:?}, \
         trickling socket after {trickle:?}; slowest /healthz meanwhile {slowest:?}"
    );
    assert!(silent <= limit, "silent socket held {silent:?}");
    assert!(trickle <= limit, "trickling socket held {trickle:?}");
    assert!(
        silent >= Duration::from_secs(HEADER_TIMEOUT_SECS) - Duration::from_millis(100),
        "not closed before the timeout ({silent:?})"
    );
}

#[tokio::test]
async fn a_client_over_its_connection_cap_gets_503_while_others_are_served() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &target,
        &dir.path().join("db.sqlite"),
        &["--max-conns-per-client", "3", "--header-timeout-secs", "20"],
    )
    .await;
    let addr = server.addr;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect(addr, from(2)).await);
    }
    // The accept loop counts them before the next one arrives.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut over = connect(addr, from(2)).await;
    let answer = tokio::time::timeout(Duration::from_secs(5), until_closed(&mut over))
        .await
        .expect("closed at once");
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("\"too_many_connections\""), "{text}");

    // Another address is another client.
    let other = http(addr, from(3), Method::GET, "/healthz", None).await;
    assert_eq!(other.status, StatusCode::OK);

    // Closing one frees a place for the first client.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let again = http(addr, from(2), Method::GET, "/healthz", None).await;
    assert_eq!(again.status, StatusCode::OK);
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_a_408() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(
        &target,
        &dir.path().join("db.sqlite"),
        &["--body-timeout-secs", "1"],
    )
    .await;
    let mut stream = connect(server.addr, from(2)).await;
    let head = "POST /api/v1/probes HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
                content-length: 100\r\n\r\n{\"url\":";
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = h123::probe::trace::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), until_closed(&mut stream))
        .await
        .expect("answered and closed");
    let text = String::from_utf8_lossy(&answer);
    eprintln!(
        "body timeout 1 s: answered after {:?}",
        h123::probe::trace::now().saturating_duration_since(started)
    );
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("\"request_timeout\""), "{text}");
}
