//! Small socket helpers shared by the listeners.

use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinSet};

/// Accepts one connection with Nagle disabled, first reaping finished connection tasks.
/// Returns `None` (after a short pause, so a persistent error such as running out of file
/// descriptors does not spin) when accepting fails.
pub(crate) async fn accept<T: 'static>(
    listener: &TcpListener,
    connections: &mut JoinSet<T>,
) -> Option<TcpStream> {
    while connections.try_join_next().is_some() {}
    match listener.accept().await {
        Ok((stream, _peer)) => {
            // A socket whose options cannot be set is still usable; Nagle only costs latency.
            let _ = stream.set_nodelay(true);
            Some(stream)
        }
        Err(_) => {
            tokio::time::sleep(Duration::from_millis(10)).await;
            None
        }
    }
}

/// Receive buffer of [`narrow_listener`]'s sockets, in bytes.
pub const NARROW_RECV_BUFFER: usize = 64 * 1024;

/// Segment size [`narrow_listener`] announces, in bytes (Ethernet's, instead of loopback's 64 KiB).
pub const NARROW_MSS: u32 = 1460;

/// A TCP listener on `addr` whose connections have narrow kernel buffers: a
/// [`NARROW_RECV_BUFFER`] receive buffer, and [`NARROW_MSS`]-byte segments, which
/// also keeps the client's send buffer (sized by Linux from the segment size)
/// near a megabyte instead of four.
pub(crate) fn narrow_listener(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_recv_buffer_size(NARROW_RECV_BUFFER)?;
    socket.set_tcp_mss(NARROW_MSS)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    socket.set_nonblocking(true)?;
    TcpListener::from_std(socket.into())
}

/// Background tasks aborted together when this guard is dropped.
#[derive(Default)]
pub(crate) struct Tasks(Vec<AbortHandle>);

impl Tasks {
    /// Spawns `future` on the current runtime and keeps its abort handle.
    pub(crate) fn spawn<F>(&mut self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.0.push(tokio::spawn(future).abort_handle());
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}
