//! Monitors and their points in PostgreSQL (migration 6; their rollup cells in `rollups`), as
//! SQLite keeps them: a due slot is
//! taken by moving `next_slot_unix_ms` from the value read, so of several instances that see
//! the same slot due exactly one runs it.

use super::super::Result;
use super::super::codec::{json_of, to_i64};
use super::super::monitor_rows::{
    DeliveryLog, MONITOR_COLUMNS, MonitorRow, MonitorsOf, NewMonitor, POINT_COLUMNS, PointRow,
    StoredMonitor, alert_state_of, slots_of,
};
use h123_shared::Protocol;
use h123_shared::alert::AlertState;
use h123_shared::monitor::MonitorPoint;
use tokio_postgres::{Client, Row};

fn monitor_row(row: &Row) -> MonitorRow {
    MonitorRow {
        id: row.get(0),
        created_at_unix_ms: row.get(1),
        spec: row.get(2),
        paused: row.get(3),
        next_slot_unix_ms: row.get(4),
        owner_hash: row.get(5),
        alert_secret: row.get(6),
        alert_state: row.get(7),
        client: row.get(8),
    }
}

fn monitors(rows: Vec<Row>) -> Result<Vec<StoredMonitor>> {
    rows.iter().map(|row| monitor_row(row).monitor()).collect()
}

/// Inserts a new monitor.
pub async fn insert(client: &Client, monitor: &StoredMonitor) -> Result<()> {
    let m = NewMonitor::of(monitor)?;
    client
        .execute(
            "INSERT INTO monitors \
             (id, created_at_unix_ms, owner_hash, visibility, spec, next_slot_unix_ms, \
              alert_secret, client) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &m.id,
                &m.created_at_unix_ms,
                &m.owner_hash,
                &m.visibility,
                &m.spec,
                &m.next_slot_unix_ms,
                &m.alert_secret,
                &m.client,
            ],
        )
        .await?;
    Ok(())
}

/// The monitor `id`.
pub async fn get(client: &Client, id: &str) -> Result<Option<StoredMonitor>> {
    let row = client
        .query_opt(
            &format!("SELECT {MONITOR_COLUMNS} FROM monitors WHERE id = $1"),
            &[&id],
        )
        .await?;
    row.map(|row| monitor_row(&row).monitor()).transpose()
}

/// Up to `limit` monitors, newest first, public or owned by `owner_hash`.
pub async fn list(
    client: &Client,
    limit: usize,
    owner_hash: Option<&str>,
) -> Result<Vec<StoredMonitor>> {
    monitors(
        client
            .query(
                &format!(
                    "SELECT {MONITOR_COLUMNS} FROM monitors \
                     WHERE visibility = 'public' OR owner_hash = $2 ORDER BY seq DESC LIMIT $1"
                ),
                &[&to_i64(limit as u64), &owner_hash],
            )
            .await?,
    )
}

/// How many monitors `of` names.
pub async fn count(client: &Client, of: &MonitorsOf) -> Result<u64> {
    let (owner_hash, made_by) = of.filters();
    let row = client
        .query_one(
            "SELECT COUNT(*) FROM monitors \
             WHERE ($1::TEXT IS NULL OR owner_hash = $1) AND ($2::TEXT IS NULL OR client = $2)",
            &[&owner_hash, &made_by],
        )
        .await?;
    Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
}

/// How many clients have running monitors (those made before clients were kept count as one).
pub async fn clients(client: &Client) -> Result<u64> {
    let row = client
        .query_one(
            "SELECT COUNT(DISTINCT COALESCE(client, '')) FROM monitors WHERE NOT paused",
            &[],
        )
        .await?;
    Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
}

/// Pauses or resumes `id` with its next slot; whether it exists.
pub async fn set_paused(client: &Client, id: &str, paused: bool, next_slot: u64) -> Result<bool> {
    Ok(client
        .execute(
            "UPDATE monitors SET paused = $2, next_slot_unix_ms = $3 WHERE id = $1",
            &[&id, &paused, &to_i64(next_slot)],
        )
        .await?
        > 0)
}

