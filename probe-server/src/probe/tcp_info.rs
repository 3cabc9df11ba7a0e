//! The kernel's facts of a TCP connection (`TCP_INFO`, Linux only): one
//! `getsockopt` into a byte buffer, parsed by the offsets of
//! `struct tcp_info` in linux/include/uapi/linux/tcp.h (a stable ABI that
//! only grows at its end). Elsewhere every snapshot is `None`.
//!
//! This holds the project's only `unsafe` code (the `getsockopt` call).

use h123_shared::{Micros, TcpInfo};
use std::os::fd::{AsFd, OwnedFd};

/// Bytes asked of the kernel: the whole structure as of Linux 6.x (about
/// 250 bytes) fits; the kernel says how much it filled.
const BUF_LEN: usize = 256;

/// Byte offsets of the fields read, from `struct tcp_info`.
mod offset {
    pub const SND_MSS: usize = 16;
    pub const LOST: usize = 32;
    pub const RTT: usize = 68;
    pub const RTTVAR: usize = 72;
    pub const SND_CWND: usize = 80;
    pub const TOTAL_RETRANS: usize = 100;
    pub const BYTES_RECEIVED: usize = 128;
    pub const SEGS_OUT: usize = 136;
    pub const SEGS_IN: usize = 140;
    pub const MIN_RTT: usize = 148;
    pub const DELIVERY_RATE: usize = 160;
    pub const BYTES_SENT: usize = 200;
}

/// A TCP socket whose facts can be read while the connection lives: a
/// duplicate of its descriptor, so a read never reaches a descriptor number
/// the process has since given to another socket. The socket stays open
/// until both the connection and this are dropped.
#[derive(Debug)]
pub struct TcpSocket(OwnedFd);

impl TcpSocket {
    /// Keeps a duplicate of `socket`'s descriptor; `None` if the process is
    /// out of descriptors (the facts are then simply missing).
    pub fn watch(socket: &impl AsFd) -> Option<Self> {
        socket.as_fd().try_clone_to_owned().ok().map(TcpSocket)
    }

    /// The connection's facts now (one system call, about a microsecond).
    pub fn info(&self) -> Option<TcpInfo> {
        read(&self.0)
    }
}

/// Reads `TCP_INFO` of the socket `fd`; `None` off Linux or when the call fails.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn read(fd: &impl AsFd) -> Option<TcpInfo> {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; BUF_LEN];
    let mut len = BUF_LEN as libc::socklen_t;
    // SAFETY: `buf` is a live, writable buffer of `len` bytes and `len` a
    // live `socklen_t`; the kernel writes at most `len` bytes into `buf` and
    // the filled length into `len`. A plain byte buffer has no invalid bit
    // patterns, and the descriptor is borrowed for the call (a closed or
    // non-TCP one only makes the call fail).
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            buf.as_mut_ptr().cast::<libc::c_void>(),
            &mut len,
        )
    };
    (rc == 0).then(|| parse(&buf[..(len as usize).min(BUF_LEN)]))
}

/// Reads `TCP_INFO`: not on this system.
#[cfg(not(target_os = "linux"))]
fn read(_fd: &impl AsFd) -> Option<TcpInfo> {
    None
}

