//! Live progress: a probe's SSE events applied to its partial result, so a waterfall fills in while it runs.
//!
//! A [`LiveResult`] starts from the record fetched when the page opened (its
//! result may already hold finished attempts) and takes every
//! [`ProbeEvent`] as it arrives. A late client is sent the history first, so
//! an attempt may arrive that the fetched record already holds: it replaces
//! the copy, never duplicates it. Attempts still running are drawn from their
//! phase events so far, each open phase ending at the latest event.

use crate::api::ProbeEvent;
use crate::schema::{Attempt, H3Discovery, Micros, Phase, ProbeResult, Protocol, ProtocolRun};
use crate::timeline::{TimedEvent, open_phase, phases_from_events};
use std::collections::BTreeMap;
use waiting::Waiting;

pub mod vantages;
pub mod waiting;

/// Identifies one attempt (one redirect hop of it) within a probe.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptKey {
    /// The protocol.
    pub protocol: Protocol,
    /// 1-based attempt number.
    pub attempt: u32,
    /// Redirect hop.
    pub hop: u32,
}

/// A result being filled in by live events.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveResult {
    result: ProbeResult,
    running: BTreeMap<AttemptKey, Vec<TimedEvent>>,
}

impl LiveResult {
    /// Starts from a (possibly partial) result; runs are created for every
    /// requested protocol so they keep the requested order.
    pub fn new(mut result: ProbeResult) -> LiveResult {
        for protocol in result.options.protocols.clone() {
            run_mut(&mut result, protocol);
        }
        LiveResult {
            result,
            running: BTreeMap::new(),
        }
    }

    /// Applies one event.
    pub fn apply(&mut self, event: ProbeEvent) {
        match event {
            ProbeEvent::Phase {
                protocol,
                attempt,
                hop,
                event,
            } => {
                let key = AttemptKey {
                    protocol,
                    attempt,
                    hop,
                };
                let finished = run_mut(&mut self.result, protocol)
                    .attempts
                    .iter()
                    .any(|a| a.attempt == attempt && a.hop == hop);
                if !finished {
                    self.running.entry(key).or_default().push(event);
                }
            }
            ProbeEvent::Attempt { protocol, attempt } => {
                self.running.remove(&AttemptKey {
                    protocol,
                    attempt: attempt.attempt,
                    hop: attempt.hop,
                });
                let run = run_mut(&mut self.result, protocol);
                match run
                    .attempts
                    .iter_mut()
                    .find(|a| a.attempt == attempt.attempt && a.hop == attempt.hop)
                {
                    Some(known) => *known = *attempt,
                    None => insert_in_order(&mut run.attempts, *attempt),
                }
            }
            ProbeEvent::Skipped { protocol, reason } => {
                // A run found not offered after its first handshake drops that attempt.
                self.running.retain(|key, _| key.protocol != protocol);
                let run = run_mut(&mut self.result, protocol);
                run.attempts.clear();
                run.skipped = Some(reason);
            }
            ProbeEvent::Stopped { protocol, reason } => {
                run_mut(&mut self.result, protocol).stopped = Some(reason);
            }
            ProbeEvent::Discovery {
                protocol,
                discovery,
            } => {
                run_mut(&mut self.result, protocol).discovery = Some(*discovery);
            }
        }
    }

    /// The attempt running now whose phase opened last, with what it waits on: the CLI's live
    /// line.
    pub fn waiting(&self) -> Option<(AttemptKey, Waiting)> {
        let (key, events, phase) = self
            .running
            .iter()
            .filter_map(|(key, events)| Some((key, events, open_phase(events)?)))
            .max_by_key(|(_, events, _)| events.iter().map(|e| e.at).max())?;
        let since = events.iter().map(|e| e.at).max().unwrap_or(Micros(0));
        let discovery = self.discovery(key.protocol);
        let waiting = Waiting::new(&self.result.options, key.protocol, discovery, phase, since);
        Some((*key, waiting))
    }

    /// What HTTP/3's discovery found, once it is known (never for other protocols).
    fn discovery(&self, protocol: Protocol) -> Option<&H3Discovery> {
        let run = self.result.runs.iter().find(|r| r.protocol == protocol)?;
        run.discovery.as_ref()
    }

