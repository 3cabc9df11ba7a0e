//! `--max-db-bytes` on PostgreSQL: the pass [`super::super::size_cap`] describes, the size
//! counted as the rows' bytes (`octet_length` of a probe's record, of a bench's options and
//! result; `pg_column_size` of each monitor point, cell and delivery), not the tables' size on
//! disk, which shrinks only once VACUUM has run (a bound on it would delete everything at once).

use super::super::Result;
use super::super::codec::{to_i64, to_u64};
use super::super::size_cap::{Pruned, SizeCap, points_batch_end};
use h123_shared::monitor_rollup::HOUR_MS;
use tokio_postgres::Client;

/// Bytes of every table's rows.
const USED: &str = "SELECT \
     (SELECT COALESCE(SUM(octet_length(record)), 0) FROM probes)::BIGINT \
     + (SELECT COALESCE(SUM(octet_length(options) + COALESCE(octet_length(result), 0)), 0) \
        FROM benches)::BIGINT \
     + (SELECT COALESCE(SUM(pg_column_size(p.*)), 0) FROM monitor_points p)::BIGINT \
     + (SELECT COALESCE(SUM(pg_column_size(r.*)), 0) FROM monitor_rollups r)::BIGINT \
     + (SELECT COALESCE(SUM(pg_column_size(d.*)), 0) FROM monitor_deliveries d)::BIGINT";

async fn used(client: &Client) -> Result<u64> {
    Ok(to_u64(client.query_one(USED, &[]).await?.get(0)))
}

/// Prunes every table to `cap`; the records deleted and the bytes used after.
///
/// # Errors
/// When the database fails.
pub async fn prune(client: &Client, cap: SizeCap) -> Result<Pruned> {
    client
        .execute(
            "DELETE FROM monitor_deliveries WHERE seq IN (SELECT seq FROM (SELECT seq, \
             ROW_NUMBER() OVER (PARTITION BY monitor_id ORDER BY seq DESC) AS n \
             FROM monitor_deliveries) ranked WHERE n > $1)",
            &[&i64::from(cap.deliveries_per_monitor)],
        )
        .await?;
    let floor = to_i64(cap.floor_unix_ms);
    let mut records = 0;
    let mut now_used = used(client).await?;
    while now_used > cap.max_bytes {
        // The oldest finished records below the floor, probes and benches alike.
        let batch = client
            .execute(
                "DELETE FROM probes WHERE seq IN (SELECT seq FROM probes \
                 WHERE status <> 'running' AND created_at_unix_ms < $1 ORDER BY seq LIMIT 64)",
                &[&floor],
            )
            .await?
            + client
                .execute(
                    "DELETE FROM benches WHERE seq IN (SELECT seq FROM benches \
                     WHERE status <> 'running' AND created_at_unix_ms < $1 ORDER BY seq LIMIT 8)",
                    &[&floor],
                )
                .await?;
        records += usize::try_from(batch).unwrap_or(usize::MAX);
        // And the oldest hour of monitors' points, with the hourly cells it ends.
        let oldest: Option<i64> = client
            .query_one("SELECT MIN(slot_unix_ms) FROM monitor_points", &[])
            .await?
            .get(0);
        let mut points = 0;
        if let Some(end) = points_batch_end(oldest.map(to_u64), cap.floor_unix_ms) {
            points = client
                .execute(
                    "DELETE FROM monitor_points WHERE slot_unix_ms < $1",
                    &[&to_i64(end)],
                )
                .await?;
            client
                .execute(
                    "DELETE FROM monitor_rollups \
                     WHERE width_ms = $1 AND start_unix_ms + width_ms <= $2",
                    &[&to_i64(HOUR_MS), &to_i64(end)],
                )
                .await?;
        }
        now_used = used(client).await?;
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
