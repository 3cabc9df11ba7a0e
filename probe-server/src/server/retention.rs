//! Retention: a periodic task that deletes finished records past their age or over the database's size budget.
//!
//! Permalinks are meant to last, so nothing is deleted unless the operator
//! sets `--retention-days` or `--max-db-bytes`; except the records of monitor runs, which a
//! thousand monitors every minute would make at gigabytes a day: they go after
//! `--monitor-records-days` (7), while the monitor's history (its points) stays.
//!
//! `--max-db-bytes` counts and prunes every table (`store::size_cap`) but never what is
//! younger than `--keep-records-secs`, so a probe someone just made stays readable; when
//! that leaves the database over its cap, each pass says so in the log and on `/metrics`
//! (`h123_db_over_cap`).

use super::AppState;
use crate::store::size_cap::{DELIVERIES_PER_MONITOR, SizeCap};
use std::time::Duration;

/// What the operator keeps.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    /// Finished records older than this are deleted.
    pub max_age: Option<Duration>,
    /// The oldest finished records, points and deliveries are deleted while the database
    /// uses more than this.
    pub max_db_bytes: Option<u64>,
    /// What `max_db_bytes` never deletes: records and points younger than this.
    pub keep_records: Duration,
    /// Records of monitor runs older than this are deleted (their points stay).
    pub monitor_records_max_age: Option<Duration>,
    /// How often the task runs.
    pub interval: Duration,
}

impl Retention {
    /// Whether anything is ever deleted.
    pub fn is_bounded(&self) -> bool {
        self.max_age.is_some()
            || self.max_db_bytes.is_some()
            || self.monitor_records_max_age.is_some()
    }
}

/// Milliseconds since the epoch `age` ago.
fn cutoff(age: Duration) -> u64 {
    crate::probe::trace::unix_ms()
        .saturating_sub(u64::try_from(age.as_millis()).unwrap_or(u64::MAX))
}

/// Runs one pruning pass now and then one per interval, for as long as the
/// server runs; does nothing when `retention` is unbounded.
pub fn spawn(state: AppState, retention: Retention) {
    if !retention.is_bounded() {
        return;
    }
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(retention.interval.max(Duration::from_secs(1)));
        loop {
            ticks.tick().await;
            if let Some(age) = retention.monitor_records_max_age {
                match state.store.prune_monitor_records(cutoff(age)).await {
                    Ok(0) => {}
                    Ok(n) => eprintln!("h123 serve: retention deleted {n} monitor run record(s)"),
                    Err(e) => eprintln!("h123 serve: retention of monitor runs failed: {e}"),
                }
            }
            if retention.max_age.is_none() && retention.max_db_bytes.is_none() {
                continue;
            }
            let cap = retention.max_db_bytes.map(|max_bytes| SizeCap {
                max_bytes,
                floor_unix_ms: cutoff(retention.keep_records),
                deliveries_per_monitor: DELIVERIES_PER_MONITOR,
            });
            match state.store.prune(retention.max_age.map(cutoff), cap).await {
                Ok(pruned) => {
                    if pruned.records > 0 {
                        eprintln!(
                            "h123 serve: retention deleted {} finished record(s)",
                            pruned.records
                        );
                    }
                    if let (Some(used), Some(cap)) = (pruned.used_bytes, cap) {
                        state.metrics.db_size(used, pruned.over_cap);
                        if pruned.over_cap {
                            eprintln!(
                                "h123 serve: the database uses {used} bytes, over --max-db-bytes \
                                 {}, and holds nothing older than --keep-records-secs left to delete",
                                cap.max_bytes
                            );
                        }
                    }
                }
                Err(e) => eprintln!("h123 serve: retention failed: {e}"),
            }
        }
    });
}
