//! Running one accepted probe: wait for a fair share of the slots, run the engine, stream its
//! events into the registry, store the final record.

use super::AppState;
use super::egress_quota::Reservation;
use super::registry::LiveProbe;
use crate::probe::plan::Plan;
use crate::probe::trace::Progress;
use h123_shared::api::{ProbeEvent, ProbeRecord, ProbeStatus};
use h123_shared::redact;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc;

/// Starts `plan` in the background for the already registered and stored
/// `live` probe, holding its client's byte `reservation` until it ends.
pub fn spawn(state: AppState, live: Arc<LiveProbe>, plan: Plan, reservation: Option<Reservation>) {
    tokio::spawn(run(state, live, plan, reservation));
}

async fn run(state: AppState, live: Arc<LiveProbe>, plan: Plan, reservation: Option<Reservation>) {
    let queued_at = crate::probe::trace::now();
    let _slot = state.slots.acquire(live.client).await;
    let waited = crate::probe::trace::now().saturating_duration_since(queued_at);
    live.set_queued_ms(u64::try_from(waited.as_millis()).unwrap_or(u64::MAX));
    if live.is_finished() {
        // Cancelled by shutdown while queued.
        return;
    }
    state.running.fetch_add(1, Ordering::Relaxed);
    let (sender, mut receiver) = mpsc::unbounded_channel::<ProbeEvent>();
    let probe = state.engine.run_observed(&plan, Progress::to(sender));
    let forward = async {
        // Events leave the engine here: nothing past this point sees a secret.
        while let Some(mut event) = receiver.recv().await {
            redact::redact_event(&mut event, &plan.options.keep_secret);
            live.push(event);
        }
    };
    let outcome = tokio::time::timeout(state.config.max_probe_time, async {
        let (result, ()) = tokio::join!(probe, forward);
        result
    })
    .await;
    state.running.fetch_sub(1, Ordering::Relaxed);
    if let Some(egress) = &plan.egress {
        state.metrics.target_bytes(egress.used());
    }
    // What the probe did not receive goes back to its client now.
    drop(reservation);
    // The result as records keep it: stamped with this server's vantage and
    // redacted (then analyzed: here, or by the registry across vantages).
    let outcome = outcome.map(|mut result| {
        result.vantage = Some(state.config.vantage.clone());
        redact::redact_result(&mut result);
        result
    });
    if live.is_multi() {
        // One vantage of several: the record is finished once all are.
        let outcome = outcome.map_err(|_| {
            format!(
                "the server's own run took longer than its limit of {} s",
                state.config.max_probe_time.as_secs()
            )
        });
        if let Some(record) = live.complete_vantage(&state.config.vantage.name, outcome) {
            store_final(&state, &live, record).await;
        }
        return;
    }
    let record = match outcome {
        Ok(result) => {
            let mut record = live.record();
            record.status = ProbeStatus::Done;
            record.result = h123_shared::analysis::analyzed(result);
            record
        }
        Err(_) => live.cancelled_record(),
    };
    store_final(&state, &live, record).await;
}

/// Stores the finished `record` of `live`, then finishes it (subscribers get
/// their `done`) and forgets it, with its agents' jobs.
pub async fn store_final(state: &AppState, live: &LiveProbe, record: ProbeRecord) {
    // Its last live events reach the other instances before its final record.
    state.relay.flush(live).await;
    // Stored first, so once the probe leaves the registry the store has its final state.
    match state.store.update(record.clone()).await {
        Ok(()) => {
            state.metrics.probe_finished(record.status, &record.result);
            live.finish(record);
        }
        // Finished already: by shutdown (which finished the live probe too),
        // or, with PostgreSQL, by another instance that found this one's
        // lease expired. Subscribers get what the store holds.
        Err(crate::store::StoreError::Immutable(_)) => {
            if !live.is_finished() {
                match state.store.get(record.id.clone()).await {
                    Ok(Some(stored)) => live.finish(stored),
                    _ => live.finish(record),
                };
            }
        }
        Err(e) => {
            eprintln!("h123 serve: cannot store probe {}: {e}", record.id);
            live.finish(record);
        }
    }
    let id = live.id();
    if live.is_multi() {
        state.jobs.forget_probe(&id).await;
    }
    state.registry.remove(&id);
}
