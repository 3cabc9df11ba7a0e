//! A running probe's partial record, folded from its events: the attempts
//! finished so far, each in its vantage's result. The instance that runs a
//! probe folds its own event history; another instance folds the events the
//! runner published to the shared database, so both read the same record.

use h123_shared::agent::VantageEvent;
use h123_shared::api::{ProbeEvent, ProbeRecord};
use h123_shared::{ProbeResult, Protocol, ProtocolRun};

/// Folds `events` (in order) into `record`, a running probe's record as it
/// was created.
pub fn fold<'e>(record: &mut ProbeRecord, events: impl IntoIterator<Item = &'e VantageEvent>) {
    let own = own_vantage(record);
    let protocols = record.options.protocols.clone();
    for event in events {
        let Some(result) = result_of(record, own.as_deref(), event.vantage.as_deref()) else {
            continue;
        };
        match &event.event {
            ProbeEvent::Attempt { protocol, attempt } => {
                run_mut(result, &protocols, *protocol)
                    .attempts
                    .push((**attempt).clone());
            }
            ProbeEvent::Skipped { protocol, reason } => {
                run_mut(result, &protocols, *protocol).skipped = Some(reason.clone());
            }
            ProbeEvent::Stopped { protocol, reason } => {
                run_mut(result, &protocols, *protocol).stopped = Some(reason.clone());
            }
            ProbeEvent::Discovery {
                protocol,
                discovery,
            } => {
                run_mut(result, &protocols, *protocol).discovery = Some((**discovery).clone());
            }
            ProbeEvent::Phase { .. } => {}
        }
    }
}

/// The name the running server's own events carry: its vantage's, when the
/// probe runs at several vantages; `None` (untagged events) otherwise.
pub fn own_vantage(record: &ProbeRecord) -> Option<String> {
    (!record.vantages.is_empty())
        .then(|| record.result.vantage.as_ref().map(|v| v.name.clone()))
        .flatten()
}

/// The partial result an event of `vantage` folds into: the record's own for
/// the server's (or an untagged) event, else that vantage's run while it has
/// no final result.
fn result_of<'r>(
    record: &'r mut ProbeRecord,
    own: Option<&str>,
    vantage: Option<&str>,
) -> Option<&'r mut ProbeResult> {
    let Some(name) = vantage.filter(|v| Some(*v) != own) else {
        return Some(&mut record.result);
    };
    let options = record.options.clone();
    let started = record.created_at_unix_ms;
    let run = record
        .vantages
        .iter_mut()
        .find(|run| run.vantage.name == name && run.problem.is_none())?;
    if run.result.as_ref().is_some_and(|r| r.analysis.is_some()) {
        // Finished: its final result stands.
        return None;
    }
    let vantage = run.vantage.clone();
    Some(
        run.result
            .get_or_insert_with(|| ProbeResult::empty(options, started, Some(vantage))),
    )
}

/// The run of `protocol` in `result`, created in the options' order (`protocols`) if missing.
fn run_mut<'r>(
    result: &'r mut ProbeResult,
    protocols: &[Protocol],
    protocol: Protocol,
) -> &'r mut ProtocolRun {
    let runs = &mut result.runs;
    let index = match runs.iter().position(|r| r.protocol == protocol) {
        Some(i) => i,
        None => {
            let order = |p: Protocol| protocols.iter().position(|&q| q == p);
            let at = runs
                .iter()
                .position(|r| order(r.protocol) > order(protocol))
                .unwrap_or(runs.len());
            runs.insert(at, ProtocolRun::empty(protocol));
            at
        }
    };
    &mut runs[index]
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::api::ProbeStatus;
    use h123_shared::vantage::{Vantage, VantageRun};
    use h123_shared::{ProbeOptions, analysis};

    fn skipped(vantage: &str, protocol: Protocol) -> VantageEvent {
        VantageEvent {
            vantage: Some(vantage.into()),
            event: ProbeEvent::Skipped {
                protocol,
                reason: format!("at {vantage}"),
            },
        }
    }

    fn run(name: &str) -> VantageRun {
        VantageRun {
            vantage: Vantage::named(name),
            result: None,
            problem: None,
        }
    }

    #[test]
    fn each_vantage_s_events_fold_into_its_own_result_until_it_has_its_final_one() {
        let options = ProbeOptions {
            url: "https://example.com/".into(),
            ..ProbeOptions::default()
        };
        let own = Some(Vantage::named("server"));
        let mut done = run("done");
        done.result = Some(analysis::analyzed(ProbeResult::empty(
            options.clone(),
            0,
            None,
        )));
        let mut record = ProbeRecord {
            id: "abc".into(),
            status: ProbeStatus::Running,
            created_at_unix_ms: 0,
            result: ProbeResult::empty(options.clone(), 0, own),
            options,
            queued_ms: None,
            cancel_reason: None,
            vantages: vec![run("server"), run("fra1"), done],
            browser: None,
            monitor: None,
        };
        let events = [
            skipped("fra1", Protocol::H3),
            skipped("server", Protocol::H1),
            skipped("fra1", Protocol::H1),
            skipped("done", Protocol::H2),
            skipped("unknown", Protocol::H2),
        ];
        fold(&mut record, &events);
        let skips = |result: &ProbeResult| -> Vec<(Protocol, String)> {
            result
                .runs
                .iter()
                .map(|r| (r.protocol, r.skipped.clone().unwrap_or_default()))
                .collect()
        };
        assert_eq!(skips(&record.result), [(Protocol::H1, "at server".into())]);
        let fra1 = record.vantages[1]
            .result
            .as_ref()
            .expect("fra1's partial result");
        assert_eq!(
            skips(fra1),
            [
                (Protocol::H1, "at fra1".into()),
                (Protocol::H3, "at fra1".into())
            ],
            "in the options' order"
        );
        assert_eq!(fra1.vantage, Some(Vantage::named("fra1")));
        assert!(
            record.vantages[0].result.is_none(),
            "the server's is the record's own"
        );
        assert!(skips(record.vantages[2].result.as_ref().unwrap()).is_empty());
    }
}
