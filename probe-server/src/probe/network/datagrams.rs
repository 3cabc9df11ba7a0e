//! A quinn socket whose datagrams cross a [`Link`]: each one sent is
//! offered to the up direction and leaves when the link delivers it; each
//! one received is offered to the down direction and reaches quinn when
//! delivered. Lost and queue-dropped datagrams simply vanish, as on a
//! real path, and QUIC's loss recovery sees them as lost. Addresses pass
//! as they are: on a dual-stack socket quinn names IPv4 peers in their
//! IPv6-mapped form, and expects them back in it.

use super::link::{Admission, Flight, Link, UDP_HEADER_BYTES, until};
use crate::probe::connection::TaskGuard;
use crate::probe::trace;
use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;

/// A datagram held by the link until it is due.
#[derive(Debug)]
struct Held {
    due: Instant,
    peer: SocketAddr,
    bytes: Vec<u8>,
    _flight: Flight,
}

/// The impaired socket under a QUIC endpoint.
#[derive(Debug)]
pub struct ImpairedSocket {
    local: SocketAddr,
    link: Arc<Link>,
    outbound: mpsc::UnboundedSender<Held>,
    inbound: Mutex<mpsc::UnboundedReceiver<Held>>,
    _sender: TaskGuard,
    _receiver: TaskGuard,
}

impl ImpairedSocket {
    /// Puts `socket` behind `link`. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// When the socket cannot be made non-blocking or registered.
    pub fn new(socket: std::net::UdpSocket, link: Arc<Link>) -> io::Result<ImpairedSocket> {
        socket.set_nonblocking(true)?;
        let socket = Arc::new(UdpSocket::from_std(socket)?);
        let local = socket.local_addr()?;
        let (outbound, to_send) = mpsc::unbounded_channel();
        let (arrived, inbound) = mpsc::unbounded_channel();
        Ok(ImpairedSocket {
            local,
            outbound,
            inbound: Mutex::new(inbound),
            _sender: TaskGuard(tokio::spawn(send(socket.clone(), to_send))),
            _receiver: TaskGuard(tokio::spawn(receive(socket, link.clone(), arrived))),
            link,
        })
    }
}

/// Sends each held datagram when the link delivers it.
async fn send(socket: Arc<UdpSocket>, mut held: mpsc::UnboundedReceiver<Held>) {
    while let Some(datagram) = held.recv().await {
        until(datagram.due).await;
        // A send error is a lost datagram, as on a real path.
        let _ = socket.send_to(&datagram.bytes, datagram.peer).await;
    }
}

/// Reads datagrams as they come, offers them to the link, and hands each
/// to quinn when the link delivers it (in order: due times never go back).
async fn receive(socket: Arc<UdpSocket>, link: Arc<Link>, arrived: mpsc::UnboundedSender<Held>) {
    let (due_tx, mut due_rx) = mpsc::unbounded_channel::<Held>();
    let release = async {
        while let Some(datagram) = due_rx.recv().await {
            until(datagram.due).await;
            if arrived.send(datagram).is_err() {
                break;
            }
        }
    };
    let read = async {
        let mut buf = vec![0u8; 65_535];
        loop {
            let Ok((len, peer)) = socket.recv_from(&mut buf).await else {
                // Never a busy loop on an error that repeats.
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                continue;
            };
            if let Admission::Deliver(due, flight) =
                link.down
                    .offer_datagram(trace::now(), len, UDP_HEADER_BYTES)
            {
                let held = Held {
                    due,
                    peer,
                    bytes: buf[..len].to_vec(),
                    _flight: flight,
                };
                if due_tx.send(held).is_err() {
                    break;
                }
            }
        }
    };
    tokio::join!(release, read);
}

/// Always writable: a send only queues on the link.
#[derive(Debug)]
struct AlwaysWritable;

impl UdpPoller for AlwaysWritable {
    fn poll_writable(self: Pin<&mut Self>, _cx: &mut Context) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsyncUdpSocket for ImpairedSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Box::pin(AlwaysWritable)
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        let now = trace::now();
        let size = transmit
            .segment_size
            .unwrap_or(transmit.contents.len())
            .max(1);
        for datagram in transmit.contents.chunks(size) {
            if let Admission::Deliver(due, flight) =
                self.link
                    .up
                    .offer_datagram(now, datagram.len(), UDP_HEADER_BYTES)
            {
                let held = Held {
                    due,
                    peer: transmit.destination,
                    bytes: datagram.to_vec(),
                    _flight: flight,
                };
                if self.outbound.send(held).is_err() {
                    return Err(io::Error::other("the link's sender stopped"));
                }
            }
        }
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let mut inbound = self.inbound.lock().unwrap_or_else(|e| e.into_inner());
        let mut count = 0;
        while count < bufs.len().min(meta.len()) {
            let next = if count == 0 {
                match inbound.poll_recv(cx) {
                    Poll::Ready(Some(datagram)) => datagram,
                    Poll::Ready(None) => {
                        return Poll::Ready(Err(io::Error::other("the link's receiver stopped")));
                    }
                    Poll::Pending => return Poll::Pending,
                }
            } else {
                match inbound.try_recv() {
                    Ok(datagram) => datagram,
                    Err(_) => break,
                }
            };
            let len = next.bytes.len().min(bufs[count].len());
            bufs[count][..len].copy_from_slice(&next.bytes[..len]);
            meta[count] = RecvMeta {
                addr: next.peer,
                len,
                stride: len,
                ecn: None,
                dst_ip: None,
            };
            count += 1;
        }
        Poll::Ready(Ok(count))
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }

    fn may_fragment(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::network::NetworkProfile;
    use std::time::Duration;

    /// 10,000 datagrams through a 2% loss profile to a real socket on
    /// loopback: the share that arrives is 98% within the binomial margin,
    /// and exactly what the link counted as delivered.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_percent_loss_drops_two_percent_of_10000_datagrams() {
        let profile = NetworkProfile::parse("rtt=2ms,loss=2%").unwrap();
        let link = Link::new(&profile, 0x5eed);
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let socket = ImpairedSocket::new(sender, link.clone()).unwrap();
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let to = receiver.local_addr().unwrap();
        let arrived = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let count = arrived.clone();
        let _counter = TaskGuard(tokio::spawn(async move {
            let mut buf = [0u8; 16];
            while receiver.recv_from(&mut buf).await.is_ok() {
                count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            }
        }));
        let caught_up = || async {
            // In batches of 100, so the receiving socket's buffer never overflows.
            let delivered = link.up.counts().delivered;
            for _ in 0..2_000 {
                if arrived.load(std::sync::atomic::Ordering::Acquire) >= delivered {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        let n = 10_000;
        for i in 0..n {
            let payload = (i as u32).to_be_bytes();
            let transmit = Transmit {
                destination: to,
                ecn: None,
                contents: &payload,
                segment_size: None,
                src_ip: None,
            };
            socket.try_send(&transmit).unwrap();
            if i % 100 == 99 {
                caught_up().await;
            }
        }
        caught_up().await;
        let arrived = arrived.load(std::sync::atomic::Ordering::Acquire);
        let counts = link.up.counts();
        assert_eq!(counts.offered(), n);
        assert_eq!(
            arrived, counts.delivered,
            "what was counted delivered arrived"
        );
        // Binomial: 200 expected, standard deviation 14; four and a half of them either way.
        let lost = n - arrived;
        println!("{lost} of {n} datagrams lost");
        assert!((137..=263).contains(&lost), "{lost} of {n} lost");
    }
}
