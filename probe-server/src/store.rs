//! Where probe and bench records live: [`SharedStore`], the one async
//! interface the server uses, over two back ends: SQLite (the embedded
//! default; its synchronous [`Store`] runs on tokio's blocking pool) and
//! PostgreSQL (async, for several server instances on one database).

pub mod codec;
pub mod history;
pub mod location;
pub mod monitor_rows;
pub mod postgres;
pub mod size_cap;
pub mod sqlite;
pub mod sqlite_monitors;

use h123_shared::Protocol;
use h123_shared::alert::AlertState;
use h123_shared::api::{BenchRecord, BenchSummary, ProbeRecord, ProbeSummary};
use h123_shared::browser::BrowserRun;
use h123_shared::monitor::MonitorPoint;
use h123_shared::monitor_rollup::{Cell, CellKey};
use location::DbLocation;
use monitor_rows::{DeliveryLog, MonitorsOf, StoredMonitor};
use postgres::{PostgresSettings, PostgresStore};
use size_cap::{Pruned, SizeCap};
use sqlite::SqliteStore;
use std::sync::Arc;

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed the operation.
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    /// PostgreSQL refused or failed the operation, or could not be reached
    /// (the message carries the cause: the server's own words, or the I/O error).
    #[error("PostgreSQL: {0}")]
    Postgres(String),
    /// PostgreSQL cannot be reached now (down, restarting, no connection
    /// free in time): worth trying again shortly.
    #[error("PostgreSQL is unavailable: {0}")]
    Unavailable(String),
    /// A stored record no longer parses.
    #[error("stored record {id} is unreadable: {reason}")]
    Corrupt {
        /// The record's id.
        id: String,
        /// The parse error.
        reason: String,
    },
    /// The record is finished and may not change any more.
    #[error("record {0} is finished and immutable")]
    Immutable(String),
    /// The `before` cursor names no stored record.
    #[error("unknown cursor `{0}`")]
    UnknownCursor(String),
    /// The blocking task running the call died.
    #[error("store task failed: {0}")]
    Task(String),
    /// The database file or its folder could not be prepared.
    #[error("{0}")]
    Setup(String),
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> Self {
        if postgres::is_unavailable(&e) {
            StoreError::Unavailable(postgres::describe(&e))
        } else {
            StoreError::Postgres(postgres::describe(&e))
        }
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        match e {
            deadpool_postgres::PoolError::Backend(e) => e.into(),
            e @ (deadpool_postgres::PoolError::Timeout(_)
            | deadpool_postgres::PoolError::Closed) => StoreError::Unavailable(e.to_string()),
            other => StoreError::Postgres(other.to_string()),
        }
    }
}

/// What became of a browser measurement offered for a probe ([`Store::attach_browser`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Attached {
    /// It is stored with the probe.
    Stored,
    /// No probe has this id.
    NoProbe,
    /// The probe was made under another owner token (or none).
    NotOwner,
    /// The probe is still running.
    Running,
    /// The probe has its browser measurement already.
    Exists,
}

/// `Result` with a [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A write handed to a back end that commits on its own thread: its outcome,
/// once the transaction holding it is on disk (or the write failed).
#[must_use = "a write is on disk only once its commit is awaited"]
pub struct Commit(tokio::sync::oneshot::Receiver<Result<()>>);

impl Commit {
    /// The commit whose outcome `outcome` will carry.
    pub fn new(outcome: tokio::sync::oneshot::Receiver<Result<()>>) -> Self {
        Commit(outcome)
    }

    /// Waits for the write's commit without blocking a thread.
    ///
    /// # Errors
    /// The write's error, or [`StoreError::Task`] when the committer stopped before it.
    pub async fn committed(self) -> Result<()> {
        self.0.await.unwrap_or_else(|_| Err(stopped()))
    }

