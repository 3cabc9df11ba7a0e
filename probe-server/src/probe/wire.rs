//! A timed I/O wrapper: timestamps request-written and first-response-byte.
//!
//! It sits between hyper and the (TLS-decrypted) stream, so it sees the
//! bytes exactly when the transport hands them over: the first `poll_read`
//! returning response bytes is time to first byte. For HTTP/2 the first bytes
//! read are often the server's SETTINGS, so there the scanner waits for the
//! HEADERS frame on the request's own stream.
//!
//! Neither stamp is the moment the engine got round to it, which a busy
//! machine can delay: a write is stamped before the call that hands the
//! bytes on (over TLS, encrypting and sending them at once), and a read
//! takes the kernel's arrival stamp of the segment that brought the bytes
//! when the stream under TLS is a [`StampedTcp`](super::stamped_tcp::StampedTcp)
//! (the latest segment of that read: later than the first by the gap
//! between their arrivals when several were waiting, never earlier).

use super::h2_frames::{FrameHead, FrameScanner, TYPE_HEADERS};
use super::stamped_tcp::LastArrival;
use super::tcp_info::TcpSocket;
use super::trace;
use h123_shared::TcpInfo;
use std::io::{self, IoSlice};
use std::os::fd::AsFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// When the current request was written and answered, as the wire saw it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestMarks {
    /// Last write of the request (accepted by the transport).
    pub written: Option<Instant>,
    /// First response byte read (HTTP/2: its HEADERS frame).
    pub first_byte: Option<Instant>,
}

#[derive(Debug)]
enum Framing {
    /// HTTP/1.1: any bytes read after the request are the response.
    Plain,
    /// HTTP/2: frames are scanned in both directions.
    Http2 {
        inbound: FrameScanner,
        outbound: FrameScanner,
        request_stream: Option<u32>,
    },
}

#[derive(Debug)]
struct TapState {
    framing: Framing,
    armed: bool,
    marks: RequestMarks,
}

/// Shared between the wrapper (owned by hyper's connection task) and the
/// probe task, which arms it before each request and reads the marks after.
#[derive(Debug)]
pub struct WireTap {
    /// Whether bytes are watched at all (a bench's connections are not).
    listening: bool,
    state: Mutex<TapState>,
    /// The TCP socket under the stream, for its kernel facts.
    socket: OnceLock<TcpSocket>,
    /// When the bytes of the stream's latest read arrived, where the stream
    /// under TLS is stamped.
    arrivals: Arc<LastArrival>,
}

impl WireTap {
    fn with(framing: Framing) -> Arc<Self> {
        Arc::new(WireTap {
            listening: true,
            state: Mutex::new(TapState {
                framing,
                armed: false,
                marks: RequestMarks::default(),
            }),
            socket: OnceLock::new(),
            arrivals: Arc::default(),
        })
    }

    /// A tap for an HTTP/1.1 connection.
    pub fn http1() -> Arc<Self> {
        WireTap::with(Framing::Plain)
    }

    /// A tap for a new HTTP/2 connection (outbound starts with the preface).
    pub fn http2() -> Arc<Self> {
        WireTap::with(Framing::Http2 {
            inbound: FrameScanner::inbound(),
            outbound: FrameScanner::outbound(),
            request_stream: None,
        })
    }

