//! The agents' job queue a server uses: in its memory (SQLite: one
//! instance), or shared through PostgreSQL by every instance on the database,
//! so an agent may ask any of them for work (see `store::postgres::jobs`).
//!
//! Both keep the same rules (a lease renewed by each post, one requeue, then
//! a failure with the reason). They differ in where an agent's posts go: in
//! memory they are taken in at once; shared, they wait in the database for
//! the instance that holds the probe, which takes them in order
//! (`dispatch::spawn_post_taker`). A shared job's options are sealed under a
//! key derived from its agent's token ([`super::seal`]), so the database
//! never holds the probe's credentials readable.

use super::agents::Agents;
use super::cluster::Cluster;
use super::jobs::{Expired, Jobs, MAX_CLAIMS, MAX_JOB_EVENTS, NotHeld, ended_reason};
use crate::store::StoreError;
use crate::store::postgres::jobs::{Claimed, NewJob, PostKind, Refused};
use h123_shared::agent::{AgentJob, TargetRules};
use h123_shared::api::ProbeEvent;
use h123_shared::{ProbeOptions, ProbeResult};
use std::time::Duration;

/// Longest a shared claim waits between two looks at the queue, should a
/// notification be lost.
const CLAIM_RECHECK: Duration = Duration::from_secs(1);

/// What an agent posts about its job.
pub enum AgentPost {
    /// Phase events, redacted.
    Events(Vec<ProbeEvent>),
    /// Its result (redacted), or why it did not run the probe.
    Outcome(Result<Box<ProbeResult>, String>),
}

/// Where a post went.
pub enum Posted {
    /// To be taken in here and now, by probe `probe_id` (memory).
    Here {
        /// The probe it is about.
        probe_id: String,
        /// The post.
        post: AgentPost,
    },
    /// Left in the database for the instance holding the probe (shared).
    Relayed,
}

/// Why a queue call failed.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No job id or nonce could be made.
    #[error("random source: {0}")]
    Random(String),
    /// The job is not the calling agent's, or is over its event budget.
    #[error("job not held")]
    NotHeld(NotHeld),
}

/// The queue: in memory or shared.
pub enum JobQueue {
    /// One instance's jobs, in its memory.
    Memory(Jobs),
    /// Jobs in PostgreSQL, for every instance.
    Shared(SharedJobs),
}

/// The shared queue's handle: the database with its notifications, and the lease.
pub struct SharedJobs {
    cluster: Cluster,
    lease: Duration,
}

impl JobQueue {
    /// The queue: shared through `cluster` (PostgreSQL), else in memory;
    /// held jobs last `lease`.
    pub fn new(cluster: Option<&Cluster>, lease: Duration) -> Self {
        match cluster {
            Some(cluster) => JobQueue::Shared(SharedJobs {
                cluster: cluster.clone(),
                lease,
            }),
            None => JobQueue::Memory(Jobs::new(lease)),
        }
    }

    /// The lease.
    pub fn lease(&self) -> Duration {
        match self {
            JobQueue::Memory(jobs) => jobs.lease(),
            JobQueue::Shared(shared) => shared.lease,
        }
    }

    /// Queues agent `vantage`'s part of probe `probe_id` with the `options`
    /// as sent; it ends at the latest `max_time` (plus a lease) from now.
    ///
    /// # Errors
    /// When the random source or the database fails.
    pub async fn enqueue(
        &self,
        agents: &Agents,
        probe_id: &str,
        vantage: &str,
        options: &ProbeOptions,
        max_time: Duration,
    ) -> Result<(), QueueError> {
        let random = |e: getrandom::Error| QueueError::Random(e.to_string());
        match self {
            JobQueue::Memory(jobs) => jobs
                .enqueue(probe_id, vantage, options.clone(), max_time)
                .map_err(random),
            JobQueue::Shared(shared) => {
                let id = crate::store::new_id().map_err(random)?;
                let key = agents
                    .job_key(vantage)
                    .ok_or_else(|| QueueError::NotHeld(NotHeld::Unknown))?;
                let plain = serde_json::to_vec(options).unwrap_or_default();
                let sealed = key.seal(&id, &plain).map_err(random)?;
                let job = NewJob {
                    id: &id,
                    probe_id,
                    vantage,
                    owner: shared.cluster.store.instance_id(),
                    sealed_options: &sealed,
                    lease: shared.lease,
                    max_time,
                };
                Ok(shared.cluster.store.enqueue_job(&job).await?)
            }
        }
    }

