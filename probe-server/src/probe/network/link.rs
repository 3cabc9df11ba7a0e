//! The emulated link: per direction a one-way delay with jitter, random
//! loss, and a rate limit with a drop-tail queue, deciding each packet's
//! fate and delivery time as it is offered.

use h123_shared::Protocol;
use h123_shared::network::{EmulatedPath, Emulation, LinkCounts, NetworkProfile};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bytes of IPv4 and TCP headers (with timestamps) a segment adds on the wire.
pub const TCP_HEADER_BYTES: usize = 52;
/// Bytes of IPv4 and UDP headers a datagram adds on the wire.
pub const UDP_HEADER_BYTES: usize = 28;
/// Most payload bytes one direction holds between offer and delivery: a
/// hostile peer cannot make the emulation hold more than this.
pub const MAX_IN_FLIGHT: usize = 8 * 1024 * 1024;
/// Smallest drop-tail queue of a rate-limited direction, in bytes.
const MIN_QUEUE_BYTES: u64 = 64 * 1024;

/// What became of a packet offered to a [`Direction`].
#[derive(Debug)]
pub enum Admission {
    /// It arrives at this instant; it counts as in flight until its
    /// [`Flight`] is dropped.
    Deliver(Instant, Flight),
    /// Dropped by the random loss.
    Lost,
    /// Dropped because the queue (or the in-flight cap) was full.
    QueueFull,
}

/// A packet's bytes held in a direction: they count against
/// [`MAX_IN_FLIGHT`] until this is dropped, whether the packet was
/// delivered or thrown away with its connection.
#[derive(Debug)]
pub struct Flight {
    counter: Arc<AtomicUsize>,
    len: usize,
}

impl Drop for Flight {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.len, Ordering::AcqRel);
    }
}

/// Both directions of one emulated path.
#[derive(Debug)]
pub struct Link {
    /// Client to server.
    pub up: Direction,
    /// Server to client.
    pub down: Direction,
}

impl Link {
    /// A link with `profile`'s figures; `seed` starts its loss draws.
    pub fn new(profile: &NetworkProfile, seed: u64) -> Arc<Link> {
        Arc::new(Link {
            up: Direction::new(profile, profile.up_kbit, seed),
            down: Direction::new(profile, profile.down_kbit, seed ^ 0x9e37_79b9_7f4a_7c15),
        })
    }

    /// A link seeded from the clock.
    pub fn seeded_now(profile: &NetworkProfile) -> Arc<Link> {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Link::new(profile, seed)
    }

    /// When a TCP handshake offered now completes: the SYN crosses up, the
    /// SYN-ACK down (neither is lost: see [`Emulation::Stream`]), where
    /// there is no packet hop.
    pub fn handshake_done(&self, now: Instant) -> Instant {
        self.exchange_done(now, TCP_HEADER_BYTES + 8, TCP_HEADER_BYTES + 8)
    }

    /// When an exchange offered now completes: `up` bytes on the wire cross
    /// up, then `down` bytes come back (neither is lost).
    pub fn exchange_done(&self, now: Instant, up: usize, down: usize) -> Instant {
        let (asked, _) = self.up.deliver_at(now, 0, up);
        self.down.deliver_at(asked, 0, down).0
    }

    /// What the link did so far, for a run of `protocol`, and how that
    /// protocol's packets crossed it.
    pub fn path(&self, protocol: Protocol) -> EmulatedPath {
        EmulatedPath {
            emulation: match protocol {
                Protocol::H3 => Emulation::Datagrams,
                Protocol::H1 | Protocol::H2 => match super::packets::PacketPath::get() {
                    Some(_) => Emulation::Packets,
                    None => Emulation::Stream,
                },
            },
            up: self.up.counts(),
            down: self.down.counts(),
        }
    }
}

/// One direction of a [`Link`].
#[derive(Debug)]
pub struct Direction {
    one_way: Duration,
    jitter: Duration,
    loss: f64,
    /// Bits per second; `None` is unlimited.
    rate: Option<u64>,
    /// Longest backlog before the queue is full.
    queue: Duration,
    in_flight: Arc<AtomicUsize>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// When the line is free to start the next packet.
    free_at: Option<Instant>,
    /// The latest delivery time given, so packets keep their order.
    last_due: Option<Instant>,
    draws: SplitMix,
    counts: LinkCounts,
}

