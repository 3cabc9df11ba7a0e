//! A probe's result page folded from its record and progress, as the web UI's page once folded
//! its event stream (`shared::live`), and drawn by the Leptos component
//! `h123_frontend::pages::result`.
//!
//! A running probe's state is its record plus the partial results its events filled in (the
//! record's own and each vantage's): bounded by the record's size limits, as the record is.

use super::super::progress::Progress;
use h123_frontend::pages::{render, result::ResultView};
use h123_shared::agent::VantageEvent;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::live::LiveResult;
use h123_shared::live::vantages::{LiveVantages, RunningAt};
use std::sync::Arc;

/// What a probe's page shows, as far as its progress has been folded in.
#[derive(Clone, Debug, PartialEq)]
pub enum View {
    /// Still running: the record and what its events have filled in so far.
    Running(Box<Live>),
    /// Finished (or a record no instance runs any more): the record as it is.
    Finished(Arc<ProbeRecord>),
}

/// A running probe's record and its results as far as its events go.
#[derive(Clone, Debug, PartialEq)]
pub struct Live {
    record: ProbeRecord,
    own: LiveResult,
    vantages: LiveVantages,
}

impl View {
    /// The page of `record` before any progress: running or finished by its status.
    pub fn new(record: ProbeRecord) -> View {
        if record.status != ProbeStatus::Running {
            return View::Finished(Arc::new(record));
        }
        View::Running(Box::new(Live {
            own: LiveResult::new(record.result.clone()),
            vantages: LiveVantages::new(&record),
            record,
        }))
    }

    /// Folds in one step of progress: an event into the result it belongs to (its vantage's,
    /// else the record's own), or the final record in place of everything so far. Events after
    /// the end change nothing.
    pub fn apply(&mut self, progress: Progress) {
        match progress {
            Progress::Event(_, tagged) => {
                if let View::Running(live) = self {
                    live.apply(Arc::unwrap_or_clone(tagged));
                }
            }
            Progress::Done(record) => *self = View::Finished(record),
        }
    }

    /// The record: as loaded while the probe runs, the final one once it finished.
    pub fn into_record(self) -> ProbeRecord {
        match self {
            View::Running(live) => live.record,
            View::Finished(record) => Arc::unwrap_or_clone(record),
        }
    }

    /// Whether the probe has finished (nothing more will change the page).
    pub fn is_finished(&self) -> bool {
        matches!(self, View::Finished(_))
    }

    /// The page's result markup (`<div id="result" ...>`) as it stands at `now_unix_ms`.
    pub fn markup(&self, now_unix_ms: u64) -> String {
        let none: RunningAt = Vec::new();
        match self {
            View::Running(live) => {
                let (shown, running) = (live.own.snapshot(), live.own.running());
                let (runs, running_at) = (live.vantages.runs(), live.vantages.running());
                let view = ResultView {
                    record: &live.record,
                    shown: &shown,
                    running: &running,
                    runs: &runs,
                    running_at: &running_at,
                    now_unix_ms,
                };
                render(|| view.view())
            }
            View::Finished(record) => {
                let view = ResultView {
                    record,
                    shown: &record.result,
                    running: &[],
                    runs: &record.vantages,
                    running_at: &none,
                    now_unix_ms,
                };
                render(|| view.view())
            }
        }
    }
}

