//! Versioned PostgreSQL migrations: the SQL files under
//! `probe-server/migrations/postgres/`, applied in order inside one
//! transaction that holds an advisory lock (so two instances starting at once
//! migrate once), each recorded in `schema_migrations`.

use super::super::{Result, StoreError};

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
];

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