    /// A tap that watches nothing: the connection's I/O costs no clock read.
    pub fn silent() -> Arc<Self> {
        Arc::new(WireTap {
            listening: false,
            state: Mutex::new(TapState {
                framing: Framing::Plain,
                armed: false,
                marks: RequestMarks::default(),
            }),
            socket: OnceLock::new(),
            arrivals: Arc::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, TapState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts watching for the next request; clears the previous marks.
    pub fn arm(&self) {
        let mut state = self.lock();
        state.armed = true;
        state.marks = RequestMarks::default();
        if let Framing::Http2 { request_stream, .. } = &mut state.framing {
            *request_stream = None;
        }
    }

    /// What the wire saw of the current request so far.
    pub fn marks(&self) -> RequestMarks {
        self.lock().marks
    }

    /// Keeps the TCP socket under the stream so [`WireTap::tcp_info`] can
    /// read its facts; a silent tap keeps nothing.
    pub fn watch_socket(&self, socket: &impl AsFd) {
        if self.listening
            && let Some(watched) = TcpSocket::watch(socket)
        {
            let _ = self.socket.set(watched);
        }
    }

    /// Where a stamped stream reports its reads' arrivals; `None` for a
    /// silent tap (its stream reads as it comes).
    pub fn arrivals(&self) -> Option<Arc<LastArrival>> {
        self.listening.then(|| self.arrivals.clone())
    }

    /// The time a write about to be made starts, when the tap listens.
    fn clock(&self) -> Option<Instant> {
        self.listening.then(trace::now)
    }

    /// The kernel's facts of the watched TCP socket now, if one is watched.
    pub fn tcp_info(&self) -> Option<TcpInfo> {
        self.socket.get()?.info()
    }

    fn on_write(&self, bytes: &[u8], began: Option<Instant>) {
        let Some(at) = began.filter(|_| !bytes.is_empty()) else {
            return;
        };
        let mut guard = self.lock();
        let TapState {
            framing,
            armed,
            marks,
        } = &mut *guard;
        match framing {
            Framing::Plain => {
                if *armed && marks.first_byte.is_none() {
                    marks.written = Some(at);
                }
            }
            Framing::Http2 {
                outbound,
                request_stream,
                ..
            } => outbound.feed(bytes, |frame: FrameHead| {
                let client_stream = frame.stream % 2 == 1;
                if *armed && client_stream && frame.ends_stream() {
                    let stream = *request_stream.get_or_insert(frame.stream);
                    if stream == frame.stream {
                        marks.written = Some(at);
                    }
                }
            }),
        }
    }

    fn on_read(&self, bytes: &[u8]) {
        if !self.listening || bytes.is_empty() {
            return;
        }
        let at = self.arrivals.latest().unwrap_or_else(trace::now);
        let mut guard = self.lock();
        let TapState {
            framing,
            armed,
            marks,
        } = &mut *guard;
        match framing {
            Framing::Plain => {
                if *armed && marks.first_byte.is_none() {
                    marks.first_byte = Some(at);
                }
            }
            Framing::Http2 {
                inbound,
                request_stream,
                ..
            } => inbound.feed(bytes, |frame: FrameHead| {
                let ours = Some(frame.stream) == *request_stream;
                if *armed && ours && frame.kind == TYPE_HEADERS && marks.first_byte.is_none() {
                    marks.first_byte = Some(at);
                }
            }),
        }
    }
}

/// Wraps a stream and reports every byte moved to a [`WireTap`].
#[derive(Debug)]
pub struct TimedIo<T> {
    inner: T,
    tap: Arc<WireTap>,
}

impl<T> TimedIo<T> {
    /// Wraps `inner`, reporting to `tap`.
    pub fn new(inner: T, tap: Arc<WireTap>) -> Self {
        TimedIo { inner, tap }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for TimedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.tap.on_read(&buf.filled()[before..]);
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TimedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let began = self.tap.clock();
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.tap.on_write(&buf[..n], began);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let began = self.tap.clock();
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(mut n)) = polled {
            for buf in bufs {
                if n == 0 {
                    break;
                }
                let take = n.min(buf.len());
                self.tap.on_write(&buf[..take], began);
                n -= take;
            }
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn http1_marks_written_then_first_byte() {
        let (client, mut server) = tokio::io::duplex(1024);
        let tap = WireTap::http1();
        let mut io = TimedIo::new(client, tap.clone());
        io.write_all(b"before arming").await.unwrap();
        assert_eq!(tap.marks(), RequestMarks::default());
        tap.arm();
        io.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        let marks = tap.marks();
        assert!(marks.written.is_some() && marks.first_byte.is_none());
        server.write_all(b"HTTP/1.1 200 OK\r\n").await.unwrap();
        let mut buf = [0; 64];
        let _ = io.read(&mut buf).await.unwrap();
        let marks = tap.marks();
        assert!(marks.first_byte.unwrap() >= marks.written.unwrap());
    }

    #[tokio::test]
    async fn http2_ignores_settings_and_waits_for_our_headers() {
        let (client, mut server) = tokio::io::duplex(4096);
        let tap = WireTap::http2();
        let mut io = TimedIo::new(client, tap.clone());
        let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        out.extend([0, 0, 0, 0x4, 0, 0, 0, 0, 0]); // SETTINGS
        io.write_all(&out).await.unwrap();
        tap.arm();
        io.write_all(&[0, 0, 1, 0x1, 0x5, 0, 0, 0, 1, 0x82])
            .await
            .unwrap(); // HEADERS, END_STREAM, stream 1
        assert!(tap.marks().written.is_some());
        let mut buf = [0; 64];
        server
            .write_all(&[0, 0, 0, 0x4, 0, 0, 0, 0, 0])
            .await
            .unwrap(); // server SETTINGS
        let _ = io.read(&mut buf).await.unwrap();
        assert!(tap.marks().first_byte.is_none());
        server
            .write_all(&[0, 0, 1, 0x1, 0x4, 0, 0, 0, 1, 0x88])
            .await
            .unwrap(); // HEADERS stream 1
        let _ = io.read(&mut buf).await.unwrap();
        assert!(tap.marks().first_byte.is_some());
    }
}
