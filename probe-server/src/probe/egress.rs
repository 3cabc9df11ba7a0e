//! A probe's byte budget from its target: every byte read off its TCP
//! connections and every datagram its QUIC sockets receive, over all its
//! attempts, redirects, streams, addresses and protocols, is counted as it
//! arrives, and nothing is read past the budget.
//!
//! Over TCP a read asks the socket for no more than the bytes left, so the
//! probe reads exactly up to its budget (what the kernel buffered beyond it
//! is dropped with the connection). A QUIC socket takes whole datagrams, so
//! it may take the one datagram that crosses the budget, then it is deaf.
//! Whatever is waiting on a connection then stops at once ([`within`]).
//!
//! What the kernel takes beyond the budget is bounded too: a budgeted probe's sockets ask for a
//! small receive buffer ([`receive_buffer`]) before they connect, and its QUIC connections for
//! receive windows as small, so a target can have at most about that much more in flight or
//! buffered per connection when the probe stops reading, where the kernel's autotuning let a
//! TCP window grow to megabytes (in an audit, an 8 MiB budget counted 8 MiB while 12.6 to 13.5
//! MB crossed).

use h123_shared::{Failure, FailureKind, Phase};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

/// The largest receive buffer (and QUIC receive window) a budgeted probe asks for: 512 KiB,
/// which still carries about 40 Mbit/s at 100 ms round trips and 4 Gbit/s at 1 ms.
pub const MAX_RECEIVE_BUFFER: u64 = 512 * 1024;

/// The smallest: a budget below it is spent within a round trip or two anyway.
pub const MIN_RECEIVE_BUFFER: u64 = 64 * 1024;

/// The receive buffer (and QUIC receive window) of a probe whose budget is `limit` bytes: the
/// budget, within [`MIN_RECEIVE_BUFFER`] and [`MAX_RECEIVE_BUFFER`]. Set before a TCP socket
/// connects, it also fixes the window scale the SYN offers, and turns the kernel's receive
/// autotuning off for the socket.
pub fn receive_buffer(limit: u64) -> u32 {
    let bytes = limit.clamp(MIN_RECEIVE_BUFFER, MAX_RECEIVE_BUFFER);
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// Bytes a probe may still receive from its target, shared by all its connections.
#[derive(Debug)]
pub struct Egress {
    limit: u64,
    used: AtomicU64,
    spent: Notify,
}

impl Egress {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Arc<Self> {
        Arc::new(Egress {
            limit,
            used: AtomicU64::new(0),
            spent: Notify::new(),
        })
    }

    /// The budget, in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes received so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// Bytes that may still be received.
    pub fn left(&self) -> u64 {
        self.limit.saturating_sub(self.used())
    }

    /// Whether nothing more may be received.
    pub fn is_spent(&self) -> bool {
        self.left() == 0
    }

    /// Counts `bytes` received; wakes every [`Egress::spent`] waiter when
    /// they spend what was left.
    pub fn charge(&self, bytes: u64) {
        let before = self.used.fetch_add(bytes, Ordering::AcqRel);
        if before < self.limit && before.saturating_add(bytes) >= self.limit {
            self.spent.notify_waiters();
        }
    }

    /// Resolves once the budget is spent.
    ///
    /// # Cancel safety
    /// Cancel safe: it only waits.
    pub async fn spent(&self) {
        loop {
            let notified = self.spent.notified();
            if self.is_spent() {
                return;
            }
            notified.await;
        }
    }

    /// Why a probe stopped here: its failure in `phase`, of kind
    /// [`FailureKind::Budget`].
    pub fn failure(&self, phase: Phase) -> Failure {
        Failure {
            phase,
            kind: FailureKind::Budget,
            message: self.reason(),
        }
    }

    /// The sentence a stopped run and its failure carry.
    pub fn reason(&self) -> String {
        format!(
            "the probe spent its budget of {} bytes from the target (this server's --max-probe-bytes)",
            self.limit
        )
    }
}

/// Runs `work` unless `egress` is spent first; `None` when it was.
///
/// # Cancel safety
/// As cancel safe as `work`, which is dropped when the budget runs out.
pub async fn within<F: Future>(egress: Option<&Egress>, work: F) -> Option<F::Output> {
    let Some(egress) = egress else {
        return Some(work.await);
    };
    tokio::select! {
        biased;
        () = egress.spent() => None,
        out = work => Some(out),
    }
}

/// A byte stream whose reads are charged to an [`Egress`] and stop at it.
#[derive(Debug)]
pub struct Metered<S> {
    inner: S,
    egress: Arc<Egress>,
}

impl<S> Metered<S> {
    /// `inner`, charged to `egress`.
    pub fn new(inner: S, egress: Arc<Egress>) -> Self {
        Metered { inner, egress }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let left = usize::try_from(this.egress.left()).unwrap_or(usize::MAX);
        if left == 0 {
            return Poll::Ready(Err(io::Error::other(this.egress.reason())));
        }
        let room = buf.remaining().min(left);
        let before = buf.filled().len();
        let polled = if room == buf.remaining() {
            Pin::new(&mut this.inner).poll_read(cx, buf)
        } else {
            // Reads into a smaller window, then hands the bytes over.
            let mut window = vec![0u8; room];
            let mut small = ReadBuf::new(&mut window);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut small);
            buf.put_slice(small.filled());
            polled
        };
        let read = buf.filled().len() - before;
        this.egress.charge(read as u64);
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, bytes)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn reads_stop_exactly_at_the_budget() {
        let (mut far, near) = tokio::io::duplex(1 << 16);
        far.write_all(&[7u8; 10_000]).await.unwrap();
        let egress = Egress::new(4_000);
        let mut metered = Metered::new(near, egress.clone());
        let mut got = Vec::new();
        let err = metered.read_to_end(&mut got).await.unwrap_err();
        assert_eq!(got.len(), 4_000);
        assert_eq!(egress.used(), 4_000);
        assert!(err.to_string().contains("budget of 4000 bytes"), "{err}");
        assert!(
            within(Some(&egress), std::future::pending::<()>())
                .await
                .is_none()
        );
    }

    #[tokio::test]
    async fn work_runs_while_there_is_room() {
        let egress = Egress::new(10);
        egress.charge(9);
        assert_eq!(within(Some(&egress), async { 5 }).await, Some(5));
        assert_eq!(egress.failure(Phase::Receive).kind, FailureKind::Budget);
    }
}