    /// Waits for the write's commit, blocking this thread (never call it from async code).
    ///
    /// # Errors
    /// As [`Commit::committed`].
    pub fn wait(self) -> Result<()> {
        self.0.blocking_recv().unwrap_or_else(|_| Err(stopped()))
    }
}

fn stopped() -> StoreError {
    StoreError::Task("the store's commit thread stopped before the write".to_owned())
}

/// Durable probe and bench records, each kind with its own ids. Every write
/// returns only once it is on disk. The synchronous interface of the SQLite
/// back end; the server calls it through [`SharedStore`].
pub trait Store: Send + Sync + 'static {
    /// Stores a new record (normally `running`), owned by the owner token
    /// whose hash is `owner_hash` (see `server::owner`); its visibility is
    /// `record.options.visibility`.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    fn insert(&self, record: &ProbeRecord, owner_hash: Option<&str>) -> Result<()> {
        self.insert_queued(record, owner_hash)?.wait()
    }

    /// Queues [`Store::insert`] without blocking: the write is on disk once the
    /// returned [`Commit`] resolves `Ok` (concurrent inserts share one commit).
    ///
    /// # Errors
    /// When the record cannot be encoded; the database's errors come through the [`Commit`].
    fn insert_queued(&self, record: &ProbeRecord, owner_hash: Option<&str>) -> Result<Commit>;

    /// Replaces a `running` record with its final (or later partial) state.
    ///
    /// # Errors
    /// [`StoreError::Immutable`] when the stored record is finished already.
    fn update(&self, record: &ProbeRecord) -> Result<()>;

    /// The record with this id, if any, with its browser measurement when it has one.
    ///
    /// # Errors
    /// When the database fails or the record is unreadable.
    fn get(&self, id: &str) -> Result<Option<ProbeRecord>>;

    /// Stores `run` as the browser measurement of finished probe `id` when the owner token
    /// hashed as `owner_hash` made it and it has none yet; says what it did. Never changes the
    /// record itself.
    ///
    /// # Errors
    /// When the database fails.
    fn attach_browser(&self, id: &str, owner_hash: &str, run: &BrowserRun) -> Result<Attached>;

    /// Up to `limit` summaries, newest first, older than `before` when given:
    /// the public probes and those owned by `owner_hash`. Read from summary
    /// columns, never from whole records.
    ///
    /// # Errors
    /// [`StoreError::UnknownCursor`] when `before` is not a stored id.
    fn list(
        &self,
        limit: usize,
        before: Option<&str>,
        owner_hash: Option<&str>,
    ) -> Result<Vec<ProbeSummary>>;

    /// Deletes finished probes and benches created before `older_than_unix_ms`
    /// (when given), then prunes every table to `cap` (when given; see
    /// [`size_cap`]). Running records are kept.
    ///
    /// # Errors
    /// When the database fails.
    fn prune(&self, older_than_unix_ms: Option<u64>, cap: Option<SizeCap>) -> Result<Pruned>;

    /// Deletes the records of monitor runs whose slot is older than `older_than_unix_ms` and
    /// clears their points' links (the points, the monitor's history, stay); returns how many
    /// records were deleted.
    ///
    /// # Errors
    /// When the database fails.
    fn prune_monitor_records(&self, older_than_unix_ms: u64) -> Result<usize>;

    /// Marks every record still `running` as `cancelled` (called at start-up,
    /// when no probe can be running: one instance per SQLite file) and
    /// returns how many there were.
    ///
    /// # Errors
    /// When the database fails.
    fn cancel_running(&self) -> Result<usize>;

    /// Stores a new bench (normally `running`, without a result), owned by the token
    /// whose hash is `owner_hash`; its visibility is `record.options.visibility`.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    fn insert_bench(&self, record: &BenchRecord, owner_hash: Option<&str>) -> Result<()>;

    /// Stores the final state (`done` with its result, or `cancelled`) of a running bench.
    ///
    /// # Errors
    /// [`StoreError::Immutable`] when the stored bench is finished already (or unknown).
    fn finish_bench(&self, record: &BenchRecord) -> Result<()>;

    /// The bench with this id, if any (without `progress`: that lives in memory).
    ///
    /// # Errors
    /// When the database fails or the record is unreadable.
    fn get_bench(&self, id: &str) -> Result<Option<BenchRecord>>;

    /// Up to `limit` benches, newest first, older than `before` when given: the public ones
    /// and those owned by `owner_hash`.
    ///
    /// # Errors
    /// [`StoreError::UnknownCursor`] when `before` is not a stored bench id.
    fn list_benches(
        &self,
        limit: usize,
        before: Option<&str>,
        owner_hash: Option<&str>,
    ) -> Result<Vec<BenchSummary>>;

    /// Marks every bench still `running` as `cancelled` at `now_unix_ms`
    /// (called at start-up) and returns how many there were.
    ///
    /// # Errors
    /// When the database fails.
    fn cancel_running_benches(&self, now_unix_ms: u64) -> Result<usize>;

    /// Stores a new monitor.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    fn insert_monitor(&self, monitor: &StoredMonitor) -> Result<()>;

    /// The monitor with this id, if any.
    ///
    /// # Errors
    /// When the database fails or the monitor is unreadable.
    fn get_monitor(&self, id: &str) -> Result<Option<StoredMonitor>>;

    /// Up to `limit` monitors, newest first: the public ones and those owned by `owner_hash`.
    ///
    /// # Errors
    /// When the database fails or a monitor is unreadable.
    fn list_monitors(&self, limit: usize, owner_hash: Option<&str>) -> Result<Vec<StoredMonitor>>;

    /// How many monitors `of` names.
    ///
    /// # Errors
    /// When the database fails.
    fn count_monitors(&self, of: &MonitorsOf) -> Result<u64>;

    /// How many clients have running monitors.
    ///
    /// # Errors
    /// When the database fails.
    fn monitor_clients(&self) -> Result<u64>;

    /// Pauses or resumes monitor `id`, its next slot set to `next_slot`; whether it exists.
    ///
    /// # Errors
    /// When the database fails.
    fn set_monitor_paused(&self, id: &str, paused: bool, next_slot: u64) -> Result<bool>;

    /// Deletes monitor `id` and its history; whether it existed.
    ///
    /// # Errors
    /// When the database fails.
    fn delete_monitor(&self, id: &str) -> Result<bool>;

    /// Up to `limit` running monitors whose next slot is at or before `now`, earliest first.
    ///
    /// # Errors
    /// When the database fails or a monitor is unreadable.
    fn due_monitors(&self, now: u64, limit: usize) -> Result<Vec<StoredMonitor>>;

    /// The earliest next slot of a running monitor, if any.
    ///
    /// # Errors
    /// When the database fails.
    fn next_slot(&self) -> Result<Option<u64>>;

    /// Moves running monitor `id`'s next slot from `slots.0` (due) to `slots.1` (next) and
    /// stores `running`, the claimed slot's point, by `instance`, in one transaction; whether
    /// this call did (then the slot is this caller's alone to run).
    ///
    /// # Errors
    /// When the database fails.
    fn claim_slot(
        &self,
        id: &str,
        slots: (u64, u64),
        running: &MonitorPoint,
        instance: Option<&str>,
    ) -> Result<bool>;

    /// Marks every monitor point still `running` as `cancelled`, saying `reason` (called at
    /// start-up, one instance per file); how many there were.
    ///
    /// # Errors
    /// When the database fails.
    fn cancel_running_points(&self, reason: &str) -> Result<usize>;

    /// Stores points of monitor `id` in one transaction, in place of their slots' running (or
    /// cancelled) points (a point already stored for its slot, vantage and protocol is kept).
    ///
    /// # Errors
    /// When the database fails.
    fn add_points(&self, id: &str, points: &[MonitorPoint]) -> Result<()>;

    /// Monitor `id`'s points with slots in `[from, to)`, oldest first: of `protocol` (and the
    /// missed stretches) when given, else all.
    ///
    /// # Errors
    /// When the database fails or a point is unreadable.
    fn points(
        &self,
        id: &str,
        from: u64,
        to: u64,
        protocol: Option<Protocol>,
    ) -> Result<Vec<MonitorPoint>>;

    /// Monitor `id`'s rollup cells `width_ms` wide (an hour or a day) starting in `[from, to)`,
    /// oldest first.
    ///
    /// # Errors
    /// When the database fails or a cell is unreadable.
    fn cells(&self, id: &str, width_ms: u64, from: u64, to: u64) -> Result<Vec<(CellKey, Cell)>>;

    /// Replaces monitor `id`'s alert state with `new` if it is still `expected` (the check and
    /// the write are one transaction); whether it did.
    ///
    /// # Errors
    /// When the database fails or the stored state is unreadable.
    fn swap_alert_state(&self, id: &str, expected: &AlertState, new: &AlertState) -> Result<bool>;

    /// Logs one try to deliver a notification of monitor `id`.
    ///
    /// # Errors
    /// When the database fails.
    fn log_delivery(&self, id: &str, log: &DeliveryLog) -> Result<()>;

    /// Monitor `id`'s latest `limit` delivery tries, newest first.
    ///
    /// # Errors
    /// When the database fails.
    fn deliveries(&self, id: &str, limit: usize) -> Result<Vec<DeliveryLog>>;
}

