//! Monitors, their points (migration 7) and their rollup cells (migration 10) in SQLite, called
//! by the [`super::Store`] implementation with its reader or writer connection.

use super::Result;
use super::codec::{json_of, to_i64};
use super::monitor_rows::{
    DeliveryLog, MONITOR_COLUMNS, MonitorRow, MonitorsOf, NewMonitor, POINT_COLUMNS, PointRow,
    StoredMonitor, alert_state_of, cell_row, every_of, merged_cell, protocol_column, rollups_of,
    slots_of,
};
use h123_shared::Protocol;
use h123_shared::alert::AlertState;
use h123_shared::monitor::MonitorPoint;
use h123_shared::monitor_rollup::{Cell, CellKey, DAY_MS};
use rusqlite::{Connection, OptionalExtension, Row, params};

fn monitor_row(row: &Row<'_>) -> rusqlite::Result<MonitorRow> {
    Ok(MonitorRow {
        id: row.get(0)?,
        created_at_unix_ms: row.get(1)?,
        spec: row.get(2)?,
        paused: row.get(3)?,
        next_slot_unix_ms: row.get(4)?,
        owner_hash: row.get(5)?,
        alert_secret: row.get(6)?,
        alert_state: row.get(7)?,
        client: row.get(8)?,
    })
}

fn monitors(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<StoredMonitor>> {
    let mut statement = conn.prepare_cached(sql)?;
    let rows = statement.query_map(params, monitor_row)?;
    rows.map(|row| row?.monitor()).collect()
}

/// Inserts a new monitor.
pub fn insert(conn: &Connection, monitor: &StoredMonitor) -> Result<()> {
    let m = NewMonitor::of(monitor)?;
    conn.execute(
        "INSERT INTO monitors \
         (id, created_at_unix_ms, owner_hash, visibility, spec, next_slot_unix_ms, alert_secret, \
          client) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            m.id,
            m.created_at_unix_ms,
            m.owner_hash,
            m.visibility,
            m.spec,
            m.next_slot_unix_ms,
            m.alert_secret,
            m.client
        ],
    )?;
    Ok(())
}

/// The monitor `id`.
pub fn get(conn: &Connection, id: &str) -> Result<Option<StoredMonitor>> {
    conn.prepare_cached(&format!(
        "SELECT {MONITOR_COLUMNS} FROM monitors WHERE id = ?1"
    ))?
    .query_row([id], monitor_row)
    .optional()?
    .map(MonitorRow::monitor)
    .transpose()
}

/// Up to `limit` monitors, newest first, public or owned by `owner_hash`.
pub fn list(
    conn: &Connection,
    limit: usize,
    owner_hash: Option<&str>,
) -> Result<Vec<StoredMonitor>> {
    monitors(
        conn,
        &format!(
            "SELECT {MONITOR_COLUMNS} FROM monitors \
             WHERE visibility = 'public' OR owner_hash = ?2 ORDER BY seq DESC LIMIT ?1"
        ),
        params![to_i64(limit as u64), owner_hash],
    )
}

/// How many monitors `of` names.
pub fn count(conn: &Connection, of: &MonitorsOf) -> Result<u64> {
    let (owner_hash, client) = of.filters();
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM monitors \
         WHERE (?1 IS NULL OR owner_hash = ?1) AND (?2 IS NULL OR client = ?2)",
        params![owner_hash, client],
        |row| row.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// How many clients have running monitors (those made before clients were kept count as one).
pub fn clients(conn: &Connection) -> Result<u64> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(DISTINCT COALESCE(client, '')) FROM monitors WHERE paused = 0",
        [],
        |row| row.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Pauses or resumes `id` with its next slot; whether it exists.
pub fn set_paused(conn: &Connection, id: &str, paused: bool, next_slot: u64) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE monitors SET paused = ?2, next_slot_unix_ms = ?3 WHERE id = ?1",
        params![id, paused, to_i64(next_slot)],
    )? > 0)
}

/// Deletes `id` and its points in one transaction; whether it existed.
pub fn delete(conn: &mut Connection, id: &str) -> Result<bool> {
    let tx = conn.transaction()?;
    tx.execute("DELETE FROM monitor_points WHERE monitor_id = ?1", [id])?;
    tx.execute("DELETE FROM monitor_rollups WHERE monitor_id = ?1", [id])?;
    tx.execute("DELETE FROM monitor_deliveries WHERE monitor_id = ?1", [id])?;
    let existed = tx.execute("DELETE FROM monitors WHERE id = ?1", [id])? > 0;
    tx.commit()?;
    Ok(existed)
}

/// Up to `limit` running monitors due at `now`, earliest first.
pub fn due(conn: &Connection, now: u64, limit: usize) -> Result<Vec<StoredMonitor>> {
    monitors(
        conn,
        &format!(
            "SELECT {MONITOR_COLUMNS} FROM monitors WHERE paused = 0 AND next_slot_unix_ms <= ?1 \
             ORDER BY next_slot_unix_ms LIMIT ?2"
        ),
        params![to_i64(now), to_i64(limit as u64)],
    )
}

