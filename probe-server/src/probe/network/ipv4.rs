//! IPv4 TCP packets as a TUN device carries them: their endpoints and
//! flags read, their endpoints rewritten with checksums that still hold,
//! and a reset built.

use std::net::{Ipv4Addr, SocketAddrV4};

/// The TCP SYN flag.
pub const SYN: u8 = 0x02;
/// The TCP RST flag.
pub const RST: u8 = 0x04;
/// The TCP ACK flag.
pub const ACK: u8 = 0x10;

const IPV4_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const TCP: u8 = 6;

/// What the NAT hop needs of a TCP segment in an IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Where it comes from.
    pub src: SocketAddrV4,
    /// Where it goes.
    pub dst: SocketAddrV4,
    /// The TCP flags.
    pub flags: u8,
    /// The sequence number.
    pub seq: u32,
    /// Bytes of IPv4 and TCP headers.
    pub header_len: usize,
    /// Bytes of TCP payload.
    pub payload_len: usize,
}

impl Segment {
    /// A connection's first SYN (not the SYN-ACK).
    pub fn opens(&self) -> bool {
        self.flags & (SYN | ACK) == SYN
    }
}

/// Reads an IPv4 packet carrying a whole TCP segment; `None` for anything
/// else (IPv6, other protocols, fragments, truncated headers).
pub fn parse(packet: &[u8]) -> Option<Segment> {
    let ip = packet.get(..IPV4_HEADER)?;
    if ip[0] >> 4 != 4 || ip[9] != TCP {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let fragmented = u16::from_be_bytes([ip[6], ip[7]]) & 0x3fff != 0;
    if ihl < IPV4_HEADER || total > packet.len() || total < ihl + TCP_HEADER || fragmented {
        return None;
    }
    let tcp = &packet[ihl..total];
    let offset = usize::from(tcp[12] >> 4) * 4;
    if offset < TCP_HEADER || offset > tcp.len() {
        return None;
    }
    let address = |at: usize| Ipv4Addr::new(ip[at], ip[at + 1], ip[at + 2], ip[at + 3]);
    let port = |at: usize| u16::from_be_bytes([tcp[at], tcp[at + 1]]);
    Some(Segment {
        src: SocketAddrV4::new(address(12), port(0)),
        dst: SocketAddrV4::new(address(16), port(2)),
        flags: tcp[13],
        seq: u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]),
        header_len: ihl + offset,
        payload_len: tcp.len() - offset,
    })
}

/// Gives a packet [`parse`] accepted new endpoints, and recomputes its
/// IPv4 and TCP checksums.
pub fn readdress(packet: &mut [u8], src: SocketAddrV4, dst: SocketAddrV4) {
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([packet[2], packet[3]]));
    packet[12..16].copy_from_slice(&src.ip().octets());
    packet[16..20].copy_from_slice(&dst.ip().octets());
    packet[ihl..ihl + 2].copy_from_slice(&src.port().to_be_bytes());
    packet[ihl + 2..ihl + 4].copy_from_slice(&dst.port().to_be_bytes());
    seal(&mut packet[..total], ihl);
}

