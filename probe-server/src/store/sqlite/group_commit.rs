//! SQLite's group commit: one thread commits every probe write waiting at that moment in one transaction (one fsync), then answers each.

use super::{Result, StoreError, running_updated};
use crate::store::Commit;
use rusqlite::{Connection, params};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use tokio::sync::oneshot;

/// A probe write for the commit thread: a new record, or a running record's new state.
pub enum Write {
    /// `INSERT` of a new probe's columns.
    Insert(NewRow),
    /// `UPDATE` of a running probe's status and record.
    Update {
        /// The probe's id.
        id: String,
        /// Its new status.
        status: &'static str,
        /// Its record as JSON.
        json: String,
        /// Its list line's `outcome` (none while it runs).
        outcome: Option<&'static str>,
        /// Its list line's `verdict` (none while it runs).
        verdict: Option<String>,
    },
}

/// A new probe's columns, named as in `probes`.
pub struct NewRow {
    /// `id`.
    pub id: String,
    /// `created_at_unix_ms`.
    pub created_at_unix_ms: i64,
    /// `status`.
    pub status: &'static str,
    /// `record`, the redacted record as JSON.
    pub json: String,
    /// `visibility`.
    pub visibility: &'static str,
    /// `owner_hash`.
    pub owner_hash: Option<String>,
    /// `url`, redacted.
    pub url: String,
    /// `protocols`, as JSON.
    pub protocols: String,
    /// `outcome`, the list line's (none while it runs).
    pub outcome: Option<&'static str>,
    /// `verdict`, the list line's (none while it runs).
    pub verdict: Option<String>,
}

const INSERT_SQL: &str = "INSERT INTO probes \
     (id, created_at_unix_ms, status, record, visibility, owner_hash, url, protocols, outcome, \
     verdict) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

const UPDATE_SQL: &str = "UPDATE probes SET status = ?2, record = ?3, outcome = ?4, verdict = ?5 \
     WHERE id = ?1 AND status = 'running'";

/// The commit thread and the queue it takes writes from. Dropping it lets the
/// thread finish what is queued, then waits for it.
pub struct GroupCommit {
    queue: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

/// A queued write and where its outcome goes.
struct Job {
    write: Write,
    done: oneshot::Sender<Result<()>>,
}

impl GroupCommit {
    /// Starts the commit thread on the write connection `conn` (which other
    /// writes share through its lock).
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn start(conn: Arc<Mutex<Connection>>) -> Result<Self> {
        let (queue, jobs) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("h123-sqlite-commit".to_owned())
            .spawn(move || run(&conn, &jobs))
            .map_err(|e| StoreError::Setup(format!("cannot start the commit thread: {e}")))?;
        Ok(GroupCommit {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Queues `write` for the next commit; the [`Commit`] resolves once the
    /// transaction holding it is on disk (or the write failed).
    pub fn submit(&self, write: Write) -> Commit {
        let (done, outcome) = oneshot::channel();
        if let Some(queue) = &self.queue {
            // A stopped thread drops the job, and its `Commit` says so.
            let _ = queue.send(Job { write, done });
        }
        Commit::new(outcome)
    }
}

impl Drop for GroupCommit {
    fn drop(&mut self) {
        self.queue.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The commit thread: waits for a write, takes every write queued by then,
/// commits them together and answers each; until the queue closes.
fn run(conn: &Mutex<Connection>, jobs: &mpsc::Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        batch.extend(jobs.try_iter());
        let outcomes = {
            let mut conn = conn.lock().unwrap_or_else(|e| e.into_inner());
            commit(&mut conn, &batch)
        };
        for (job, outcome) in batch.into_iter().zip(outcomes) {
            let _ = job.done.send(outcome);
        }
    }
}

/// Commits `batch` in one transaction; if a statement or the commit fails,
/// each write on its own, so one bad write does not fail the others.
fn commit(conn: &mut Connection, batch: &[Job]) -> Vec<Result<()>> {
    together(conn, batch).unwrap_or_else(|_| {
        batch
            .iter()
            .map(|job| outcome(&job.write, execute(conn, &job.write)))
            .collect()
    })
}

/// Every write of `batch` in one transaction, with each one's outcome (an
/// update of a finished record changes nothing and is refused, the others
/// still commit); `Err` when nothing was committed.
fn together(conn: &mut Connection, batch: &[Job]) -> rusqlite::Result<Vec<Result<()>>> {
    let tx = conn.transaction()?;
    let mut outcomes = Vec::with_capacity(batch.len());
    for job in batch {
        let changed = execute(&tx, &job.write)?;
        outcomes.push(outcome(&job.write, Ok(changed)));
    }
    tx.commit()?;
    Ok(outcomes)
}

fn execute(conn: &Connection, write: &Write) -> rusqlite::Result<usize> {
    match write {
        Write::Insert(row) => conn.prepare_cached(INSERT_SQL)?.execute(params![
            row.id,
            row.created_at_unix_ms,
            row.status,
            row.json,
            row.visibility,
            row.owner_hash,
            row.url,
            row.protocols,
            row.outcome,
            row.verdict
        ]),
        Write::Update {
            id,
            status,
            json,
            outcome,
            verdict,
        } => conn
            .prepare_cached(UPDATE_SQL)?
            .execute(params![id, status, json, outcome, verdict]),
    }
}

fn outcome(write: &Write, changed: rusqlite::Result<usize>) -> Result<()> {
    match write {
        Write::Insert(_) => changed.map(|_| ()).map_err(StoreError::from),
        Write::Update { id, .. } => running_updated(changed, id),
    }
}