/// The store shared by the server's tasks, called from async code: the one
/// interface the API, the server and the CLI use, whichever the back end.
#[derive(Clone)]
pub struct SharedStore(Backend);

/// The back ends behind [`SharedStore`].
#[derive(Clone)]
enum Backend {
    /// A synchronous [`Store`] (SQLite), called on the blocking pool.
    Blocking(Arc<dyn Store>),
    /// PostgreSQL, called directly.
    Postgres(PostgresStore),
}

/// Why a monitor point left `running` by an earlier stop of the only server is `cancelled`.
pub const CANCELLED_RUN: &str = "the server stopped during this run";

/// Calls `$method` on the back end: on the blocking pool for a [`Store`]
/// (with `$sync` as the call), directly for PostgreSQL (with `$async`).
macro_rules! dispatch {
    ($self:ident, |$s:ident| $sync:expr, |$pg:ident| $async:expr) => {
        match &$self.0 {
            Backend::Blocking(store) => {
                let store = store.clone();
                tokio::task::spawn_blocking(move || {
                    let $s: &dyn Store = store.as_ref();
                    $sync
                })
                .await
                .map_err(|e| StoreError::Task(e.to_string()))?
            }
            Backend::Postgres($pg) => $async,
        }
    };
}

impl SharedStore {
    /// Shares a synchronous `store` (SQLite).
    pub fn new(store: impl Store) -> Self {
        SharedStore(Backend::Blocking(Arc::new(store)))
    }

