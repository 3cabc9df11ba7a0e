//! Trace events, as the engine records them, and their one conversion into phases.

use crate::json::ReadJson;
use crate::schema::{Micros, Phase, Phases, Span};
use serde::{Deserialize, Serialize};

/// A point in an attempt's life, named after Go's httptrace hooks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TraceEvent {
    /// Name lookup started.
    DnsStart,
    /// Name lookup returned.
    DnsDone,
    /// TCP connect started.
    ConnectStart,
    /// TCP connection established.
    ConnectDone,
    /// Proxy tunnel request about to be sent (HTTP `CONNECT` or SOCKS5 greeting).
    ProxyStart,
    /// Proxy tunnel open: the proxy's success reply read.
    ProxyDone,
    /// TLS handshake started.
    TlsStart,
    /// TLS handshake finished.
    TlsDone,
    /// First QUIC packet about to be sent.
    QuicStart,
    /// QUIC handshake finished.
    QuicDone,
    /// Connection ready; request about to be written.
    RequestStart,
    /// Request fully accepted by the transport.
    RequestWritten,
    /// First response byte read.
    FirstByte,
    /// Last body byte read.
    BodyDone,
}

/// An event and when it happened, as an offset from the attempt's start.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimedEvent {
    /// What happened.
    pub event: TraceEvent,
    /// When, from the attempt's start.
    pub at: Micros,
}

/// Which event opens and which closes each phase.
const BOUNDS: [(Phase, TraceEvent, TraceEvent); 8] = [
    (Phase::Dns, TraceEvent::DnsStart, TraceEvent::DnsDone),
    (
        Phase::Connect,
        TraceEvent::ConnectStart,
        TraceEvent::ConnectDone,
    ),
    (Phase::Proxy, TraceEvent::ProxyStart, TraceEvent::ProxyDone),
    (Phase::Tls, TraceEvent::TlsStart, TraceEvent::TlsDone),
    (Phase::Quic, TraceEvent::QuicStart, TraceEvent::QuicDone),
    (
        Phase::Send,
        TraceEvent::RequestStart,
        TraceEvent::RequestWritten,
    ),
    (
        Phase::Wait,
        TraceEvent::RequestWritten,
        TraceEvent::FirstByte,
    ),
    (Phase::Receive, TraceEvent::FirstByte, TraceEvent::BodyDone),
];

fn first(events: &[TimedEvent], wanted: TraceEvent) -> Option<Micros> {
    events.iter().find(|e| e.event == wanted).map(|e| e.at)
}

/// Where a phase closes: its first close event, except the lookups, which
/// end with the last (through a SOCKS5 proxy, the target's name and the
/// proxy's are both looked up before the connect).
fn close_of(events: &[TimedEvent], phase: Phase, close: TraceEvent) -> Option<Micros> {
    if phase == Phase::Dns {
        events.iter().rev().find(|e| e.event == close).map(|e| e.at)
    } else {
        first(events, close)
    }
}

/// Turns an attempt's events into phase spans; `end` closes the total and
/// any phase that started but never finished (the one a failure cut short).
pub fn phases_from_events(events: &[TimedEvent], end: Micros) -> Phases {
    let mut phases = Phases {
        total: Span {
            start_us: Micros(0),
            end_us: end,
        },
        ..Phases::default()
    };
    for (phase, open, close) in BOUNDS {
        let Some(start) = first(events, open) else {
            continue;
        };
        let stop = close_of(events, phase, close).unwrap_or(end).max(start);
        let span = Some(Span {
            start_us: start,
            end_us: stop,
        });
        match phase {
            Phase::Dns => phases.dns = span,
            Phase::Connect => phases.connect = span,
            Phase::Proxy => phases.proxy = span,
            Phase::Tls => phases.tls = span,
            Phase::Quic => phases.quic = span,
            Phase::Send => phases.send = span,
            Phase::Wait => phases.wait = span,
            Phase::Receive => phases.receive = span,
        }
    }
    phases
}

