//! A slow link in front of a server: a TCP forwarder that passes what the
//! client sends at once and slows what the server answers, in one of two
//! ways. Paced, each connection's answers flow at a fixed rate, as on a slow
//! network: browser tests put it between Chromium and `h123 serve` to see a
//! page before its scripts arrive, without DevTools' network emulation
//! (which, in Chromium 156, can stall every throttled request of a page for
//! good). Or the first connection's first answer is held: in front of a TLS
//! server, one slow full handshake among fast ones, as a process's first
//! handshake often is.

use crate::net::Tasks;
use anyhow::Context as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The size of a paced chunk: about one packet.
const CHUNK: usize = 1_500;

/// A running slow link; it stops when dropped.
pub struct SlowLink {
    /// Where it listens.
    pub addr: SocketAddr,
    _tasks: Tasks,
}

/// How a link slows what the server answers.
#[derive(Clone, Copy)]
enum Shape {
    /// Each connection's answers, about one packet at a time, this far apart.
    Paced(Duration),
    /// The first connection's first answer held this long; the rest as they come.
    FirstAnswerHeld(Duration),
}

impl SlowLink {
    /// Forwards a loopback port to `upstream`, pacing each connection's answers to
    /// `bytes_per_second`.
    ///
    /// # Errors
    /// When the listening socket cannot be bound.
    pub async fn paced(upstream: SocketAddr, bytes_per_second: u32) -> anyhow::Result<SlowLink> {
        let gap = Duration::from_secs_f64(CHUNK as f64 / f64::from(bytes_per_second.max(1)));
        SlowLink::start(upstream, Shape::Paced(gap)).await
    }

    /// Forwards a loopback port to `upstream`, holding the first connection's first answer
    /// for `hold` (a TLS server's first handshake flight).
    ///
    /// # Errors
    /// When the listening socket cannot be bound.
    pub async fn first_answer_held(
        upstream: SocketAddr,
        hold: Duration,
    ) -> anyhow::Result<SlowLink> {
        SlowLink::start(upstream, Shape::FirstAnswerHeld(hold)).await
    }

    async fn start(upstream: SocketAddr, shape: Shape) -> anyhow::Result<SlowLink> {
        let listener = TcpListener::bind((upstream.ip(), 0))
            .await
            .context("binding the slow link")?;
        let addr = listener.local_addr()?;
        let mut tasks = Tasks::default();
        tasks.spawn(serve(listener, upstream, shape));
        Ok(SlowLink {
            addr,
            _tasks: tasks,
        })
    }
}

async fn serve(listener: TcpListener, upstream: SocketAddr, shape: Shape) {
    let held = Arc::new(AtomicBool::new(false));
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        // What this connection waits: before each chunk (paced) or before its first (held once).
        let (gap, mut hold) = match shape {
            Shape::Paced(gap) => (gap, Duration::ZERO),
            Shape::FirstAnswerHeld(hold) if !held.swap(true, Ordering::Relaxed) => {
                (Duration::ZERO, hold)
            }
            Shape::FirstAnswerHeld(_) => (Duration::ZERO, Duration::ZERO),
        };
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (mut client_read, mut client_write) = client.into_split();
            let (mut server_read, server_write) = server.into_split();
            let ask = async move {
                let mut server_write = server_write;
                let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                let _ = server_write.shutdown().await;
            };
            let answer = async move {
                let mut buf = [0u8; CHUNK];
                while let Ok(n) = server_read.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    tokio::time::sleep(std::mem::take(&mut hold)).await;
                    if client_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    tokio::time::sleep(gap.mul_f64(n as f64 / CHUNK as f64)).await;
                }
                let _ = client_write.shutdown().await;
            };
            tokio::join!(ask, answer);
        });
    }
}