    /// Shares a PostgreSQL store.
    pub fn postgres(store: PostgresStore) -> Self {
        SharedStore(Backend::Postgres(store))
    }

    /// Opens the store `--db` names: a SQLite file (created and migrated),
    /// or a PostgreSQL database (connected, migrated, this instance
    /// registered with its heartbeat running, as `settings` say).
    ///
    /// # Errors
    /// When the file or database cannot be opened, reached or migrated.
    pub async fn open(location: &DbLocation, settings: PostgresSettings) -> Result<Self> {
        match location {
            DbLocation::Sqlite(path) => {
                let path = path.clone();
                let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path))
                    .await
                    .map_err(|e| StoreError::Task(e.to_string()))??;
                Ok(SharedStore::new(store))
            }
            DbLocation::Postgres(url) => Ok(SharedStore::postgres(
                PostgresStore::connect(url, settings).await?,
            )),
        }
    }

    /// Which back end this is: `sqlite` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match &self.0 {
            Backend::Blocking(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// The PostgreSQL store, when this is one (what instances share beyond records).
    pub fn postgres_store(&self) -> Option<&PostgresStore> {
        match &self.0 {
            Backend::Blocking(_) => None,
            Backend::Postgres(pg) => Some(pg),
        }
    }

    /// This server instance's id when several share the database (PostgreSQL).
    pub fn instance_id(&self) -> Option<&str> {
        match &self.0 {
            Backend::Blocking(_) => None,
            Backend::Postgres(pg) => Some(pg.instance_id()),
        }
    }

    /// Stores a new record (normally `running`), owned by the owner token
    /// whose hash is `owner_hash` (see `server::owner`); its visibility is
    /// `record.options.visibility`. Returns once it is on disk.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    pub async fn insert(&self, record: ProbeRecord, owner_hash: Option<String>) -> Result<()> {
        match &self.0 {
            // Committed by the store's own thread: no blocking thread waits.
            Backend::Blocking(store) => {
                store
                    .insert_queued(&record, owner_hash.as_deref())?
                    .committed()
                    .await
            }
            Backend::Postgres(pg) => pg.insert(&record, owner_hash.as_deref()).await,
        }
    }

    /// Replaces a `running` record with its final (or later partial) state.
    ///
    /// # Errors
    /// [`StoreError::Immutable`] when the stored record is finished already.
    pub async fn update(&self, record: ProbeRecord) -> Result<()> {
        dispatch!(self, |s| s.update(&record), |pg| pg.update(&record).await)
    }

    /// The record with this id, if any, with its browser measurement when it has one.
    ///
    /// # Errors
    /// When the database fails or the record is unreadable.
    pub async fn get(&self, id: String) -> Result<Option<ProbeRecord>> {
        dispatch!(self, |s| s.get(&id), |pg| pg.get(&id).await)
    }

    /// Stores `run` as the browser measurement of finished probe `id`, once, for its owner
    /// (see [`Store::attach_browser`]).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn attach_browser(
        &self,
        id: String,
        owner_hash: String,
        run: BrowserRun,
    ) -> Result<Attached> {
        dispatch!(self, |s| s.attach_browser(&id, &owner_hash, &run), |pg| pg
            .attach_browser(&id, &owner_hash, &run)
            .await)
    }

    /// Up to `limit` summaries, newest first, older than `before` when given:
    /// the public probes and those owned by `owner_hash`.
    ///
    /// # Errors
    /// [`StoreError::UnknownCursor`] when `before` is not a stored id.
    pub async fn list(
        &self,
        limit: usize,
        before: Option<String>,
        owner_hash: Option<String>,
    ) -> Result<Vec<ProbeSummary>> {
        dispatch!(
            self,
            |s| s.list(limit, before.as_deref(), owner_hash.as_deref()),
            |pg| pg
                .list(limit, before.as_deref(), owner_hash.as_deref())
                .await
        )
    }

    /// Deletes finished records created before `older_than_unix_ms`, then prunes every
    /// table to `cap` (SQLite: the database's used pages; PostgreSQL: the rows' bytes),
    /// never past its floor; says what it did and whether the cap is met.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn prune(
        &self,
        older_than_unix_ms: Option<u64>,
        cap: Option<SizeCap>,
    ) -> Result<Pruned> {
        dispatch!(self, |s| s.prune(older_than_unix_ms, cap), |pg| pg
            .prune(older_than_unix_ms, cap)
            .await)
    }

    /// Deletes the records of monitor runs whose slot is older than `older_than_unix_ms`,
    /// keeping their points (their links cleared); returns how many records went.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn prune_monitor_records(&self, older_than_unix_ms: u64) -> Result<usize> {
        dispatch!(
            self,
            |s| s.prune_monitor_records(older_than_unix_ms),
            |pg| pg.prune_monitor_records(older_than_unix_ms).await
        )
    }

    /// Marks as `cancelled` the records no live server runs and returns how
    /// many there were: with SQLite every `running` one (called at start-up,
    /// one instance per file); with PostgreSQL those of instances whose
    /// heartbeat is older than the lease, never a live instance's.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn cancel_running(&self) -> Result<usize> {
        dispatch!(self, |s| s.cancel_running(), |pg| pg.cancel_running().await)
    }

    /// Stores a new bench (normally `running`, without a result), owned by the token whose
    /// hash is `owner_hash`.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    pub async fn insert_bench(
        &self,
        record: BenchRecord,
        owner_hash: Option<String>,
    ) -> Result<()> {
        dispatch!(
            self,
            |s| s.insert_bench(&record, owner_hash.as_deref()),
            |pg| pg.insert_bench(&record, owner_hash.as_deref()).await
        )
    }

    /// Stores the final state (`done` with its result, or `cancelled`) of a running bench.
    ///
    /// # Errors
    /// [`StoreError::Immutable`] when the stored bench is finished already (or unknown).
    pub async fn finish_bench(&self, record: BenchRecord) -> Result<()> {
        dispatch!(self, |s| s.finish_bench(&record), |pg| pg
            .finish_bench(&record)
            .await)
    }

    /// The bench with this id, if any (without `progress`: that lives in memory).
    ///
    /// # Errors
    /// When the database fails or the record is unreadable.
    pub async fn get_bench(&self, id: String) -> Result<Option<BenchRecord>> {
        dispatch!(self, |s| s.get_bench(&id), |pg| pg.get_bench(&id).await)
    }

    /// Up to `limit` benches, newest first, older than `before` when given: the public ones
    /// and those owned by `owner_hash`.
    ///
    /// # Errors
    /// [`StoreError::UnknownCursor`] when `before` is not a stored bench id.
    pub async fn list_benches(
        &self,
        limit: usize,
        before: Option<String>,
        owner_hash: Option<String>,
    ) -> Result<Vec<BenchSummary>> {
        dispatch!(
            self,
            |s| s.list_benches(limit, before.as_deref(), owner_hash.as_deref()),
            |pg| pg
                .list_benches(limit, before.as_deref(), owner_hash.as_deref())
                .await
        )
    }

    /// Marks as `cancelled` at `now_unix_ms` the benches no live server runs
    /// (as [`SharedStore::cancel_running`] does for probes).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn cancel_running_benches(&self, now_unix_ms: u64) -> Result<usize> {
        dispatch!(self, |s| s.cancel_running_benches(now_unix_ms), |pg| pg
            .cancel_running_benches(now_unix_ms)
            .await)
    }
}

