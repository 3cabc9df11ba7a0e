//! Network conditions emulated in user space, inside the engine: every
//! connection of a protocol run crosses one [`Link`] that delays, jitters,
//! drops and paces its packets in both directions.
//!
//! QUIC's datagrams cross it one by one ([`datagrams`]). TCP's byte stream
//! crosses it in segment-sized chunks through an in-memory relay
//! ([`stream`]), and the handshake waits a round trip: without access to
//! the packets the kernel's TCP sends, a stream cannot lose one, so the
//! record says which [`Emulation`] each protocol had.

pub mod datagrams;
pub mod link;
pub mod stream;

pub use link::Link;

use h123_shared::Protocol;
use h123_shared::network::Emulation;

/// How `protocol`'s packets cross the link.
pub fn emulation(protocol: Protocol) -> Emulation {
    match protocol {
        Protocol::H3 => Emulation::Datagrams,
        Protocol::H1 | Protocol::H2 => Emulation::Stream,
    }
}
