//! The recorder: the one place that reads the clock, and an attempt's events.
//!
//! I/O layers report what happened (`DnsDone`, `TlsDone`, `FirstByte`, ...)
//! into an [`AttemptTrace`] owned by the probe task, in the spirit of Go's
//! httptrace hooks but with a single owner, so no hook races another.

use h123_shared::api::ProbeEvent;
use h123_shared::timeline::{self, TimedEvent, TraceEvent};
use h123_shared::{Micros, Phase, Phases, Protocol, TlsInfo};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::UnboundedSender;

/// Reads the monotonic clock. Every timestamp in h123 comes from here.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}

/// The time from `start` to `end`, in microseconds (zero if `end` is earlier).
pub fn between(start: Instant, end: Instant) -> Micros {
    Micros(end.saturating_duration_since(start).as_micros() as u64)
}

/// Milliseconds since the Unix epoch, for the wall-clock start of a probe.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Where live progress goes: nowhere, or a channel (the API's event stream).
#[derive(Clone, Debug, Default)]
pub struct Progress(Option<UnboundedSender<ProbeEvent>>);

impl Progress {
    /// Progress sent to `sender`; a closed receiver is not an error.
    pub fn to(sender: UnboundedSender<ProbeEvent>) -> Self {
        Progress(Some(sender))
    }

    /// Reports `event`, if anyone listens.
    pub fn send(&self, event: ProbeEvent) {
        if let Some(sender) = &self.0 {
            let _ = sender.send(event);
        }
    }
}

/// Which attempt a trace belongs to, for progress events.
#[derive(Copy, Clone, Debug)]
pub struct AttemptId {
    /// Protocol of the attempt.
    pub protocol: Protocol,
    /// Attempt number.
    pub attempt: u32,
    /// Redirect hop.
    pub hop: u32,
}

/// The events of one attempt, as offsets from its start: the moment its
/// first event happened (the first network step), so the tool's own work
/// before it is not timed.
#[derive(Debug)]
pub struct AttemptTrace {
    origin: Option<Instant>,
    started_at_unix_ms: u64,
    events: Vec<TimedEvent>,
    progress: Progress,
    id: Option<AttemptId>,
    /// What TLS agreed, kept from the handshake's end so an attempt that
    /// fails after it (a protocol the server does not offer) still knows.
    tls: Option<TlsInfo>,
}

impl AttemptTrace {
    /// Starts an attempt now, reporting nowhere.
    pub fn start() -> Self {
        AttemptTrace::observed(Progress::default(), None)
    }

    /// Starts attempt `id`, reporting each event to `progress`; its clock
    /// starts at its first event.
    pub fn observed(progress: Progress, id: Option<AttemptId>) -> Self {
        AttemptTrace {
            origin: None,
            started_at_unix_ms: unix_ms(),
            events: Vec::with_capacity(12),
            progress,
            id,
            tls: None,
        }
    }

    /// Keeps what the TLS handshake agreed (ALPN, version), as it ends.
    pub fn tls_agreed(&mut self, info: &TlsInfo) {
        self.tls = Some(info.clone());
    }

    /// What the TLS handshake agreed, when this attempt made one.
    pub fn agreed(&self) -> Option<&TlsInfo> {
        self.tls.as_ref()
    }

    /// Records that `event` happened now.
    pub fn record(&mut self, event: TraceEvent) {
        self.record_instant(event, now());
    }

    /// Records `event` now unless it was recorded already (a new
    /// connection's `RequestStart` comes before its HTTP-layer setup).
    pub fn record_once(&mut self, event: TraceEvent) {
        if !self.has(event) {
            self.record(event);
        }
    }

    /// Records that `event` happened at `instant` (observed by an I/O layer).
    pub fn record_instant(&mut self, event: TraceEvent, instant: Instant) {
        self.origin.get_or_insert(instant);
        let at = self.offset(instant);
        self.record_at(event, at);
    }

    fn record_at(&mut self, event: TraceEvent, at: Micros) {
        let timed = TimedEvent { event, at };
        self.events.push(timed);
        if let Some(id) = self.id {
            self.progress.send(ProbeEvent::Phase {
                protocol: id.protocol,
                attempt: id.attempt,
                hop: id.hop,
                event: timed,
            });
        }
    }

    /// The offset of `instant` from the attempt's start (zero if before it,
    /// or before the first event).
    pub fn offset(&self, instant: Instant) -> Micros {
        between(self.origin.unwrap_or(instant), instant)
    }

    /// Whether `event` was recorded.
    pub fn has(&self, event: TraceEvent) -> bool {
        self.events.iter().any(|e| e.event == event)
    }

    /// The phase in progress, which is the one a failure now belongs to.
    pub fn open_phase(&self) -> Option<Phase> {
        timeline::open_phase(&self.events)
    }

    /// The events so far, in the order recorded.
    pub fn events(&self) -> &[TimedEvent] {
        &self.events
    }

    /// Wall-clock start in milliseconds since the Unix epoch.
    pub fn started_at_unix_ms(&self) -> u64 {
        self.started_at_unix_ms
    }

    /// Moves an already recorded `event` to `instant`, when a layer below
    /// learns later when it really happened (the datagram that carried an
    /// HTTP/3 request left after the stream accepted it). Live observers
    /// saw the first estimate; the finished phases use this one.
    pub fn amend(&mut self, event: TraceEvent, instant: Instant) {
        let at = self.offset(instant);
        if let Some(found) = self.events.iter_mut().find(|e| e.event == event) {
            found.at = at;
        }
    }

    /// Ends the attempt and derives its phases: at the last body byte when
    /// the body was read (work after it, such as reading connection facts,
    /// is not the request's), else now.
    pub fn finish(&self) -> Phases {
        let latest = self.events.iter().map(|e| e.at).max().unwrap_or_default();
        let end = match self.events.iter().find(|e| e.event == TraceEvent::BodyDone) {
            Some(done) => done.at.max(latest),
            None => self.offset(now()).max(latest),
        };
        timeline::phases_from_events(&self.events, end)
    }
}
