//! The PostgreSQL store: several `h123 serve` instances on one database.
//!
//! Same semantics as the SQLite store (unique ids, finished records immutable
//! by trigger, newest-first lists with the same cursor, owner and visibility
//! rules, retention), plus the instances sharing the database: each process
//! has a random instance id, running records name the instance that runs
//! them, and a record left `running` by an instance whose heartbeat is older
//! than the lease is finished as cancelled by a live one (see [`instance`]).
//! No TLS to the database in this version (`NoTls`). A write returns once
//! committed, and PostgreSQL's default `synchronous_commit = on` makes that
//! "on disk", as a `202` promises.

pub mod events;
pub mod instance;
pub mod jobs;
pub mod listen;
pub mod migrate;
pub mod monitors;
pub mod rate;
pub mod rollups;
pub mod size_cap;

use super::codec::{
    BENCH_COLUMNS, BenchRow, bench_options, bench_options_json, bench_result_json,
    browser_inserted, browser_refusal, json_of, list_columns, list_outcome, parse, status_from,
    to_i64, to_json, to_u64, visibility_from,
};
use super::location::PostgresUrl;
use super::size_cap::{Pruned, SizeCap};
use super::{Attached, Result, StoreError, new_id};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use h123_shared::api::{BenchRecord, BenchSummary, ProbeRecord, ProbeSummary};
use h123_shared::browser::BrowserRun;
use h123_shared::{Protocol, redact};
use instance::Heartbeat;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::NoTls;

/// How a PostgreSQL store connects and how instances watch each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresSettings {
    /// Most connections this instance holds open.
    pub pool_size: usize,
    /// How often this instance refreshes its heartbeat and finishes the
    /// records of dead instances.
    pub heartbeat: Duration,
    /// How old an instance's heartbeat may get before its running records
    /// are finished as cancelled by the others.
    pub lease: Duration,
    /// Longest wait for a pooled connection (or a new one) before a call fails.
    pub connect_timeout: Duration,
}

impl Default for PostgresSettings {
    /// 16 connections, a heartbeat every 5 s, a 30 s lease, 10 s to connect.
    fn default() -> Self {
        PostgresSettings {
            pool_size: 16,
            heartbeat: Duration::from_secs(5),
            lease: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// A PostgreSQL database shared with other instances. Cloning shares the
/// pool; the heartbeat stops when the last clone is dropped.
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    config: tokio_postgres::Config,
    instance: String,
    lease: Duration,
    _heartbeat: Heartbeat,
}

const INSERT_SQL: &str = "INSERT INTO probes \
     (id, created_at_unix_ms, status, record, visibility, owner_hash, url, protocols, instance_id, \
     outcome, verdict) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

impl PostgresStore {
    /// Connects to `url`, applies the migrations this version has not yet
    /// applied, registers a new instance and starts its heartbeat.
    ///
    /// # Errors
    /// [`StoreError::Setup`] when the database cannot be reached or migrated.
    pub async fn connect(url: &PostgresUrl, settings: PostgresSettings) -> Result<Self> {
        let config: tokio_postgres::Config = url
            .secret_url()
            .parse()
            .map_err(|e| StoreError::Setup(format!("{url} is not a PostgreSQL URL: {e}")))?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(settings.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(settings.connect_timeout))
            .create_timeout(Some(settings.connect_timeout))
            .build()
            .map_err(|e| StoreError::Setup(format!("connection pool: {e}")))?;
        let setup =
            |e: StoreError| StoreError::Setup(format!("cannot use the database at {url}: {e}"));
        let mut client = pool.get().await.map_err(|e| setup(e.into()))?;
        migrate::run(&mut client).await.map_err(setup)?;
        let instance = new_id().map_err(|e| StoreError::Setup(format!("random source: {e}")))?;
        instance::register(&client, &instance)
            .await
            .map_err(setup)?;
        drop(client);
        let heartbeat = Heartbeat::spawn(pool.clone(), instance.clone(), &settings);
        Ok(PostgresStore {
            inner: Arc::new(Inner {
                pool,
                config,
                instance,
                lease: settings.lease,
                _heartbeat: heartbeat,
            }),
        })
    }

    /// This process's instance id (random, made at connect).
    pub fn instance_id(&self) -> &str {
        &self.inner.instance
    }

    pub(super) async fn client(&self) -> Result<deadpool_postgres::Object> {
        Ok(self.inner.pool.get().await?)
    }

    /// Takes a creation token from `client`'s bucket, shared by every
    /// instance (see [`rate`]).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn take_rate_token(
        &self,
        client: &str,
        burst: f64,
        per_sec: f64,
    ) -> Result<rate::Taken> {
        rate::take(&*self.client().await?, client, burst, per_sec).await
    }

    /// Starts this instance's `LISTEN` connection, announcing on `signals`.
    pub fn listen(&self, signals: listen::Signals) -> listen::Listener {
        listen::Listener::spawn(
            self.inner.config.clone(),
            self.inner.instance.clone(),
            signals,
        )
    }

    /// Publishes live events of probe `probe_id` as indices `first..` (see [`events`]).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn publish_events(
        &self,
        probe_id: &str,
        first: usize,
        json: &[String],
    ) -> Result<()> {
        events::publish(&*self.client().await?, probe_id, first, json).await
    }

