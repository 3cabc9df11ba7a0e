//! TCP across a [`Link`] packet by packet, so the kernel's TCP on both
//! sides of the link meets real loss and recovers from it as on a real
//! path: a NAT hop through a TUN device, on a thread of its own.
//!
//! The engine connects to a virtual peer `P:V` (a /30 of the benchmarking
//! range 198.18.0.0/15, routed into the TUN device, whose own address is
//! `L`). Each packet the engine sends comes out of the device; the hop
//! offers it to the link's up direction and, when the link delivers it,
//! writes it back readdressed from `P:E` to the relay `L:R`, so the kernel
//! hands it to the relay's socket. The relay's packets come out the same
//! way, cross the link's down direction and go back readdressed from `P:V`
//! to the engine's `L:E`. The relay holds the real connection to the target
//! and copies bytes between the two.
//!
//! A connection's SYN is held until the relay has connected to the target,
//! so the connect phase spans the link's round trip and the real one, and a
//! refused target answers with a reset. A budgeted probe's receive buffer
//! is asked for on the relay's socket to the target too ([`tcp::stream_to`]),
//! so what the kernel takes from the target is bounded behind a link as
//! without one. Where the device cannot be made (no
//! `/dev/net/tun`, no `CAP_NET_ADMIN`), [`PacketPath::get`] is `None` and
//! TCP crosses the link as a stream instead ([`super::stream`]).

use super::ipv4::{self, Segment};
use super::link::{Admission, Flight, Link, until};
use super::tun::Tun;
use crate::probe::connection::TaskGuard;
use crate::probe::{tcp, trace};
use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// Most connections the hop carries at once.
const MAX_FLOWS: usize = 4096;
/// How long a connection's packets still pass after the engine dropped it,
/// so its closing handshake completes.
const GRACE: Duration = Duration::from_secs(5);
/// Virtual ports handed out, in turn.
const VIRTUAL_PORTS: std::ops::Range<u16> = 20_000..60_000;

/// The NAT hop, one per process.
#[derive(Debug)]
pub struct PacketPath {
    tun: Tun,
    /// The device's address, where the relay listens.
    local: Ipv4Addr,
    /// The virtual peer the engine connects to.
    peer: Ipv4Addr,
    relay_port: u16,
    runtime: tokio::runtime::Handle,
    flows: Mutex<Flows>,
}

#[derive(Debug, Default)]
struct Flows {
    /// Every route, by virtual port.
    by_port: HashMap<u16, Arc<Flow>>,
    /// Connections to targets, by virtual port, until the relay accepts the
    /// engine's connection.
    upstream: HashMap<u16, TcpStream>,
    next_port: u16,
}

/// One connection through the hop.
#[derive(Debug)]
struct Flow {
    virtual_port: u16,
    /// The engine's port, once its SYN came.
    engine_port: OnceLock<u16>,
    target: SocketAddr,
    link: Arc<Link>,
    limit: Duration,
    /// The receive buffer asked for on the relay's socket to the target.
    receive_buffer: Option<u32>,
    stage: Mutex<Stage>,
    up: mpsc::UnboundedSender<Held>,
    down: mpsc::UnboundedSender<Held>,
    tasks: Mutex<Vec<TaskGuard>>,
}

impl Flow {
    fn stage(&self) -> MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The relay's connection to the target, given up after the flow's
    /// limit, with the flow's receive buffer asked for before it connects.
    async fn reach(&self) -> io::Result<TcpStream> {
        tokio::time::timeout(self.limit, tcp::stream_to(self.target, self.receive_buffer))
            .await
            .map_err(|_| io::Error::from(io::ErrorKind::TimedOut))?
    }

    fn keep(&self, task: tokio::task::JoinHandle<()>) {
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(TaskGuard(task));
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// No SYN has crossed the link yet.
    Waiting,
    /// The relay is connecting to the target.
    Connecting,
    /// Connected: packets pass.
    Open,
    /// The target refused or did not answer: SYNs get a reset.
    Refused,
}

/// A packet held by the link until it is due.
#[derive(Debug)]
struct Held {
    due: Instant,
    packet: Vec<u8>,
    _flight: Flight,
}

impl PacketPath {
    /// The process's hop, made on first use; `None` where no TUN device can
    /// be made.
    pub fn get() -> Option<&'static PacketPath> {
        PATH.get_or_init(|| PacketPath::start().ok()).as_ref()
    }

