//! Versioned PostgreSQL migrations: the SQL files under
//! `probe-server/migrations/postgres/`, applied in order inside one
//! transaction that holds an advisory lock (so two instances starting at once
//! migrate once), each recorded in `schema_migrations`.

use super::super::codec::{list_columns, parse};
use super::super::{Result, StoreError};
use h123_shared::api::ProbeRecord;

/// The migrations in order: version, name, SQL.
pub const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "0001_init",
        include_str!("../../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "0002_rate_buckets",
        include_str!("../../../migrations/postgres/0002_rate_buckets.sql"),
    ),
    (
        3,
        "0003_shared_work",
        include_str!("../../../migrations/postgres/0003_shared_work.sql"),
    ),
    (
        4,
        "0004_browser_runs",
        include_str!("../../../migrations/postgres/0004_browser_runs.sql"),
    ),
    (
        5,
        "0005_bench_owner",
        include_str!("../../../migrations/postgres/0005_bench_owner.sql"),
    ),
    (
        6,
        "0006_monitors",
        include_str!("../../../migrations/postgres/0006_monitors.sql"),
    ),
    (
        7,
        "0007_monitor_records",
        include_str!("../../../migrations/postgres/0007_monitor_records.sql"),
    ),
    (
        8,
        "0008_list_verdict",
        include_str!("../../../migrations/postgres/0008_list_verdict.sql"),
    ),
    (
        9,
        "0009_monitor_rollups",
        include_str!("../../../migrations/postgres/0009_monitor_rollups.sql"),
    ),
    (
        10,
        "0010_monitor_client",
        include_str!("../../../migrations/postgres/0010_monitor_client.sql"),
    ),
    (
        11,
        "0011_monitor_running",
        include_str!("../../../migrations/postgres/0011_monitor_running.sql"),
    ),
];

/// The migration whose rows [`super::rollups::fill`] fills.
const MONITOR_ROLLUPS: i32 = 9;

/// The migration whose columns [`fill_list_lines`] fills.
const LIST_VERDICT: i32 = 8;

/// The advisory lock key migrations hold ("h123" in ASCII).
const LOCK_KEY: i64 = 0x6831_3233;

/// Applies every migration not yet recorded, in one transaction.
///
/// # Errors
/// When a migration fails (nothing is applied then), or the database was
/// migrated by a newer h123 than this one.
pub async fn run(client: &mut deadpool_postgres::Object) -> Result<Vec<i32>> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )",
    )
    .await?;
    let applied: Vec<i32> = tx
        .query("SELECT version FROM schema_migrations", &[])
        .await?
        .iter()
        .map(|row| row.get(0))
        .collect();
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
    if let Some(newer) = applied.iter().copied().filter(|v| *v > known).max() {
        return Err(StoreError::Setup(format!(
            "the database's schema is at version {newer}, newer than this h123 knows ({known}): \
             run a newer h123"
        )));
    }
    let mut done = Vec::new();
    for (version, name, sql) in MIGRATIONS {
        if applied.contains(version) {
            continue;
        }
        tx.batch_execute(sql).await?;
        if *version == LIST_VERDICT {
            fill_list_lines(&tx).await?;
        }
        if *version == MONITOR_ROLLUPS {
            super::rollups::fill(&tx).await?;
        }
        tx.execute(
            "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
            &[version, name],
        )
        .await?;
        done.push(*version);
    }
    tx.commit().await?;
    Ok(done)
}

/// Migration 8's data step: fills the list-line columns of every finished probe from its record
/// (a batch at a time, so a large database is never held in memory whole), with the immutability
/// trigger off for this step only (`ALTER TABLE` holds the table until the transaction ends). A
/// record that no longer parses keeps none, as one without an analysis.
async fn fill_list_lines(tx: &deadpool_postgres::Transaction<'_>) -> Result<()> {
    tx.batch_execute("ALTER TABLE probes DISABLE TRIGGER probes_immutable")
        .await?;
    let mut after = i64::MIN;
    loop {
        let rows = tx
            .query(
                "SELECT seq, id, record FROM probes WHERE status <> 'running' AND seq > $1 \
                 ORDER BY seq LIMIT 256",
                &[&after],
            )
            .await?;
        let Some(last) = rows.last().map(|row| row.get::<_, i64>(0)) else {
            break;
        };
        for row in &rows {
            let id: &str = row.get(1);
            let Ok(record) = parse::<ProbeRecord>(id, row.get(2)) else {
                continue;
            };
            let (outcome, verdict) = list_columns(&record);
            tx.execute(
                "UPDATE probes SET outcome = $2, verdict = $3 WHERE id = $1",
                &[&id, &outcome, &verdict],
            )
            .await?;
        }
        after = last;
    }
    tx.batch_execute("ALTER TABLE probes ENABLE TRIGGER probes_immutable")
        .await?;
    Ok(())
}