/// Monitors and their history, whichever the back end (see the [`Store`] methods of the same names).
impl SharedStore {
    /// Stores a new monitor.
    ///
    /// # Errors
    /// When the id exists already or the database fails.
    pub async fn insert_monitor(&self, monitor: StoredMonitor) -> Result<()> {
        dispatch!(self, |s| s.insert_monitor(&monitor), |pg| {
            postgres::monitors::insert(&*pg.client().await?, &monitor).await
        })
    }

    /// The monitor with this id, if any.
    ///
    /// # Errors
    /// When the database fails or the monitor is unreadable.
    pub async fn get_monitor(&self, id: String) -> Result<Option<StoredMonitor>> {
        dispatch!(self, |s| s.get_monitor(&id), |pg| {
            postgres::monitors::get(&*pg.client().await?, &id).await
        })
    }

    /// Up to `limit` monitors, newest first: the public ones and those owned by `owner_hash`.
    ///
    /// # Errors
    /// When the database fails or a monitor is unreadable.
    pub async fn list_monitors(
        &self,
        limit: usize,
        owner_hash: Option<String>,
    ) -> Result<Vec<StoredMonitor>> {
        dispatch!(
            self,
            |s| s.list_monitors(limit, owner_hash.as_deref()),
            |pg| {
                postgres::monitors::list(&*pg.client().await?, limit, owner_hash.as_deref()).await
            }
        )
    }