/// Deletes `id` and its points in one transaction; whether it existed.
pub async fn delete(client: &mut deadpool_postgres::Object, id: &str) -> Result<bool> {
    let tx = client.transaction().await?;
    tx.execute("DELETE FROM monitor_points WHERE monitor_id = $1", &[&id])
        .await?;
    tx.execute("DELETE FROM monitor_rollups WHERE monitor_id = $1", &[&id])
        .await?;
    tx.execute(
        "DELETE FROM monitor_deliveries WHERE monitor_id = $1",
        &[&id],
    )
    .await?;
    let existed = tx
        .execute("DELETE FROM monitors WHERE id = $1", &[&id])
        .await?
        > 0;
    tx.commit().await?;
    Ok(existed)
}

/// Up to `limit` running monitors due at `now`, earliest first.
pub async fn due(client: &Client, now: u64, limit: usize) -> Result<Vec<StoredMonitor>> {
    monitors(
        client
            .query(
                &format!(
                    "SELECT {MONITOR_COLUMNS} FROM monitors \
                     WHERE NOT paused AND next_slot_unix_ms <= $1 \
                     ORDER BY next_slot_unix_ms LIMIT $2"
                ),
                &[&to_i64(now), &to_i64(limit as u64)],
            )
            .await?,
    )
}

/// The earliest next slot of a running monitor.
pub async fn next_slot(client: &Client) -> Result<Option<u64>> {
    let row = client
        .query_one(
            "SELECT MIN(next_slot_unix_ms) FROM monitors WHERE NOT paused",
            &[],
        )
        .await?;
    Ok(row
        .get::<_, Option<i64>>(0)
        .map(super::super::codec::to_u64))
}