    /// Up to `limit` published events of probe `probe_id` from index `from` on.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn read_events(
        &self,
        probe_id: &str,
        from: usize,
        limit: i64,
    ) -> Result<Vec<(usize, String)>> {
        events::read(&*self.client().await?, probe_id, from, limit).await
    }

    /// Queues an agent's job (see [`jobs`]).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn enqueue_job(&self, job: &jobs::NewJob<'_>) -> Result<()> {
        jobs::enqueue(&*self.client().await?, job).await
    }

    /// Hands agent `vantage` its oldest queued job under a `lease`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn claim_job(&self, vantage: &str, lease: Duration) -> Result<Option<jobs::Claimed>> {
        jobs::claim(&*self.client().await?, vantage, lease).await
    }

    /// Renews a held job's lease, leaving its events for the owner.
    ///
    /// # Errors
    /// When the database fails; `Ok(Err(..))` when refused.
    pub async fn post_job_events(
        &self,
        id: &str,
        vantage: &str,
        lease: Duration,
        events: Option<(&str, usize)>,
        max_events: usize,
    ) -> Result<Result<(), jobs::Refused>> {
        let mut client = self.client().await?;
        jobs::post_events(&mut client, id, vantage, lease, events, max_events).await
    }

    /// Ends a held job with its outcome, left for the owner; `false` when not held.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn finish_job(
        &self,
        id: &str,
        vantage: &str,
        kind: &jobs::PostKind,
        body: &str,
    ) -> Result<bool> {
        let mut client = self.client().await?;
        jobs::finish(&mut client, id, vantage, kind, body).await
    }

    /// Takes up to `limit` posts waiting for this instance, oldest first.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn take_job_posts(&self, limit: i64) -> Result<Vec<jobs::Post>> {
        jobs::take_posts(&*self.client().await?, &self.inner.instance, limit).await
    }

    /// Requeues or ends this instance's jobs whose lease ran out.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sweep_jobs(&self, lease: Duration, max_claims: i32) -> Result<Vec<jobs::Ended>> {
        let mut client = self.client().await?;
        jobs::sweep(&mut client, &self.inner.instance, lease, max_claims).await
    }

    /// Forgets probe `probe_id`'s jobs and posts.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn forget_jobs(&self, probe_id: &str) -> Result<()> {
        jobs::forget_probe(&*self.client().await?, probe_id).await
    }

    /// Deletes the rate buckets untouched for `full_after` (full ones).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn prune_rate_buckets(&self, full_after: Duration) -> Result<u64> {
        rate::prune(&*self.client().await?, full_after).await
    }

    /// Stores a new record, run by this instance. See `SharedStore::insert`.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    pub async fn insert(&self, record: &ProbeRecord, owner_hash: Option<&str>) -> Result<()> {
        let (outcome, verdict) = list_columns(record);
        let client = self.client().await?;
        let statement = client.prepare_cached(INSERT_SQL).await?;
        client
            .execute(
                &statement,
                &[
                    &record.id,
                    &to_i64(record.created_at_unix_ms),
                    &record.status.as_str(),
                    &to_json(record)?,
                    &record.options.visibility.as_str(),
                    &owner_hash,
                    &redact::redact_url(&record.options.url, &record.options.keep_secret),
                    &json_of(&record.id, &record.options.protocols)?,
                    &self.inner.instance,
                    &outcome,
                    &verdict,
                ],
            )
            .await?;
        Ok(())
    }

    /// Replaces a `running` record. See `SharedStore::update`.
    ///
    /// # Errors
    /// [`StoreError::Immutable`] when the stored record is finished already.
    pub async fn update(&self, record: &ProbeRecord) -> Result<()> {
        let json = to_json(record)?;
        let (outcome, verdict) = list_columns(record);
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE probes SET status = $2, record = $3, outcome = $4, verdict = $5 \
                 WHERE id = $1 AND status = 'running'",
                &[
                    &record.id,
                    &record.status.as_str(),
                    &json,
                    &outcome,
                    &verdict,
                ],
            )
            .await;
        running_updated(changed, &record.id)
    }

    /// The record with this id, if any.
    ///
    /// # Errors
    /// When the database fails or the record is unreadable.
    pub async fn get(&self, id: &str) -> Result<Option<ProbeRecord>> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT p.record, b.run FROM probes p \
                 LEFT JOIN browser_runs b ON b.probe_id = p.id WHERE p.id = $1",
            )
            .await?;
        let row = client.query_opt(&statement, &[&id]).await?;
        row.map(|row| {
            let record = parse(id, row.get::<_, &str>(0))?;
            super::codec::with_browser(record, row.get::<_, Option<&str>>(1))
        })
        .transpose()
    }

    /// Stores a browser measurement once, for the probe's owner. See `Store::attach_browser`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn attach_browser(
        &self,
        id: &str,
        owner_hash: &str,
        run: &BrowserRun,
    ) -> Result<Attached> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let probe = tx
            .query_opt(
                "SELECT status, owner_hash FROM probes WHERE id = $1 FOR SHARE",
                &[&id],
            )
            .await?;
        let refused = browser_refusal(
            probe.as_ref().map(|row| (row.get(0), row.get(1))),
            owner_hash,
        );
        let outcome = match refused {
            Some(refusal) => refusal,
            None => browser_inserted(
                tx.execute(
                    "INSERT INTO browser_runs (probe_id, measured_at_unix_ms, run) \
                     VALUES ($1, $2, $3) ON CONFLICT (probe_id) DO NOTHING",
                    &[&id, &to_i64(run.measured_at_unix_ms), &json_of(id, run)?],
                )
                .await?,
            ),
        };
        tx.commit().await?;
        Ok(outcome)
    }

    /// Up to `limit` summaries, newest first. See `SharedStore::list`.
    ///
    /// # Errors
    /// [`StoreError::UnknownCursor`] when `before` is not a stored id.
    pub async fn list(
        &self,
        limit: usize,
        before: Option<&str>,
        owner_hash: Option<&str>,
    ) -> Result<Vec<ProbeSummary>> {
        let client = self.client().await?;
        let upper = cursor(&client, "probes", before).await?;
        let statement = client
            .prepare_cached(
                "SELECT id, url, protocols, status, created_at_unix_ms, visibility, outcome, \
                 verdict FROM probes WHERE seq < $1 AND (visibility = 'public' OR owner_hash = $3) \
                 ORDER BY seq DESC LIMIT $2",
            )
            .await?;
        let rows = client
            .query(&statement, &[&upper, &limit_of(limit), &owner_hash])
            .await?;
        rows.into_iter()
            .map(|row| {
                let id: String = row.get(0);
                Ok(ProbeSummary {
                    protocols: parse::<Vec<Protocol>>(&id, row.get(2))?,
                    status: status_from(&id, row.get(3))?,
                    created_at_unix_ms: to_u64(row.get(4)),
                    visibility: visibility_from(row.get(5)),
                    outcome: list_outcome(row.get(6)),
                    verdict: row.get(7),
                    url: row.get(1),
                    id,
                })
            })
            .collect()
    }

    /// Deletes the records of monitor runs older than `older_than_unix_ms` and clears their
    /// points' links. See `SharedStore::prune_monitor_records`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn prune_monitor_records(&self, older_than_unix_ms: u64) -> Result<usize> {
        let client = self.client().await?;
        // One statement: both changes see the same snapshot and commit together.
        let row = client
            .query_one(
                "WITH gone AS (DELETE FROM probes p USING monitor_points m \
                   WHERE m.probe_id = p.id AND m.probe_id IS NOT NULL \
                   AND m.slot_unix_ms < $1 AND p.status <> 'running' RETURNING p.id), \
                 unlinked AS (UPDATE monitor_points SET probe_id = NULL \
                   WHERE probe_id IS NOT NULL AND slot_unix_ms < $1) \
                 SELECT COUNT(*) FROM gone",
                &[&to_i64(older_than_unix_ms)],
            )
            .await?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    /// Deletes finished records by age, then prunes every table to `cap` by the rows'
    /// bytes (`size_cap`). See `SharedStore::prune`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn prune(
        &self,
        older_than_unix_ms: Option<u64>,
        cap: Option<SizeCap>,
    ) -> Result<Pruned> {
        let client = self.client().await?;
        let mut deleted = 0;
        if let Some(cutoff) = older_than_unix_ms {
            for table in ["probes", "benches"] {
                let sql = format!(
                    "DELETE FROM {table} WHERE status <> 'running' AND created_at_unix_ms < $1"
                );
                deleted += client.execute(&sql, &[&to_i64(cutoff)]).await?;
            }
            // Monitors' history ages out with the records its points link to.
            client
                .execute(
                    "DELETE FROM monitor_points WHERE slot_unix_ms < $1",
                    &[&to_i64(cutoff)],
                )
                .await?;
            client
                .execute(
                    "DELETE FROM monitor_rollups WHERE start_unix_ms + width_ms <= $1",
                    &[&to_i64(cutoff)],
                )
                .await?;
        }
        let mut pruned = match cap {
            Some(cap) => size_cap::prune(&client, cap).await?,
            None => Pruned::default(),
        };
        pruned.records += usize::try_from(deleted).unwrap_or(usize::MAX);
        Ok(pruned)
    }

    /// Finishes as cancelled the probes left `running` by instances whose
    /// heartbeat is older than the lease (never this instance's, nor a live
    /// one's) and returns how many there were.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn cancel_running(&self) -> Result<usize> {
        let mut client = self.client().await?;
        instance::reap_probes(&mut client, self.inner.lease).await
    }

    /// Marks as cancelled the monitor points `running` on instances whose heartbeat is older
    /// than the lease; how many.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn cancel_running_points(&self) -> Result<usize> {
        let client = self.client().await?;
        instance::reap_points(&client, self.inner.lease).await
    }

    /// Stores a new bench, run by this instance.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    pub async fn insert_bench(&self, record: &BenchRecord, owner_hash: Option<&str>) -> Result<()> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO benches (id, created_at_unix_ms, finished_at_unix_ms, status, \
                 options, result, cancel_reason, instance_id, visibility, owner_hash) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                &[
                    &record.id,
                    &to_i64(record.created_at_unix_ms),
                    &record.finished_at_unix_ms.map(to_i64),
                    &record.status.as_str(),
                    &bench_options_json(record)?,
                    &bench_result_json(record)?,
                    &record.cancel_reason,
                    &self.inner.instance,
                    &record.options.visibility.as_str(),
                    &owner_hash,
                ],
            )
            .await?;
        Ok(())
    }

    /// Stores the final state of a running bench.
    ///
    /// # Errors
    /// [`StoreError::Immutable`] when the stored bench is finished already (or unknown).
    pub async fn finish_bench(&self, record: &BenchRecord) -> Result<()> {
        let result = bench_result_json(record)?;
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE benches SET status = $2, finished_at_unix_ms = $3, result = $4, \
                 cancel_reason = $5 WHERE id = $1 AND status = 'running'",
                &[
                    &record.id,
                    &record.status.as_str(),
                    &record.finished_at_unix_ms.map(to_i64),
                    &result,
                    &record.cancel_reason,
                ],
            )
            .await;
        running_updated(changed, &record.id)
    }

    /// The bench with this id, if any.
    ///
    /// # Errors
    /// When the database fails or the record is unreadable.
    pub async fn get_bench(&self, id: &str) -> Result<Option<BenchRecord>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT {BENCH_COLUMNS}, cancel_reason FROM benches WHERE id = $1"),
                &[&id],
            )
            .await?;
        row.map(|row| {
            BenchRow {
                id: row.get(0),
                created_at_unix_ms: row.get(1),
                finished_at_unix_ms: row.get(2),
                status: row.get(3),
                options: row.get(4),
                result: row.get(5),
                cancel_reason: row.get(6),
            }
            .record()
        })
        .transpose()
    }

    /// Up to `limit` benches, newest first, older than `before` when given.
    ///
    /// # Errors
    /// [`StoreError::UnknownCursor`] when `before` is not a stored bench id.
    pub async fn list_benches(
        &self,
        limit: usize,
        before: Option<&str>,
        owner_hash: Option<&str>,
    ) -> Result<Vec<BenchSummary>> {
        let client = self.client().await?;
        let upper = cursor(&client, "benches", before).await?;
        let rows = client
            .query(
                "SELECT id, created_at_unix_ms, status, options, visibility FROM benches \
                 WHERE seq < $1 AND (visibility = 'public' OR owner_hash = $3) \
                 ORDER BY seq DESC LIMIT $2",
                &[&upper, &limit_of(limit), &owner_hash],
            )
            .await?;
        rows.into_iter()
            .map(|row| {
                let id: String = row.get(0);
                let options = bench_options(&id, row.get(3))?;
                Ok(BenchSummary {
                    status: status_from(&id, row.get(2))?,
                    created_at_unix_ms: to_u64(row.get(1)),
                    url: options.url,
                    protocols: options.protocols,
                    id,
                    visibility: visibility_from(row.get(4)),
                })
            })
            .collect()
    }

    /// Finishes as cancelled, at `now_unix_ms`, the benches left `running`
    /// by instances whose heartbeat is older than the lease.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn cancel_running_benches(&self, now_unix_ms: u64) -> Result<usize> {
        let client = self.client().await?;
        instance::reap_benches(&client, self.inner.lease, now_unix_ms).await
    }
}

