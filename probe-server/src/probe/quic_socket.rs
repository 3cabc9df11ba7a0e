//! The UDP socket under an HTTP/3 probe's QUIC endpoint, made before an
//! attempt's clock starts, and timestamping the datagrams it sends and
//! receives.
//!
//! A QUIC stream accepts a request into its buffer; the request leaves only
//! when the connection's driver next sends a datagram. Over TCP, `send` ends
//! when the kernel took the last byte; for the same meaning over QUIC, the
//! exchange arms the [`DatagramTap`] before it writes the request's last part
//! (the headers of a request without a body, else the body's last write),
//! and the first datagram sent after that ends `send`. On the CLI's
//! current-thread runtime nothing is sent between arming and that write;
//! on the server's, a datagram the driver sends meanwhile can only end
//! `send` earlier, by at most that write's own time.
//!
//! Over TCP, `wait` ends when the response's first bytes arrive. QUIC
//! decrypts and reassembles inside quinn, so the exchange takes the last
//! datagram received before h3 handed over the response headers: the one
//! that carried them, or a later one read in the same batch (later by the
//! gap between their arrivals, never earlier).
//!
//! Neither stamp is the moment the engine got round to it, which a busy
//! machine can delay: a send is stamped before the call that sends it, and
//! a receipt takes the kernel's arrival stamp of the batch's last datagram
//! (see [`arrival`]) where the socket is not behind an emulated link.
//!
//! The socket is not connected (one socket races a name's addresses), so
//! it asks the kernel to queue ICMP errors ([`icmp`]): [`Refusals`] tells
//! which destinations refused (nothing listens on that UDP port), which
//! ends a handshake at once instead of at its timeout.

use super::arrival;
use super::egress::Egress;
use super::icmp;
use super::network::Link;
use super::network::datagrams::ImpairedSocket;
use super::trace;
use h123_shared::migration::Migrate;
use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, Runtime, TokioRuntime, UdpPoller};
use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

/// When the first datagram after [`DatagramTap::arm`] left, and when the
/// latest datagram arrived.
#[derive(Debug, Default)]
pub struct DatagramTap {
    armed: AtomicBool,
    sent_at: Mutex<Option<Instant>>,
    received_at: Mutex<Option<Instant>>,
}

impl DatagramTap {
    /// Forgets any earlier datagram and waits for the next one.
    pub fn arm(&self) {
        *self.sent_at.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.armed.store(true, Ordering::Release);
    }

