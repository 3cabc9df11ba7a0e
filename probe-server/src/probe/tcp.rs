//! TCP connect, timed and guarded: each address is checked against the
//! safety policy right before it is dialled. Behind an emulated network
//! the connection goes through the packet hop ([`PacketPath`]), or, where
//! there is none, its handshake waits the link's round trip before its
//! byte stream crosses the link ([`stream`]). A budgeted probe's socket gets a small receive
//! buffer before it connects (`egress::receive_buffer`), so the window it offers stays small;
//! so does the packet hop's own socket to the target.

use super::connection::Io;
use super::failure::{blocked, failure, from_io, timed_out};
use super::guard::ConnectPolicy;
use super::network::packets::{PacketPath, Route, Routed};
use super::network::{Link, link::until, stream};
use super::stamped_tcp::{LastArrival, StampedTcp};
use super::trace::AttemptTrace;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, FailureKind, Phase};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpSocket, TcpStream};

/// A TCP connection just made.
#[derive(Debug)]
pub struct Dialled {
    /// The engine's socket (through the packet hop, connected to its
    /// virtual peer).
    pub socket: TcpStream,
    /// The address dialled.
    pub remote: SocketAddr,
    route: Option<Route>,
}

impl Dialled {
    /// The connection as the engine's byte stream: through the packet hop,
    /// across `link` as a stream, or the socket itself, its reads stamped
    /// with the kernel's arrival times for `arrivals` when given (an
    /// emulated link's delays are the engine's own, so its reads are not).
    pub fn into_io(
        self,
        link: Option<&Arc<Link>>,
        arrivals: Option<Arc<LastArrival>>,
    ) -> Box<dyn Io> {
        match (self.route, link, arrivals) {
            (Some(route), _, _) => Box::new(Routed::new(self.socket, route)),
            (None, Some(link), _) => Box::new(stream::relay(self.socket, link.clone())),
            (None, None, Some(arrivals)) => match StampedTcp::new(self.socket, arrivals) {
                Ok(stamped) => Box::new(stamped),
                Err(socket) => Box::new(socket),
            },
            (None, None, None) => Box::new(self.socket),
        }
    }
}

/// Connects to the first address that is allowed and answers, recording
/// `ConnectStart`/`ConnectDone`, with a receive buffer of `receive_buffer` bytes when given
/// (before the handshake). Nagle is turned off, as a browser does.
pub async fn connect(
    addrs: &[SocketAddr],
    policy: &ConnectPolicy,
    limit: Duration,
    link: Option<&Arc<Link>>,
    receive_buffer: Option<u32>,
    trace: &mut AttemptTrace,
) -> Result<Dialled, Failure> {
    let mut last_failure = None;
    for &addr in addrs {
        if let Err(reason) = policy.check(addr) {
            last_failure.get_or_insert_with(|| blocked(Phase::Connect, addr, &reason));
            continue;
        }
        if !trace.has(TraceEvent::ConnectStart) {
            trace.record(TraceEvent::ConnectStart);
        }
        match tokio::time::timeout(limit, dial(addr, link, limit, receive_buffer)).await {
            Ok(Ok((socket, route))) => {
                trace.record(TraceEvent::ConnectDone);
                socket
                    .set_nodelay(true)
                    .map_err(|e| from_io(Phase::Connect, &e))?;
                return Ok(Dialled {
                    socket,
                    remote: addr,
                    route,
                });
            }
            Ok(Err(e)) => {
                let mut f = from_io(Phase::Connect, &e);
                f.message = format!("{addr}: {}", f.message);
                last_failure = Some(f);
            }
            Err(_) => last_failure = Some(timed_out(Phase::Connect, limit)),
        }
    }
    Err(last_failure
        .unwrap_or_else(|| failure(Phase::Connect, FailureKind::Io, "no address to connect to")))
}

/// One connect to `addr`: through the packet hop behind a link where there
/// is one, else straight (and behind a link, its handshake held a round trip).
async fn dial(
    addr: SocketAddr,
    link: Option<&Arc<Link>>,
    limit: Duration,
    receive_buffer: Option<u32>,
) -> std::io::Result<(TcpStream, Option<Route>)> {
    let Some(link) = link else {
        return Ok((stream_to(addr, receive_buffer).await?, None));
    };
    match PacketPath::get() {
        Some(hop) => {
            let (via, route) = hop.route(addr, link.clone(), limit, receive_buffer)?;
            Ok((stream_to(via, receive_buffer).await?, Some(route)))
        }
        None => {
            let socket = stream_to(addr, receive_buffer).await?;
            until(link.handshake_done(super::trace::now())).await;
            Ok((socket, None))
        }
    }
}

/// A TCP connection to `addr`, its receive buffer set to `receive_buffer` bytes before the
/// handshake when given (the kernel keeps twice that, for its own bookkeeping). The packet
/// hop dials targets with it too.
pub(crate) async fn stream_to(
    addr: SocketAddr,
    receive_buffer: Option<u32>,
) -> std::io::Result<TcpStream> {
    let Some(bytes) = receive_buffer else {
        return TcpStream::connect(addr).await;
    };
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_recv_buffer_size(bytes)?;
    socket.connect(addr).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer_of(stream: &TcpStream) -> usize {
        socket2::SockRef::from(stream)
            .recv_buffer_size()
            .expect("SO_RCVBUF")
    }

    #[tokio::test]
    async fn a_budgeted_connection_has_the_receive_buffer_asked_for_and_others_the_default() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let asked = 96 * 1024;
        let small = stream_to(addr, Some(asked)).await.unwrap();
        // Linux keeps twice what was asked (`man 7 socket`, SO_RCVBUF).
        assert_eq!(buffer_of(&small), 2 * asked as usize);
        let default = stream_to(addr, None).await.unwrap();
        assert_ne!(buffer_of(&default), 2 * asked as usize);
        // Through `connect`, as the engine dials.
        let dialled = connect(
            &[addr],
            &ConnectPolicy::allow_all(),
            Duration::from_secs(5),
            None,
            Some(asked),
            &mut AttemptTrace::start(),
        )
        .await
        .unwrap();
        assert_eq!(buffer_of(&dialled.socket), 2 * asked as usize);
    }
}
