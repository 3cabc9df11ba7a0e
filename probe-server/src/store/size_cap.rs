//! `--max-db-bytes`: what a size cap prunes and what it never touches, and SQLite's pass.
//!
//! A cap counts every table: probe and bench records, monitors' points, rollup cells and
//! deliveries. A pass first keeps only the newest deliveries of each monitor, then deletes,
//! a batch at a time, the oldest finished records and the oldest hour of points (with its
//! hourly cells) while the database is over the cap; nothing created, or slotted, after the
//! floor is ever deleted, so a probe someone just made stays readable. When only such rows are
//! left the cap cannot be met, and the pass says so ([`Pruned::over_cap`]) rather than
//! deleting what users just made.

use super::Result;
use super::codec::to_i64;
use h123_shared::monitor_rollup::HOUR_MS;
use rusqlite::Connection;

/// Deliveries kept per monitor, newest first, when a cap is set.
pub const DELIVERIES_PER_MONITOR: u32 = 50;

/// A size cap on the database.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SizeCap {
    /// The bytes the database may use (`--max-db-bytes`).
    pub max_bytes: u64,
    /// Nothing created (records) or slotted (points) at or after this, in milliseconds since
    /// the Unix epoch, is deleted (now less `--keep-records-secs`).
    pub floor_unix_ms: u64,
    /// Deliveries kept per monitor, newest first.
    pub deliveries_per_monitor: u32,
}

/// What a pruning pass did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Probe and bench records deleted.
    pub records: usize,
    /// The bytes the database used after the pass, when a cap was given (SQLite: its used
    /// pages; PostgreSQL: the rows' bytes).
    pub used_bytes: Option<u64>,
    /// Whether the cap could not be met with what may be deleted.
    pub over_cap: bool,
}

/// The oldest hour of points below the floor: the slot before which the next batch goes.
pub fn points_batch_end(oldest_slot: Option<u64>, floor: u64) -> Option<u64> {
    oldest_slot
        .filter(|oldest| *oldest < floor)
        .map(|oldest| (oldest + HOUR_MS).min(floor))
}

/// Bytes of used pages in SQLite's database (freed pages are reused by later writes, so the
/// file stays near the cap without a VACUUM, which would rewrite the whole database).
fn used(conn: &Connection) -> Result<u64> {
    let pages: i64 = conn.pragma_query_value(None, "page_count", |r| r.get(0))?;
    let free: i64 = conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
    let size: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    Ok(u64::try_from((pages - free).max(0) * size).unwrap_or(0))
}

/// Prunes SQLite's database `conn` to `cap`; the records deleted and the bytes used after.
///
/// # Errors
/// When the database fails.
pub fn sqlite(conn: &Connection, cap: SizeCap) -> Result<Pruned> {
    conn.execute(
        "DELETE FROM monitor_deliveries WHERE seq IN (SELECT seq FROM (SELECT seq, \
         ROW_NUMBER() OVER (PARTITION BY monitor_id ORDER BY seq DESC) AS n \
         FROM monitor_deliveries) WHERE n > ?1)",
        [cap.deliveries_per_monitor],
    )?;
    let floor = to_i64(cap.floor_unix_ms);
    let mut records = 0;
    let mut now_used = used(conn)?;
    while now_used > cap.max_bytes {
        // The oldest finished records below the floor, probes and benches alike.
        let batch = conn.execute(
            "DELETE FROM probes WHERE seq IN (SELECT seq FROM probes \
             WHERE status <> 'running' AND created_at_unix_ms < ?1 ORDER BY seq LIMIT 64)",
            [floor],
        )? + conn.execute(
            "DELETE FROM benches WHERE seq IN (SELECT seq FROM benches \
             WHERE status <> 'running' AND created_at_unix_ms < ?1 ORDER BY seq LIMIT 8)",
            [floor],
        )?;
        records += batch;
        // And the oldest hour of monitors' points, with the hourly cells it ends.
        let oldest: Option<i64> =
            conn.query_row("SELECT MIN(slot_unix_ms) FROM monitor_points", [], |r| {
                r.get(0)
            })?;
        let oldest = oldest.map(|slot| u64::try_from(slot).unwrap_or(0));
        let mut points = 0;
        if let Some(end) = points_batch_end(oldest, cap.floor_unix_ms) {
            points = conn.execute(
                "DELETE FROM monitor_points WHERE slot_unix_ms < ?1",
                [to_i64(end)],
            )?;
            conn.execute(
                "DELETE FROM monitor_rollups WHERE width_ms = ?1 AND start_unix_ms + width_ms <= ?2",
                [to_i64(HOUR_MS), to_i64(end)],
            )?;
        }
        now_used = used(conn)?;
        if batch == 0 && points == 0 {
            break;
        }
    }
    Ok(Pruned {
        records,
        used_bytes: Some(now_used),
        over_cap: now_used > cap.max_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_go_an_hour_at_a_time_and_never_past_the_floor() {
        assert_eq!(points_batch_end(None, 10), None);
        assert_eq!(points_batch_end(Some(0), 10 * HOUR_MS), Some(HOUR_MS));
        assert_eq!(points_batch_end(Some(5), 100), Some(100));
        assert_eq!(points_batch_end(Some(100), 100), None, "the floor holds");
    }
}
