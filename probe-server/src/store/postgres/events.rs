//! Live events of running probes in PostgreSQL, for SSE subscribers at
//! instances other than the one running the probe. The running instance
//! publishes each probe's events in its own order (`idx`, the SSE event id
//! it gives them too, so a client may resume at any instance) and announces
//! them on `h123_events` (payload: the probe id); readers tail from an index.
//! A finished probe's events are deleted a minute later (its record replays
//! them from then on).

use super::super::Result;

/// The channel announcing new events (payload: the probe id).
pub const EVENTS_CHANNEL: &str = "h123_events";

/// Stores `events` (each one's SSE JSON) of probe `probe_id` as indices
/// `first..`, and announces them. Indices stored already are kept as they are.
///
/// # Errors
/// When the database fails.
pub async fn publish(
    client: &tokio_postgres::Client,
    probe_id: &str,
    first: usize,
    events: &[String],
) -> Result<()> {
    let first = i64::try_from(first).unwrap_or(i64::MAX);
    client
        .query(
            "WITH e AS (INSERT INTO probe_events (probe_id, idx, event) \
                 SELECT $1, $2 + n - 1, event FROM unnest($3::TEXT[]) WITH ORDINALITY AS t(event, n) \
                 ON CONFLICT DO NOTHING RETURNING 1) \
             SELECT pg_notify('h123_events', $1) FROM (SELECT 1 FROM e LIMIT 1) announced",
            &[&probe_id, &first, &events],
        )
        .await?;
    Ok(())
}

/// Up to `limit` events of probe `probe_id` from index `from` on, with their indices.
///
/// # Errors
/// When the database fails.
pub async fn read(
    client: &tokio_postgres::Client,
    probe_id: &str,
    from: usize,
    limit: i64,
) -> Result<Vec<(usize, String)>> {
    let from = i64::try_from(from).unwrap_or(i64::MAX);
    let rows = client
        .query(
            "SELECT idx, event FROM probe_events WHERE probe_id = $1 AND idx >= $2 \
             ORDER BY idx LIMIT $3",
            &[&probe_id, &from, &limit],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|row| {
            let idx: i64 = row.get(0);
            (usize::try_from(idx).unwrap_or(usize::MAX), row.get(1))
        })
        .collect())
}

/// Deletes the events of probes that finished (or vanished) over a minute ago.
///
/// # Errors
/// When the database fails.
pub async fn prune(client: &tokio_postgres::Client) -> Result<u64> {
    Ok(client
        .execute(
            "DELETE FROM probe_events e WHERE e.at < now() - INTERVAL '1 minute' \
             AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.id = e.probe_id AND p.status = 'running')",
            &[],
        )
        .await?)
}
