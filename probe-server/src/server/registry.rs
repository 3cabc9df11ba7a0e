//! Probes in flight: each one's event history, partial result and a change signal.
//!
//! A subscriber keeps a cursor into the history and waits on a `watch`
//! channel for more, so one that connects late reads everything from the
//! start, and a slow one never loses an event (no broadcast lag). Events and
//! the final record are shared (`Arc`): a subscriber copies pointers, never
//! the history itself.

use super::agent_part;
use super::client::ClientKey;
use super::share::{self, EventShares};
use h123_shared::ProbeResult;
use h123_shared::agent::VantageEvent;
use h123_shared::api::{ProbeEvent, ProbeRecord, ProbeStatus};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

/// All probes in flight, by id.
#[derive(Clone, Default)]
pub struct Registry {
    probes: Arc<Mutex<HashMap<String, Arc<LiveProbe>>>>,
}

/// One probe in flight.
pub struct LiveProbe {
    /// Who asked for it (for the per-client cap).
    pub client: ClientKey,
    /// The server's own vantage name when the probe runs at several
    /// vantages (its events are then tagged with it); `None` otherwise.
    own: Option<String>,
    state: Mutex<LiveState>,
    changed: watch::Sender<u64>,
}

struct LiveState {
    record: ProbeRecord,
    events: Vec<Arc<VantageEvent>>,
    /// Each vantage's share of the record, when it runs at several.
    shares: Option<EventShares>,
    finished: bool,
    done: Option<Arc<ProbeRecord>>,
}

/// What a subscriber gets on each read: new events, and the final record once finished.
#[derive(Debug, Default)]
pub struct Update {
    /// Events after the subscriber's cursor, in order (shared, not copied).
    pub events: Vec<Arc<VantageEvent>>,
    /// The final record, once the probe finished (sent after the events).
    pub done: Option<Arc<ProbeRecord>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Registry {
    /// Adds a probe in flight, starting from `record`.
    pub fn insert(&self, record: ProbeRecord, client: ClientKey) -> Arc<LiveProbe> {
        let live = LiveProbe::new(record, client);
        lock(&self.probes).insert(live.record().id, live.clone());
        live
    }

    /// Adds a probe unless `client` has `per_client` in flight already, or
    /// `total` are in flight over all clients; checked and added atomically.
    ///
    /// # Errors
    /// Which cap was reached.
    pub fn try_insert(
        &self,
        record: ProbeRecord,
        client: ClientKey,
        per_client: usize,
        total: usize,
    ) -> Result<Arc<LiveProbe>, Refusal> {
        let mut probes = lock(&self.probes);
        if probes.len() >= total {
            return Err(Refusal::Full);
        }
        if probes.values().filter(|p| p.client == client).count() >= per_client {
            return Err(Refusal::Client);
        }
        let live = LiveProbe::new(record, client);
        probes.insert(live.record().id, live.clone());
        Ok(live)
    }

    /// The probe in flight with this id.
    pub fn get(&self, id: &str) -> Option<Arc<LiveProbe>> {
        lock(&self.probes).get(id).cloned()
    }

    /// Forgets a finished probe (its record is in the store by then).
    pub fn remove(&self, id: &str) {
        lock(&self.probes).remove(id);
    }

    /// How many probes `client` has in flight.
    pub fn count_for(&self, client: ClientKey) -> usize {
        lock(&self.probes)
            .values()
            .filter(|p| p.client == client)
            .count()
    }

    /// How many probes are in flight.
    pub fn len(&self) -> usize {
        lock(&self.probes).len()
    }

    /// Whether no probe is in flight.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every probe in flight.
    pub fn all(&self) -> Vec<Arc<LiveProbe>> {
        lock(&self.probes).values().cloned().collect()
    }
}

/// Why [`Registry::try_insert`] refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The client has its maximum of probes in flight.
    Client,
    /// The server has its maximum in flight (running plus queued).
    Full,
}

