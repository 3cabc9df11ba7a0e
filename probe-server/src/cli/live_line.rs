//! `h123 probe`'s live line on a terminal: while an attempt runs, one line on stderr, redrawn five
//! times a second, names its open phase, how long it has run and what it waits on with its limit
//! (`h3 #1 quic 3.20 s…: waiting for a QUIC answer over UDP from host:443 (advertised by Alt-Svc);
//! giving up after 10 s`), the sentence the result page shows: both fold the probe's events with
//! `shared::live`. The line is cleared when the probe ends.

use crate::probe::Engine;
use crate::probe::plan::Plan;
use crate::probe::trace::{self, Progress};
use h123_shared::api::ProbeEvent;
use h123_shared::live::{AttemptKey, LiveResult};
use h123_shared::{Micros, ProbeResult};
use std::io::Write as _;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const REDRAW: Duration = Duration::from_millis(200);

/// The line's width when the terminal's cannot be told.
const FALLBACK_CHARS: usize = 100;

/// Runs `plan` on `engine`, drawing the live line on stderr meanwhile.
pub async fn run(engine: &Engine, plan: &Plan) -> ProbeResult {
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let run = engine.run_observed(plan, Progress::to(sender));
    tokio::pin!(run);
    let mut redraw = tokio::time::interval(REDRAW);
    let mut live = Live::new(plan);
    loop {
        tokio::select! {
            result = &mut run => {
                draw("");
                return result;
            }
            Some(event) = events.recv() => live.apply(event),
            _ = redraw.tick() => {
                if let Some(line) = live.line() {
                    draw(&line);
                }
            }
        }
    }
}

/// The probe as far as its events go, and when each running attempt started on this machine's
/// clock (its first event's arrival less its offset).
struct Live {
    result: LiveResult,
    started: Vec<(AttemptKey, Instant)>,
}

impl Live {
    fn new(plan: &Plan) -> Live {
        let empty = ProbeResult::empty(plan.options.clone(), 0, None);
        Live {
            result: LiveResult::new(empty),
            started: Vec::new(),
        }
    }

    /// Takes one progress event, noting when a new attempt started.
    fn apply(&mut self, event: ProbeEvent) {
        if let ProbeEvent::Phase {
            protocol,
            attempt,
            hop,
            event,
        } = &event
        {
            let key = AttemptKey {
                protocol: *protocol,
                attempt: *attempt,
                hop: *hop,
            };
            if !self.started.iter().any(|(k, _)| *k == key) {
                let origin = trace::now()
                    .checked_sub(Duration::from_micros(event.at.0))
                    .unwrap_or_else(trace::now);
                self.started.push((key, origin));
            }
        }
        self.result.apply(event);
    }

    /// The line for now: the latest running attempt's protocol and number, its open phase with
    /// its elapsed time, and what it waits on.
    fn line(&self) -> Option<String> {
        let (key, waiting) = self.result.waiting()?;
        let origin = self.started.iter().find(|(k, _)| *k == key)?.1;
        let now: Micros = trace::between(origin, trace::now());
        let line = format!(
            "{} #{} {}: {}",
            key.protocol.as_str(),
            key.attempt,
            waiting.progress(now),
            waiting.sentence
        );
        Some(fit(&line, width()))
    }
}

/// The terminal's width less one column (a line filling the last column wraps on some terminals,
/// and a wrapped line is not cleared by a carriage return), or [`FALLBACK_CHARS`].
fn width() -> usize {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|size| usize::from(size.ws_col))
        .filter(|&columns| columns > 1)
        .map_or(FALLBACK_CHARS, |columns| columns - 1)
}

/// `line` in at most `width` characters: a longer one loses the middle of what it waits on,
/// never its head (the phase and its time) nor its limit (after the last `; `).
fn fit(line: &str, width: usize) -> String {
    let chars = line.chars().count();
    if chars <= width {
        return line.to_owned();
    }
    let tail = line.rfind("; ").map_or("", |at| &line[at..]);
    let keep = width.saturating_sub(tail.chars().count() + 1);
    if keep == 0 {
        return line.chars().take(width).collect();
    }
    let head: String = line.chars().take(keep).collect();
    format!("{head}…{tail}")
}

/// Replaces the line on stderr with `line` (clears it when empty).
fn draw(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{line}");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn a_long_line_keeps_its_phase_and_its_limit() {
        let line = "h3 #1 quic 3.20 s…: waiting for a QUIC answer over UDP from example.com:443 \
                    (advertised by Alt-Svc); giving up after 10 s";
        let fitted = fit(line, 60);
        assert_eq!(fitted.chars().count(), 60, "{fitted}");
        assert!(
            fitted.starts_with("h3 #1 quic 3.20 s…: waiting"),
            "{fitted}"
        );
        assert!(fitted.ends_with("…; giving up after 10 s"), "{fitted}");
        assert_eq!(fit(line, 200), line);
        assert_eq!(fit(line, 10), "h3 #1 quic");
    }
}
