//! Monitors' rollup cells in PostgreSQL (migration 9), as SQLite keeps them: added to in the
//! transaction that stores the points, under a lock per monitor so two instances' adds to the
//! same cell both count.

use super::super::Result;
use super::super::codec::to_i64;
use super::super::monitor_rows::{
    POINT_COLUMNS, cell_row, every_of, merged_cell, protocol_column, rollups_of,
};
use h123_shared::monitor::MonitorPoint;
use h123_shared::monitor_rollup::{Cell, CellKey, DAY_MS};
use tokio_postgres::Client;

/// Adds `points` (just stored in `tx`) to `id`'s rollup cells.
pub async fn add(
    tx: &deadpool_postgres::Transaction<'_>,
    id: &str,
    points: &[MonitorPoint],
) -> Result<()> {
    if points.is_empty() {
        return Ok(());
    }
    // One writer of a monitor's cells at a time (the lock ends with the transaction).
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 54))",
        &[&id],
    )
    .await?;
    let spec: Option<String> = tx
        .query_opt("SELECT spec FROM monitors WHERE id = $1", &[&id])
        .await?
        .map(|row| row.get(0));
    let read = tx
        .prepare(
            "SELECT cell FROM monitor_rollups WHERE monitor_id = $1 AND width_ms = $2 \
             AND start_unix_ms = $3 AND protocol = $4 AND vantage = $5",
        )
        .await?;
    let write = tx
        .prepare(
            "INSERT INTO monitor_rollups \
             (monitor_id, width_ms, start_unix_ms, protocol, vantage, cell) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (monitor_id, width_ms, start_unix_ms, protocol, vantage) \
             DO UPDATE SET cell = EXCLUDED.cell",
        )
        .await?;
    for (width, key, cell) in rollups_of(points, every_of(spec.as_deref())) {
        let (width, start) = (to_i64(width), to_i64(key.start_unix_ms));
        let protocol = protocol_column(&key);
        let stored: Option<String> = tx
            .query_opt(&read, &[&id, &width, &start, &protocol, &key.vantage])
            .await?
            .map(|row| row.get(0));
        let merged = merged_cell(id, stored.as_deref(), &cell)?;
        tx.execute(
            &write,
            &[&id, &width, &start, &protocol, &key.vantage, &merged],
        )
        .await?;
    }
    Ok(())
}

/// `id`'s rollup cells `width_ms` wide starting in `[from, to)`.
pub async fn cells(
    client: &Client,
    id: &str,
    width_ms: u64,
    from: u64,
    to: u64,
) -> Result<Vec<(CellKey, Cell)>> {
    let rows = client
        .query(
            "SELECT start_unix_ms, protocol, vantage, cell FROM monitor_rollups \
             WHERE monitor_id = $1 AND width_ms = $2 AND start_unix_ms >= $3 \
             AND start_unix_ms < $4 ORDER BY start_unix_ms",
            &[&id, &to_i64(width_ms), &to_i64(from), &to_i64(to)],
        )
        .await?;
    rows.iter()
        .map(|row| cell_row(id, row.get(0), row.get(1), row.get(2), row.get(3)))
        .collect()
}

/// Migration 9's data step: rolls up every monitor's stored points, thirty days at a time (so a
/// long history is never held in memory whole).
pub async fn fill(tx: &deadpool_postgres::Transaction<'_>) -> Result<()> {
    let spans = tx
        .query(
            "SELECT monitor_id, MIN(slot_unix_ms), MAX(slot_unix_ms) FROM monitor_points \
             GROUP BY monitor_id",
            &[],
        )
        .await?;
    let step = to_i64(30 * DAY_MS);
    for span in spans {
        let (id, first, last): (String, i64, i64) = (span.get(0), span.get(1), span.get(2));
        let mut from = first;
        while from <= last {
            let rows = tx
                .query(
                    &format!(
                        "SELECT {POINT_COLUMNS} FROM monitor_points WHERE monitor_id = $1 \
                         AND slot_unix_ms >= $2 AND slot_unix_ms < $3 ORDER BY slot_unix_ms"
                    ),
                    &[&id, &from, &(from + step)],
                )
                .await?;
            let points = rows
                .iter()
                .map(|row| super::monitors::point_row(row).point(&id))
                .collect::<Result<Vec<_>>>()?;
            add(tx, &id, &points).await?;
            from += step;
        }
    }
    Ok(())
}
