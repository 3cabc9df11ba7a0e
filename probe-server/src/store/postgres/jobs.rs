//! Agents' jobs in PostgreSQL, shared by every instance on the database.
//!
//! The instance that accepted a probe (its owner) queues one job per agent;
//! any instance hands a job to its agent (`FOR UPDATE SKIP LOCKED`, so two
//! never hand out one job); what the agent posts about it (events, the
//! result) goes to `agent_posts` for the owner to take in, in order. Every
//! change that someone may wait for is announced with `pg_notify` in the
//! same transaction: `h123_jobs` (payload: the vantage) when a job becomes
//! claimable, `h123_posts` (payload: the owner instance) when a post waits.
//! Lease times are the database's clock.

use super::super::Result;
use std::time::Duration;

/// The channel announcing claimable jobs.
pub const JOBS_CHANNEL: &str = "h123_jobs";

/// The channel announcing posts waiting for their owner instance.
pub const POSTS_CHANNEL: &str = "h123_posts";

/// A job to queue.
pub struct NewJob<'a> {
    /// The job's id.
    pub id: &'a str,
    /// Its probe.
    pub probe_id: &'a str,
    /// The agent that is to run it.
    pub vantage: &'a str,
    /// The instance that holds the probe.
    pub owner: &'a str,
    /// The options as sent, sealed for the agent.
    pub sealed_options: &'a [u8],
    /// How long it may wait unclaimed.
    pub lease: Duration,
    /// How long it may take at most, on top of a lease.
    pub max_time: Duration,
}

/// A job an agent just claimed.
pub struct Claimed {
    /// The job's id.
    pub id: String,
    /// Its probe.
    pub probe_id: String,
    /// The options, sealed.
    pub sealed_options: Vec<u8>,
}

/// What an agent posts about a job it holds.
pub enum PostKind {
    /// A batch of redacted events (JSON array).
    Events,
    /// The result (JSON).
    Result,
    /// Why the agent did not run it (text).
    Problem,
}

impl PostKind {
    fn as_str(&self) -> &'static str {
        match self {
            PostKind::Events => "events",
            PostKind::Result => "result",
            PostKind::Problem => "problem",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "events" => Some(PostKind::Events),
            "result" => Some(PostKind::Result),
            "problem" => Some(PostKind::Problem),
            _ => None,
        }
    }
}

/// Why a post about a job was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// No such job held by this agent.
    NotHeld,
    /// The job would pass its event budget.
    TooManyEvents,
}

/// A post waiting for its owner instance.
pub struct Post {
    /// The probe it is about.
    pub probe_id: String,
    /// The agent that posted it.
    pub vantage: String,
    /// What it is.
    pub kind: PostKind,
    /// Its body (JSON, or the problem's text).
    pub body: String,
}

