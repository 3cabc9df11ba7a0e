//! Live progress of a probe across vantages: each event tagged with a vantage
//! lands in that vantage's partial result, as the server folds it.
//!
//! A probe that names an agent's vantage has one [`VantageRun`] per vantage;
//! the server tags every event with the vantage it comes from (its own
//! included). The server folds its own events into the record's `result`
//! rather than into its run, so a run of the server's own vantage starts from
//! that `result` until its final one is set. Events of a run that has a
//! problem are dropped, as the server drops them; an untagged event, or any
//! event of a probe without vantage runs, is handed back for the record's
//! own [`LiveResult`].

use super::{AttemptKey, LiveResult};
use crate::api::{ProbeEvent, ProbeRecord};
use crate::schema::{Phase, ProbeResult};
use crate::vantage::{Vantage, VantageRun};

/// Per vantage name, the attempts still running there with their open phase.
pub type RunningAt = Vec<(String, Vec<(AttemptKey, Option<Phase>)>)>;

/// The vantage runs of a probe being filled in by live events.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveVantages {
    runs: Vec<LiveRun>,
}

/// One vantage's run as far as it is known.
#[derive(Clone, Debug, PartialEq)]
struct LiveRun {
    vantage: Vantage,
    problem: Option<String>,
    live: LiveResult,
}

impl LiveVantages {
    /// The runs of `record` (none when it runs only at the server), each
    /// from its partial result so far.
    pub fn new(record: &ProbeRecord) -> LiveVantages {
        let own = record.result.vantage.as_ref().map(|v| v.name.as_str());
        let runs = record
            .vantages
            .iter()
            .map(|run| {
                let partial = match &run.result {
                    Some(result) => result.clone(),
                    None if own == Some(run.vantage.name.as_str()) => record.result.clone(),
                    None => ProbeResult::empty(
                        record.options.clone(),
                        record.created_at_unix_ms,
                        Some(run.vantage.clone()),
                    ),
                };
                LiveRun {
                    vantage: run.vantage.clone(),
                    problem: run.problem.clone(),
                    live: LiveResult::new(partial),
                }
            })
            .collect();
        LiveVantages { runs }
    }

    /// Applies an event tagged with `vantage`. Returns it when it belongs to
    /// no vantage run (untagged, or the probe has none), for the record's own
    /// result; an event of an unknown or failed vantage is dropped.
    pub fn apply(&mut self, vantage: Option<&str>, event: ProbeEvent) -> Option<ProbeEvent> {
        let Some(name) = vantage.filter(|_| !self.runs.is_empty()) else {
            return Some(event);
        };
        if let Some(run) = self
            .runs
            .iter_mut()
            .find(|r| r.vantage.name == name && r.problem.is_none())
        {
            run.live.apply(event);
        }
        None
    }

    /// Every run with its result so far (running attempts drawn as far as
    /// they got), in the record's order.
    pub fn runs(&self) -> Vec<VantageRun> {
        self.runs
            .iter()
            .map(|run| VantageRun {
                vantage: run.vantage.clone(),
                result: Some(run.live.snapshot()),
                problem: run.problem.clone(),
            })
            .collect()
    }