/// The `seq` of the cursor record `before` in `table`, or past the newest.
async fn cursor(client: &tokio_postgres::Client, table: &str, before: Option<&str>) -> Result<i64> {
    let Some(id) = before else {
        return Ok(i64::MAX);
    };
    let row = client
        .query_opt(&format!("SELECT seq FROM {table} WHERE id = $1"), &[&id])
        .await?;
    row.map(|row| row.get(0))
        .ok_or_else(|| StoreError::UnknownCursor(id.chars().take(40).collect()))
}

fn limit_of(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// The outcome of updating record `id` where it is still running: a finished
/// record (the trigger's refusal, or no running row) is [`StoreError::Immutable`].
fn running_updated(changed: Result<u64, tokio_postgres::Error>, id: &str) -> Result<()> {
    match changed {
        Ok(0) => Err(StoreError::Immutable(id.to_owned())),
        Ok(_) => Ok(()),
        Err(e)
            if e.as_db_error()
                .is_some_and(|db| db.message().contains("immutable")) =>
        {
            Err(StoreError::Immutable(id.to_owned()))
        }
        Err(other) => Err(other.into()),
    }
}

/// Whether `e` says the database cannot be reached now, rather than that it
/// refused the statement: no connection (refused, closed, I/O), or the server
/// ending sessions (SQLSTATE classes 08, connection exception, and 57,
/// operator intervention: a shutdown or restart).
pub fn is_unavailable(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        Some(db) => ["08", "57"]
            .iter()
            .any(|class| db.code().code().starts_with(class)),
        None => {
            e.is_closed() || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
        }
    }
}

/// A PostgreSQL error in words: the server's message (with its detail and
/// hint) for a database error, else the error and its causes, since the
/// driver's own `Display` leaves both out ("db error", "error connecting to server").
pub fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{}: {}", db.severity(), db.message());
        for extra in [db.detail(), db.hint()].into_iter().flatten() {
            text.push_str(&format!(" ({extra})"));
        }
        return text;
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}
