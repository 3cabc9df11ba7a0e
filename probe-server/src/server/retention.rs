//! Retention: a periodic task that deletes finished records past their age or over the database's size budget.
//!
//! Permalinks are meant to last, so nothing is deleted unless the operator
//! sets `--retention-days` or `--max-db-bytes`; except the records of monitor runs, which a
//! thousand monitors every minute would make at gigabytes a day: they go after
//! `--monitor-records-days` (7), while the monitor's history (its points) stays.

use crate::store::SharedStore;
use std::time::Duration;

/// What the operator keeps.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    /// Finished records older than this are deleted.
    pub max_age: Option<Duration>,
    /// The oldest finished records are deleted while the records use more than this.
    pub max_db_bytes: Option<u64>,
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
pub fn spawn(store: SharedStore, retention: Retention) {
    if !retention.is_bounded() {
        return;
    }
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(retention.interval.max(Duration::from_secs(1)));
        loop {
            ticks.tick().await;
            if let Some(age) = retention.monitor_records_max_age {
                match store.prune_monitor_records(cutoff(age)).await {
                    Ok(0) => {}
                    Ok(n) => eprintln!("h123 serve: retention deleted {n} monitor run record(s)"),
                    Err(e) => eprintln!("h123 serve: retention of monitor runs failed: {e}"),
                }
            }
            if retention.max_age.is_none() && retention.max_db_bytes.is_none() {
                continue;
            }
            match store
                .prune(retention.max_age.map(cutoff), retention.max_db_bytes)
                .await
            {
                Ok(0) => {}
                Ok(n) => eprintln!("h123 serve: retention deleted {n} finished record(s)"),
                Err(e) => eprintln!("h123 serve: retention failed: {e}"),
            }
        }
    });
}
