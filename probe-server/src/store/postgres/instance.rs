//! Instances sharing one PostgreSQL database: each registers a random id and
//! refreshes its heartbeat every few seconds; records `running` on an
//! instance whose heartbeat is older than the lease (and monitor points `running` there) are
//! finished as cancelled
//! by the live ones, at start-up and on every heartbeat.
//!
//! Heartbeats and the lease are compared on the database's clock (`now()`),
//! so the instances' own clocks never meet. An instance that stalls past the
//! lease loses its running records (their final write then finds them
//! immutable) but keeps serving; its next heartbeat registers it again.

use super::super::codec::{list_columns, parse, to_i64, to_json};
use super::super::{Result, StoreError};
use super::PostgresSettings;
use deadpool_postgres::Pool;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use std::time::Duration;
use tokio::task::AbortHandle;

/// Records the instance `id` as alive now (registering it if new).
///
/// # Errors
/// When the database fails.
pub async fn register(client: &tokio_postgres::Client, id: &str) -> Result<()> {
    client
        .execute(
            "INSERT INTO instances (id, version) VALUES ($1, $2) \
             ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()",
            &[&id, &env!("CARGO_PKG_VERSION")],
        )
        .await?;
    Ok(())
}

/// The condition "no live instance runs this row": its instance is unknown,
/// or its heartbeat is older than `$1` milliseconds.
const ORPHANED: &str = "NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = r.instance_id \
     AND i.heartbeat_at > now() - $1::BIGINT * INTERVAL '1 millisecond')";

/// Why a record of instance `instance` was cancelled.
fn reason(instance: Option<&str>, lease: Duration) -> String {
    format!(
        "the server instance that ran it ({}) stopped: no heartbeat for over {} s",
        instance.unwrap_or("unknown"),
        lease.as_secs_f64()
    )
}

/// Finishes as cancelled every probe no live instance runs, with the reason
/// in its record; returns how many. Rows another reaper holds are skipped.
///
/// # Errors
/// When the database fails.
pub async fn reap_probes(client: &mut deadpool_postgres::Object, lease: Duration) -> Result<usize> {
    let tx = client.transaction().await?;
    let rows = tx
        .query(
            &format!(
                "SELECT r.id, r.record, r.instance_id FROM probes r \
                 WHERE r.status = 'running' AND {ORPHANED} FOR UPDATE OF r SKIP LOCKED"
            ),
            &[&lease_ms(lease)],
        )
        .await?;
    for row in &rows {
        let id: &str = row.get(0);
        let mut record: ProbeRecord = parse(id, row.get(1))?;
        record.status = ProbeStatus::Cancelled;
        record.cancel_reason = Some(reason(row.get(2), lease));
        // Analysed as a probe cancelled at shutdown is (`Live::cancelled_record`).
        record.result = h123_shared::analysis::analyzed(record.result);
        let (outcome, verdict) = list_columns(&record);
        tx.execute(
            "UPDATE probes SET status = 'cancelled', record = $2, outcome = $3, verdict = $4 \
             WHERE id = $1",
            &[&id, &to_json(&record)?, &outcome, &verdict],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(rows.len())
}

/// Finishes as cancelled, at `now_unix_ms`, every bench no live instance
/// runs, with the reason; returns how many.
///
/// # Errors
/// When the database fails.
pub async fn reap_benches(
    client: &tokio_postgres::Client,
    lease: Duration,
    now_unix_ms: u64,
) -> Result<usize> {
    let lease_secs = lease.as_secs_f64().to_string();
    let changed = client
        .execute(
            &format!(
                "UPDATE benches r SET status = 'cancelled', finished_at_unix_ms = $2, \
                 cancel_reason = 'the server instance that ran it (' \
                     || COALESCE(r.instance_id, 'unknown') \
                     || ') stopped: no heartbeat for over ' || $3::TEXT || ' s' \
                 WHERE r.status = 'running' AND {ORPHANED}"
            ),
            &[&lease_ms(lease), &to_i64(now_unix_ms), &lease_secs],
        )
        .await?;
    Ok(usize::try_from(changed).unwrap_or(usize::MAX))
}

/// Marks as cancelled every monitor point `running` on no live instance (its slot's run was
/// under way when its instance stopped), saying so; returns how many.
///
/// # Errors
/// When the database fails.
pub async fn reap_points(client: &tokio_postgres::Client, lease: Duration) -> Result<usize> {
    let changed = client
        .execute(
            &format!(
                "UPDATE monitor_points r SET state = 'cancelled', instance_id = NULL, \
                 detail = 'the server instance that ran it (' \
                     || COALESCE(r.instance_id, 'unknown') || ') stopped during this run' \
                 WHERE r.state = 'running' AND {ORPHANED}"
            ),
            &[&lease_ms(lease)],
        )
        .await?;
    Ok(usize::try_from(changed).unwrap_or(usize::MAX))
}

/// Forgets instances whose heartbeat is older than the lease (their records
/// were reaped; one that comes back registers again).
async fn forget_dead(client: &tokio_postgres::Client, lease: Duration) -> Result<()> {
    client
        .execute(
            "DELETE FROM instances \
             WHERE heartbeat_at <= now() - $1::BIGINT * INTERVAL '1 millisecond'",
            &[&lease_ms(lease)],
        )
        .await?;
    Ok(())
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

/// This instance's heartbeat task; dropping it stops the heartbeat (as a
/// dead process's would stop).
pub struct Heartbeat(AbortHandle);

impl Heartbeat {
    /// Every `settings.heartbeat`: refreshes instance `id`'s heartbeat, then
    /// finishes the probes and benches of dead instances and forgets those.
    /// Failures are logged when they start and when they end, not on every beat.
    pub fn spawn(pool: Pool, id: String, settings: &PostgresSettings) -> Self {
        let every = settings.heartbeat.max(Duration::from_millis(10));
        let lease = settings.lease;
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            let mut failing = false;
            loop {
                ticks.tick().await;
                match beat(&pool, &id, lease).await {
                    Ok(()) if failing => {
                        eprintln!("h123 serve: PostgreSQL heartbeat of instance {id} restored");
                        failing = false;
                    }
                    Ok(()) => {}
                    Err(e) if !failing => {
                        eprintln!("h123 serve: PostgreSQL heartbeat of instance {id} failed: {e}");
                        failing = true;
                    }
                    Err(_) => {}
                }
            }
        });
        Heartbeat(task.abort_handle())
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One heartbeat: alive now, then the dead instances' records finished.
async fn beat(pool: &Pool, id: &str, lease: Duration) -> Result<()> {
    let mut client = pool.get().await.map_err(StoreError::from)?;
    register(&client, id).await?;
    let probes = reap_probes(&mut client, lease).await?;
    let benches = reap_benches(&client, lease, crate::probe::trace::unix_ms()).await?;
    let slots = reap_points(&client, lease).await?;
    if probes + benches + slots > 0 {
        eprintln!(
            "h123 serve: {probes} probe(s), {benches} bench(es) and {slots} monitor run(s) \
             of stopped instances are now cancelled"
        );
    }
    super::jobs::reap(&client, lease).await?;
    super::events::prune(&client).await?;
    forget_dead(&client, lease).await
}