impl Live {
    /// One event: into its vantage's result, or (untagged, or the probe has no vantage runs)
    /// the record's own.
    fn apply(&mut self, tagged: VantageEvent) {
        if let Some(event) = self.vantages.apply(tagged.vantage.as_deref(), tagged.event) {
            self.own.apply(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::api::ProbeEvent;
    use h123_shared::fixture;
    use h123_shared::live::AttemptKey;
    use h123_shared::timeline::{TimedEvent, TraceEvent};
    use h123_shared::vantage::{Vantage, VantageRun};
    use h123_shared::{Attempt, Micros, Phase, ProbeOptions, ProbeResult, Protocol};

    fn record(vantages: &[&str]) -> ProbeRecord {
        let options = ProbeOptions {
            url: "https://example.com/".into(),
            protocols: vec![Protocol::H1, Protocol::H2],
            ..ProbeOptions::default()
        };
        let own = (!vantages.is_empty()).then(|| Vantage::named("server"));
        ProbeRecord {
            vantages: vantages
                .iter()
                .map(|name| VantageRun {
                    vantage: Vantage::named(*name),
                    result: None,
                    problem: None,
                })
                .collect(),
            ..fixture::record(
                "abc",
                ProbeStatus::Running,
                ProbeResult::empty(options, 0, own),
            )
        }
    }

    fn attempt(number: u32) -> Attempt {
        Attempt::started(number, 0, "https://example.com/".into())
    }

    fn event(index: usize, vantage: Option<&str>, event: ProbeEvent) -> Progress {
        let tagged = VantageEvent {
            vantage: vantage.map(str::to_owned),
            event,
        };
        Progress::Event(index, Arc::new(tagged))
    }

    fn started(attempt: u32) -> ProbeEvent {
        ProbeEvent::Phase {
            protocol: Protocol::H1,
            attempt,
            hop: 0,
            event: TimedEvent {
                event: TraceEvent::DnsStart,
                at: Micros(0),
            },
        }
    }

    fn finished(number: u32) -> ProbeEvent {
        ProbeEvent::Attempt {
            protocol: Protocol::H1,
            attempt: Box::new(attempt(number)),
        }
    }

    fn live(view: &View) -> &Live {
        match view {
            View::Running(live) => live,
            View::Finished(_) => panic!("the view finished"),
        }
    }

    #[test]
    fn a_running_probe_s_history_folds_in_once_with_its_attempts_in_flight() {
        // As a probe running here is loaded: its finished attempts already folded into the record.
        let mut loaded = record(&[]);
        loaded.result.runs = vec![h123_shared::ProtocolRun::empty(Protocol::H1)];
        loaded.result.runs[0].attempts.push(attempt(1));
        let mut view = View::new(loaded);
        for progress in [
            event(0, None, started(1)),
            event(1, None, finished(1)),
            event(2, None, started(2)),
        ] {
            view.apply(progress);
        }
        let live = live(&view);
        let shown = live.own.snapshot();
        let numbers: Vec<u32> = shown.runs[0].attempts.iter().map(|a| a.attempt).collect();
        assert_eq!(
            numbers,
            [1, 2],
            "attempt 1 once, attempt 2 as far as it got"
        );
        assert_eq!(
            shown.runs[1].protocol,
            Protocol::H2,
            "every protocol asked for"
        );
        let key = AttemptKey {
            protocol: Protocol::H1,
            attempt: 2,
            hop: 0,
        };
        assert_eq!(live.own.running(), [(key, Some(Phase::Dns))]);
        assert!(live.vantages.runs().is_empty());
        assert!(!view.is_finished());
    }

    #[test]
    fn a_vantage_s_events_fold_into_its_run_and_the_server_s_into_its_own() {
        let mut view = View::new(record(&["server", "fra1"]));
        view.apply(event(0, Some("fra1"), started(1)));
        view.apply(event(1, Some("server"), finished(1)));
        let live = live(&view);
        let runs = live.vantages.runs();
        let attempts = |run: &VantageRun| run.result.as_ref().unwrap().runs[0].attempts.len();
        assert_eq!(runs.len(), 2);
        assert_eq!(attempts(&runs[0]), 1, "the server's finished attempt");
        assert_eq!(attempts(&runs[1]), 1, "fra1's attempt in flight");
        assert_eq!(live.vantages.running()[1].1.len(), 1);
        assert!(
            live.own
                .snapshot()
                .runs
                .iter()
                .all(|r| r.attempts.is_empty()),
            "tagged events are the vantages'"
        );
    }

    #[test]
    fn the_final_record_replaces_the_fold_and_nothing_changes_it_after() {
        let mut view = View::new(record(&[]));
        view.apply(event(0, None, started(1)));
        let mut done = record(&[]);
        done.status = ProbeStatus::Done;
        view.apply(Progress::Done(Arc::new(done.clone())));
        assert!(view.is_finished());
        view.apply(event(1, None, finished(1)));
        assert_eq!(view.clone().into_record(), done);
        assert!(
            View::new(done).is_finished(),
            "a finished record is drawn as it is"
        );
    }
}