impl LiveProbe {
    fn new(record: ProbeRecord, client: ClientKey) -> Arc<Self> {
        let (changed, _) = watch::channel(0);
        let own = super::partial::own_vantage(&record);
        let shares = (!record.vantages.is_empty()).then(|| EventShares::new(&record));
        Arc::new(LiveProbe {
            client,
            own,
            state: Mutex::new(LiveState {
                record,
                events: Vec::new(),
                shares,
                finished: false,
                done: None,
            }),
            changed,
        })
    }

    /// The record as it stands (partial while running: the attempts finished so far).
    pub fn record(&self) -> ProbeRecord {
        let state = lock(&self.state);
        let mut record = state.record.clone();
        if !state.finished {
            // The attempts so far live once, in the event history; a reader's
            // copy is folded from it.
            super::partial::fold(&mut record, state.events.iter().map(|e| &**e));
        }
        record
    }

    /// Whether the probe runs at several vantages.
    pub fn is_multi(&self) -> bool {
        self.own.is_some()
    }

    /// Sets vantage `name`'s final result (cut to the vantage's share of the
    /// record, then analyzed) or why it has none.
    /// Returns the finished record once every vantage has its answer: the
    /// server's own result as `result` when it ran, else the first vantage's.
    pub fn complete_vantage(
        &self,
        name: &str,
        outcome: Result<ProbeResult, String>,
    ) -> Option<ProbeRecord> {
        let bytes = share::vantage_bytes(&lock(&self.state).record);
        let outcome = outcome.map(|mut result| {
            share::fit(&mut result, bytes);
            h123_shared::analysis::analyzed(result)
        });
        self.set_vantage(name, outcome)
    }

    /// Sets agent `name`'s final result, held to the probe asked for and to
    /// the vantage's share of the record ([`agent_part::checked`]: a result
    /// beyond either becomes the vantage's problem), or why it has none;
    /// returns the finished record as [`LiveProbe::complete_vantage`] does.
    pub fn complete_agent(
        &self,
        name: &str,
        outcome: Result<ProbeResult, String>,
    ) -> Option<ProbeRecord> {
        let (bytes, options) = {
            let state = lock(&self.state);
            (
                share::vantage_bytes(&state.record),
                state.record.options.clone(),
            )
        };
        let outcome = outcome.and_then(|result| {
            agent_part::checked(result, &options, bytes)
                .map_err(|why| format!("agent {name}: {why}"))
        });
        self.set_vantage(name, outcome)
    }

    /// Sets vantage `name`'s (analyzed) final result or problem; the finished
    /// record once every vantage has its answer.
    fn set_vantage(&self, name: &str, outcome: Result<ProbeResult, String>) -> Option<ProbeRecord> {
        let mut state = lock(&self.state);
        if state.finished {
            return None;
        }
        let run = state.record.vantages.iter_mut().find(|run| {
            run.vantage.name == name && run.result.is_none() && run.problem.is_none()
        })?;
        match outcome {
            Ok(result) => run.result = Some(result),
            Err(problem) => run.problem = Some(problem),
        }
        let complete = state
            .record
            .vantages
            .iter()
            .all(|run| run.result.is_some() || run.problem.is_some());
        if !complete {
            return None;
        }
        let mut record = state.record.clone();
        drop(state);
        record.status = ProbeStatus::Done;
        let main = record
            .vantages
            .iter()
            .find(|run| Some(run.vantage.name.as_str()) == self.own.as_deref())
            .and_then(|run| run.result.clone())
            .or_else(|| record.vantages.iter().find_map(|run| run.result.clone()));
        record.result = match main {
            Some(result) => result,
            None => h123_shared::analysis::analyzed(record.result),
        };
        Some(record)
    }

    /// The probe's id.
    pub fn id(&self) -> String {
        lock(&self.state).record.id.clone()
    }

