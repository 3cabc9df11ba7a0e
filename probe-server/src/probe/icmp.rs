//! ICMP errors about a UDP socket's datagrams: where nothing listens.
//!
//! A datagram to a UDP port where nothing listens draws an ICMP "port
//! unreachable" from the host. A connected UDP socket learns of it as
//! `ECONNREFUSED`; an unconnected one, such as the one socket under a QUIC
//! endpoint that races a name's addresses, learns nothing unless it asks.
//! Linux: `IP_RECVERR` and `IPV6_RECVERR` queue each error on the socket's
//! error queue with the destination of the datagram it answers, which
//! [`read_queue`] reads (`recvmsg` with `MSG_ERRQUEUE`, never a datagram).
//! Elsewhere nothing is queued and nothing is read.
//!
//! This holds the project's fourth `unsafe` code (the `setsockopt` and
//! `recvmsg` calls and the control message parse).

use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use tokio::io::unix::AsyncFd;

/// Most errors read in one call: a hostile host's flood of ICMP costs a
/// bounded read each time the socket wakes.
const MAX_READ: usize = 64;

/// An ICMP error about a datagram this socket sent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Unreachable {
    /// Where the datagram was going (an IPv4 address in its own form, even
    /// on a dual-stack socket).
    pub to: SocketAddr,
    /// Whether it was a refusal (port unreachable: nothing listens there),
    /// rather than a host or network that could not be reached.
    pub refused: bool,
}

/// Asks the kernel to queue ICMP errors about `socket`'s datagrams (IPv4
/// and IPv6 alike on a dual-stack socket); whether it will.
pub fn queue_errors(socket: &impl AsFd) -> bool {
    imp::queue_errors(socket)
}

/// Asks the kernel to queue `socket`'s ICMP errors and gives a copy of the
/// socket registered with the runtime for its error readiness (called
/// inside the runtime); `None` where errors are not queued.
pub fn watch(socket: &std::net::UdpSocket) -> Option<AsyncFd<OwnedFd>> {
    if !queue_errors(socket) {
        return None;
    }
    let copy = OwnedFd::from(socket.try_clone().ok()?);
    imp::register(copy)
}

/// Reads the errors queued on `socket` (nonblocking, at most [`MAX_READ`]),
/// oldest first. Reading the queue also clears the socket's pending error,
/// so the next read of datagrams does not fail with it.
pub fn read_queue(socket: &impl AsFd) -> Vec<Unreachable> {
    imp::read_queue(socket)
}

