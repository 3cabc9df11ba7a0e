//! A TCP stream whose reads carry the kernel's arrival stamps: each read
//! notes when the last segment it consumed reached the host, for the
//! [`WireTap`](super::wire::WireTap) above TLS to take as a first byte's
//! time instead of the moment the engine got round to reading it.

use super::arrival;
use super::trace;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// When the bytes of the latest read arrived, shared by a stream and its tap.
#[derive(Debug, Default)]
pub struct LastArrival(Mutex<Option<Instant>>);

impl LastArrival {
    /// The arrival of the latest read's bytes, if a stamped stream read any.
    pub fn latest(&self) -> Option<Instant> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, at: Instant) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    }
}

/// A TCP stream that reads with `recvmsg` and reports each read's arrival.
#[derive(Debug)]
pub struct StampedTcp {
    socket: TcpStream,
    arrivals: Arc<LastArrival>,
}

impl StampedTcp {
    /// `socket` with the kernel's stamping on, reporting to `arrivals`;
    /// `Err` gives the socket back where the kernel will not stamp.
    pub fn new(socket: TcpStream, arrivals: Arc<LastArrival>) -> Result<Self, TcpStream> {
        if arrival::stamp_tcp(&socket) {
            Ok(StampedTcp { socket, arrivals })
        } else {
            Err(socket)
        }
    }
}

impl AsyncRead for StampedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            ready!(this.socket.poll_read_ready(cx))?;
            let space = buf.initialize_unfilled();
            let read = this.socket.try_io(Interest::READABLE, || {
                arrival::read_stamped(&this.socket, space)
            });
            match read {
                Ok((n, stamp)) => {
                    if n > 0 {
                        // An unstamped segment (stamping not yet on) is
                        // timed by the read, never by an older stamp.
                        this.arrivals.set(stamp.unwrap_or_else(trace::now));
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for StampedTcp {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.socket).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.socket).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.socket.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.socket).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.socket).poll_shutdown(cx)
    }
}
