//! Arrival times stamped by the kernel: when a TCP segment or a UDP datagram
//! reached this host, as the kernel stamped it on receipt, so a late wake-up
//! of the engine (another process at a higher priority, a busy machine)
//! does not move a response's first byte. Linux only: elsewhere every
//! stamp is `None` and the engine reads its own clock, as it did before.
//!
//! TCP: `SO_TIMESTAMPNS` on the socket, and each read is a `recvmsg` whose
//! control message carries the arrival of the last segment it consumed.
//! UDP: quinn reads the datagrams (with its own control messages, which a
//! timestamp would crowd out of its buffer), so the stamp of the last one
//! read comes from the `SIOCGSTAMPNS` ioctl, which also turns stamping on.
//!
//! The kernel stamps with the wall clock; [`on_engine_clock`] carries a
//! stamp onto the engine's monotonic clock by its age.
//!
//! This holds the project's third `unsafe` code (the `setsockopt`,
//! `recvmsg` and `ioctl` calls and the control message parse).

use super::trace;
use std::io;
use std::os::fd::AsFd;
use std::time::{Instant, SystemTime};

/// A wall-clock stamp as the same moment on the engine's clock: now, less
/// the stamp's age (a stamp from the future, after a clock step, is now).
pub fn on_engine_clock(stamp: SystemTime) -> Instant {
    let (wall, now) = (SystemTime::now(), trace::now());
    match wall.duration_since(stamp) {
        Ok(age) => now.checked_sub(age).unwrap_or(now),
        Err(_) => now,
    }
}

/// Keeps the kernel's stamping switched on for the life of the process by
/// holding one stamping socket open. The switch is machine-wide (a static
/// key, and each flip patches kernel code on every CPU, tens of
/// microseconds on a small machine): held, the first stamped socket of a
/// connection does not flip it inside a timed connection's set-up, nor its
/// close flip it back. Called before any attempt's clock starts.
pub fn keep_stamping_on() {
    static HELD: std::sync::OnceLock<Option<std::os::fd::OwnedFd>> = std::sync::OnceLock::new();
    HELD.get_or_init(imp::stamping_socket);
}

/// Asks the kernel to stamp the arrival of `socket`'s TCP segments; whether
/// it will (false off Linux or when refused).
pub fn stamp_tcp(socket: &impl AsFd) -> bool {
    imp::stamp_tcp(socket)
}

/// Reads into `buf` from a nonblocking TCP socket with stamping on: the
/// bytes read, and when the last segment they came from arrived.
pub fn read_stamped(socket: &impl AsFd, buf: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    imp::read_stamped(socket, buf)
}

/// Asks the kernel to stamp the arrival of `socket`'s datagrams (the first
/// [`last_datagram`] call does the same); whether it will.
pub fn stamp_udp(socket: &impl AsFd) -> bool {
    imp::stamp_udp(socket)
}