/// The phase in progress: the latest one that started and has not finished.
/// `None` before anything started or after the body was read.
pub fn open_phase(events: &[TimedEvent]) -> Option<Phase> {
    BOUNDS
        .iter()
        .rev()
        .find(|(_, open, close)| first(events, *open).is_some() && first(events, *close).is_none())
        .map(|(phase, _, _)| *phase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: TraceEvent, at: u64) -> TimedEvent {
        TimedEvent {
            event,
            at: Micros(at),
        }
    }

    #[test]
    fn full_https_attempt_becomes_contiguous_phases() {
        use TraceEvent::*;
        let events = [
            ev(DnsStart, 0),
            ev(DnsDone, 100),
            ev(ConnectStart, 110),
            ev(ConnectDone, 300),
            ev(TlsStart, 300),
            ev(TlsDone, 900),
            ev(RequestStart, 905),
            ev(RequestWritten, 950),
            ev(FirstByte, 5000),
            ev(BodyDone, 7000),
        ];
        let p = phases_from_events(&events, Micros(7001));
        assert_eq!(p.dns.unwrap().duration(), Micros(100));
        assert_eq!(p.connect.unwrap().duration(), Micros(190));
        assert_eq!(p.tls.unwrap().duration(), Micros(600));
        assert_eq!(p.send.unwrap().duration(), Micros(45));
        assert_eq!(p.wait.unwrap().duration(), Micros(4050));
        assert_eq!(p.receive.unwrap().duration(), Micros(2000));
        assert_eq!(p.quic, None);
        assert_eq!(p.total.end_us, Micros(7001));
        assert_eq!(open_phase(&events), None);
    }

    #[test]
    fn proxied_attempt_has_a_proxy_phase_and_lookups_end_with_the_last() {
        use TraceEvent::*;
        let events = [
            ev(DnsStart, 0),
            ev(DnsDone, 100),
            ev(DnsStart, 101),
            ev(DnsDone, 150),
            ev(ConnectStart, 160),
            ev(ConnectDone, 200),
            ev(ProxyStart, 200),
            ev(ProxyDone, 700),
            ev(TlsStart, 700),
            ev(TlsDone, 900),
        ];
        let p = phases_from_events(&events, Micros(1000));
        assert_eq!(p.dns.unwrap().duration(), Micros(150));
        assert_eq!(p.connect.unwrap().duration(), Micros(40));
        assert_eq!(p.proxy.unwrap().duration(), Micros(500));
        assert_eq!(p.tls.unwrap().start_us, Micros(700));
        assert_eq!(open_phase(&events[..7]), Some(Phase::Proxy));
    }

    #[test]
    fn reused_connection_has_no_setup_phases() {
        use TraceEvent::*;
        let events = [
            ev(RequestStart, 2),
            ev(RequestWritten, 40),
            ev(FirstByte, 900),
            ev(BodyDone, 950),
        ];
        let p = phases_from_events(&events, Micros(951));
        assert!(p.dns.is_none() && p.connect.is_none() && p.tls.is_none());
        assert_eq!(p.present().count(), 3);
    }

    #[test]
    fn unfinished_phase_runs_to_the_end_and_is_open() {
        use TraceEvent::*;
        let events = [ev(ConnectStart, 0), ev(ConnectDone, 50), ev(TlsStart, 50)];
        assert_eq!(open_phase(&events), Some(Phase::Tls));
        let p = phases_from_events(&events, Micros(10_000));
        assert_eq!(p.tls.unwrap().end_us, Micros(10_000));
        assert_eq!(p.send, None);
    }

    #[test]
    fn waiting_for_first_byte_is_the_open_phase() {
        use TraceEvent::*;
        let events = [ev(RequestStart, 0), ev(RequestWritten, 5)];
        assert_eq!(open_phase(&events), Some(Phase::Wait));
        assert_eq!(open_phase(&[]), None);
    }
}
