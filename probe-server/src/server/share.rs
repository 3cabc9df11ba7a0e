//! Each vantage's share of a multi-vantage record's size cap. A record that
//! runs at N vantages holds N results, the server's own twice (as the
//! record's `result` and in its vantage's run), so each may take a
//! (N + 1)th of the cap, whatever an agent sends. A vantage's live events
//! are let in while they fit its share, and its final result is cut to the
//! same attempts, so the record, its event history in memory and the events
//! published to other instances all stay within the one cap.

use super::agent_part::{Shape, Tally};
use crate::probe::budget::{MAX_RECORD_BYTES, RecordBudget};
use h123_shared::agent::VantageEvent;
use h123_shared::api::{ProbeEvent, ProbeRecord};
use h123_shared::{Attempt, ProbeOptions, ProbeResult, Protocol};
use std::collections::HashMap;

/// The bytes one vantage's result may take in `record` (the whole cap when
/// it runs at one vantage).
pub fn vantage_bytes(record: &ProbeRecord) -> usize {
    if record.vantages.is_empty() {
        MAX_RECORD_BYTES
    } else {
        MAX_RECORD_BYTES / (record.vantages.len() + 1)
    }
}

/// What each vantage's live events have taken of its share so far.
pub struct EventShares {
    options: ProbeOptions,
    /// The server's own vantage (its events are its engine's, shaped by construction).
    own: Option<String>,
    /// What the probe asks for, which agents' events are held to.
    shape: Shape,
    /// Each agent's events so far.
    tallies: HashMap<Option<String>, Tally>,
    bytes: usize,
    attempts: HashMap<(Option<String>, Protocol), RecordBudget>,
    /// Bytes left per vantage for its other events (phases, skips, stops).
    others: HashMap<Option<String>, usize>,
}

impl EventShares {
    /// The shares of `record`'s vantages, none taken yet.
    pub fn new(record: &ProbeRecord) -> Self {
        EventShares {
            options: record.options.clone(),
            own: super::partial::own_vantage(record),
            shape: Shape::of(&record.options),
            tallies: HashMap::new(),
            bytes: vantage_bytes(record),
            attempts: HashMap::new(),
            others: HashMap::new(),
        }
    }

    /// Whether `event` fits its vantage's share (taking its room if so). An
    /// agent's event must belong to the probe asked for ([`Tally::admit`]);
    /// an attempt fits while its protocol's part of the share has room, as in
    /// the engine; other events while they take no more than the share again.
    pub fn admit(&mut self, event: &VantageEvent) -> bool {
        if event.vantage != self.own {
            let tally = self.tallies.entry(event.vantage.clone()).or_default();
            if !tally.admit(&self.shape, &event.event) {
                return false;
            }
        }
        let size = serde_json::to_vec(&event.event).map_or(usize::MAX, |v| v.len() + 1);
        if let ProbeEvent::Attempt { protocol, attempt } = &event.event {
            return self
                .attempts
                .entry((event.vantage.clone(), *protocol))
                .or_insert_with(|| RecordBudget::within(&self.options, self.bytes))
                .take(attempt);
        }
        let left = self
            .others
            .entry(event.vantage.clone())
            .or_insert(self.bytes);
        match left.checked_sub(size) {
            Some(rest) => {
                *left = rest;
                true
            }
            None => false,
        }
    }
}

/// Cuts `result` to the attempts that fit in `bytes`, each protocol's run
/// within its part as in the engine, saying so in each run it cuts; whether
/// it cut any.
pub fn fit(result: &mut ProbeResult, bytes: usize) -> bool {
    let mut cut = false;
    for run in &mut result.runs {
        // Other addresses' attempts share their protocol's part, as in the engine.
        let budget = RecordBudget::within(&result.options, bytes);
        if let Some(said) = cut_to(&mut run.attempts, &budget, bytes) {
            run.cut_short = Some(said);
            cut = true;
        }
        for other in &mut run.other_addresses {
            if let Some(said) = cut_to(&mut other.attempts, &budget, bytes) {
                other.cut_short = Some(said);
                cut = true;
            }
        }
    }
    cut
}