    /// The attempts still running, each with the phase in progress (if any).
    pub fn running(&self) -> Vec<(AttemptKey, Option<Phase>)> {
        self.running
            .iter()
            .map(|(key, events)| (*key, open_phase(events)))
            .collect()
    }

    /// The finished attempts plus the running ones as far as they got, in
    /// attempt order per protocol.
    pub fn snapshot(&self) -> ProbeResult {
        let mut result = self.result.clone();
        let url = result.options.url.clone();
        for (key, events) in &self.running {
            let end = events.iter().map(|e| e.at).max().unwrap_or(Micros(0));
            let run = run_mut(&mut result, key.protocol);
            insert_in_order(
                &mut run.attempts,
                Attempt {
                    phases: phases_from_events(events, end),
                    ..Attempt::started(key.attempt, key.hop, url.clone())
                },
            );
        }
        result
    }
}

/// Puts `attempt` among `attempts` (in attempt and hop order) where its order says, after any
/// with the same attempt and hop: a sorted insert, with no sort code in the wasm.
fn insert_in_order(attempts: &mut Vec<Attempt>, attempt: Attempt) {
    let key = (attempt.attempt, attempt.hop);
    let at = attempts.partition_point(|a| (a.attempt, a.hop) <= key);
    attempts.insert(at, attempt);
}

