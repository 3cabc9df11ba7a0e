//! The recorder: the one place that reads the clock, and an attempt's events.
//!
//! I/O layers report what happened (`DnsDone`, `TlsDone`, `FirstByte`, ...)
//! into an [`AttemptTrace`] owned by the probe task, in the spirit of Go's
//! httptrace hooks but with a single owner, so no hook races another.

use h123_shared::api::ProbeEvent;
use h123_shared::timeline::{self, TimedEvent, TraceEvent};
use h123_shared::{Micros, Phase, Phases, Protocol};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc::UnboundedSender;

/// Reads the monotonic clock. Every timestamp in h123 comes from here.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
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

/// The events of one attempt, as offsets from its start.
#[derive(Debug)]
pub struct AttemptTrace {
    origin: Instant,
    started_at_unix_ms: u64,
    events: Vec<TimedEvent>,
    progress: Progress,
    id: Option<AttemptId>,
}

impl AttemptTrace {
    /// Starts an attempt now, reporting nowhere.
    pub fn start() -> Self {
        AttemptTrace::observed(Progress::default(), None)
    }

    /// Starts attempt `id` now, reporting each event to `progress`.
    pub fn observed(progress: Progress, id: Option<AttemptId>) -> Self {
        AttemptTrace {
            origin: now(),
            started_at_unix_ms: unix_ms(),
            events: Vec::with_capacity(12),
            progress,
            id,
        }
    }

    /// Records that `event` happened now.
    pub fn record(&mut self, event: TraceEvent) {
        let at = self.offset(now());
        self.record_at(event, at);
    }

    /// Records that `event` happened at `instant` (observed by an I/O layer).
    pub fn record_instant(&mut self, event: TraceEvent, instant: Instant) {
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

    /// The offset of `instant` from the attempt's start (zero if before it).
    pub fn offset(&self, instant: Instant) -> Micros {
        Micros(instant.saturating_duration_since(self.origin).as_micros() as u64)
    }

    /// How long after `earlier` this attempt started (zero if it started first).
    pub fn since(&self, earlier: Instant) -> Micros {
        Micros(self.origin.saturating_duration_since(earlier).as_micros() as u64)
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

    /// Ends the attempt now and derives its phases.
    pub fn finish(&self) -> Phases {
        let end = self
            .offset(now())
            .max(self.events.iter().map(|e| e.at).max().unwrap_or_default());
        timeline::phases_from_events(&self.events, end)
    }
}
