//! Network conditions emulated in user space, inside the engine: every
//! connection of a protocol run crosses one [`Link`] that delays, jitters,
//! drops and paces its packets in both directions.
//!
//! QUIC's datagrams cross it one by one ([`datagrams`]). TCP's byte stream
//! crosses it in segment-sized chunks through an in-memory relay
//! ([`stream`]), and the handshake waits a round trip: without access to
//! the packets the kernel's TCP sends, a stream cannot lose one, so the
//! record says which `Emulation` each protocol had ([`Link::path`]).

pub mod datagrams;
pub mod ipv4;
pub mod link;
pub mod packets;
pub mod stream;
pub mod tun;

pub use link::Link;