    /// How many monitors `of` names: all, an owner's or a client's.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn count_monitors(&self, of: MonitorsOf) -> Result<u64> {
        dispatch!(self, |s| s.count_monitors(&of), |pg| {
            postgres::monitors::count(&*pg.client().await?, &of).await
        })
    }

    /// How many clients have running monitors (those made before clients were kept count
    /// as one): the number the monitors' bytes per minute are shared among.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn monitor_clients(&self) -> Result<u64> {
        dispatch!(self, |s| s.monitor_clients(), |pg| {
            postgres::monitors::clients(&*pg.client().await?).await
        })
    }

    /// Pauses or resumes monitor `id`, its next slot set to `next_slot`; whether it exists.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn set_monitor_paused(
        &self,
        id: String,
        paused: bool,
        next_slot: u64,
    ) -> Result<bool> {
        dispatch!(
            self,
            |s| s.set_monitor_paused(&id, paused, next_slot),
            |pg| {
                postgres::monitors::set_paused(&*pg.client().await?, &id, paused, next_slot).await
            }
        )
    }

    /// Deletes monitor `id` and its history; whether it existed.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn delete_monitor(&self, id: String) -> Result<bool> {
        dispatch!(self, |s| s.delete_monitor(&id), |pg| {
            postgres::monitors::delete(&mut pg.client().await?, &id).await
        })
    }

    /// Up to `limit` running monitors whose next slot is at or before `now`, earliest first.
    ///
    /// # Errors
    /// When the database fails or a monitor is unreadable.
    pub async fn due_monitors(&self, now: u64, limit: usize) -> Result<Vec<StoredMonitor>> {
        dispatch!(self, |s| s.due_monitors(now, limit), |pg| {
            postgres::monitors::due(&*pg.client().await?, now, limit).await
        })
    }

    /// The earliest next slot of a running monitor, if any.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn next_slot(&self) -> Result<Option<u64>> {
        dispatch!(self, |s| s.next_slot(), |pg| {
            postgres::monitors::next_slot(&*pg.client().await?).await
        })
    }

    /// Moves running monitor `id`'s next slot from `due` to `next` and stores `running`, the
    /// claimed slot's point, in one transaction; whether this call did (then the slot is this
    /// caller's alone to run, in every instance).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn claim_slot(
        &self,
        id: String,
        (due, next): (u64, u64),
        running: MonitorPoint,
    ) -> Result<bool> {
        dispatch!(
            self,
            |s| s.claim_slot(&id, (due, next), &running, None),
            |pg| {
                let instance = pg.instance_id().to_owned();
                postgres::monitors::claim(
                    &mut pg.client().await?,
                    &id,
                    (due, next),
                    &running,
                    &instance,
                )
                .await
            }
        )
    }

    /// Marks as `cancelled` the monitor points `running` in no live server (their slot's run
    /// was under way when its server stopped); how many: with SQLite every one (at start-up),
    /// with PostgreSQL those of instances whose heartbeat is older than the lease.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn cancel_running_points(&self) -> Result<usize> {
        dispatch!(self, |s| s.cancel_running_points(CANCELLED_RUN), |pg| pg
            .cancel_running_points()
            .await)
    }

    /// Stores points of monitor `id` in one transaction.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn add_points(&self, id: String, points: Vec<MonitorPoint>) -> Result<()> {
        dispatch!(self, |s| s.add_points(&id, &points), |pg| {
            postgres::monitors::add_points(&mut pg.client().await?, &id, &points).await
        })
    }

    /// Monitor `id`'s points with slots in `[from, to)`, oldest first: of `protocol` (and the
    /// missed stretches) when given, else all.
    ///
    /// # Errors
    /// When the database fails or a point is unreadable.
    pub async fn points(
        &self,
        id: String,
        from: u64,
        to: u64,
        protocol: Option<Protocol>,
    ) -> Result<Vec<MonitorPoint>> {
        dispatch!(self, |s| s.points(&id, from, to, protocol), |pg| {
            postgres::monitors::points(&*pg.client().await?, &id, from, to, protocol).await
        })
    }

    /// Monitor `id`'s rollup cells `width_ms` wide starting in `[from, to)`, oldest first.
    ///
    /// # Errors
    /// When the database fails or a cell is unreadable.
    pub async fn cells(
        &self,
        id: String,
        width_ms: u64,
        from: u64,
        to: u64,
    ) -> Result<Vec<(CellKey, Cell)>> {
        dispatch!(self, |s| s.cells(&id, width_ms, from, to), |pg| {
            postgres::rollups::cells(&*pg.client().await?, &id, width_ms, from, to).await
        })
    }

    /// Replaces monitor `id`'s alert state with `new` if it is still `expected`: of two runs
    /// judged on the same state (overlapping runs, or two instances), one lands and the other
    /// is judged again; whether this one landed.
    ///
    /// # Errors
    /// When the database fails or the stored state is unreadable.
    pub async fn swap_alert_state(
        &self,
        id: String,
        expected: AlertState,
        new: AlertState,
    ) -> Result<bool> {
        dispatch!(self, |s| s.swap_alert_state(&id, &expected, &new), |pg| {
            postgres::monitors::swap_alert_state(&mut pg.client().await?, &id, &expected, &new)
                .await
        })
    }

    /// Logs one try to deliver a notification of monitor `id`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn log_delivery(&self, id: String, log: DeliveryLog) -> Result<()> {
        dispatch!(self, |s| s.log_delivery(&id, &log), |pg| {
            postgres::monitors::log_delivery(&*pg.client().await?, &id, &log).await
        })
    }

    /// Monitor `id`'s latest `limit` delivery tries, newest first.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn deliveries(&self, id: String, limit: usize) -> Result<Vec<DeliveryLog>> {
        dispatch!(self, |s| s.deliveries(&id, limit), |pg| {
            postgres::monitors::deliveries(&*pg.client().await?, &id, limit).await
        })
    }
}

