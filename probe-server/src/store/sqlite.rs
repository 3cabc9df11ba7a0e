//! The SQLite [`Store`]: WAL, `synchronous=FULL`, versioned migrations, immutable finished records.

mod group_commit;

use super::codec::{
    BENCH_COLUMNS, BenchRow, bench_options, bench_options_json, bench_result_json,
    browser_inserted, browser_refusal, json_of, list_columns, list_outcome, parse, status_from,
    to_i64, to_json, visibility_from, with_browser,
};
use super::monitor_rows::{DeliveryLog, MonitorsOf, StoredMonitor};
use super::size_cap::{self, Pruned, SizeCap};
use super::sqlite_monitors as monitors;
use super::{Attached, Commit, Result, Store, StoreError};
use group_commit::{GroupCommit, NewRow, Write};
use h123_shared::alert::AlertState;
use h123_shared::api::{BenchRecord, BenchSummary, ProbeRecord, ProbeStatus, ProbeSummary};
use h123_shared::browser::BrowserRun;
use h123_shared::monitor::MonitorPoint;
use h123_shared::monitor_rollup::{Cell, CellKey};
use h123_shared::{Protocol, redact};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Migrations in order; migration `i` brings the schema to `user_version = i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("../../migrations/0001_probes.sql"),
    include_str!("../../migrations/0002_benches.sql"),
    include_str!("../../migrations/0003_visibility.sql"),
    include_str!("../../migrations/0004_browser_runs.sql"),
    include_str!("../../migrations/0005_bench_owner.sql"),
    include_str!("../../migrations/0006_bench_cancel_reason.sql"),
    include_str!("../../migrations/0007_monitors.sql"),
    include_str!("../../migrations/0008_monitor_records.sql"),
    include_str!("../../migrations/0009_list_verdict.sql"),
    include_str!("../../migrations/0010_monitor_rollups.sql"),
    include_str!("../../migrations/0011_monitor_client.sql"),
    include_str!("../../migrations/0012_monitor_running.sql"),
];

/// The trigger migrations 3 and 9 drop while their rows are redacted and backfilled.
const PROBES_IMMUTABLE: &str = "CREATE TRIGGER probes_immutable
BEFORE UPDATE ON probes
WHEN OLD.status <> 'running'
BEGIN
    SELECT RAISE(ABORT, 'finished probes are immutable');
END;";

/// A SQLite database file: one connection for writes, one for reads (WAL lets
/// reads run beside a write). Probe inserts and updates are group-committed
/// by [`GroupCommit`]'s thread: one transaction and one fsync for every such
/// write waiting at that moment.
pub struct SqliteStore {
    writer: Arc<Mutex<Connection>>,
    reader: Mutex<Connection>,
    commits: GroupCommit,
}

impl SqliteStore {
    /// Opens (creating it and its folder if needed) and migrates the database at `path`.
    ///
    /// # Errors
    /// When the folder or file cannot be created, or a migration fails.
    pub fn open(path: &Path) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                StoreError::Setup(format!("cannot create folder {}: {e}", dir.display()))
            })?;
        }
        let mut writer = Connection::open(path)?;
        configure(&writer)?;
        migrate(&mut writer)?;
        let reader = Connection::open(path)?;
        configure(&reader)?;
        let writer = Arc::new(Mutex::new(writer));
        Ok(SqliteStore {
            commits: GroupCommit::start(writer.clone())?,
            writer,
            reader: Mutex::new(reader),
        })
    }

    fn writer(&self) -> MutexGuard<'_, Connection> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reader(&self) -> MutexGuard<'_, Connection> {
        self.reader.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: a commit is fsynced before it returns, so a 202 means "on disk".
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

fn migrate(conn: &mut Connection) -> Result<()> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let applied = usize::try_from(version).unwrap_or(0);
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        match i + 1 {
            3 => redact_and_summarise(&tx)?,
            9 => fill_list_lines(&tx)?,
            10 => monitors::fill_rollups(&tx)?,
            _ => {}
        }
        tx.pragma_update(
            None,
            "user_version",
            i64::try_from(i + 1).unwrap_or(i64::MAX),
        )?;
        tx.commit()?;
    }
    Ok(())
}

/// Migration 3's data step: redacts every stored record (older servers kept
/// secrets), fills the summary columns, then restores the immutability trigger.
fn redact_and_summarise(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    let rows: Vec<(String, String)> = {
        let mut statement = tx.prepare("SELECT id, record FROM probes")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (id, json) in rows {
        let Ok(record) = from_json(&id, &json) else {
            continue;
        };
        tx.execute(
            "UPDATE probes SET record = ?2, url = ?3, protocols = ?4 WHERE id = ?1",
            params![
                id,
                to_json(&record)?,
                redact::redact_url(&record.options.url, &record.options.keep_secret),
                json_of(&id, &record.options.protocols)?
            ],
        )?;
    }
    tx.execute_batch(PROBES_IMMUTABLE)?;
    Ok(())
}

/// Migration 9's data step: fills the list-line columns of every finished probe from its record
/// (a batch at a time, so a large database is never held in memory whole), then restores the
/// immutability trigger. A record that no longer parses keeps none, as one without an analysis.
fn fill_list_lines(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    let mut after = i64::MIN;
    loop {
        let rows: Vec<(i64, String, String)> = {
            let mut statement = tx.prepare(
                "SELECT seq, id, record FROM probes WHERE status <> 'running' AND seq > ?1 \
                 ORDER BY seq LIMIT 256",
            )?;
            let rows =
                statement.query_map([after], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        let Some(last) = rows.last().map(|r| r.0) else {
            break;
        };
        for (_, id, json) in rows {
            let Ok(record) = from_json(&id, &json) else {
                continue;
            };
            let (outcome, verdict) = list_columns(&record);
            tx.execute(
                "UPDATE probes SET outcome = ?2, verdict = ?3 WHERE id = ?1",
                params![id, outcome, verdict],
            )?;
        }
        after = last;
    }
    tx.execute_batch(PROBES_IMMUTABLE)?;
    Ok(())
}

fn from_json(id: &str, json: &str) -> Result<ProbeRecord> {
    parse(id, json)
}

fn bench_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<BenchRow> {
    Ok(BenchRow {
        id: row.get(0)?,
        created_at_unix_ms: row.get(1)?,
        finished_at_unix_ms: row.get(2)?,
        status: row.get(3)?,
        options: row.get(4)?,
        result: row.get(5)?,
        cancel_reason: None,
    })
}

impl Store for SqliteStore {
    fn insert_queued(&self, record: &ProbeRecord, owner_hash: Option<&str>) -> Result<Commit> {
        let (outcome, verdict) = list_columns(record);
        Ok(self.commits.submit(Write::Insert(NewRow {
            id: record.id.clone(),
            created_at_unix_ms: i64::try_from(record.created_at_unix_ms).unwrap_or(i64::MAX),
            status: record.status.as_str(),
            json: to_json(record)?,
            visibility: record.options.visibility.as_str(),
            owner_hash: owner_hash.map(str::to_owned),
            url: redact::redact_url(&record.options.url, &record.options.keep_secret),
            protocols: json_of(&record.id, &record.options.protocols)?,
            outcome,
            verdict,
        })))
    }

    fn update(&self, record: &ProbeRecord) -> Result<()> {
        let (outcome, verdict) = list_columns(record);
        self.commits
            .submit(Write::Update {
                id: record.id.clone(),
                status: record.status.as_str(),
                json: to_json(record)?,
                outcome,
                verdict,
            })
            .wait()
    }

    fn get(&self, id: &str) -> Result<Option<ProbeRecord>> {
        let row: Option<(String, Option<String>)> = self
            .reader()
            .query_row(
                "SELECT p.record, b.run FROM probes p \
                 LEFT JOIN browser_runs b ON b.probe_id = p.id WHERE p.id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        row.map(|(record, browser)| with_browser(from_json(id, &record)?, browser.as_deref()))
            .transpose()
    }

    fn attach_browser(&self, id: &str, owner_hash: &str, run: &BrowserRun) -> Result<Attached> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let probe: Option<(String, Option<String>)> = tx
            .query_row(
                "SELECT status, owner_hash FROM probes WHERE id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let refused = browser_refusal(
            probe.as_ref().map(|(s, o)| (s.as_str(), o.as_deref())),
            owner_hash,
        );
        let outcome = match refused {
            Some(refusal) => refusal,
            None => browser_inserted(tx.execute(
                "INSERT INTO browser_runs (probe_id, measured_at_unix_ms, run) \
                 VALUES (?1, ?2, ?3) ON CONFLICT (probe_id) DO NOTHING",
                params![id, to_i64(run.measured_at_unix_ms), json_of(id, run)?],
            )? as u64),
        };
        tx.commit()?;
        Ok(outcome)
    }

    fn list(
        &self,
        limit: usize,
        before: Option<&str>,
        owner_hash: Option<&str>,
    ) -> Result<Vec<ProbeSummary>> {
        let conn = self.reader();
        let upper: i64 = match before {
            None => i64::MAX,
            Some(id) => conn
                .query_row("SELECT seq FROM probes WHERE id = ?1", [id], |row| {
                    row.get(0)
                })
                .optional()?
                .ok_or_else(|| StoreError::UnknownCursor(id.chars().take(40).collect()))?,
        };
        let mut statement = conn.prepare_cached(
            "SELECT id, url, protocols, status, created_at_unix_ms, visibility, outcome, \
             verdict FROM probes WHERE seq < ?1 AND (visibility = 'public' OR owner_hash = ?3) \
             ORDER BY seq DESC LIMIT ?2",
        )?;
        let rows = statement.query_map(
            params![upper, i64::try_from(limit).unwrap_or(i64::MAX), owner_hash],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, i64>(4)?,
                    row.get::<_, String>(5)?,
                    row.get::<_, Option<String>>(6)?,
                    row.get::<_, Option<String>>(7)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (id, url, protocols, status, created, visibility, outcome, verdict) = row?;
            out.push(ProbeSummary {
                protocols: parse::<Vec<Protocol>>(&id, &protocols)?,
                status: status_from(&id, &status)?,
                created_at_unix_ms: u64::try_from(created).unwrap_or(0),
                visibility: visibility_from(&visibility),
                outcome: list_outcome(outcome.as_deref()),
                verdict,
                url,
                id,
            });
        }
        Ok(out)
    }

    fn prune_monitor_records(&self, older_than_unix_ms: u64) -> Result<usize> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let cutoff = to_i64(older_than_unix_ms);
        let deleted = tx.execute(
            "DELETE FROM probes WHERE status <> 'running' AND id IN (SELECT probe_id \
             FROM monitor_points WHERE probe_id IS NOT NULL AND slot_unix_ms < ?1)",
            [cutoff],
        )?;
        tx.execute(
            "UPDATE monitor_points SET probe_id = NULL \
             WHERE probe_id IS NOT NULL AND slot_unix_ms < ?1",
            [cutoff],
        )?;
        tx.commit()?;
        Ok(deleted)
    }

    fn prune(&self, older_than_unix_ms: Option<u64>, cap: Option<SizeCap>) -> Result<Pruned> {
        let conn = self.writer();
        let mut deleted = 0;
        if let Some(cutoff) = older_than_unix_ms {
            for table in ["probes", "benches"] {
                deleted += conn.execute(
                    &format!(
                        "DELETE FROM {table} WHERE status <> 'running' AND created_at_unix_ms < ?1"
                    ),
                    [to_i64(cutoff)],
                )?;
            }
            // Monitors' history ages out with the records its points link to.
            conn.execute(
                "DELETE FROM monitor_points WHERE slot_unix_ms < ?1",
                [to_i64(cutoff)],
            )?;
            conn.execute(
                "DELETE FROM monitor_rollups WHERE start_unix_ms + width_ms <= ?1",
                [to_i64(cutoff)],
            )?;
        }
        let mut pruned = match cap {
            Some(cap) => size_cap::sqlite(&conn, cap)?,
            None => Pruned::default(),
        };
        pruned.records += deleted;
        Ok(pruned)
    }

    fn cancel_running(&self) -> Result<usize> {
        let mut conn = self.writer();
        let tx = conn.transaction()?;
        let stale: Vec<(String, String)> = {
            let mut statement =
                tx.prepare("SELECT id, record FROM probes WHERE status = 'running'")?;
            let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        for (id, json) in &stale {
            let mut record = from_json(id, json)?;
            record.status = ProbeStatus::Cancelled;
            let (outcome, verdict) = list_columns(&record);
            tx.execute(
                "UPDATE probes SET status = 'cancelled', record = ?2, outcome = ?3, verdict = ?4 \
                 WHERE id = ?1",
                params![id, to_json(&record)?, outcome, verdict],
            )?;
        }
        tx.commit()?;
        Ok(stale.len())
    }

    fn insert_bench(&self, record: &BenchRecord, owner_hash: Option<&str>) -> Result<()> {
        let result = bench_result_json(record)?;
        self.writer().execute(
            "INSERT INTO benches (id, created_at_unix_ms, finished_at_unix_ms, status, options, \
             result, visibility, owner_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                record.id,
                to_i64(record.created_at_unix_ms),
                record.finished_at_unix_ms.map(to_i64),
                record.status.as_str(),
                bench_options_json(record)?,
                result,
                record.options.visibility.as_str(),
                owner_hash,
            ],
        )?;
        Ok(())
    }

    fn finish_bench(&self, record: &BenchRecord) -> Result<()> {
        let result = bench_result_json(record)?;
        let changed = self.writer().execute(
            "UPDATE benches SET status = ?2, finished_at_unix_ms = ?3, result = ?4, \
             cancel_reason = ?5 WHERE id = ?1 AND status = 'running'",
            params![
                record.id,
                record.status.as_str(),
                record.finished_at_unix_ms.map(to_i64),
                result,
                record.cancel_reason,
            ],
        );
        running_updated(changed, &record.id)
    }

    fn get_bench(&self, id: &str) -> Result<Option<BenchRecord>> {
        let row = self
            .reader()
            .query_row(
                &format!("SELECT {BENCH_COLUMNS}, cancel_reason FROM benches WHERE id = ?1"),
                [id],
                |row| {
                    Ok(BenchRow {
                        cancel_reason: row.get(6)?,
                        ..bench_row(row)?
                    })
                },
            )
            .optional()?;
        row.map(BenchRow::record).transpose()
    }

    fn list_benches(
        &self,
        limit: usize,
        before: Option<&str>,
        owner_hash: Option<&str>,
    ) -> Result<Vec<BenchSummary>> {
        let conn = self.reader();
        let upper: i64 = match before {
            None => i64::MAX,
            Some(id) => conn
                .query_row("SELECT seq FROM benches WHERE id = ?1", [id], |row| {
                    row.get(0)
                })
                .optional()?
                .ok_or_else(|| StoreError::UnknownCursor(id.chars().take(40).collect()))?,
        };
        let mut statement = conn.prepare_cached(
            "SELECT id, created_at_unix_ms, status, options, visibility FROM benches \
             WHERE seq < ?1 AND (visibility = 'public' OR owner_hash = ?3) \
             ORDER BY seq DESC LIMIT ?2",
        )?;
        let rows = statement.query_map(
            params![upper, i64::try_from(limit).unwrap_or(i64::MAX), owner_hash],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (id, created, status, options, visibility) = row?;
            let options = bench_options(&id, &options)?;
            out.push(BenchSummary {
                status: status_from(&id, &status)?,
                created_at_unix_ms: u64::try_from(created).unwrap_or(0),
                url: options.url,
                protocols: options.protocols,
                id,
                visibility: visibility_from(&visibility),
            });
        }
        Ok(out)
    }

    fn cancel_running_benches(&self, now_unix_ms: u64) -> Result<usize> {
        let changed = self.writer().execute(
            "UPDATE benches SET status = 'cancelled', finished_at_unix_ms = ?1 \
             WHERE status = 'running'",
            [to_i64(now_unix_ms)],
        )?;
        Ok(changed)
    }

    fn insert_monitor(&self, monitor: &StoredMonitor) -> Result<()> {
        monitors::insert(&self.writer(), monitor)
    }

    fn get_monitor(&self, id: &str) -> Result<Option<StoredMonitor>> {
        monitors::get(&self.reader(), id)
    }

    fn list_monitors(&self, limit: usize, owner_hash: Option<&str>) -> Result<Vec<StoredMonitor>> {
        monitors::list(&self.reader(), limit, owner_hash)
    }

    fn count_monitors(&self, of: &MonitorsOf) -> Result<u64> {
        monitors::count(&self.reader(), of)
    }

    fn monitor_clients(&self) -> Result<u64> {
        monitors::clients(&self.reader())
    }

    fn set_monitor_paused(&self, id: &str, paused: bool, next_slot: u64) -> Result<bool> {
        monitors::set_paused(&self.writer(), id, paused, next_slot)
    }

    fn delete_monitor(&self, id: &str) -> Result<bool> {
        monitors::delete(&mut self.writer(), id)
    }

    fn due_monitors(&self, now: u64, limit: usize) -> Result<Vec<StoredMonitor>> {
        monitors::due(&self.reader(), now, limit)
    }

    fn next_slot(&self) -> Result<Option<u64>> {
        monitors::next_slot(&self.reader())
    }

    fn claim_slot(
        &self,
        id: &str,
        slots: (u64, u64),
        running: &MonitorPoint,
        instance: Option<&str>,
    ) -> Result<bool> {
        monitors::claim(&mut self.writer(), id, slots, running, instance)
    }

    fn cancel_running_points(&self, reason: &str) -> Result<usize> {
        monitors::cancel_running_points(&self.writer(), reason)
    }

    fn add_points(&self, id: &str, points: &[MonitorPoint]) -> Result<()> {
        monitors::add_points(&mut self.writer(), id, points)
    }

    fn points(
        &self,
        id: &str,
        from: u64,
        to: u64,
        protocol: Option<Protocol>,
    ) -> Result<Vec<MonitorPoint>> {
        monitors::points(&self.reader(), id, from, to, protocol)
    }

    fn cells(&self, id: &str, width_ms: u64, from: u64, to: u64) -> Result<Vec<(CellKey, Cell)>> {
        monitors::cells(&self.reader(), id, width_ms, from, to)
    }

    fn swap_alert_state(&self, id: &str, expected: &AlertState, new: &AlertState) -> Result<bool> {
        monitors::swap_alert_state(&mut self.writer(), id, expected, new)
    }

    fn log_delivery(&self, id: &str, log: &DeliveryLog) -> Result<()> {
        monitors::log_delivery(&self.writer(), id, log)
    }

    fn deliveries(&self, id: &str, limit: usize) -> Result<Vec<DeliveryLog>> {
        monitors::deliveries(&self.reader(), id, limit)
    }
}

/// The outcome of updating record `id` where it is still running: a finished
/// record (the trigger's refusal, or no running row) is [`StoreError::Immutable`].
fn running_updated(changed: rusqlite::Result<usize>, id: &str) -> Result<()> {
    match changed {
        Ok(0) => Err(StoreError::Immutable(id.to_owned())),
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(_, Some(ref m))) if m.contains("immutable") => {
            Err(StoreError::Immutable(id.to_owned()))
        }
        Err(other) => Err(StoreError::Database(other)),
    }
}

#[cfg(test)]
mod tests {
    //! The SQLite-only cases (migrations); the behaviour every back end shares
    //! is tested by the store suite, `probe-server/tests/server/store.rs`.
    use super::*;
    use h123_shared::fixture;
    use h123_shared::{ProbeOptions, ProbeResult};

    fn record(id: &str, status: ProbeStatus) -> ProbeRecord {
        let options = ProbeOptions {
            url: "https://example.com/".into(),
            ..ProbeOptions::default()
        };
        fixture::record(id, status, ProbeResult::empty(options, 1, None))
    }

    #[test]
    fn migration_3_redacts_old_records_and_leaves_them_unlisted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        {
            // A version 2 database, as an older server left it.
            let mut conn = Connection::open(&path).unwrap();
            for (i, sql) in MIGRATIONS[..2].iter().enumerate() {
                conn.execute_batch(sql).unwrap();
                conn.pragma_update(None, "user_version", i as i64 + 1)
                    .unwrap();
            }
            let mut old = record("old", ProbeStatus::Done);
            old.options.url = "https://u:OLDSECRET@example.com/".into();
            old.options.headers = vec![h123_shared::Header {
                name: "cookie".into(),
                value: "OLDSECRET".into(),
            }];
            let json = serde_json::to_string(&old).unwrap();
            let tx = conn.transaction().unwrap();
            tx.execute(
                "INSERT INTO probes (id, created_at_unix_ms, status, record) VALUES ('old', 1, 'done', ?1)",
                [json],
            )
            .unwrap();
            tx.commit().unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let old = store.get("old").unwrap().unwrap();
        assert!(!serde_json::to_string(&old).unwrap().contains("OLDSECRET"));
        assert!(store.list(10, None, None).unwrap().is_empty(), "unlisted");
        let raw = store
            .writer()
            .execute("UPDATE probes SET status = 'running' WHERE id = 'old'", []);
        assert!(raw.is_err(), "the trigger is back");
    }

    #[test]
    fn migration_9_fills_the_list_lines_of_finished_records_from_their_analyses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        {
            // A version 8 database, as the server before the list's verdicts left it.
            let mut conn = Connection::open(&path).unwrap();
            for (i, sql) in MIGRATIONS[..8].iter().enumerate() {
                let tx = conn.transaction().unwrap();
                tx.execute_batch(sql).unwrap();
                if i + 1 == 3 {
                    redact_and_summarise(&tx).unwrap();
                }
                tx.pragma_update(None, "user_version", i as i64 + 1)
                    .unwrap();
                tx.commit().unwrap();
            }
            let mut analysed = record("analysed", ProbeStatus::Done);
            analysed.result = h123_shared::analysis::analyzed(analysed.result);
            let rows = [
                (analysed, "done"),
                (record("unanalysed", ProbeStatus::Done), "done"),
                (record("running", ProbeStatus::Running), "running"),
            ];
            for (record, status) in rows {
                conn.execute(
                    "INSERT INTO probes (id, created_at_unix_ms, status, record, visibility) \
                     VALUES (?1, 1, ?2, ?3, 'public')",
                    params![record.id, status, serde_json::to_string(&record).unwrap()],
                )
                .unwrap();
            }
        }
        let store = SqliteStore::open(&path).unwrap();
        let list = store.list(10, None, None).unwrap();
        let line = |id: &str| list.iter().find(|s| s.id == id).unwrap();
        let analysed = store.get("analysed").unwrap().unwrap();
        let summary = &analysed.result.analysis.as_ref().unwrap().verdict.summary;
        assert_eq!(line("analysed").verdict.as_ref(), Some(summary));
        assert_eq!(line("analysed").badge().0, "failed", "nothing was measured");
        // No analysis stored: no verdict, as its page shows none; running: none yet.
        for id in ["unanalysed", "running"] {
            assert_eq!(
                (line(id).outcome, line(id).verdict.as_deref()),
                (None, None)
            );
        }
        let raw = store
            .writer()
            .execute("UPDATE probes SET verdict = 'x' WHERE id = 'analysed'", []);
        assert!(raw.is_err(), "the trigger is back");
    }

    #[test]
    fn reopening_migrates_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        drop(SqliteStore::open(&path).unwrap());
        let store = SqliteStore::open(&path).unwrap();
        let version: i64 = store
            .reader()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
    }
}