/// `addr` as the kernel's IPv4 form when it is an IPv4-mapped IPv6 address.
pub fn unmapped(addr: SocketAddr) -> SocketAddr {
    match addr {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(v4.into(), v6.port()),
            None => addr,
        },
        v4 => v4,
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod imp {
    use super::{MAX_READ, Unreachable, unmapped};
    use std::mem;
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
    use std::os::fd::{AsFd, AsRawFd, OwnedFd};
    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    /// Room for one `sock_extended_err` with its offender's address, twice.
    const CONTROL_LEN: usize = 256;

    pub fn queue_errors(socket: &impl AsFd) -> bool {
        let on: libc::c_int = 1;
        let set = |level, name| {
            // SAFETY: `on` is a live `c_int` whose size is passed along;
            // the kernel only reads it.
            unsafe {
                libc::setsockopt(
                    socket.as_fd().as_raw_fd(),
                    level,
                    name,
                    (&on as *const libc::c_int).cast(),
                    mem::size_of::<libc::c_int>() as libc::socklen_t,
                ) == 0
            }
        };
        // An IPv6 socket takes both (the IPv4 one for its mapped peers);
        // an IPv4 socket only its own.
        let v6 = set(libc::SOL_IPV6, libc::IPV6_RECVERR);
        let v4 = set(libc::SOL_IP, libc::IP_RECVERR);
        v4 || v6
    }

    pub fn register(fd: OwnedFd) -> Option<AsyncFd<OwnedFd>> {
        // SAFETY: an `OwnedFd` keeps its descriptor open and the same for
        // as long as it lives.
        unsafe { AsyncFd::register_with_interest(fd, Interest::ERROR) }.ok()
    }

    pub fn read_queue(socket: &impl AsFd) -> Vec<Unreachable> {
        let mut found = Vec::new();
        for _ in 0..MAX_READ {
            match read_one(socket) {
                Some(Some(error)) => found.push(error),
                // An error that is not ICMP's, or names no address: read past it.
                Some(None) => {}
                None => break,
            }
        }
        found
    }

    /// One queued error: `None` when the queue is empty (or unreadable).
    fn read_one(socket: &impl AsFd) -> Option<Option<Unreachable>> {
        let mut control = [0u64; CONTROL_LEN / 8];
        // SAFETY: an all-zero `sockaddr_storage` is valid.
        let mut name: libc::sockaddr_storage = unsafe { mem::zeroed() };
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: byte.len(),
        };
        // SAFETY: an all-zero `msghdr` is valid (no name, no buffers).
        let mut header: libc::msghdr = unsafe { mem::zeroed() };
        header.msg_name = (&mut name as *mut libc::sockaddr_storage).cast();
        header.msg_namelen = mem::size_of::<libc::sockaddr_storage>() as _;
        header.msg_iov = &mut iov;
        header.msg_iovlen = 1;
        header.msg_control = control.as_mut_ptr().cast();
        header.msg_controllen = CONTROL_LEN as _;
        // SAFETY: `header` points at `name`, `iov` (over `byte`) and
        // `control`, each writable for the length given and alive for the
        // call; the kernel writes within those lengths.
        let read = unsafe {
            libc::recvmsg(
                socket.as_fd().as_raw_fd(),
                &mut header,
                libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
            )
        };
        if read < 0 {
            return None;
        }
        // SAFETY: the kernel filled `header`, `name` and `control` for
        // this call.
        let errno = unsafe { icmp_errno(&header) };
        let to = address(&name);
        Some(errno.zip(to).map(|(errno, to)| Unreachable {
            to: unmapped(to),
            refused: errno == libc::ECONNREFUSED as u32,
        }))
    }

    /// The errno of the ICMP error among `header`'s control messages.
    ///
    /// # Safety
    /// `header` must have come back from `recvmsg`, its control buffer alive.
    unsafe fn icmp_errno(header: &libc::msghdr) -> Option<u32> {
        // SAFETY: the caller's promise; the libc macros bound every step by
        // `msg_controllen`, and the payload is read unaligned.
        unsafe {
            let mut message = libc::CMSG_FIRSTHDR(header);
            while !message.is_null() {
                let m = &*message;
                let ours = (m.cmsg_level == libc::SOL_IP && m.cmsg_type == libc::IP_RECVERR)
                    || (m.cmsg_level == libc::SOL_IPV6 && m.cmsg_type == libc::IPV6_RECVERR);
                if ours {
                    let error: libc::sock_extended_err =
                        std::ptr::read_unaligned(libc::CMSG_DATA(message).cast());
                    let icmp = error.ee_origin == libc::SO_EE_ORIGIN_ICMP
                        || error.ee_origin == libc::SO_EE_ORIGIN_ICMP6;
                    return icmp.then_some(error.ee_errno);
                }
                message = libc::CMSG_NXTHDR(header, message);
            }
        }
        None
    }

    /// The destination the kernel wrote into `name`.
    fn address(name: &libc::sockaddr_storage) -> Option<SocketAddr> {
        let base: *const libc::sockaddr_storage = name;
        match i32::from(name.ss_family) {
            libc::AF_INET => {
                // SAFETY: the family says the storage holds a `sockaddr_in`,
                // which it is large and aligned enough for.
                let v4 = unsafe { &*base.cast::<libc::sockaddr_in>() };
                let ip = Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
                Some(SocketAddr::new(ip.into(), u16::from_be(v4.sin_port)))
            }
            libc::AF_INET6 => {
                // SAFETY: as above, for a `sockaddr_in6`.
                let v6 = unsafe { &*base.cast::<libc::sockaddr_in6>() };
                let ip = Ipv6Addr::from(v6.sin6_addr.s6_addr);
                Some(SocketAddr::new(ip.into(), u16::from_be(v6.sin6_port)))
            }
            _ => None,
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Unreachable;
    use std::os::fd::{AsFd, OwnedFd};
    use tokio::io::unix::AsyncFd;

    pub fn queue_errors(_: &impl AsFd) -> bool {
        false
    }

    pub fn register(_: OwnedFd) -> Option<AsyncFd<OwnedFd>> {
        None
    }

    pub fn read_queue(_: &impl AsFd) -> Vec<Unreachable> {
        Vec::new()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::time::Duration;

    /// A port where nothing listens: bound, noted, and closed again.
    fn closed_port(ip: &str) -> SocketAddr {
        let socket = UdpSocket::bind((ip, 0)).unwrap();
        socket.local_addr().unwrap()
    }

    /// The queue's errors, waiting up to a second for the first.
    fn read_soon(socket: &UdpSocket) -> Vec<Unreachable> {
        for _ in 0..500 {
            let found = read_queue(socket);
            if !found.is_empty() {
                return found;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        Vec::new()
    }

    #[test]
    fn a_closed_port_is_a_refusal_naming_its_address_on_either_family() {
        let socket = UdpSocket::bind("[::]:0").unwrap();
        assert!(queue_errors(&socket));
        for ip in ["127.0.0.1", "::1"] {
            let to = closed_port(ip);
            socket.send_to(b"hello", to).unwrap();
            assert_eq!(read_soon(&socket), vec![Unreachable { to, refused: true }]);
        }
        assert!(read_queue(&socket).is_empty(), "the queue was read empty");
    }

    #[test]
    fn a_silent_socket_queues_nothing() {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(queue_errors(&socket));
        let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .send_to(b"hello", silent.local_addr().unwrap())
            .unwrap();
        let mut buf = [0; 8];
        assert_eq!(silent.recv(&mut buf).unwrap(), 5);
        std::thread::sleep(Duration::from_millis(20));
        assert!(read_queue(&socket).is_empty());
    }

    #[test]
    fn mapped_addresses_are_read_as_ipv4() {
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:443".parse().unwrap();
        assert_eq!(unmapped(mapped), "127.0.0.1:443".parse().unwrap());
        let v6: SocketAddr = "[::1]:443".parse().unwrap();
        assert_eq!(unmapped(v6), v6);
    }
}