/// When the last datagram read from `socket` arrived, if the kernel knows.
pub fn last_datagram(socket: &impl AsFd) -> Option<Instant> {
    imp::last_datagram(socket)
        .ok()
        .flatten()
        .map(on_engine_clock)
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod imp {
    use std::io;
    use std::mem::{self, MaybeUninit};
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
    use std::time::{Duration, Instant, SystemTime};

    /// Room for one `SCM_TIMESTAMPNS` message (a `timespec`) and a spare one.
    const CONTROL_LEN: usize = 64;

    /// `SIOCGSTAMPNS` from linux/sockios.h (`SIOCGSTAMPNS_OLD`, which takes
    /// the native `timespec`: 64-bit where `time_t` is, as on every 64-bit
    /// target), missing from the libc crate.
    const SIOCGSTAMPNS: libc::c_ulong = 0x8907;

    /// An unbound UDP socket with stamping on (no port is taken).
    pub fn stamping_socket() -> Option<OwnedFd> {
        // SAFETY: plain arguments; a non-negative result is a new
        // descriptor that nothing else owns.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` was just opened and is owned here alone.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        stamp_tcp(&socket).then_some(socket)
    }

    pub fn stamp_tcp(socket: &impl AsFd) -> bool {
        let on: libc::c_int = 1;
        // SAFETY: `on` is a live `c_int` whose size is passed along; the
        // kernel only reads it.
        let done = unsafe {
            libc::setsockopt(
                socket.as_fd().as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_TIMESTAMPNS,
                (&on as *const libc::c_int).cast(),
                mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        done == 0
    }

    pub fn read_stamped(
        socket: &impl AsFd,
        buf: &mut [u8],
    ) -> io::Result<(usize, Option<Instant>)> {
        let mut control = [0u64; CONTROL_LEN / 8];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: an all-zero `msghdr` is valid (no name, no buffers).
        let mut header: libc::msghdr = unsafe { mem::zeroed() };
        header.msg_iov = &mut iov;
        header.msg_iovlen = 1;
        header.msg_control = control.as_mut_ptr().cast();
        header.msg_controllen = CONTROL_LEN as _;
        // SAFETY: `header` points at `iov` (over `buf`, writable for its
        // length) and at `control` (writable for `CONTROL_LEN` bytes), all
        // alive for the call; the kernel writes within those lengths.
        let read = unsafe { libc::recvmsg(socket.as_fd().as_raw_fd(), &mut header, 0) };
        if read < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel filled `header` and `control` for this call,
        // and the walk stays within `msg_controllen`.
        let stamp = unsafe { timestamp_in(&header) };
        Ok((read as usize, stamp.map(super::on_engine_clock)))
    }

    /// The `SCM_TIMESTAMPNS` message among `header`'s control messages.
    ///
    /// # Safety
    /// `header` must have come back from `recvmsg`, its control buffer alive.
    unsafe fn timestamp_in(header: &libc::msghdr) -> Option<SystemTime> {
        // SAFETY: the caller's promise; the libc macros bound every step by
        // `msg_controllen`, and the payload is read unaligned.
        unsafe {
            let mut message = libc::CMSG_FIRSTHDR(header);
            while !message.is_null() {
                let m = &*message;
                if m.cmsg_level == libc::SOL_SOCKET && m.cmsg_type == libc::SCM_TIMESTAMPNS {
                    let at: libc::timespec =
                        std::ptr::read_unaligned(libc::CMSG_DATA(message).cast());
                    return wall(at);
                }
                message = libc::CMSG_NXTHDR(header, message);
            }
        }
        None
    }

    pub fn last_datagram(socket: &impl AsFd) -> io::Result<Option<SystemTime>> {
        let mut at = MaybeUninit::<libc::timespec>::zeroed();
        // SAFETY: `at` is a live, writable `timespec`, the argument
        // `SIOCGSTAMPNS` fills.
        let done = unsafe {
            libc::ioctl(
                socket.as_fd().as_raw_fd(),
                SIOCGSTAMPNS as _,
                at.as_mut_ptr(),
            )
        };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: zeroed, then filled by the kernel.
        Ok(wall(unsafe { at.assume_init() }))
    }

    /// The first `SIOCGSTAMPNS` turns stamping on, even when it fails for
    /// want of a datagram read yet (`ENOENT`).
    pub fn stamp_udp(socket: &impl AsFd) -> bool {
        match last_datagram(socket) {
            Ok(_) => true,
            Err(e) => e.raw_os_error() == Some(libc::ENOENT),
        }
    }

    fn wall(at: libc::timespec) -> Option<SystemTime> {
        let since_epoch = Duration::new(
            u64::try_from(at.tv_sec).ok().filter(|s| *s > 0)?,
            u32::try_from(at.tv_nsec).ok()?,
        );
        Some(SystemTime::UNIX_EPOCH + since_epoch)
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::time::{Instant, SystemTime};

    pub fn stamping_socket() -> Option<OwnedFd> {
        None
    }

    pub fn stamp_tcp(_: &impl AsFd) -> bool {
        false
    }

    pub fn read_stamped(_: &impl AsFd, _: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
        Err(io::Error::other("stamped reads need Linux"))
    }

    pub fn last_datagram(_: &impl AsFd) -> io::Result<Option<SystemTime>> {
        Ok(None)
    }

    pub fn stamp_udp(_: &impl AsFd) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::time::Duration;

    #[test]
    fn a_tcp_read_carries_the_segments_arrival_not_the_reads_time() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        assert!(stamp_tcp(&client));
        std::thread::sleep(Duration::from_millis(20));
        std::io::Write::write_all(&mut server, b"hello").unwrap();
        let sent = trace::now();
        std::thread::sleep(Duration::from_millis(30));
        let mut buf = [0; 16];
        let (n, stamp) = read_stamped(&client, &mut buf).unwrap();
        let read = trace::now();
        assert_eq!(&buf[..n], b"hello");
        let arrived = stamp.expect("the kernel stamped the segment");
        assert!(
            arrived >= sent.checked_sub(Duration::from_millis(5)).unwrap() && arrived < read,
            "arrival {:?} after the write, read {:?} after it",
            arrived.saturating_duration_since(sent),
            read.saturating_duration_since(arrived)
        );
        assert!(
            read - arrived >= Duration::from_millis(25),
            "the sleep is not in the stamp"
        );
    }

    #[test]
    fn a_datagrams_arrival_comes_from_the_socket_after_the_read() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(stamp_udp(&receiver), "stamping turned on");
        // The kernel turns its stamping on in a moment (deferred work).
        std::thread::sleep(Duration::from_millis(20));
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        sender
            .send_to(b"ping", receiver.local_addr().unwrap())
            .unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let mut buf = [0; 16];
        let _ = receiver.recv(&mut buf).unwrap();
        let read = trace::now();
        let arrived = last_datagram(&receiver).expect("the kernel stamped the datagram");
        assert!(
            read - arrived >= Duration::from_millis(25),
            "the sleep is not in the stamp"
        );
    }
}