/// The run of `protocol`, created (at the end) when missing.
fn run_mut(result: &mut ProbeResult, protocol: Protocol) -> &mut ProtocolRun {
    let index = match result.runs.iter().position(|r| r.protocol == protocol) {
        Some(i) => i,
        None => {
            result.runs.push(ProtocolRun::empty(protocol));
            result.runs.len() - 1
        }
    };
    &mut result.runs[index]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, result, reused};
    use crate::timeline::TraceEvent;

    fn phase(protocol: Protocol, attempt: u32, event: TraceEvent, at: u64) -> ProbeEvent {
        ProbeEvent::Phase {
            protocol,
            attempt,
            hop: 0,
            event: TimedEvent {
                event,
                at: Micros(at),
            },
        }
    }

    fn finished(protocol: Protocol, attempt: Attempt) -> ProbeEvent {
        ProbeEvent::Attempt {
            protocol,
            attempt: Box::new(attempt),
        }
    }

    #[test]
    fn runs_keep_the_requested_order() {
        let mut partial = result(Vec::new());
        partial.options.protocols = vec![Protocol::H2, Protocol::H1];
        let live = LiveResult::new(partial);
        let order: Vec<Protocol> = live.snapshot().runs.iter().map(|r| r.protocol).collect();
        assert_eq!(order, vec![Protocol::H2, Protocol::H1]);
    }

    #[test]
    fn running_attempts_grow_then_are_replaced_by_the_finished_one() {
        let mut live = LiveResult::new(result(Vec::new()));
        live.apply(phase(Protocol::H1, 1, TraceEvent::DnsStart, 0));
        live.apply(phase(Protocol::H1, 1, TraceEvent::DnsDone, 100));
        live.apply(phase(Protocol::H1, 1, TraceEvent::ConnectStart, 100));
        live.apply(phase(Protocol::H1, 1, TraceEvent::ConnectDone, 400));
        live.apply(phase(Protocol::H1, 1, TraceEvent::TlsStart, 400));

        let key = AttemptKey {
            protocol: Protocol::H1,
            attempt: 1,
            hop: 0,
        };
        assert_eq!(live.running(), vec![(key, Some(Phase::Tls))]);
        let snap = live.snapshot();
        let a = &snap.runs[0].attempts[0];
        assert_eq!(a.phases.connect.unwrap().duration(), Micros(300));
        assert_eq!(a.phases.tls.unwrap().duration(), Micros(0));
        assert_eq!(a.phases.total.end_us, Micros(400));

        live.apply(finished(Protocol::H1, fresh(1, 100, 300, 600, 5_000)));
        assert!(live.running().is_empty());
        let snap = live.snapshot();
        assert_eq!(snap.runs[0].attempts, vec![fresh(1, 100, 300, 600, 5_000)]);
    }

    #[test]
    fn history_replayed_to_a_late_client_does_not_duplicate() {
        let mut done = result(vec![crate::fixture::run(
            Protocol::H2,
            vec![fresh(1, 10, 10, 10, 10), reused(2, 10)],
        )]);
        done.options.protocols = vec![Protocol::H2];
        let mut live = LiveResult::new(done.clone());
        live.apply(phase(Protocol::H2, 1, TraceEvent::DnsStart, 0));
        live.apply(finished(Protocol::H2, fresh(1, 10, 10, 10, 10)));
        live.apply(phase(Protocol::H2, 2, TraceEvent::RequestStart, 0));
        live.apply(finished(Protocol::H2, reused(2, 10)));
        assert!(live.running().is_empty());
        assert_eq!(live.snapshot(), done);
    }

    #[test]
    fn a_waiting_quic_phase_names_the_endpoint_discovery_chose() {
        let mut live = LiveResult::new(result(Vec::new()));
        live.apply(phase(Protocol::H1, 1, TraceEvent::DnsStart, 0));
        live.apply(finished(Protocol::H1, fresh(1, 1, 1, 1, 1)));
        assert_eq!(live.waiting(), None, "nothing runs");
        live.apply(ProbeEvent::Discovery {
            protocol: Protocol::H3,
            discovery: Box::new(crate::schema::H3Discovery {
                alt_svc: Vec::new(),
                https_record: None,
                https_lookup: None,
                via: Some(crate::schema::H3Via::HttpsRecord),
                endpoint: Some("[2001:db8::1]:8443".into()),
                outcome: crate::schema::H3Outcome::NotAdvertised,
                detail: "not tried yet".into(),
                quic_budget_ms: None,
            }),
        });
        live.apply(phase(Protocol::H3, 1, TraceEvent::QuicStart, 40));
        let (key, waiting) = live.waiting().expect("h3 waits");
        assert_eq!((key.protocol, key.attempt), (Protocol::H3, 1));
        assert_eq!(waiting.phase, Phase::Quic);
        assert_eq!(waiting.since, Micros(40));
        assert!(
            waiting.sentence.starts_with(
                "waiting for a QUIC answer over UDP from [2001:db8::1]:8443 (listed in its HTTPS DNS record)"
            ),
            "{}",
            waiting.sentence
        );
        let h3 = live
            .snapshot()
            .runs
            .into_iter()
            .find(|r| r.protocol == Protocol::H3);
        assert!(
            h3.and_then(|r| r.discovery).is_some(),
            "kept in the snapshot"
        );
    }

    #[test]
    fn attempts_are_ordered_and_skips_recorded() {
        let mut live = LiveResult::new(result(Vec::new()));
        live.apply(finished(Protocol::H1, reused(2, 10)));
        live.apply(finished(Protocol::H1, fresh(1, 1, 1, 1, 1)));
        live.apply(ProbeEvent::Skipped {
            protocol: Protocol::H3,
            reason: "no UDP".into(),
        });
        let snap = live.snapshot();
        let numbers: Vec<u32> = snap.runs[0].attempts.iter().map(|a| a.attempt).collect();
        assert_eq!(numbers, vec![1, 2]);
        let h3 = snap
            .runs
            .iter()
            .find(|r| r.protocol == Protocol::H3)
            .unwrap();
        assert_eq!(h3.skipped.as_deref(), Some("no UDP"));
    }

    #[test]
    fn a_skip_after_a_first_handshake_drops_its_attempt() {
        let mut live = LiveResult::new(result(Vec::new()));
        live.apply(phase(Protocol::H2, 1, TraceEvent::DnsStart, 0));
        live.apply(phase(Protocol::H2, 1, TraceEvent::TlsStart, 10));
        live.apply(ProbeEvent::Skipped {
            protocol: Protocol::H2,
            reason: "this server does not offer HTTP/2".into(),
        });
        assert!(live.running().is_empty());
        let snap = live.snapshot();
        let h2 = snap
            .runs
            .iter()
            .find(|r| r.protocol == Protocol::H2)
            .unwrap();
        assert!(h2.attempts.is_empty());
        assert_eq!(
            h2.skipped.as_deref(),
            Some("this server does not offer HTTP/2")
        );
    }
}