/// The fields of a `struct tcp_info` the kernel filled: `filled` is the
/// prefix it wrote (an older kernel writes less); a field beyond it is `None`.
pub fn parse(filled: &[u8]) -> TcpInfo {
    let u32_at = |at: usize| {
        filled
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_ne_bytes)
    };
    let u64_at = |at: usize| {
        filled
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_ne_bytes)
    };
    let micros = |at: usize| u32_at(at).map(|v| Micros(u64::from(v)));
    TcpInfo {
        rtt_us: micros(offset::RTT),
        rttvar_us: micros(offset::RTTVAR),
        min_rtt_us: micros(offset::MIN_RTT),
        snd_cwnd: u32_at(offset::SND_CWND),
        snd_mss: u32_at(offset::SND_MSS),
        total_retrans: u32_at(offset::TOTAL_RETRANS),
        lost: u32_at(offset::LOST),
        delivery_rate: u64_at(offset::DELIVERY_RATE),
        bytes_sent: u64_at(offset::BYTES_SENT),
        bytes_received: u64_at(offset::BYTES_RECEIVED),
        segs_out: u32_at(offset::SEGS_OUT),
        segs_in: u32_at(offset::SEGS_IN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
        buf[at..at + bytes.len()].copy_from_slice(bytes);
    }

    fn known() -> Vec<u8> {
        let mut buf = vec![0xAA; 232];
        put(&mut buf, offset::SND_MSS, &1460u32.to_ne_bytes());
        put(&mut buf, offset::LOST, &2u32.to_ne_bytes());
        put(&mut buf, offset::RTT, &31u32.to_ne_bytes());
        put(&mut buf, offset::RTTVAR, &15u32.to_ne_bytes());
        put(&mut buf, offset::SND_CWND, &10u32.to_ne_bytes());
        put(&mut buf, offset::TOTAL_RETRANS, &3u32.to_ne_bytes());
        put(&mut buf, offset::BYTES_RECEIVED, &70_000u64.to_ne_bytes());
        put(&mut buf, offset::SEGS_OUT, &12u32.to_ne_bytes());
        put(&mut buf, offset::SEGS_IN, &9u32.to_ne_bytes());
        put(&mut buf, offset::MIN_RTT, &20u32.to_ne_bytes());
        put(
            &mut buf,
            offset::DELIVERY_RATE,
            &150_000_000u64.to_ne_bytes(),
        );
        put(&mut buf, offset::BYTES_SENT, &(1u64 << 33).to_ne_bytes());
        buf
    }

    #[test]
    fn fields_come_from_their_offsets() {
        let info = parse(&known());
        assert_eq!(info.snd_mss, Some(1460));
        assert_eq!(info.lost, Some(2));
        assert_eq!(info.rtt_us, Some(Micros(31)));
        assert_eq!(info.rttvar_us, Some(Micros(15)));
        assert_eq!(info.snd_cwnd, Some(10));
        assert_eq!(info.total_retrans, Some(3));
        assert_eq!(info.bytes_received, Some(70_000));
        assert_eq!(info.segs_out, Some(12));
        assert_eq!(info.segs_in, Some(9));
        assert_eq!(info.min_rtt_us, Some(Micros(20)));
        assert_eq!(info.delivery_rate, Some(150_000_000));
        assert_eq!(info.bytes_sent, Some(1 << 33));
    }

    #[test]
    fn a_short_buffer_leaves_later_fields_none() {
        // An old kernel's structure ends after `tcpi_total_retrans` (104 bytes).
        let info = parse(&known()[..104]);
        assert_eq!(info.rtt_us, Some(Micros(31)));
        assert_eq!(info.total_retrans, Some(3));
        assert_eq!(info.bytes_received, None);
        assert_eq!(info.min_rtt_us, None);
        assert_eq!(info.delivery_rate, None);
        assert_eq!(info.bytes_sent, None);
        // A field cut in the middle is absent too, not half read.
        assert_eq!(parse(&known()[..70]).rtt_us, None);
        assert_eq!(parse(&[]), TcpInfo::default());
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn offsets_match_the_c_library_structure() {
        use std::mem::offset_of;
        assert_eq!(offset_of!(libc::tcp_info, tcpi_snd_mss), offset::SND_MSS);
        assert_eq!(offset_of!(libc::tcp_info, tcpi_lost), offset::LOST);
        assert_eq!(offset_of!(libc::tcp_info, tcpi_rtt), offset::RTT);
        assert_eq!(offset_of!(libc::tcp_info, tcpi_rttvar), offset::RTTVAR);
        assert_eq!(offset_of!(libc::tcp_info, tcpi_snd_cwnd), offset::SND_CWND);
        assert_eq!(
            offset_of!(libc::tcp_info, tcpi_total_retrans),
            offset::TOTAL_RETRANS
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_loopback_connection_has_facts() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let info = TcpSocket::watch(&client).unwrap().info().unwrap();
        assert!(info.snd_mss.is_some_and(|mss| mss > 0));
        assert!(info.snd_cwnd.is_some_and(|cwnd| cwnd > 0));
        assert!(
            read(&listener).is_some(),
            "a listening TCP socket answers too"
        );
    }
}
