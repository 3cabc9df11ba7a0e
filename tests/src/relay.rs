//! A delaying relay in front of the target: TCP and UDP on one address and
//! port, forwarded to an upstream address with a delay each way (a test may
//! change it, or silence the UDP side, while the relay runs), so a
//! client that reaches the target through it sees every round trip longer by
//! twice the delay (HTTP/3's QUIC datagrams included). With its own DNS
//! server answering the target's names with the relay's address, a client
//! pointed there (an agent's `--dns-server`) probes the same URL through it.

use crate::dns::{DnsStats, Zone};
use crate::net::Tasks;
use anyhow::Context as _;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::sync::mpsc;

/// A running relay; it stops when dropped.
pub struct Relay {
    /// Where it listens, TCP and UDP alike.
    pub addr: SocketAddr,
    /// A DNS server that answers the relay's names with its address.
    pub dns_addr: SocketAddr,
    knobs: Arc<Knobs>,
    _tasks: Tasks,
}

/// What a test may change while the relay runs.
#[derive(Default)]
struct Knobs {
    /// The delay each way, in microseconds.
    delay_us: AtomicU64,
    /// Whether datagrams from clients are dropped (a UDP port gone silent).
    udp_muted: AtomicBool,
}

impl Knobs {
    fn delay(&self) -> Duration {
        Duration::from_micros(self.delay_us.load(Ordering::Relaxed))
    }
}

impl Relay {
    /// Relays `ip`, on `upstream`'s port, to `upstream`, holding every chunk
    /// (TCP) and datagram (UDP) for `delay` in each direction; its DNS server
    /// answers `names` with `ip`.
    ///
    /// # Errors
    /// When a socket cannot be bound.
    pub async fn start(
        ip: IpAddr,
        upstream: SocketAddr,
        delay: Duration,
        names: &[&str],
    ) -> anyhow::Result<Relay> {
        let addr = SocketAddr::new(ip, upstream.port());
        let tcp = TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the relay's TCP side on {addr}"))?;
        let udp = UdpSocket::bind(addr)
            .await
            .with_context(|| format!("binding the relay's UDP side on {addr}"))?;
        let dns = UdpSocket::bind(SocketAddr::new(ip, 0))
            .await
            .context("binding the relay's DNS server")?;
        let dns_addr = dns.local_addr()?;
        let records: Vec<(String, IpAddr)> = names.iter().map(|n| ((*n).to_owned(), ip)).collect();
        let knobs = Arc::new(Knobs::default());
        let mut tasks = Tasks::default();
        tasks.spawn(serve_tcp(tcp, upstream, knobs.clone()));
        tasks.spawn(serve_udp(udp, upstream, knobs.clone()));
        tasks.spawn(crate::dns::serve(
            dns,
            Arc::new(Zone::new(&records, &[])),
            Duration::ZERO,
            Arc::new(DnsStats::default()),
        ));
        let relay = Relay {
            addr,
            dns_addr,
            knobs,
            _tasks: tasks,
        };
        relay.set_delay(delay);
        Ok(relay)
    }

    /// Holds what comes from now on for `delay` each way.
    pub fn set_delay(&self, delay: Duration) {
        let us = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.knobs.delay_us.store(us, Ordering::Relaxed);
    }

    /// Drops every datagram from clients (`true`), as a UDP port gone silent, or relays them again.
    pub fn mute_udp(&self, muted: bool) {
        self.knobs.udp_muted.store(muted, Ordering::Relaxed);
    }
}

async fn serve_tcp(listener: TcpListener, upstream: SocketAddr, knobs: Arc<Knobs>) {
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let knobs = knobs.clone();
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::join!(
                pipe(client_read, server_write, knobs.clone()),
                pipe(server_read, client_write, knobs)
            );
        });
    }
}

/// Copies `from` to `to`, each chunk written the relay's delay after it was read
/// (chunks in order; reading goes on meanwhile, so the delay is latency, not
/// a rate limit). The write side is shut down after the last chunk.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    knobs: Arc<Knobs>,
) {
    let (chunks, mut pending) = mpsc::unbounded_channel::<(std::time::Instant, Vec<u8>)>();
    let reader = async move {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf).await {
            if n == 0
                || chunks
                    .send((crate::clock::now(), buf[..n].to_vec()))
                    .is_err()
            {
                break;
            }
        }
    };
    let writer = async move {
        while let Some((read_at, chunk)) = pending.recv().await {
            let due = read_at + knobs.delay();
            let now = crate::clock::now();
            if due > now {
                tokio::time::sleep(due - now).await;
            }
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}

/// Datagrams due to leave, in the order they came: one sender task a
/// direction sends each `delay` after it arrived, so none overtakes another
/// (a task a datagram would let timers reorder them).
type Due = mpsc::UnboundedSender<(std::time::Instant, Vec<u8>)>;

/// Sends what `due` gives, each at its time (the relay's delay after it came), through `send`.
fn in_order<F, Fut>(knobs: Arc<Knobs>, send: F) -> Due
where
    F: Fn(Vec<u8>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let (due, mut pending) = mpsc::unbounded_channel::<(std::time::Instant, Vec<u8>)>();
    tokio::spawn(async move {
        while let Some((came_at, datagram)) = pending.recv().await {
            let at = came_at + knobs.delay();
            let now = crate::clock::now();
            if at > now {
                tokio::time::sleep(at - now).await;
            }
            send(datagram).await;
        }
    });
    due
}

async fn serve_udp(socket: UdpSocket, upstream: SocketAddr, knobs: Arc<Knobs>) {
    let socket = Arc::new(socket);
    let mut flows: HashMap<SocketAddr, Due> = HashMap::new();
    let mut buf = vec![0u8; 65_536];
    loop {
        let Ok((len, client)) = socket.recv_from(&mut buf).await else {
            continue;
        };
        let came_at = crate::clock::now();
        if knobs.udp_muted.load(Ordering::Relaxed) {
            continue;
        }
        let flow = match flows.entry(client) {
            Entry::Occupied(known) => known.into_mut(),
            Entry::Vacant(new) => {
                let Ok(out) = UdpSocket::bind(SocketAddr::new(upstream.ip(), 0)).await else {
                    continue;
                };
                if out.connect(upstream).await.is_err() {
                    continue;
                }
                let out = Arc::new(out);
                tokio::spawn(back_to_client(
                    out.clone(),
                    socket.clone(),
                    client,
                    knobs.clone(),
                ));
                new.insert(in_order(knobs.clone(), move |datagram| {
                    let out = out.clone();
                    async move {
                        let _ = out.send(&datagram).await;
                    }
                }))
            }
        };
        let _ = flow.send((came_at, buf[..len].to_vec()));
    }
}

/// Relays what the upstream answers on one flow back to its client, delayed.
async fn back_to_client(
    flow: Arc<UdpSocket>,
    socket: Arc<UdpSocket>,
    client: SocketAddr,
    knobs: Arc<Knobs>,
) {
    let back = in_order(knobs, move |datagram| {
        let socket = socket.clone();
        async move {
            let _ = socket.send_to(&datagram, client).await;
        }
    });
    let mut buf = vec![0u8; 65_536];
    loop {
        let Ok(len) = flow.recv(&mut buf).await else {
            return;
        };
        if back
            .send((crate::clock::now(), buf[..len].to_vec()))
            .is_err()
        {
            return;
        }
    }
}