    /// Waits up to `wait` for a job for agent `vantage` (a long poll).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn claim(
        &self,
        agents: &Agents,
        vantage: &str,
        wait: Duration,
    ) -> Result<Option<AgentJob>, QueueError> {
        match self {
            JobQueue::Memory(jobs) => Ok(jobs.claim(vantage, wait).await),
            JobQueue::Shared(shared) => shared.claim(agents, vantage, wait).await,
        }
    }

    /// Renews job `id`'s lease for its agent `vantage` and passes on its `events`.
    ///
    /// # Errors
    /// [`QueueError::NotHeld`] when the job is not this agent's or over its
    /// event budget; when the database fails.
    pub async fn post_events(
        &self,
        id: &str,
        vantage: &str,
        events: Vec<ProbeEvent>,
    ) -> Result<Posted, QueueError> {
        match self {
            JobQueue::Memory(jobs) => {
                let probe_id = jobs
                    .renew(id, vantage, events.len())
                    .map_err(QueueError::NotHeld)?;
                Ok(Posted::Here {
                    probe_id,
                    post: AgentPost::Events(events),
                })
            }
            JobQueue::Shared(shared) => {
                let body = (!events.is_empty())
                    .then(|| serde_json::to_string(&events).unwrap_or_else(|_| "[]".into()));
                let events = body.as_deref().map(|body| (body, events.len()));
                shared
                    .cluster
                    .store
                    .post_job_events(id, vantage, shared.lease, events, MAX_JOB_EVENTS)
                    .await?
                    .map_err(|refused| {
                        QueueError::NotHeld(match refused {
                            Refused::NotHeld => NotHeld::Unknown,
                            Refused::TooManyEvents => NotHeld::TooManyEvents,
                        })
                    })?;
                Ok(Posted::Relayed)
            }
        }
    }

    /// Ends job `id` of agent `vantage` with its `outcome`.
    ///
    /// # Errors
    /// [`QueueError::NotHeld`] when the job is not this agent's; when the
    /// database fails.
    pub async fn finish(
        &self,
        id: &str,
        vantage: &str,
        outcome: Result<ProbeResult, String>,
    ) -> Result<Posted, QueueError> {
        match self {
            JobQueue::Memory(jobs) => {
                let probe_id = jobs.finish(id, vantage).map_err(QueueError::NotHeld)?;
                Ok(Posted::Here {
                    probe_id,
                    post: AgentPost::Outcome(outcome.map(Box::new)),
                })
            }
            JobQueue::Shared(shared) => {
                let (kind, body) = match &outcome {
                    Ok(result) => (
                        PostKind::Result,
                        serde_json::to_string(result).unwrap_or_default(),
                    ),
                    Err(problem) => (PostKind::Problem, problem.clone()),
                };
                if shared
                    .cluster
                    .store
                    .finish_job(id, vantage, &kind, &body)
                    .await?
                {
                    Ok(Posted::Relayed)
                } else {
                    Err(QueueError::NotHeld(NotHeld::Unknown))
                }
            }
        }
    }

    /// Puts back the jobs whose lease ran out for the first time and ends
    /// (returns) the others that ran out (a shared queue: this instance's).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sweep(&self) -> Result<Vec<Expired>, QueueError> {
        match self {
            JobQueue::Memory(jobs) => Ok(jobs.sweep()),
            JobQueue::Shared(shared) => {
                let max_claims = i32::try_from(MAX_CLAIMS).unwrap_or(i32::MAX);
                let ended = shared
                    .cluster
                    .store
                    .sweep_jobs(shared.lease, max_claims)
                    .await?;
                Ok(ended
                    .into_iter()
                    .map(|job| Expired {
                        reason: ended_reason(
                            &job.vantage,
                            job.late,
                            u32::try_from(job.claims).unwrap_or(0),
                            shared.lease,
                        ),
                        probe_id: job.probe_id,
                        vantage: job.vantage,
                    })
                    .collect())
            }
        }
    }

    /// Forgets every job of probe `probe_id` (it finished).
    pub async fn forget_probe(&self, probe_id: &str) {
        match self {
            JobQueue::Memory(jobs) => jobs.forget_probe(probe_id),
            JobQueue::Shared(shared) => {
                if let Err(e) = shared.cluster.store.forget_jobs(probe_id).await {
                    eprintln!("h123 serve: probe {probe_id}: cannot forget its agents' jobs: {e}");
                }
            }
        }
    }
}

impl SharedJobs {
    async fn claim(
        &self,
        agents: &Agents,
        vantage: &str,
        wait: Duration,
    ) -> Result<Option<AgentJob>, QueueError> {
        let deadline = crate::probe::trace::now() + wait;
        let mut changed = self.cluster.signals.jobs.subscribe();
        loop {
            changed.borrow_and_update();
            if let Some(claimed) = self.cluster.store.claim_job(vantage, self.lease).await? {
                match self.open(agents, vantage, &claimed) {
                    Some(job) => return Ok(Some(job)),
                    None => {
                        let problem = format!(
                            "the server instances do not agree on agent {vantage}'s token, so \
                             this one cannot read the probe's options"
                        );
                        self.cluster
                            .store
                            .finish_job(&claimed.id, vantage, &PostKind::Problem, &problem)
                            .await?;
                        continue;
                    }
                }
            }
            let left = deadline.saturating_duration_since(crate::probe::trace::now());
            if left.is_zero() {
                return Ok(None);
            }
            tokio::select! {
                _ = changed.changed() => {}
                () = tokio::time::sleep(left.min(CLAIM_RECHECK)) => {}
            }
        }
    }

    /// The job `claimed` for agent `vantage`, its options unsealed; `None`
    /// when they do not open with this instance's key for the agent.
    fn open(&self, agents: &Agents, vantage: &str, claimed: &Claimed) -> Option<AgentJob> {
        let plain = agents
            .job_key(vantage)?
            .open(&claimed.id, &claimed.sealed_options)?;
        Some(AgentJob {
            job_id: claimed.id.clone(),
            probe_id: claimed.probe_id.clone(),
            options: serde_json::from_slice(&plain).ok()?,
            lease_ms: u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX),
            rules: TargetRules::default(),
        })
    }
}
