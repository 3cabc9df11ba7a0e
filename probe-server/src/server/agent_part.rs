//! What an agent may put into a probe: only the protocols, attempt numbers
//! and redirect hops the probe's options ask for, a bounded number of phase
//! events per hop, and one skip and one stop per protocol; its final result
//! of the same shape and, analyzed, within its vantage's share of the record.
//! The server's own runs keep these bounds by construction; an agent's are
//! held to them here, whatever it sends.

use super::share;
use h123_shared::api::ProbeEvent;
use h123_shared::{Attempt, MAX_OTHER_ADDRESSES, ProbeOptions, ProbeResult, Protocol};
use std::collections::{HashMap, HashSet};

/// Most phase events one hop of one attempt may have (the engine records
/// fewer than 30: lookup, connect and handshake per address tried, the
/// exchange's marks).
pub const MAX_PHASE_EVENTS_PER_HOP: u32 = 64;

/// The attempts a probe's options ask for, per protocol.
#[derive(Clone, Debug)]
pub struct Shape {
    protocols: Vec<Protocol>,
    attempts: u32,
    hops: u32,
}

/// One vantage's events so far, to hold them to the [`Shape`].
#[derive(Debug, Default)]
pub struct Tally {
    phases: HashMap<(Protocol, u32, u32), u32>,
    attempts: HashSet<(Protocol, u32, u32)>,
    skipped: HashSet<Protocol>,
    stopped: HashSet<Protocol>,
    discovered: HashSet<Protocol>,
}

impl Shape {
    /// What `options` ask for: their protocols, `rounds` x `repeat` attempts
    /// each, hops 0 to `max_redirects` when redirects are followed (else 0).
    pub fn of(options: &ProbeOptions) -> Self {
        Shape {
            protocols: options.protocols.clone(),
            attempts: options.attempts(),
            hops: if options.follow_redirects {
                options.max_redirects.saturating_add(1)
            } else {
                1
            },
        }
    }

    /// Whether hop `hop` of attempt `attempt` over `protocol` was asked for.
    fn holds(&self, protocol: Protocol, attempt: u32, hop: u32) -> bool {
        self.protocols.contains(&protocol)
            && (1..=self.attempts).contains(&attempt)
            && hop < self.hops
    }

    /// `Ok` when `result` has only runs and attempts this shape asks for
    /// (each protocol once, each attempt's hop once, at most
    /// [`MAX_OTHER_ADDRESSES`] other addresses), else what it has beyond.
    ///
    /// # Errors
    /// The first thing found beyond the shape, in words.
    pub fn check(&self, result: &ProbeResult) -> Result<(), String> {
        let mut seen = HashSet::new();
        for run in &result.runs {
            let name = run.protocol.http_version();
            if !self.protocols.contains(&run.protocol) || !seen.insert(run.protocol) {
                return Err(format!("a {name} run the probe did not ask for"));
            }
            if run.other_addresses.len() > MAX_OTHER_ADDRESSES {
                return Err(format!(
                    "{name}: more than {MAX_OTHER_ADDRESSES} other addresses"
                ));
            }
            let lists = std::iter::once(&run.attempts)
                .chain(run.other_addresses.iter().map(|a| &a.attempts));
            for attempts in lists {
                self.check_attempts(run.protocol, attempts)?;
            }
        }
        Ok(())
    }

    fn check_attempts(&self, protocol: Protocol, attempts: &[Attempt]) -> Result<(), String> {
        let mut seen = HashSet::new();
        for a in attempts {
            if !self.holds(protocol, a.attempt, a.hop) || !seen.insert((a.attempt, a.hop)) {
                return Err(format!(
                    "{}: attempt {} hop {}, which the probe did not ask for",
                    protocol.http_version(),
                    a.attempt,
                    a.hop
                ));
            }
        }
        Ok(())
    }
}

impl Tally {
    /// Whether `event` belongs to the probe `shape` describes and is not one
    /// too many (counting it if so): a phase of an asked-for hop, at most
    /// [`MAX_PHASE_EVENTS_PER_HOP`] of them; an asked-for hop's attempt,
    /// once; a protocol's skip or stop, once.
    pub fn admit(&mut self, shape: &Shape, event: &ProbeEvent) -> bool {
        match event {
            ProbeEvent::Phase {
                protocol,
                attempt,
                hop,
                ..
            } => {
                if !shape.holds(*protocol, *attempt, *hop) {
                    return false;
                }
                let count = self.phases.entry((*protocol, *attempt, *hop)).or_default();
                *count += 1;
                *count <= MAX_PHASE_EVENTS_PER_HOP
            }
            ProbeEvent::Attempt { protocol, attempt } => {
                shape.holds(*protocol, attempt.attempt, attempt.hop)
                    && self
                        .attempts
                        .insert((*protocol, attempt.attempt, attempt.hop))
            }
            ProbeEvent::Skipped { protocol, .. } => {
                shape.protocols.contains(protocol) && self.skipped.insert(*protocol)
            }
            ProbeEvent::Stopped { protocol, .. } => {
                shape.protocols.contains(protocol) && self.stopped.insert(*protocol)
            }
            ProbeEvent::Discovery { protocol, .. } => {
                *protocol == Protocol::H3
                    && shape.protocols.contains(protocol)
                    && self.discovered.insert(*protocol)
            }
        }
    }
}