/// Cuts `attempts` to those `budget` has room for; what it says when it cut.
fn cut_to(attempts: &mut Vec<Attempt>, budget: &RecordBudget, bytes: usize) -> Option<String> {
    let kept = attempts.iter().position(|a| !budget.take(a))?;
    let made = attempts.len();
    attempts.truncate(kept);
    Some(format!(
        "kept its first {kept} of {made} attempts: this vantage's share of the record's size cap ({} KiB of {} KiB) was reached",
        bytes / 1024,
        MAX_RECORD_BYTES / 1024
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::api::ProbeStatus;
    use h123_shared::fixture;
    use h123_shared::vantage::{Vantage, VantageRun};
    use h123_shared::{Attempt, ProtocolRun};

    fn options() -> ProbeOptions {
        ProbeOptions {
            url: "https://example.com/".into(),
            ..ProbeOptions::default()
        }
    }

    fn record(vantages: &[&str]) -> ProbeRecord {
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
                ProbeResult::empty(options(), 0, None),
            )
        }
    }

    /// An attempt of about `kib` KiB (its URL carries the bulk).
    fn attempt(kib: usize) -> Attempt {
        numbered(1, kib)
    }

    /// Attempt `n`, of about `kib` KiB.
    fn numbered(n: u32, kib: usize) -> Attempt {
        let url = format!("https://example.com/{}", "x".repeat(kib * 1024));
        Attempt::started(n, 0, url)
    }

    fn attempt_event(vantage: &str, protocol: Protocol, n: u32, kib: usize) -> VantageEvent {
        VantageEvent {
            vantage: Some(vantage.into()),
            event: ProbeEvent::Attempt {
                protocol,
                attempt: Box::new(numbered(n, kib)),
            },
        }
    }

    #[test]
    fn a_vantage_may_take_its_part_of_the_cap_the_server_s_own_counted_twice() {
        assert_eq!(vantage_bytes(&record(&[])), MAX_RECORD_BYTES);
        assert_eq!(
            vantage_bytes(&record(&["server", "fra1", "sfo1"])),
            MAX_RECORD_BYTES / 4
        );
    }

    #[test]
    fn live_attempts_are_let_in_per_vantage_and_protocol_until_their_part_is_full() {
        // 1 MiB / 3 = 341 KiB a vantage, less 32 KiB of envelope: 103 KiB a protocol.
        let mut shares = EventShares::new(&record(&["server", "fra1"]));
        let admitted = (1..=4)
            .filter(|n| shares.admit(&attempt_event("fra1", Protocol::H1, *n, 40)))
            .count();
        assert_eq!(admitted, 2);
        assert!(shares.admit(&attempt_event("fra1", Protocol::H2, 1, 40)));
        assert!(shares.admit(&attempt_event("server", Protocol::H1, 1, 40)));
        let end = |event| VantageEvent {
            vantage: Some("fra1".into()),
            event,
        };
        let reason = "y".repeat(200 * 1024);
        assert!(shares.admit(&end(ProbeEvent::Skipped {
            protocol: Protocol::H3,
            reason: reason.clone(),
        })));
        assert!(
            !shares.admit(&end(ProbeEvent::Stopped {
                protocol: Protocol::H3,
                reason,
            })),
            "other events stop at the share too"
        );
    }

    #[test]
    fn a_final_result_is_cut_to_the_attempts_its_events_had_room_for() {
        let mut result = ProbeResult::empty(options(), 0, None);
        for protocol in [Protocol::H1, Protocol::H2] {
            result.runs.push(ProtocolRun {
                attempts: vec![attempt(40), attempt(40), attempt(40)],
                ..ProtocolRun::empty(protocol)
            });
        }
        let bytes = MAX_RECORD_BYTES / 3;
        let mut small = result.clone();
        small.runs[1].attempts.truncate(2);
        assert!(fit(&mut result, bytes));
        let kept: Vec<usize> = result.runs.iter().map(|r| r.attempts.len()).collect();
        assert_eq!(kept, [2, 2]);
        assert_eq!(
            result.runs[0].cut_short.as_deref(),
            Some(
                "kept its first 2 of 3 attempts: this vantage's share of the record's size cap (341 KiB of 1024 KiB) was reached"
            )
        );
        small.runs[0].attempts.truncate(2);
        assert!(!fit(&mut small, bytes), "what fits is left alone");
        assert!(small.runs.iter().all(|r| r.cut_short.is_none()));
    }
}