/// The earliest next slot of a running monitor.
pub fn next_slot(conn: &Connection) -> Result<Option<u64>> {
    let next: Option<i64> = conn.query_row(
        "SELECT MIN(next_slot_unix_ms) FROM monitors WHERE paused = 0",
        [],
        |row| row.get(0),
    )?;
    Ok(next.map(super::codec::to_u64))
}

/// Moves running `id`'s next slot from `due` to `next` and stores `running`, the claimed slot's
/// point, in the same transaction; whether this call did.
pub fn claim(
    conn: &mut Connection,
    id: &str,
    (due, next): (u64, u64),
    running: &MonitorPoint,
    instance: Option<&str>,
) -> Result<bool> {
    let tx = conn.transaction()?;
    let claimed = tx.execute(
        "UPDATE monitors SET next_slot_unix_ms = ?3 \
         WHERE id = ?1 AND paused = 0 AND next_slot_unix_ms = ?2",
        params![id, to_i64(due), to_i64(next)],
    )? == 1;
    if claimed {
        let p = PointRow::of(running);
        tx.execute(
            "INSERT OR IGNORE INTO monitor_points \
             (monitor_id, slot_unix_ms, vantage, protocol, state, started_unix_ms, instance_id) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                id, p.slot, p.vantage, p.protocol, p.state, p.started, instance
            ],
        )?;
    }
    tx.commit()?;
    Ok(claimed)
}

/// Marks every point still `running` as `cancelled`, saying `reason` (at start-up: one
/// instance per file, so none runs); how many there were.
pub fn cancel_running_points(conn: &Connection, reason: &str) -> Result<usize> {
    Ok(conn.execute(
        "UPDATE monitor_points SET state = 'cancelled', detail = ?1, instance_id = NULL \
         WHERE state = 'running'",
        [reason],
    )?)
}

/// Stores `points` of `id` in place of their slots' running (or cancelled) points and adds the
/// new ones to its rollup cells, in one transaction.
pub fn add_points(conn: &mut Connection, id: &str, points: &[MonitorPoint]) -> Result<()> {
    let tx = conn.transaction()?;
    let mut added = Vec::new();
    {
        let mut replaced = tx.prepare_cached(
            "DELETE FROM monitor_points WHERE monitor_id = ?1 AND slot_unix_ms = ?2 \
             AND state IN ('running', 'cancelled')",
        )?;
        for slot in slots_of(points) {
            replaced.execute(params![id, to_i64(slot)])?;
        }
        let mut statement = tx.prepare_cached(&format!(
            "INSERT OR IGNORE INTO monitor_points (monitor_id, {POINT_COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
        ))?;
        for point in points {
            let p = PointRow::of(point);
            let [dns, connect, tls, ttfb, total, reused] = p.figures;
            let inserted = statement.execute(params![
                id, p.slot, p.vantage, p.protocol, p.state, p.started, p.missed, p.probe_id,
                p.status, dns, connect, tls, ttfb, total, reused, p.breached, p.detail
            ])?;
            if inserted == 1 {
                added.push(point.clone());
            }
        }
    }
    add_rollups(&tx, id, &added)?;
    tx.commit()?;
    Ok(())
}

/// Adds `points` (just stored) to `id`'s rollup cells.
fn add_rollups(conn: &Connection, id: &str, points: &[MonitorPoint]) -> Result<()> {
    if points.is_empty() {
        return Ok(());
    }
    let spec: Option<String> = conn
        .query_row("SELECT spec FROM monitors WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .optional()?;
    let mut read = conn.prepare_cached(
        "SELECT cell FROM monitor_rollups WHERE monitor_id = ?1 AND width_ms = ?2 \
         AND start_unix_ms = ?3 AND protocol = ?4 AND vantage = ?5",
    )?;
    let mut write = conn.prepare_cached(
        "INSERT OR REPLACE INTO monitor_rollups \
         (monitor_id, width_ms, start_unix_ms, protocol, vantage, cell) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (width, key, cell) in rollups_of(points, every_of(spec.as_deref())) {
        let place = params![
            id,
            to_i64(width),
            to_i64(key.start_unix_ms),
            protocol_column(&key),
            key.vantage
        ];
        let stored: Option<String> = read.query_row(place, |r| r.get(0)).optional()?;
        let merged = merged_cell(id, stored.as_deref(), &cell)?;
        write.execute(params![
            id,
            to_i64(width),
            to_i64(key.start_unix_ms),
            protocol_column(&key),
            key.vantage,
            merged
        ])?;
    }
    Ok(())
}

/// `id`'s rollup cells `width_ms` wide starting in `[from, to)`.
pub fn cells(
    conn: &Connection,
    id: &str,
    width_ms: u64,
    from: u64,
    to: u64,
) -> Result<Vec<(CellKey, Cell)>> {
    let mut statement = conn.prepare_cached(
        "SELECT start_unix_ms, protocol, vantage, cell FROM monitor_rollups \
         WHERE monitor_id = ?1 AND width_ms = ?2 AND start_unix_ms >= ?3 AND start_unix_ms < ?4 \
         ORDER BY start_unix_ms",
    )?;
    let rows = statement.query_map(
        params![id, to_i64(width_ms), to_i64(from), to_i64(to)],
        |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
            ))
        },
    )?;
    rows.map(|row| {
        let (start, protocol, vantage, cell) = row?;
        cell_row(id, start, &protocol, vantage, &cell)
    })
    .collect()
}