    /// Makes the device and the relay on a thread and runtime of their own
    /// (the engine's runtimes come and go; the hop outlives them).
    fn start() -> io::Result<PacketPath> {
        let (made, made_rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("h123-packets".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => return drop(made.send(Err(e))),
                };
                runtime.block_on(async move {
                    let base = u32::from(subnet());
                    let (local, peer) = (Ipv4Addr::from(base + 1), Ipv4Addr::from(base + 2));
                    let started = async {
                        let tun = Tun::create(local, 30)?;
                        let listener = TcpListener::bind((local, 0)).await?;
                        Ok::<_, io::Error>((tun, listener))
                    };
                    match started.await {
                        Ok((tun, listener)) => {
                            let path = PacketPath {
                                relay_port: listener.local_addr().map_or(0, |a| a.port()),
                                tun,
                                local,
                                peer,
                                runtime: tokio::runtime::Handle::current(),
                                flows: Mutex::default(),
                            };
                            if made.send(Ok(path)).is_ok() {
                                serve(listener).await;
                            }
                        }
                        Err(e) => drop(made.send(Err(e))),
                    }
                });
            })?;
        made_rx
            .recv()
            .map_err(|_| io::Error::other("the packet thread ended"))?
    }

    fn lock(&self) -> MutexGuard<'_, Flows> {
        self.flows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the engine connects to reach `target` across `link` (the relay
    /// gives up on the target after `limit`, and asks for a receive buffer of
    /// `receive_buffer` bytes on its socket to it when given); the route
    /// lasts while the returned [`Route`] does.
    pub fn route(
        &'static self,
        target: SocketAddr,
        link: Arc<Link>,
        limit: Duration,
        receive_buffer: Option<u32>,
    ) -> io::Result<(SocketAddr, Route)> {
        let mut flows = self.lock();
        if flows.by_port.len() >= MAX_FLOWS {
            return Err(io::Error::other(
                "too many connections through the emulated network at once",
            ));
        }
        let next = |port: u16| match port + 1 {
            next if next >= VIRTUAL_PORTS.end => VIRTUAL_PORTS.start,
            next => next,
        };
        let mut port = flows.next_port.max(VIRTUAL_PORTS.start);
        while flows.by_port.contains_key(&port) {
            port = next(port);
        }
        flows.next_port = next(port);
        let (up, up_rx) = mpsc::unbounded_channel();
        let (down, down_rx) = mpsc::unbounded_channel();
        let flow = Arc::new(Flow {
            virtual_port: port,
            engine_port: OnceLock::new(),
            target,
            link,
            limit,
            receive_buffer,
            stage: Mutex::new(Stage::Waiting),
            up,
            down,
            tasks: Mutex::new(vec![
                TaskGuard(self.runtime.spawn(self.release(up_rx))),
                TaskGuard(self.runtime.spawn(self.release(down_rx))),
            ]),
        });
        flows.by_port.insert(port, flow);
        Ok((
            SocketAddr::new(self.peer.into(), port),
            Route {
                path: self,
                virtual_port: port,
            },
        ))
    }

    /// Writes each held packet into the device when it is due.
    async fn release(&'static self, mut held: mpsc::UnboundedReceiver<Held>) {
        while let Some(packet) = held.recv().await {
            until(packet.due).await;
            // A full device queue is a lost packet, as on a real path.
            let _ = self.tun.write(&packet.packet);
        }
    }

    /// Forgets the route of `virtual_port` and whatever it carried.
    fn forget(&self, virtual_port: u16) {
        let mut flows = self.lock();
        flows.by_port.remove(&virtual_port);
        flows.upstream.remove(&virtual_port);
    }

    /// The route a packet to or from `virtual_port` belongs to.
    fn flow(&self, virtual_port: u16) -> Option<Arc<Flow>> {
        self.lock().by_port.get(&virtual_port).cloned()
    }

    /// Takes one packet out of the device through the link.
    fn handle(&'static self, packet: &mut [u8]) {
        let Some(segment) = ipv4::parse(packet) else {
            return;
        };
        if *segment.src.ip() != self.local || *segment.dst.ip() != self.peer {
            return;
        }
        if segment.src.port() == self.relay_port {
            self.downward(packet, segment);
        } else {
            self.upward(packet, segment);
        }
    }

    /// A packet from the engine's `L:E` to `P:V`, bound for the relay.
    fn upward(&'static self, packet: &mut [u8], segment: Segment) {
        let Some(flow) = self.flow(segment.dst.port()) else {
            return;
        };
        let engine_port = match segment.opens() {
            true => *flow.engine_port.get_or_init(|| segment.src.port()),
            false => flow.engine_port.get().copied().unwrap_or_default(),
        };
        if engine_port != segment.src.port() {
            return;
        }
        let Admission::Deliver(due, flight) =
            flow.link
                .up
                .offer_datagram(trace::now(), segment.payload_len, segment.header_len)
        else {
            return;
        };
        let stage = *flow.stage();
        match (segment.opens(), stage) {
            (true, Stage::Waiting) => {
                *flow.stage() = Stage::Connecting;
                let syn = packet.to_vec();
                flow.keep(self.runtime.spawn(self.open(flow.clone(), syn, due)));
            }
            (true, Stage::Refused) => self.refuse(&flow, segment),
            (_, Stage::Open) => {
                ipv4::readdress(
                    packet,
                    SocketAddrV4::new(self.peer, flow.virtual_port),
                    SocketAddrV4::new(self.local, self.relay_port),
                );
                let _ = flow.up.send(Held {
                    due,
                    packet: packet.to_vec(),
                    _flight: flight,
                });
            }
            // A SYN sent again while the target is being reached, or a
            // packet before the connection is open: the first SYN speaks.
            _ => {}
        }
    }

    /// A packet from the relay to `P:V`, bound for the engine.
    fn downward(&self, packet: &mut [u8], segment: Segment) {
        let Some(flow) = self.flow(segment.dst.port()) else {
            return;
        };
        let Some(&engine_port) = flow.engine_port.get() else {
            return;
        };
        if let Admission::Deliver(due, flight) =
            flow.link
                .down
                .offer_datagram(trace::now(), segment.payload_len, segment.header_len)
        {
            ipv4::readdress(
                packet,
                SocketAddrV4::new(self.peer, flow.virtual_port),
                SocketAddrV4::new(self.local, engine_port),
            );
            let _ = flow.down.send(Held {
                due,
                packet: packet.to_vec(),
                _flight: flight,
            });
        }
    }

    /// When the SYN that crossed the link is due: connects to the target,
    /// then lets the SYN through to the relay, or answers with a reset.
    async fn open(&'static self, flow: Arc<Flow>, mut syn: Vec<u8>, due: Instant) {
        until(due).await;
        let connected = flow.reach().await;
        let Some(segment) = ipv4::parse(&syn) else {
            return;
        };
        match connected {
            Ok(upstream) => {
                let _ = upstream.set_nodelay(true);
                self.lock().upstream.insert(flow.virtual_port, upstream);
                *flow.stage() = Stage::Open;
                ipv4::readdress(
                    &mut syn,
                    SocketAddrV4::new(self.peer, flow.virtual_port),
                    SocketAddrV4::new(self.local, self.relay_port),
                );
                let _ = self.tun.write(&syn);
            }
            _ => {
                *flow.stage() = Stage::Refused;
                self.refuse(&flow, segment);
            }
        }
    }

    /// Answers the engine's SYN with a reset, across the link's down direction.
    fn refuse(&self, flow: &Flow, syn: Segment) {
        let reset = ipv4::reset(
            SocketAddrV4::new(self.peer, flow.virtual_port),
            syn.src,
            syn.seq.wrapping_add(1),
        );
        if let Admission::Deliver(due, flight) =
            flow.link.down.offer_datagram(trace::now(), 0, reset.len())
        {
            let _ = flow.down.send(Held {
                due,
                packet: reset,
                _flight: flight,
            });
        }
    }

    /// The relay's connection accepted from `P:V`, joined to its target.
    fn join(&self, accepted: TcpStream, virtual_port: u16) {
        let upstream = self.lock().upstream.remove(&virtual_port);
        let (Some(upstream), Some(flow)) = (upstream, self.flow(virtual_port)) else {
            return;
        };
        let _ = accepted.set_nodelay(true);
        flow.keep(self.runtime.spawn(async move {
            let (mut accepted, mut upstream) = (accepted, upstream);
            let _ = tokio::io::copy_bidirectional(&mut accepted, &mut upstream).await;
        }));
    }
}