/// An agent's final `result` for a probe with `options`, as the record
/// keeps it: refused when it holds runs or attempts the probe did not ask
/// for, cut to the attempts that fit `bytes` (as the engine cuts its own),
/// analyzed, and refused when it is still over `bytes`.
///
/// # Errors
/// Why the result is not kept, as the vantage's problem.
pub fn checked(
    result: ProbeResult,
    options: &ProbeOptions,
    bytes: usize,
) -> Result<ProbeResult, String> {
    Shape::of(options)
        .check(&result)
        .map_err(|beyond| format!("its result was refused: it holds {beyond}"))?;
    let mut result = result;
    share::fit(&mut result, bytes);
    let result = h123_shared::analysis::analyzed(result);
    let size = serde_json::to_vec(&result).map_or(usize::MAX, |v| v.len());
    if size > bytes {
        return Err(format!(
            "its result was refused: {} KiB, over this vantage's share of the record's size cap ({} KiB)",
            size / 1024,
            bytes / 1024
        ));
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::Micros;
    use h123_shared::ProtocolRun;
    use h123_shared::timeline::{TimedEvent, TraceEvent};

    fn options() -> ProbeOptions {
        ProbeOptions {
            url: "https://example.com/".into(),
            protocols: vec![Protocol::H1],
            rounds: 2,
            repeat: 2,
            ..ProbeOptions::default()
        }
    }

    fn phase(protocol: Protocol, attempt: u32, hop: u32) -> ProbeEvent {
        ProbeEvent::Phase {
            protocol,
            attempt,
            hop,
            event: TimedEvent {
                event: TraceEvent::DnsStart,
                at: Micros(0),
            },
        }
    }

    #[test]
    fn events_beyond_the_probe_asked_for_are_refused() {
        let shape = Shape::of(&options());
        let mut tally = Tally::default();
        assert!(tally.admit(&shape, &phase(Protocol::H1, 1, 0)));
        assert!(tally.admit(&shape, &phase(Protocol::H1, 4, 0)));
        assert!(
            !tally.admit(&shape, &phase(Protocol::H1, 5, 0)),
            "attempt 5 of 4"
        );
        assert!(
            !tally.admit(&shape, &phase(Protocol::H1, 0, 0)),
            "attempt 0"
        );
        assert!(
            !tally.admit(&shape, &phase(Protocol::H1, 1, 1)),
            "a hop without redirects"
        );
        assert!(
            !tally.admit(&shape, &phase(Protocol::H3, 1, 0)),
            "a protocol not asked"
        );
        let admitted = (0..4000)
            .filter(|_| tally.admit(&shape, &phase(Protocol::H1, 2, 0)))
            .count();
        assert_eq!(admitted, MAX_PHASE_EVENTS_PER_HOP as usize);
        let attempt = |n| ProbeEvent::Attempt {
            protocol: Protocol::H1,
            attempt: Box::new(Attempt::started(n, 0, "https://example.com/".into())),
        };
        assert!(tally.admit(&shape, &attempt(3)));
        assert!(!tally.admit(&shape, &attempt(3)), "the same attempt twice");
        assert!(!tally.admit(&shape, &attempt(9)));
        let skipped = ProbeEvent::Skipped {
            protocol: Protocol::H1,
            reason: "x".into(),
        };
        assert!(tally.admit(&shape, &skipped));
        assert!(!tally.admit(&shape, &skipped));
        let redirects = Shape::of(&ProbeOptions {
            follow_redirects: true,
            max_redirects: 2,
            ..options()
        });
        assert!(tally.admit(&redirects, &phase(Protocol::H1, 1, 2)));
        assert!(!tally.admit(&redirects, &phase(Protocol::H1, 1, 3)));
    }

    #[test]
    fn a_result_beyond_the_probe_or_its_share_is_refused() {
        let options = options();
        let run = |attempts: Vec<Attempt>| ProtocolRun {
            attempts,
            ..ProtocolRun::empty(Protocol::H1)
        };
        let attempt = |n, url: String| Attempt::started(n, 0, url);
        let url = || "https://example.com/".to_owned();
        let mut result = ProbeResult::empty(options.clone(), 0, None);
        result
            .runs
            .push(run((1..=4).map(|n| attempt(n, url())).collect()));
        assert!(checked(result.clone(), &options, 256 * 1024).is_ok());

        let mut extra = result.clone();
        extra.runs[0].attempts.push(attempt(5, url()));
        let refused = checked(extra, &options, 256 * 1024).unwrap_err();
        assert!(refused.contains("attempt 5 hop 0"), "{refused}");
        let mut twice = result.clone();
        twice.runs.push(run(Vec::new()));
        assert!(
            checked(twice, &options, 256 * 1024)
                .unwrap_err()
                .contains("HTTP/1.1 run")
        );

        // Attempts over the share are cut, as the engine cuts its own.
        let mut big = result.clone();
        big.runs[0].attempts = (1..=4).map(|n| attempt(n, "x".repeat(60 * 1024))).collect();
        let kept = checked(big, &options, 256 * 1024).unwrap();
        assert!(kept.runs[0].attempts.len() < 4 && kept.runs[0].cut_short.is_some());
        // Anything else over the share refuses the whole result.
        let mut bloated = result;
        bloated.runs[0].skipped = Some("y".repeat(300 * 1024));
        let refused = checked(bloated, &options, 256 * 1024).unwrap_err();
        assert!(refused.contains("over this vantage's share"), "{refused}");
    }
}