    /// Whether the probe has finished.
    pub fn is_finished(&self) -> bool {
        lock(&self.state).finished
    }

    /// Appends an event (the partial result is folded from the history when
    /// read, so an attempt is held once) and wakes subscribers. Ignored once finished.
    pub fn push(&self, event: ProbeEvent) {
        self.push_from(self.own.clone(), event);
    }

    /// Appends an event of vantage `vantage` (an agent's), as [`LiveProbe::push`]
    /// does; one past the vantage's share of the record is dropped.
    pub fn push_from(&self, vantage: Option<String>, event: ProbeEvent) {
        let mut state = lock(&self.state);
        if state.finished {
            return;
        }
        let event = VantageEvent { vantage, event };
        if state.shares.as_mut().is_some_and(|s| !s.admit(&event)) {
            return;
        }
        state.events.push(Arc::new(event));
        let n = state.events.len() as u64;
        drop(state);
        self.changed.send_replace(n);
    }

    /// Sets the final record (the first call wins) and wakes subscribers.
    /// Returns whether this call finished the probe.
    pub fn finish(&self, record: ProbeRecord) -> bool {
        let mut state = lock(&self.state);
        if state.finished {
            return false;
        }
        state.done = Some(Arc::new(record.clone()));
        state.record = record;
        state.finished = true;
        let n = state.events.len() as u64 + 1;
        drop(state);
        self.changed.send_replace(n);
        true
    }

    /// Notes how long the probe waited for its running slot.
    pub fn set_queued_ms(&self, ms: u64) {
        lock(&self.state).record.queued_ms = Some(ms);
        self.changed.send_modify(|_| {});
    }

    /// A record for a cancelled probe: what finished so far.
    pub fn cancelled_record(&self) -> ProbeRecord {
        let mut record = self.record();
        record.status = ProbeStatus::Cancelled;
        record.result = h123_shared::analysis::analyzed(record.result);
        record
    }

    /// A signal that fires on every change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Events from `cursor` on, and the final record if finished.
    pub fn read_from(&self, cursor: usize) -> Update {
        let state = lock(&self.state);
        Update {
            events: state.events.get(cursor..).unwrap_or_default().to_vec(),
            done: state.done.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::fixture;
    use h123_shared::{ProbeOptions, ProbeResult, Protocol};

    fn record() -> ProbeRecord {
        let options = ProbeOptions {
            url: "https://example.com/".into(),
            ..ProbeOptions::default()
        };
        fixture::record(
            "abc",
            ProbeStatus::Running,
            ProbeResult::empty(options, 0, None),
        )
    }

    #[test]
    fn late_readers_see_everything_then_done() {
        let registry = Registry::default();
        let me = ClientKey::new(std::net::IpAddr::from([127, 0, 0, 1]), 64);
        let live = registry.insert(record(), me);
        live.push(ProbeEvent::Skipped {
            protocol: Protocol::H3,
            reason: "no".into(),
        });
        live.push(ProbeEvent::Skipped {
            protocol: Protocol::H1,
            reason: "no".into(),
        });
        let update = live.read_from(0);
        assert_eq!(update.events.len(), 2);
        assert!(update.done.is_none());
        // Runs are kept in the order the options ask for.
        let protocols: Vec<_> = live
            .record()
            .result
            .runs
            .iter()
            .map(|r| r.protocol)
            .collect();
        assert_eq!(protocols, [Protocol::H1, Protocol::H3]);
        let mut done = record();
        done.status = ProbeStatus::Done;
        assert!(live.finish(done.clone()));
        assert!(!live.finish(record()));
        let update = live.read_from(2);
        assert!(update.events.is_empty());
        assert_eq!(update.done.as_deref(), Some(&done));
        assert_eq!(live.read_from(99).events.len(), 0);
        assert_eq!(registry.count_for(me), 1);
        registry.remove("abc");
        assert!(registry.is_empty());
    }
}