/// A job that ended without a result.
pub struct Ended {
    /// Its probe.
    pub probe_id: String,
    /// Its agent.
    pub vantage: String,
    /// How many times it was handed out.
    pub claims: i32,
    /// Whether it outlived its hard deadline.
    pub late: bool,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Queues `job` and announces it to its agent's waiters.
///
/// # Errors
/// When the database fails.
pub async fn enqueue(client: &tokio_postgres::Client, job: &NewJob<'_>) -> Result<()> {
    client
        .query_one(
            "WITH j AS (INSERT INTO agent_jobs \
                 (id, probe_id, vantage, owner_instance, sealed_options, deadline, hard_deadline) \
                 VALUES ($1, $2, $3, $4, $5, now() + $6::BIGINT * INTERVAL '1 millisecond', \
                         now() + $7::BIGINT * INTERVAL '1 millisecond') \
                 RETURNING vantage) \
             SELECT pg_notify('h123_jobs', vantage) FROM j",
            &[
                &job.id,
                &job.probe_id,
                &job.vantage,
                &job.owner,
                &job.sealed_options,
                &ms(job.lease),
                &ms(job.max_time.saturating_add(job.lease)),
            ],
        )
        .await?;
    Ok(())
}

/// Hands agent `vantage` its oldest queued job, if any, under a `lease`.
///
/// # Errors
/// When the database fails.
pub async fn claim(
    client: &tokio_postgres::Client,
    vantage: &str,
    lease: Duration,
) -> Result<Option<Claimed>> {
    let row = client
        .query_opt(
            "UPDATE agent_jobs SET held = true, claims = claims + 1, \
                 deadline = now() + $2::BIGINT * INTERVAL '1 millisecond' \
             WHERE seq = (SELECT seq FROM agent_jobs \
                 WHERE vantage = $1 AND NOT held AND hard_deadline > now() \
                 ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED) \
             RETURNING id, probe_id, sealed_options",
            &[&vantage, &ms(lease)],
        )
        .await?;
    Ok(row.map(|row| Claimed {
        id: row.get(0),
        probe_id: row.get(1),
        sealed_options: row.get(2),
    }))
}

/// Renews the lease of job `id` held by agent `vantage` and, when `events`
/// (a JSON array of `count` events) is given, leaves it for the owner; the
/// job may post `max_events` in all.
///
/// # Errors
/// When the database fails; `Ok(Err(..))` when the post is refused.
pub async fn post_events(
    client: &mut deadpool_postgres::Object,
    id: &str,
    vantage: &str,
    lease: Duration,
    events: Option<(&str, usize)>,
    max_events: usize,
) -> Result<Result<(), Refused>> {
    let count = events.map_or(0, |(_, n)| n);
    let tx = client.transaction().await?;
    let Some(row) = tx
        .query_opt(
            "UPDATE agent_jobs SET deadline = now() + $3::BIGINT * INTERVAL '1 millisecond', \
                 events = events + $4 \
             WHERE id = $1 AND vantage = $2 AND held \
             RETURNING probe_id, owner_instance, events",
            &[
                &id,
                &vantage,
                &ms(lease),
                &i64::try_from(count).unwrap_or(i64::MAX),
            ],
        )
        .await?
    else {
        return Ok(Err(Refused::NotHeld));
    };
    let total: i64 = row.get(2);
    if usize::try_from(total).map_or(true, |total| total > max_events) {
        // Rolled back on drop: the lease is not renewed either.
        return Ok(Err(Refused::TooManyEvents));
    }
    if let Some((body, _)) = events {
        leave_post(
            &tx,
            row.get(1),
            row.get(0),
            vantage,
            &PostKind::Events,
            body,
        )
        .await?;
    }
    tx.commit().await?;
    Ok(Ok(()))
}

/// Ends job `id` held by agent `vantage` with its result or problem, left
/// for the owner; `false` when the agent does not hold it.
///
/// # Errors
/// When the database fails.
pub async fn finish(
    client: &mut deadpool_postgres::Object,
    id: &str,
    vantage: &str,
    kind: &PostKind,
    body: &str,
) -> Result<bool> {
    let tx = client.transaction().await?;
    let Some(row) = tx
        .query_opt(
            "DELETE FROM agent_jobs WHERE id = $1 AND vantage = $2 AND held \
             RETURNING probe_id, owner_instance",
            &[&id, &vantage],
        )
        .await?
    else {
        return Ok(false);
    };
    leave_post(&tx, row.get(1), row.get(0), vantage, kind, body).await?;
    tx.commit().await?;
    Ok(true)
}

async fn leave_post(
    tx: &deadpool_postgres::Transaction<'_>,
    owner: &str,
    probe_id: &str,
    vantage: &str,
    kind: &PostKind,
    body: &str,
) -> Result<()> {
    tx.query_one(
        "WITH p AS (INSERT INTO agent_posts (owner_instance, probe_id, vantage, kind, body) \
             VALUES ($1, $2, $3, $4, $5) RETURNING owner_instance) \
         SELECT pg_notify('h123_posts', owner_instance) FROM p",
        &[&owner, &probe_id, &vantage, &kind.as_str(), &body],
    )
    .await?;
    Ok(())
}

/// Takes (deletes and returns) up to `limit` of the posts waiting for
/// instance `owner`, oldest first.
///
/// # Errors
/// When the database fails.
pub async fn take_posts(
    client: &tokio_postgres::Client,
    owner: &str,
    limit: i64,
) -> Result<Vec<Post>> {
    let rows = client
        .query(
            "WITH taken AS (DELETE FROM agent_posts WHERE seq IN \
                 (SELECT seq FROM agent_posts WHERE owner_instance = $1 \
                  ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED) \
                 RETURNING seq, probe_id, vantage, kind, body) \
             SELECT probe_id, vantage, kind, body FROM taken ORDER BY seq",
            &[&owner, &limit],
        )
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(Post {
                probe_id: row.get(0),
                vantage: row.get(1),
                kind: PostKind::parse(row.get(2))?,
                body: row.get(3),
            })
        })
        .collect())
}

/// For the jobs `owner` holds: puts back those whose lease ran out for the
/// first time (announcing them), and ends (returns) those that ran out
/// again, were never claimed within a lease, or passed their hard deadline.
///
/// # Errors
/// When the database fails.
pub async fn sweep(
    client: &mut deadpool_postgres::Object,
    owner: &str,
    lease: Duration,
    max_claims: i32,
) -> Result<Vec<Ended>> {
    let tx = client.transaction().await?;
    tx.query(
        "WITH r AS (UPDATE agent_jobs SET held = false, \
             deadline = now() + $2::BIGINT * INTERVAL '1 millisecond' \
             WHERE owner_instance = $1 AND held AND deadline <= now() \
               AND hard_deadline > now() AND claims < $3 \
             RETURNING vantage) \
         SELECT pg_notify('h123_jobs', vantage) FROM r",
        &[&owner, &ms(lease), &max_claims],
    )
    .await?;
    let rows = tx
        .query(
            "DELETE FROM agent_jobs WHERE owner_instance = $1 \
               AND (deadline <= now() OR hard_deadline <= now()) \
             RETURNING probe_id, vantage, claims, hard_deadline <= now()",
            &[&owner],
        )
        .await?;
    tx.commit().await?;
    Ok(rows
        .into_iter()
        .map(|row| Ended {
            probe_id: row.get(0),
            vantage: row.get(1),
            claims: row.get(2),
            late: row.get(3),
        })
        .collect())
}

/// Forgets the jobs and posts of probe `probe_id` (it finished).
///
/// # Errors
/// When the database fails.
pub async fn forget_probe(client: &tokio_postgres::Client, probe_id: &str) -> Result<()> {
    client
        .execute("DELETE FROM agent_jobs WHERE probe_id = $1", &[&probe_id])
        .await?;
    client
        .execute("DELETE FROM agent_posts WHERE probe_id = $1", &[&probe_id])
        .await?;
    Ok(())
}

/// Deletes the jobs and posts of instances that are not alive (their
/// heartbeat is older than `lease`): their probes were cancelled.
///
/// # Errors
/// When the database fails.
pub async fn reap(client: &tokio_postgres::Client, lease: Duration) -> Result<u64> {
    let mut gone = 0;
    for table in ["agent_jobs", "agent_posts"] {
        gone += client
            .execute(
                &format!(
                    "DELETE FROM {table} t WHERE NOT EXISTS (SELECT 1 FROM instances i \
                     WHERE i.id = t.owner_instance \
                       AND i.heartbeat_at > now() - $1::BIGINT * INTERVAL '1 millisecond')"
                ),
                &[&ms(lease)],
            )
            .await?;
    }
    Ok(gone)
}