impl Direction {
    fn new(profile: &NetworkProfile, kbit: Option<u64>, seed: u64) -> Direction {
        let one_way = Duration::from_micros(u64::from(profile.rtt_ms) * 500);
        let rate = kbit.map(|k| k * 1000);
        let queue = rate.map_or(Duration::ZERO, |bps| {
            let bdp = bps * u64::from(profile.rtt_ms) / 8 / 1000;
            transmit_time(bdp.max(MIN_QUEUE_BYTES), bps)
        });
        Direction {
            one_way,
            jitter: Duration::from_millis(profile.jitter_ms.into()),
            loss: f64::from(profile.loss_basis_points) / 10_000.0,
            rate,
            queue,
            in_flight: Arc::new(AtomicUsize::new(0)),
            state: Mutex::new(State {
                free_at: None,
                last_due: None,
                draws: SplitMix(seed),
                counts: LinkCounts::default(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Offers a datagram of `len` payload bytes at `now`: it may be lost at
    /// random or find the queue full; else it is held until its delivery.
    pub fn offer_datagram(&self, now: Instant, len: usize, header: usize) -> Admission {
        let mut state = self.lock();
        if self.loss > 0.0 && state.draws.unit() < self.loss {
            state.counts.lost += 1;
            return Admission::Lost;
        }
        if self.backlog(&state, now) > self.queue
            || self.in_flight.load(Ordering::Acquire) + len > MAX_IN_FLIGHT
        {
            state.counts.queue_drops += 1;
            return Admission::QueueFull;
        }
        let (due, flight) = self.schedule(&mut state, now, len, header);
        Admission::Deliver(due, flight)
    }

    /// When a stream segment of `len` bytes offered at `now` arrives (a
    /// stream waits for [`Direction::room_in`] instead of being dropped).
    pub fn deliver_at(&self, now: Instant, len: usize, header: usize) -> (Instant, Flight) {
        let mut state = self.lock();
        self.schedule(&mut state, now, len, header)
    }

    /// How long until the queue and the in-flight cap have room again.
    pub fn room_in(&self, now: Instant) -> Option<Duration> {
        let state = self.lock();
        let over = self.backlog(&state, now).saturating_sub(self.queue);
        if !over.is_zero() {
            return Some(over);
        }
        (self.in_flight.load(Ordering::Acquire) >= MAX_IN_FLIGHT)
            .then_some(Duration::from_millis(1))
    }

    /// What this direction did so far.
    pub fn counts(&self) -> LinkCounts {
        self.lock().counts
    }

    fn backlog(&self, state: &State, now: Instant) -> Duration {
        state
            .free_at
            .map_or(Duration::ZERO, |free| free.saturating_duration_since(now))
    }

    fn schedule(
        &self,
        state: &mut State,
        now: Instant,
        len: usize,
        header: usize,
    ) -> (Instant, Flight) {
        let sent = match self.rate {
            Some(bps) => {
                let start = state.free_at.map_or(now, |free| free.max(now));
                let end = start + transmit_time((len + header) as u64, bps);
                state.free_at = Some(end);
                end
            }
            None => now,
        };
        let mut due = sent + self.one_way;
        if !self.jitter.is_zero() {
            let spread = self.jitter.as_secs_f64() * (2.0 * state.draws.unit() - 1.0);
            due = if spread >= 0.0 {
                due + Duration::from_secs_f64(spread)
            } else {
                due - Duration::from_secs_f64(-spread)
            };
        }
        let due = state.last_due.map_or(due, |last| due.max(last));
        state.last_due = Some(due);
        state.counts.delivered += 1;
        state.counts.bytes += len as u64;
        self.in_flight.fetch_add(len, Ordering::AcqRel);
        let flight = Flight {
            counter: self.in_flight.clone(),
            len,
        };
        (due, flight)
    }
}

/// Waits until `due`, aiming half a timer tick early: tokio's timer fires
/// on the first 1 ms tick at or after its deadline, so a plain sleep would
/// be late by up to 1 ms each time; this one is right on average, within
/// half a millisecond either way.
pub async fn until(due: Instant) {
    let aim = due.checked_sub(Duration::from_micros(500)).unwrap_or(due);
    tokio::time::sleep_until(aim.into()).await;
}

fn transmit_time(bytes: u64, bits_per_second: u64) -> Duration {
    Duration::from_nanos(bytes * 8 * 1_000_000_000 / bits_per_second.max(1))
}

/// A small, fast generator for the loss and jitter draws (SplitMix64).
#[derive(Debug)]
struct SplitMix(u64);

impl SplitMix {
    /// A draw in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(text: &str) -> NetworkProfile {
        NetworkProfile::parse(text).unwrap()
    }

    #[test]
    fn a_packet_arrives_after_half_the_rtt() {
        let link = Link::new(&profile("rtt=100ms"), 7);
        let now = crate::probe::trace::now();
        let Admission::Deliver(due, _) = link.up.offer_datagram(now, 1200, UDP_HEADER_BYTES) else {
            panic!("no loss, no queue: delivered");
        };
        assert_eq!(due, now + Duration::from_millis(50));
        assert_eq!(link.handshake_done(now), now + Duration::from_millis(100));
    }

    #[test]
    fn the_rate_paces_packets_back_to_back() {
        // At 800 kbit/s, 1000 bytes on the wire take 10 ms.
        let link = Link::new(&profile("rtt=0ms,down=800kbit"), 7);
        let now = crate::probe::trace::now();
        let (first, _) = link.down.deliver_at(now, 972, UDP_HEADER_BYTES);
        let (second, _) = link.down.deliver_at(now, 972, UDP_HEADER_BYTES);
        assert_eq!(first, now + Duration::from_millis(10));
        assert_eq!(second, now + Duration::from_millis(20));
        assert_eq!(link.down.counts().bytes, 1944);
    }

    #[test]
    fn a_full_queue_drops_datagrams_and_makes_streams_wait() {
        // 1 Mbit/s, 0 ms: the queue is the 64 KiB floor, 524 ms of backlog.
        let link = Link::new(&profile("rtt=0ms,down=1mbit"), 7);
        let now = crate::probe::trace::now();
        let mut dropped = 0;
        let mut held = Vec::new();
        for _ in 0..100 {
            match link.down.offer_datagram(now, 1200, UDP_HEADER_BYTES) {
                Admission::QueueFull => dropped += 1,
                Admission::Deliver(_, flight) => held.push(flight),
                Admission::Lost => unreachable!("no loss set"),
            }
        }
        assert!(dropped > 40, "{dropped} of 100 dropped");
        assert_eq!(link.down.counts().queue_drops, dropped);
        assert!(link.down.room_in(now).is_some(), "a stream would wait");
        assert_eq!(link.down.room_in(now + Duration::from_secs(2)), None);
    }

    #[test]
    fn loss_drops_its_share_of_many_packets() {
        let link = Link::new(&profile("rtt=0ms,loss=2%"), 42);
        let now = crate::probe::trace::now();
        let n = 10_000;
        for _ in 0..n {
            // Each delivered packet's flight ends at once.
            let _ = link.up.offer_datagram(now, 100, 0);
        }
        let lost = link.up.counts().lost;
        // Binomial: mean 200, standard deviation 14; four of them either way.
        assert!((144..=256).contains(&lost), "{lost} of {n} lost");
    }

    #[test]
    fn jitter_keeps_packets_in_order() {
        let link = Link::new(&profile("rtt=100ms,jitter=20ms"), 3);
        let now = crate::probe::trace::now();
        let mut last = now;
        for i in 0..1000 {
            let (due, _) = link
                .up
                .deliver_at(now + Duration::from_micros(i * 100), 100, 0);
            assert!(due >= last);
            assert!(due >= now + Duration::from_millis(30));
            assert!(due <= now + Duration::from_millis(171));
            last = due;
        }
    }

    #[test]
    fn the_in_flight_cap_bounds_what_a_peer_can_make_us_hold() {
        let link = Link::new(&profile("rtt=1000ms"), 3);
        let now = crate::probe::trace::now();
        let mut held = Vec::new();
        while let Admission::Deliver(_, flight) = link.down.offer_datagram(now, 1400, 0) {
            held.push(flight);
        }
        assert!(held.len() * 1400 <= MAX_IN_FLIGHT);
        assert_eq!(link.down.counts().queue_drops, 1);
        drop(held);
        assert!(
            matches!(
                link.down.offer_datagram(now, 1400, 0),
                Admission::Deliver(..)
            ),
            "delivered or discarded, held bytes no longer count"
        );
    }
}