/// Moves running `id`'s next slot from `due` to `next` and stores `running`, the claimed slot's
/// point, by `instance`, in the same transaction; whether this call did.
pub async fn claim(
    client: &mut deadpool_postgres::Object,
    id: &str,
    (due, next): (u64, u64),
    running: &MonitorPoint,
    instance: &str,
) -> Result<bool> {
    let tx = client.transaction().await?;
    let claimed = tx
        .execute(
            "UPDATE monitors SET next_slot_unix_ms = $3 \
             WHERE id = $1 AND NOT paused AND next_slot_unix_ms = $2",
            &[&id, &to_i64(due), &to_i64(next)],
        )
        .await?
        == 1;
    if claimed {
        let p = PointRow::of(running);
        tx.execute(
            "INSERT INTO monitor_points \
             (monitor_id, slot_unix_ms, vantage, protocol, state, started_unix_ms, instance_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
            &[
                &id,
                &p.slot,
                &p.vantage,
                &p.protocol,
                &p.state,
                &p.started,
                &instance,
            ],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(claimed)
}

/// Stores `points` of `id` in place of their slots' running (or cancelled) points, in one
/// transaction.
pub async fn add_points(
    client: &mut deadpool_postgres::Object,
    id: &str,
    points: &[MonitorPoint],
) -> Result<()> {
    let tx = client.transaction().await?;
    let replaced = tx
        .prepare(
            "DELETE FROM monitor_points WHERE monitor_id = $1 AND slot_unix_ms = $2 \
             AND state IN ('running', 'cancelled')",
        )
        .await?;
    for slot in slots_of(points) {
        tx.execute(&replaced, &[&id, &to_i64(slot)]).await?;
    }
    let statement = tx
        .prepare(&format!(
            "INSERT INTO monitor_points (monitor_id, {POINT_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
             ON CONFLICT DO NOTHING"
        ))
        .await?;
    let mut added = Vec::new();
    for point in points {
        let p = PointRow::of(point);
        let [dns, connect, tls, ttfb, total, reused] = p.figures;
        let inserted = tx
            .execute(
                &statement,
                &[
                    &id,
                    &p.slot,
                    &p.vantage,
                    &p.protocol,
                    &p.state,
                    &p.started,
                    &p.missed,
                    &p.probe_id,
                    &p.status,
                    &dns,
                    &connect,
                    &tls,
                    &ttfb,
                    &total,
                    &reused,
                    &p.breached,
                    &p.detail,
                ],
            )
            .await?;
        if inserted == 1 {
            added.push(point.clone());
        }
    }
    super::rollups::add(&tx, id, &added).await?;
    tx.commit().await?;
    Ok(())
}

/// `id`'s points in `[from, to)`, of `protocol` and the missed stretches when given.
pub async fn points(
    client: &Client,
    id: &str,
    from: u64,
    to: u64,
    protocol: Option<Protocol>,
) -> Result<Vec<MonitorPoint>> {
    let rows = client
        .query(
            &format!(
                "SELECT {POINT_COLUMNS} FROM monitor_points \
                 WHERE monitor_id = $1 AND slot_unix_ms >= $2 AND slot_unix_ms < $3 \
                 AND ($4::TEXT IS NULL OR protocol = $4 OR protocol = '') ORDER BY slot_unix_ms"
            ),
            &[
                &id,
                &to_i64(from),
                &to_i64(to),
                &protocol.map(Protocol::as_str),
            ],
        )
        .await?;
    rows.iter().map(|row| point_row(row).point(id)).collect()
}

/// A point's row, its columns in [`POINT_COLUMNS`]' order.
pub fn point_row(row: &Row) -> PointRow {
    PointRow {
        slot: row.get(0),
        vantage: row.get(1),
        protocol: row.get(2),
        state: row.get(3),
        started: row.get(4),
        missed: row.get(5),
        probe_id: row.get(6),
        status: row.get(7),
        figures: [
            row.get(8),
            row.get(9),
            row.get(10),
            row.get(11),
            row.get(12),
            row.get(13),
        ],
        breached: row.get(14),
        detail: row.get(15),
    }
}

/// Replaces `id`'s alert state with `new` if it is still `expected`, the row locked between
/// the check and the write; whether it did (not for an unknown monitor).
pub async fn swap_alert_state(
    client: &mut deadpool_postgres::Object,
    id: &str,
    expected: &AlertState,
    new: &AlertState,
) -> Result<bool> {
    let tx = client.transaction().await?;
    let Some(row) = tx
        .query_opt(
            "SELECT alert_state FROM monitors WHERE id = $1 FOR UPDATE",
            &[&id],
        )
        .await?
    else {
        return Ok(false);
    };
    let column: Option<String> = row.get(0);
    if alert_state_of(id, column.as_deref())? != *expected {
        return Ok(false);
    }
    tx.execute(
        "UPDATE monitors SET alert_state = $2 WHERE id = $1",
        &[&id, &json_of(id, new)?],
    )
    .await?;
    tx.commit().await?;
    Ok(true)
}

/// Logs one delivery try of `id`.
pub async fn log_delivery(client: &Client, id: &str, log: &DeliveryLog) -> Result<()> {
    client
        .execute(
            "INSERT INTO monitor_deliveries \
             (monitor_id, at_unix_ms, target, key, status, attempt, outcome, delivered) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &id,
                &to_i64(log.at_unix_ms),
                &log.target,
                &log.key,
                &log.status,
                &i64::from(log.attempt),
                &log.outcome,
                &log.delivered,
            ],
        )
        .await?;
    Ok(())
}

/// `id`'s latest `limit` delivery tries, newest first.
pub async fn deliveries(client: &Client, id: &str, limit: usize) -> Result<Vec<DeliveryLog>> {
    let rows = client
        .query(
            "SELECT at_unix_ms, target, key, status, attempt, outcome, delivered \
             FROM monitor_deliveries WHERE monitor_id = $1 ORDER BY seq DESC LIMIT $2",
            &[&id, &to_i64(limit as u64)],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|row| DeliveryLog {
            at_unix_ms: super::super::codec::to_u64(row.get(0)),
            target: row.get(1),
            key: row.get(2),
            status: row.get(3),
            attempt: u32::try_from(row.get::<_, i64>(4)).unwrap_or(0),
            outcome: row.get(5),
            delivered: row.get(6),
        })
        .collect())
}
