//! A TCP connection behind a [`Link`]: the engine reads and writes an
//! in-memory pipe, and two carriers move its bytes to and from the socket
//! in segment-sized pieces, each delivered when the link says so. A
//! carrier whose direction is full stops reading, so the peer's TCP is
//! pushed back by flow control rather than buffered without bound.

use super::link::{Direction, Flight, Link, TCP_HEADER_BYTES, until};
use crate::probe::connection::TaskGuard;
use crate::probe::trace;
use bytes::{Bytes, BytesMut};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Payload bytes per emulated segment (a typical MSS with timestamps).
const SEGMENT: usize = 1448;
/// Bytes the engine's side of the pipe buffers each way.
const PIPE: usize = 64 * 1024;

/// The engine's end of a connection behind a link; dropping it closes the
/// connection.
#[derive(Debug)]
pub struct Relayed {
    pipe: DuplexStream,
    _up: TaskGuard,
    _down: TaskGuard,
}

/// Puts `stream` behind `link`.
pub fn relay(stream: TcpStream, link: Arc<Link>) -> Relayed {
    let (pipe, far) = tokio::io::duplex(PIPE);
    let (far_read, far_write) = tokio::io::split(far);
    let (socket_read, socket_write) = stream.into_split();
    let up_link = link.clone();
    Relayed {
        pipe,
        _up: TaskGuard(tokio::spawn(async move {
            carry(far_read, socket_write, &up_link.up).await;
        })),
        _down: TaskGuard(tokio::spawn(async move {
            carry(socket_read, far_write, &link.down).await;
        })),
    }
}

/// Moves bytes from `from` to `to` across `direction`, until either ends.
async fn carry(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    direction: &Direction,
) {
    let (segments, mut due) = mpsc::unbounded_channel::<(Instant, Bytes, Flight)>();
    let read = async move {
        let mut buf = BytesMut::new();
        loop {
            while let Some(wait) = direction.room_in(trace::now()) {
                tokio::time::sleep(wait).await;
            }
            buf.reserve(16 * 1024);
            match from.read_buf(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let mut chunk = buf.split().freeze();
            let now = trace::now();
            while !chunk.is_empty() {
                let segment = chunk.split_to(chunk.len().min(SEGMENT));
                let (at, flight) = direction.deliver_at(now, segment.len(), TCP_HEADER_BYTES);
                if segments.send((at, segment, flight)).is_err() {
                    return;
                }
            }
        }
    };
    let write = async {
        while let Some((at, segment, _flight)) = due.recv().await {
            until(at).await;
            if to.write_all(&segment).await.is_err() {
                // The peer is gone: what is queued leaves the link now, and the
                // reader stops at its next segment.
                due.close();
                while due.try_recv().is_ok() {}
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(read, write);
}

impl AsyncRead for Relayed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_read(cx, buf)
    }
}

impl AsyncWrite for Relayed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.pipe).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.pipe).poll_shutdown(cx)
    }
}