    /// Per vantage name, the attempts still running with their open phase.
    pub fn running(&self) -> RunningAt {
        self.runs
            .iter()
            .map(|run| (run.vantage.name.clone(), run.live.running()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ProbeStatus;
    use crate::fixture::{fresh, result, reused};
    use crate::schema::{Micros, Protocol};
    use crate::timeline::{TimedEvent, TraceEvent};

    fn record(runs: &[(&str, Option<ProbeResult>, Option<&str>)]) -> ProbeRecord {
        let mut own = result(Vec::new());
        own.options.protocols = vec![Protocol::H1, Protocol::H2];
        own.vantage = Some(Vantage::named("server"));
        ProbeRecord {
            created_at_unix_ms: 1,
            vantages: runs
                .iter()
                .map(|(name, result, problem)| VantageRun {
                    vantage: Vantage::named(*name),
                    result: result.clone(),
                    problem: problem.map(str::to_string),
                })
                .collect(),
            ..crate::fixture::record("x", ProbeStatus::Running, own)
        }
    }

    fn done(protocol: Protocol, attempt: crate::schema::Attempt) -> ProbeEvent {
        ProbeEvent::Attempt {
            protocol,
            attempt: Box::new(attempt),
        }
    }

    fn attempts(run: &VantageRun, protocol: Protocol) -> Vec<u32> {
        let result = run.result.as_ref().expect("a result");
        result
            .runs
            .iter()
            .find(|r| r.protocol == protocol)
            .map(|r| r.attempts.iter().map(|a| a.attempt).collect())
            .unwrap_or_default()
    }

    #[test]
    fn tagged_events_land_in_their_vantage_only() {
        let mut own_partial = record(&[]).result;
        own_partial.runs = vec![crate::fixture::run(
            Protocol::H1,
            vec![fresh(1, 1, 1, 1, 1)],
        )];
        let mut rec = record(&[
            ("server", None, None),
            ("far", None, None),
            ("gone", None, Some("agent gone stopped answering")),
        ]);
        rec.result = own_partial;
        let mut live = LiveVantages::new(&rec);

        // The server's own run starts from the record's result, where the server folds it.
        assert_eq!(attempts(&live.runs()[0], Protocol::H1), [1]);
        assert_eq!(attempts(&live.runs()[1], Protocol::H1), Vec::<u32>::new());

        assert!(
            live.apply(Some("far"), done(Protocol::H1, fresh(1, 1, 1, 1, 1)))
                .is_none()
        );
        assert!(
            live.apply(Some("far"), done(Protocol::H1, reused(2, 1)))
                .is_none()
        );
        assert!(
            live.apply(Some("server"), done(Protocol::H1, reused(2, 1)))
                .is_none()
        );
        // A failed vantage's and an unknown vantage's events are dropped.
        assert!(
            live.apply(Some("gone"), done(Protocol::H2, reused(2, 1)))
                .is_none()
        );
        assert!(
            live.apply(Some("nowhere"), done(Protocol::H2, reused(2, 1)))
                .is_none()
        );
        let runs = live.runs();
        assert_eq!(attempts(&runs[0], Protocol::H1), [1, 2]);
        assert_eq!(attempts(&runs[1], Protocol::H1), [1, 2]);
        assert_eq!(attempts(&runs[1], Protocol::H2), Vec::<u32>::new());
        assert_eq!(
            runs[2].problem.as_deref(),
            Some("agent gone stopped answering")
        );
        assert!(
            runs[2]
                .result
                .as_ref()
                .unwrap()
                .runs
                .iter()
                .all(|r| r.attempts.is_empty())
        );
        assert_eq!(
            runs[1].result.as_ref().unwrap().vantage,
            Some(Vantage::named("far"))
        );

        // A running attempt shows at its vantage only.
        let phase = ProbeEvent::Phase {
            protocol: Protocol::H2,
            attempt: 1,
            hop: 0,
            event: TimedEvent {
                event: TraceEvent::DnsStart,
                at: Micros(0),
            },
        };
        assert!(live.apply(Some("far"), phase).is_none());
        let running = live.running();
        assert_eq!(running[0].1, vec![]);
        assert_eq!(running[1].0, "far");
        assert_eq!(running[1].1.len(), 1);
        assert_eq!(running[1].1[0].1, Some(Phase::Dns));
    }

    #[test]
    fn untagged_events_and_single_vantage_probes_are_handed_back() {
        let event = done(Protocol::H1, fresh(1, 1, 1, 1, 1));
        let mut single = LiveVantages::new(&record(&[]));
        assert!(single.runs().is_empty());
        assert_eq!(
            single.apply(Some("server"), event.clone()),
            Some(event.clone())
        );
        let mut multi = LiveVantages::new(&record(&[("far", None, None)]));
        assert_eq!(multi.apply(None, event.clone()), Some(event));
    }

    #[test]
    fn a_finished_run_keeps_its_final_result() {
        let mut final_result = result(vec![crate::fixture::run(
            Protocol::H1,
            vec![fresh(1, 1, 1, 1, 1), reused(2, 1)],
        )]);
        final_result.vantage = Some(Vantage::named("server"));
        let live = LiveVantages::new(&record(&[("server", Some(final_result.clone()), None)]));
        assert_eq!(
            live.runs()[0].result.as_ref().unwrap().runs[0].attempts,
            final_result.runs[0].attempts
        );
    }
}