/// A new probe or bench id: 72 random bits as 12 URL-safe base64 characters, never starting
/// with `-` (a command line would read such an id as an option: `h123 compare -5Xe…`).
///
/// # Errors
/// When the operating system's random source fails.
pub fn new_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 9];
    loop {
        getrandom::fill(&mut bytes)?;
        // The first character is the top six bits; 62 is `-` in the URL-safe alphabet.
        if bytes[0] >> 2 != 62 {
            return Ok(base64url(&bytes));
        }
    }
}

/// Whether `id` looks like an id [`new_id`] makes (cheap check before a lookup).
pub fn is_valid_id(id: &str) -> bool {
    id.len() == 12
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// `bytes` in URL-safe base64 without padding (RFC 4648 section 5).
pub fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        let chars = (chunk.len() * 8).div_ceil(6);
        for i in 0..chars {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// Standard base64 with padding (RFC 4648 section 4), as CSP hashes and Basic credentials are written: the
/// URL-safe encoding with the standard alphabet's two last characters, padded.
pub fn base64(bytes: &[u8]) -> String {
    let mut out: String = base64url(bytes)
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_twelve_url_safe_chars_and_differ() {
        let a = new_id().unwrap();
        let b = new_id().unwrap();
        assert!(is_valid_id(&a), "{a}");
        assert_ne!(a, b);
        assert!(!is_valid_id("abc"));
        // One id in 64 would start with `-` by chance: 4,000 of them, none does.
        assert!((0..4_000).all(|_| !new_id().unwrap().starts_with('-')));
        assert!(!is_valid_id("abcdefghijk/"));
    }

    #[test]
    fn base64url_matches_the_rfc_alphabet() {
        assert_eq!(base64url(b"\xfb\xff\xbf"), "-_-_");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(b"fo"), "Zm8");
    }
}