/// A reset with acknowledgement `ack`, from `src` to `dst`: how a refused
/// connection is answered.
pub fn reset(src: SocketAddrV4, dst: SocketAddrV4, ack: u32) -> Vec<u8> {
    let total = IPV4_HEADER + TCP_HEADER;
    let mut packet = vec![0u8; total];
    packet[0] = 0x45;
    packet[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    packet[6] = 0x40; // don't fragment
    packet[8] = 64; // TTL
    packet[9] = TCP;
    packet[12..16].copy_from_slice(&src.ip().octets());
    packet[16..20].copy_from_slice(&dst.ip().octets());
    let tcp = &mut packet[IPV4_HEADER..];
    tcp[0..2].copy_from_slice(&src.port().to_be_bytes());
    tcp[2..4].copy_from_slice(&dst.port().to_be_bytes());
    tcp[8..12].copy_from_slice(&ack.to_be_bytes());
    tcp[12] = (TCP_HEADER as u8 / 4) << 4;
    tcp[13] = RST | ACK;
    seal(&mut packet, IPV4_HEADER);
    packet
}

/// Writes the IPv4 header's and the TCP segment's checksums.
fn seal(packet: &mut [u8], ihl: usize) {
    packet[10..12].fill(0);
    let ip = fold(sum(&packet[..ihl], 0));
    packet[10..12].copy_from_slice(&ip.to_be_bytes());
    packet[ihl + 16..ihl + 18].fill(0);
    let tcp_len = packet.len() - ihl;
    let pseudo = sum(&packet[12..20], u32::from(TCP) + tcp_len as u32);
    let tcp = fold(sum(&packet[ihl..], pseudo));
    packet[ihl + 16..ihl + 18].copy_from_slice(&tcp.to_be_bytes());
}

/// The one's-complement sum of `bytes` as 16-bit words, added to `start`.
fn sum(bytes: &[u8], start: u32) -> u32 {
    let mut words = bytes.chunks_exact(2);
    let mut total = u64::from(start);
    for word in &mut words {
        total += u64::from(u16::from_be_bytes([word[0], word[1]]));
    }
    if let [last] = words.remainder() {
        total += u64::from(u16::from_be_bytes([*last, 0]));
    }
    while total > 0xffff_ffff {
        total = (total & 0xffff_ffff) + (total >> 32);
    }
    total as u32
}

/// The checksum of a sum: folded to 16 bits and complemented.
fn fold(mut total: u32) -> u16 {
    while total > 0xffff {
        total = (total & 0xffff) + (total >> 16);
    }
    !(total as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYN from 10.0.0.1:40000 to 10.0.0.2:443 with an MSS option and
    /// two payload bytes, checksums sealed.
    fn syn() -> Vec<u8> {
        let mut packet = reset(
            "10.0.0.1:40000".parse().unwrap(),
            "10.0.0.2:443".parse().unwrap(),
            0,
        );
        packet[IPV4_HEADER + 12] = 6 << 4;
        packet[IPV4_HEADER + 13] = SYN;
        packet[IPV4_HEADER + 4..IPV4_HEADER + 8].copy_from_slice(&7u32.to_be_bytes());
        packet.extend_from_slice(&[2, 4, 0x05, 0xb4, b'h', b'i']);
        let total = packet.len() as u16;
        packet[2..4].copy_from_slice(&total.to_be_bytes());
        seal(&mut packet, IPV4_HEADER);
        packet
    }

    /// Whether both checksums of `packet` verify.
    fn sealed(packet: &[u8]) -> bool {
        let ihl = usize::from(packet[0] & 0x0f) * 4;
        let tcp_len = packet.len() - ihl;
        let pseudo = sum(&packet[12..20], u32::from(TCP) + tcp_len as u32);
        fold(sum(&packet[..ihl], 0)) == 0 && fold(sum(&packet[ihl..], pseudo)) == 0
    }

    #[test]
    fn a_segment_is_read_and_readdressed_with_valid_checksums() {
        let mut packet = syn();
        assert!(sealed(&packet));
        let segment = parse(&packet).unwrap();
        assert_eq!(segment.src, "10.0.0.1:40000".parse().unwrap());
        assert_eq!(segment.dst, "10.0.0.2:443".parse().unwrap());
        assert!(segment.opens());
        assert_eq!(
            (segment.seq, segment.header_len, segment.payload_len),
            (7, 44, 2)
        );
        let (src, dst) = (
            "198.18.0.2:40000".parse().unwrap(),
            "198.18.0.1:5555".parse().unwrap(),
        );
        readdress(&mut packet, src, dst);
        assert!(sealed(&packet), "checksums hold after the rewrite");
        let moved = parse(&packet).unwrap();
        assert_eq!((moved.src, moved.dst), (src, dst));
        assert_eq!(
            &packet[packet.len() - 2..],
            b"hi",
            "the payload is untouched"
        );
    }

    #[test]
    fn a_reset_is_valid_and_anything_else_is_refused() {
        let rst = reset(
            "10.0.0.2:443".parse().unwrap(),
            "10.0.0.1:40000".parse().unwrap(),
            8,
        );
        assert!(sealed(&rst));
        let segment = parse(&rst).unwrap();
        assert_eq!(segment.flags, RST | ACK);
        assert!(!segment.opens());
        let mut udp = syn();
        udp[9] = 17;
        assert_eq!(parse(&udp), None);
        let mut v6 = syn();
        v6[0] = 0x60;
        assert_eq!(parse(&v6), None);
        assert_eq!(parse(&syn()[..30]), None, "truncated");
        let mut fragment = syn();
        fragment[7] = 1;
        assert_eq!(parse(&fragment), None);
    }
}
