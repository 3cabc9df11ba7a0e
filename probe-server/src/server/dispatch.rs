//! Agents' parts of a probe: queueing them at creation, taking in what an
//! agent reports (redacted, stamped with its vantage, analyzed), and the
//! sweeper that ends the jobs of agents that went away.

use super::AppState;
use super::registry::LiveProbe;
use super::runner::store_final;
use h123_shared::ProbeResult;
use h123_shared::redact;
use std::time::Duration;

/// Sets agent `vantage`'s outcome on probe `live`: a result is redacted,
/// given the record's (redacted) options, stamped with the vantage and
/// analyzed; a problem is kept as said. Stores the record once it is whole.
pub async fn complete(
    state: &AppState,
    live: &LiveProbe,
    vantage: &str,
    outcome: Result<ProbeResult, String>,
) {
    let record = live.record();
    let outcome = outcome.map(|mut result| {
        redact::redact_result(&mut result);
        // What the agent says it ran is not trusted: the record says what was asked.
        result.options = record.options.clone();
        result.vantage = Some(state.agents.vantage(vantage));
        h123_shared::analysis::analyzed(result)
    });
    if let Some(record) = live.complete_vantage(vantage, outcome) {
        store_final(state, live, record).await;
    }
}

/// Starts the task that ends expired jobs, checking a few times per lease.
pub fn spawn_sweeper(state: AppState) {
    let every = (state.jobs.lease() / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            for expired in state.jobs.sweep() {
                eprintln!(
                    "h123 serve: probe {}: {}",
                    expired.live.record().id,
                    expired.reason
                );
                complete(&state, &expired.live, &expired.vantage, Err(expired.reason)).await;
            }
        }
    });
}