/// Migration 10's data step: rolls up every monitor's stored points, thirty days at a time (so
/// a long history is never held in memory whole).
pub fn fill_rollups(conn: &Connection) -> Result<()> {
    let ids: Vec<String> = conn
        .prepare("SELECT DISTINCT monitor_id FROM monitor_points")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in ids {
        let (first, last): (Option<i64>, Option<i64>) = conn.query_row(
            "SELECT MIN(slot_unix_ms), MAX(slot_unix_ms) FROM monitor_points WHERE monitor_id = ?1",
            [&id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let (Some(first), Some(last)) = (first, last) else {
            continue;
        };
        let step = 30 * DAY_MS;
        let mut from = super::codec::to_u64(first);
        while from <= super::codec::to_u64(last) {
            let chunk = points(conn, &id, from, from + step, None)?;
            add_rollups(conn, &id, &chunk)?;
            from += step;
        }
    }
    Ok(())
}

/// `id`'s points in `[from, to)`, of `protocol` and the missed stretches when given.
pub fn points(
    conn: &Connection,
    id: &str,
    from: u64,
    to: u64,
    protocol: Option<Protocol>,
) -> Result<Vec<MonitorPoint>> {
    let mut statement = conn.prepare_cached(&format!(
        "SELECT {POINT_COLUMNS} FROM monitor_points \
         WHERE monitor_id = ?1 AND slot_unix_ms >= ?2 AND slot_unix_ms < ?3 \
         AND (?4 IS NULL OR protocol = ?4 OR protocol = '') ORDER BY slot_unix_ms"
    ))?;
    let rows = statement.query_map(
        params![id, to_i64(from), to_i64(to), protocol.map(Protocol::as_str)],
        |row| {
            Ok(PointRow {
                slot: row.get(0)?,
                vantage: row.get(1)?,
                protocol: row.get(2)?,
                state: row.get(3)?,
                started: row.get(4)?,
                missed: row.get(5)?,
                probe_id: row.get(6)?,
                status: row.get(7)?,
                figures: [
                    row.get(8)?,
                    row.get(9)?,
                    row.get(10)?,
                    row.get(11)?,
                    row.get(12)?,
                    row.get(13)?,
                ],
                breached: row.get(14)?,
                detail: row.get(15)?,
            })
        },
    )?;
    rows.map(|row| row?.point(id)).collect()
}

/// Replaces `id`'s alert state with `new` if it is still `expected`, in one transaction;
/// whether it did (not for an unknown monitor).
pub fn swap_alert_state(
    conn: &mut Connection,
    id: &str,
    expected: &AlertState,
    new: &AlertState,
) -> Result<bool> {
    let tx = conn.transaction()?;
    let column: Option<Option<String>> = tx
        .query_row(
            "SELECT alert_state FROM monitors WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .optional()?;
    let Some(column) = column else {
        return Ok(false);
    };
    if alert_state_of(id, column.as_deref())? != *expected {
        return Ok(false);
    }
    tx.execute(
        "UPDATE monitors SET alert_state = ?2 WHERE id = ?1",
        params![id, json_of(id, new)?],
    )?;
    tx.commit()?;
    Ok(true)
}

/// Logs one delivery try of `id`.
pub fn log_delivery(conn: &Connection, id: &str, log: &DeliveryLog) -> Result<()> {
    conn.execute(
        "INSERT INTO monitor_deliveries \
         (monitor_id, at_unix_ms, target, key, status, attempt, outcome, delivered) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            id,
            to_i64(log.at_unix_ms),
            log.target,
            log.key,
            log.status,
            log.attempt,
            log.outcome,
            log.delivered
        ],
    )?;
    Ok(())
}

/// `id`'s latest `limit` delivery tries, newest first.
pub fn deliveries(conn: &Connection, id: &str, limit: usize) -> Result<Vec<DeliveryLog>> {
    let mut statement = conn.prepare_cached(
        "SELECT at_unix_ms, target, key, status, attempt, outcome, delivered \
         FROM monitor_deliveries WHERE monitor_id = ?1 ORDER BY seq DESC LIMIT ?2",
    )?;
    let rows = statement.query_map(params![id, to_i64(limit as u64)], |row| {
        Ok(DeliveryLog {
            at_unix_ms: super::codec::to_u64(row.get(0)?),
            target: row.get(1)?,
            key: row.get(2)?,
            status: row.get(3)?,
            attempt: row.get(4)?,
            outcome: row.get(5)?,
            delivered: row.get(6)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