/// The process's hop, once made.
static PATH: OnceLock<Option<PacketPath>> = OnceLock::new();

/// Reads the device and accepts the relay's connections, forever, once
/// [`PacketPath::get`] has stored the hop.
async fn serve(listener: TcpListener) {
    let path = loop {
        if let Some(stored) = PATH.get() {
            break stored.as_ref();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let Some(path) = path else {
        return;
    };
    let read = async {
        let mut buf = vec![0u8; 65_535];
        loop {
            match path.tun.read(&mut buf).await {
                Ok(len) => path.handle(&mut buf[..len]),
                // Never a busy loop on an error that repeats.
                Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
    };
    let accept = async {
        loop {
            match listener.accept().await {
                Ok((accepted, from)) if from.ip() == path.peer => path.join(accepted, from.port()),
                Ok(_) => {}
                Err(_) => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
    };
    tokio::join!(read, accept);
}

/// A /30 of 198.18.0.0/15 for this process (by its id, so two processes on
/// one machine do not share one).
fn subnet() -> Ipv4Addr {
    let base = u32::from(Ipv4Addr::new(198, 18, 0, 0));
    Ipv4Addr::from(base + (std::process::id() % (1 << 15)) * 4)
}

/// A route through the hop; dropping it (with its connection) frees the
/// route once the connection's closing packets had time to pass.
#[derive(Debug)]
pub struct Route {
    path: &'static PacketPath,
    virtual_port: u16,
}

impl Drop for Route {
    fn drop(&mut self) {
        let (path, port) = (self.path, self.virtual_port);
        path.runtime.spawn(async move {
            tokio::time::sleep(GRACE).await;
            path.forget(port);
        });
    }
}

/// The engine's end of a connection through the hop: the socket, and the
/// route it keeps alive.
#[derive(Debug)]
pub struct Routed {
    /// The engine's socket (connected to the virtual peer).
    pub socket: TcpStream,
    _route: Route,
}

impl Routed {
    /// `socket`, connected through `route`.
    pub fn new(socket: TcpStream, route: Route) -> Routed {
        Routed {
            socket,
            _route: route,
        }
    }
}

impl AsyncRead for Routed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.socket).poll_read(cx, buf)
    }
}

impl AsyncWrite for Routed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.socket).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.socket).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.socket).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::network::NetworkProfile;

    /// A flow to `target` asking for `receive_buffer`, as [`PacketPath::route`] makes one.
    fn flow_to(target: SocketAddr, receive_buffer: Option<u32>) -> Flow {
        Flow {
            virtual_port: VIRTUAL_PORTS.start,
            engine_port: OnceLock::new(),
            target,
            link: Link::new(&NetworkProfile::parse("rtt=10ms").unwrap(), 7),
            limit: Duration::from_secs(5),
            receive_buffer,
            stage: Mutex::new(Stage::Waiting),
            up: mpsc::unbounded_channel().0,
            down: mpsc::unbounded_channel().0,
            tasks: Mutex::default(),
        }
    }

    fn buffer_of(stream: &TcpStream) -> usize {
        socket2::SockRef::from(stream)
            .recv_buffer_size()
            .expect("SO_RCVBUF")
    }

    #[tokio::test]
    async fn the_relay_reaches_the_target_with_the_receive_buffer_its_flow_asked_for() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = listener.local_addr().unwrap();
        let asked = 96 * 1024;
        let upstream = flow_to(target, Some(asked)).reach().await.unwrap();
        // Linux keeps twice what was asked (`man 7 socket`, SO_RCVBUF).
        assert_eq!(buffer_of(&upstream), 2 * asked as usize);
        let unbudgeted = flow_to(target, None).reach().await.unwrap();
        assert_ne!(buffer_of(&unbudgeted), 2 * asked as usize);
    }
}
