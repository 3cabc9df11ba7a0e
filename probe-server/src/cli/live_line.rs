//! `h123 probe`'s live line on a terminal: while an attempt runs, one line on stderr, redrawn five
//! times a second, names its open phase, how long it has run and what it waits on with its limit
//! (`h3 #1 quic 3.20 s…: waiting for a QUIC answer over UDP from host:443; giving up after 10 s`),
//! the sentence the result page shows (`shared::live::waiting`); it is cleared when the probe ends.

use crate::probe::Engine;
use crate::probe::plan::Plan;
use crate::probe::trace::{self, Progress};
use h123_shared::api::ProbeEvent;
use h123_shared::live::waiting::Waiting;
use h123_shared::timeline::{TimedEvent, open_phase};
use h123_shared::{Micros, ProbeResult, Protocol};
use std::io::Write as _;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const REDRAW: Duration = Duration::from_millis(200);

/// The longest line drawn, in characters, so it never wraps on a usual terminal (a wrapped line
/// is not cleared by a carriage return).
const MAX_CHARS: usize = 100;

/// Runs `plan` on `engine`, drawing the live line on stderr meanwhile.
pub async fn run(engine: &Engine, plan: &Plan) -> ProbeResult {
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let run = engine.run_observed(plan, Progress::to(sender));
    tokio::pin!(run);
    let mut redraw = tokio::time::interval(REDRAW);
    let mut open: Option<Running> = None;
    loop {
        tokio::select! {
            result = &mut run => {
                draw("");
                return result;
            }
            Some(event) = events.recv() => apply(&mut open, event),
            _ = redraw.tick() => {
                if let Some(line) = open.as_ref().and_then(|r| r.line(plan)) {
                    draw(&line);
                }
            }
        }
    }
}

/// The attempt running now, as far as its events go.
struct Running {
    protocol: Protocol,
    attempt: u32,
    hop: u32,
    /// When it started, on this machine's clock (its first event's arrival less its offset).
    origin: Instant,
    events: Vec<TimedEvent>,
}

impl Running {
    /// The line for now: protocol, attempt, open phase with its elapsed time, and its sentence.
    fn line(&self, plan: &Plan) -> Option<String> {
        let phase = open_phase(&self.events)?;
        let since = self.events.iter().map(|e| e.at).max().unwrap_or(Micros(0));
        let waiting = Waiting::new(&plan.options, self.protocol, phase, since);
        let now = trace::between(self.origin, trace::now());
        let line = format!(
            "{} #{} {}: {}",
            self.protocol.as_str(),
            self.attempt,
            waiting.progress(now),
            waiting.sentence
        );
        Some(line.chars().take(MAX_CHARS).collect())
    }
}

/// Takes one progress event: a phase event starts or extends the running attempt, a finished,
/// skipped or stopped one ends it.
fn apply(open: &mut Option<Running>, event: ProbeEvent) {
    match event {
        ProbeEvent::Phase {
            protocol,
            attempt,
            hop,
            event,
        } => {
            let same = open
                .as_ref()
                .is_some_and(|r| (r.protocol, r.attempt, r.hop) == (protocol, attempt, hop));
            if !same {
                let origin = trace::now()
                    .checked_sub(Duration::from_micros(event.at.0))
                    .unwrap_or_else(trace::now);
                *open = Some(Running {
                    protocol,
                    attempt,
                    hop,
                    origin,
                    events: Vec::new(),
                });
            }
            if let Some(running) = open {
                running.events.push(event);
            }
        }
        ProbeEvent::Attempt { .. } | ProbeEvent::Skipped { .. } | ProbeEvent::Stopped { .. } => {
            *open = None;
        }
    }
}

/// Replaces the line on stderr with `line` (clears it when empty).
fn draw(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{line}");
    let _ = err.flush();
}