    /// When the first datagram after [`DatagramTap::arm`] was sent, if one was.
    pub fn sent_at(&self) -> Option<Instant> {
        *self.sent_at.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// When the latest datagram was received, if one was.
    pub fn received_at(&self) -> Option<Instant> {
        *self.received_at.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn received(&self, at: Instant) {
        *self.received_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    }

    /// A datagram that left; `began` is when its send call began.
    fn sent(&self, began: Instant) {
        if self.armed.swap(false, Ordering::AcqRel) {
            *self.sent_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(began);
        }
    }
}

/// Most refused destinations a socket remembers: a handshake races a
/// name's few addresses, and forged ICMP errors could name any.
const MAX_REFUSED: usize = 16;

/// The destinations of a socket's datagrams that were refused (ICMP port
/// unreachable), read from its error queue ([`icmp`]).
#[derive(Debug)]
pub struct Refusals {
    /// The socket, to wait for its errors and read them; none where the
    /// kernel queues none.
    errors: Option<AsyncFd<OwnedFd>>,
    /// The destinations refused so far. Its lock is also held across a read
    /// of datagrams and that read's arrival stamp: reading the error queue
    /// in between would move the socket's last-receipt stamp.
    refused: Mutex<Vec<SocketAddr>>,
}

impl Refusals {
    /// Asks the kernel to queue `socket`'s ICMP errors, and keeps a copy of
    /// it to read them (inside the runtime).
    fn new(socket: &UdpSocket) -> Refusals {
        Refusals {
            errors: icmp::watch(socket),
            refused: Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SocketAddr>> {
        self.refused.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the error queue into `refused`; whether it held any error.
    fn read(&self, refused: &mut Vec<SocketAddr>) -> bool {
        let Some(errors) = &self.errors else {
            return false;
        };
        let queued = icmp::read_queue(errors.get_ref());
        for error in &queued {
            if error.refused && !refused.contains(&error.to) && refused.len() < MAX_REFUSED {
                refused.push(error.to);
            }
        }
        !queued.is_empty()
    }

    /// Whether a failed read of datagrams was an ICMP error's (read into
    /// `refused`), which quinn would take for its socket's end: the error
    /// belongs to one datagram sent, and the socket reads on.
    fn absorbs(&self, error: &io::Error, refused: &mut Vec<SocketAddr>) -> bool {
        use io::ErrorKind as K;
        let icmp_kind = matches!(
            error.kind(),
            K::ConnectionRefused | K::HostUnreachable | K::NetworkUnreachable
        );
        self.read(refused) || icmp_kind
    }

    /// Reads the error queue, which clears the socket's pending error.
    fn clear(&self) {
        if self.errors.is_some() {
            self.read(&mut self.lock());
        }
    }

    /// Forgets earlier refusals of `addrs` (before a new handshake with
    /// them): what an earlier connection met is not this one's answer.
    pub fn forget(&self, addrs: &[SocketAddr]) {
        let mut refused = self.lock();
        self.read(&mut refused);
        refused.retain(|a| !addrs.iter().any(|b| icmp::unmapped(*b) == *a));
    }

    /// Resolves once a datagram to `addr` has been refused; never where the
    /// kernel queues no errors.
    pub async fn of(&self, addr: SocketAddr) {
        let addr = icmp::unmapped(addr);
        let Some(errors) = &self.errors else {
            return std::future::pending().await;
        };
        loop {
            {
                let mut refused = self.lock();
                self.read(&mut refused);
                if refused.contains(&addr) {
                    return;
                }
            }
            match errors.ready(Interest::ERROR).await {
                // Cleared before the next read: an error after it wakes again.
                Ok(mut ready) => ready.clear_ready(),
                Err(_) => return std::future::pending().await,
            }
        }
    }
}

/// A quinn socket that reports its sends and receipts to a [`DatagramTap`],
/// and knows when its own first datagram arrived (a moved connection's
/// first answer on its new path).
#[derive(Debug)]
struct TappedSocket {
    inner: Arc<dyn AsyncUdpSocket>,
    tap: Arc<DatagramTap>,
    /// The socket itself, for the kernel's arrival stamps (none behind an
    /// emulated link, whose delays are the engine's own).
    stamped: Option<OwnedFd>,
    /// Set once the endpoint moved off this socket: it reads nothing more,
    /// as a network that was left delivers nothing more.
    retired: AtomicBool,
    first_received: OnceLock<Instant>,
    arrived: Notify,
    /// The probe's byte budget: datagrams are charged to it as they arrive,
    /// and once it is spent the socket is deaf (it drops what comes).
    egress: Option<Arc<Egress>>,
    /// Where its datagrams were refused.
    refusals: Arc<Refusals>,
}

impl TappedSocket {
    /// How many of the `count` datagrams just received fit the budget
    /// (the one that crosses it does), charging them.
    fn admitted(&self, count: usize, meta: &[RecvMeta]) -> usize {
        let Some(egress) = &self.egress else {
            return count;
        };
        let mut kept = 0;
        for m in &meta[..count] {
            if egress.is_spent() {
                break;
            }
            egress.charge(m.len as u64);
            kept += 1;
        }
        kept
    }
}

impl AsyncUdpSocket for TappedSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        // A pending ICMP error about an earlier datagram (a refused address's
        // handshake, or its close) fails the socket's next send, and quinn
        // drops a datagram whose send failed: this one, perhaps the first of
        // a handshake with the next address, would wait out QUIC's probe
        // timeout (about 1 s). Reading the error queue clears it first.
        self.refusals.clear();
        let began = trace::now();
        self.inner.try_send(transmit)?;
        self.tap.sent(began);
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        if self.retired.load(Ordering::Acquire) {
            // quinn stops polling a previous socket once it reports an error.
            return Poll::Ready(Err(io::Error::other("the endpoint moved off this socket")));
        }
        let mut refused = self.refusals.lock();
        let count = loop {
            match self.inner.poll_recv(cx, bufs, meta) {
                Poll::Ready(Ok(count)) => match self.admitted(count, meta) {
                    // Past the budget: dropped, and the next ones read.
                    0 if count > 0 => continue,
                    kept => break kept,
                },
                Poll::Ready(Err(e)) if self.refusals.absorbs(&e, &mut refused) => continue,
                other => return other,
            }
        };
        if count > 0 {
            let at = self.stamped.as_ref().and_then(arrival::last_datagram);
            let at = at.unwrap_or_else(trace::now);
            self.tap.received(at);
            if self.first_received.set(at).is_ok() {
                self.arrived.notify_waiters();
            }
        }
        drop(refused);
        Poll::Ready(Ok(count))
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.inner.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

/// A client endpoint on a UDP socket that can move to another (connection
/// migration). Every socket it uses crosses the same emulated link, when
/// there is one, and reports to the same [`DatagramTap`].
#[derive(Clone, Debug)]
pub struct ClientEndpoint {
    /// The quinn endpoint.
    pub endpoint: quinn::Endpoint,
    /// When datagrams left and arrived, on whichever socket.
    pub tap: Arc<DatagramTap>,
    socket: Arc<TappedSocket>,
    link: Option<Arc<Link>>,
    egress: Option<Arc<Egress>>,
}

impl ClientEndpoint {
    /// An endpoint on a fresh UDP socket: dual-stack where the system allows
    /// it (so one socket, made before the address is known, reaches IPv4 and
    /// IPv6 alike), else IPv4 only. Its datagrams cross `link` when there is
    /// one, and are charged to `egress` when there is one.
    pub fn new(link: Option<Arc<Link>>, egress: Option<Arc<Egress>>) -> io::Result<ClientEndpoint> {
        let socket = UdpSocket::bind((Ipv6Addr::UNSPECIFIED, 0))
            .or_else(|_| UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)))?;
        let tap = Arc::new(DatagramTap::default());
        let tapped = tapped(socket, link.as_ref(), &tap, egress.clone())?;
        let endpoint = quinn::Endpoint::new_with_abstract_socket(
            quinn::EndpointConfig::default(),
            None,
            tapped.clone(),
            Arc::new(TokioRuntime),
        )?;
        Ok(ClientEndpoint {
            endpoint,
            tap,
            socket: tapped,
            link,
            egress,
        })
    }

    /// Where the socket in use had its datagrams refused.
    pub fn refusals(&self) -> Arc<Refusals> {
        self.socket.refusals.clone()
    }

    /// The local address of the socket in use.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Moves every connection of the endpoint to a fresh socket, on a new
    /// port of the same address or on `address`, and stops reading the old
    /// one, as when the client leaves a network; the new local address.
    /// quinn then sends from the new socket with a fresh connection ID.
    pub fn move_to(&mut self, to: &Migrate) -> io::Result<SocketAddr> {
        let current = self.socket.local_addr()?;
        let ip = match (to.local_ip().map_err(io::Error::other)?, current) {
            (None, current) => current.ip(),
            // A dual-stack socket takes an IPv4 address in its mapped form.
            (Some(IpAddr::V4(v4)), SocketAddr::V6(_)) => IpAddr::V6(v4.to_ipv6_mapped()),
            (Some(ip), _) => ip,
        };
        let moved = tapped(
            UdpSocket::bind((ip, 0))?,
            self.link.as_ref(),
            &self.tap,
            self.egress.clone(),
        )?;
        self.endpoint.rebind_abstract(moved.clone())?;
        self.socket.retired.store(true, Ordering::Release);
        self.socket = moved;
        self.socket.local_addr()
    }

    /// When the socket in use got its first datagram, waiting up to `limit`
    /// for it; `None` when nothing came.
    pub async fn first_answer(&self, limit: Duration) -> Option<Instant> {
        let arrived = self.socket.arrived.notified();
        if let Some(at) = self.socket.first_received.get() {
            return Some(*at);
        }
        let _ = tokio::time::timeout(limit, arrived).await;
        self.socket.first_received.get().copied()
    }
}

/// `socket` under quinn: across `link` when there is one, reporting to
/// `tap`, charging `egress` (and then with a receive buffer bounded by it).
fn tapped(
    socket: UdpSocket,
    link: Option<&Arc<Link>>,
    tap: &Arc<DatagramTap>,
    egress: Option<Arc<Egress>>,
) -> io::Result<Arc<TappedSocket>> {
    let stamped = match link {
        None if arrival::stamp_udp(&socket) => socket.try_clone().ok().map(OwnedFd::from),
        _ => None,
    };
    if let Some(egress) = &egress {
        bound_receive_buffer(&socket, super::egress::receive_buffer(egress.limit()))?;
    }
    let refusals = Arc::new(Refusals::new(&socket));
    let inner: Arc<dyn AsyncUdpSocket> = match link {
        Some(link) => Arc::new(ImpairedSocket::new(socket, link.clone())?),
        None => TokioRuntime.wrap_udp_socket(socket)?,
    };
    Ok(Arc::new(TappedSocket {
        inner,
        tap: tap.clone(),
        stamped,
        retired: AtomicBool::new(false),
        first_received: OnceLock::new(),
        arrived: Notify::new(),
        egress,
        refusals,
    }))
}

/// Lowers `socket`'s receive buffer to `bytes` (which the kernel doubles) when it holds more:
/// what the kernel may keep unread beyond a budget. A QUIC connection's receive window bounds
/// what a target may send; this bounds what waits in the kernel.
fn bound_receive_buffer(socket: &UdpSocket, bytes: u32) -> io::Result<()> {
    let socket = socket2::SockRef::from(socket);
    let kept = 2 * bytes as usize;
    if socket.recv_buffer_size()? > kept {
        socket.set_recv_buffer_size(bytes as usize)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer_of(socket: &UdpSocket) -> usize {
        socket2::SockRef::from(socket).recv_buffer_size().unwrap()
    }

    #[tokio::test]
    async fn a_budgeted_sockets_receive_buffer_is_bounded_by_its_budget() {
        let default = buffer_of(&UdpSocket::bind("127.0.0.1:0").unwrap());
        let tap = Arc::new(DatagramTap::default());
        for (budget, egress) in [
            (64 * 1024, Some(Egress::new(64 * 1024))),
            (8 << 20, Some(Egress::new(8 << 20))),
        ] {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            let same = socket.try_clone().unwrap();
            let _tapped = tapped(socket, None, &tap, egress).unwrap();
            let bytes = crate::probe::egress::receive_buffer(budget) as usize;
            assert_eq!(buffer_of(&same), default.min(2 * bytes), "budget {budget}");
        }
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let same = socket.try_clone().unwrap();
        let _tapped = tapped(socket, None, &tap, None).unwrap();
        assert_eq!(buffer_of(&same), default, "no budget: the system's");
    }

    #[tokio::test]
    async fn the_tap_stamps_only_the_first_send_after_arming() {
        let client = ClientEndpoint::new(None, None).unwrap();
        let tap = &client.tap;
        assert!(tap.sent_at().is_none());
        tap.sent(trace::now());
        assert!(tap.sent_at().is_none(), "not armed: nothing is stamped");
        tap.arm();
        tap.sent(trace::now());
        let first = tap.sent_at().unwrap();
        tap.sent(trace::now());
        assert_eq!(
            tap.sent_at(),
            Some(first),
            "later sends keep the first stamp"
        );
        tap.arm();
        assert!(tap.sent_at().is_none(), "arming forgets the last stamp");
        assert!(client.local_addr().unwrap().port() > 0);
    }
}
