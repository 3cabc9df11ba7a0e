//! Jobs for agents, in this server's memory (the SQLite back end: one
//! instance): one per agent vantage of a probe, queued until its agent claims
//! it, then held by that agent under a lease that each of its posts renews.
//!
//! A job whose lease runs out goes back to the queue once; the second time
//! (or when its agent never takes it within a lease) it ends as failed with
//! the reason, so no probe waits forever on an agent that went away. Jobs
//! carry the probe's options as sent, credentials included (the agent's probe
//! sends them), which the store never holds. With PostgreSQL the queue is
//! shared instead (`server::queue`), under the same rules.

use h123_shared::ProbeOptions;
use h123_shared::agent::{AgentJob, TargetRules};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How many times a job may be handed out: once, and once more after a lease ran out.
pub const MAX_CLAIMS: u32 = 2;

/// Most events one job may post (a maximal probe makes a few thousand).
pub const MAX_JOB_EVENTS: usize = 20_000;

/// One agent's part of a probe.
struct Job {
    probe_id: String,
    vantage: String,
    options: ProbeOptions,
    held: bool,
    /// When a queued job fails unclaimed, or a held one's lease ends.
    deadline: Instant,
    /// Whatever the agent does, the job ends by then (the server's longest probe, plus a lease).
    hard_deadline: Instant,
    claims: u32,
    events: usize,
}

/// A job that ended without a result: its probe, vantage and the reason.
pub struct Expired {
    /// The probe it belonged to.
    pub probe_id: String,
    /// The agent's vantage name.
    pub vantage: String,
    /// Why it ended, in words.
    pub reason: String,
}

/// Why agent `vantage`'s job ended without a result: it passed the server's
/// time limit (`late`), was never claimed within `lease`, or its agent went quiet.
pub fn ended_reason(vantage: &str, late: bool, claims: u32, lease: Duration) -> String {
    if late {
        format!("agent {vantage} did not finish within the server's time limit")
    } else if claims == 0 {
        format!(
            "agent {vantage} did not take the probe within {} s (is it running?)",
            lease.as_secs_f64()
        )
    } else {
        format!("agent {vantage} stopped answering")
    }
}

/// Why an agent's post about a job was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum NotHeld {
    /// No such job, or not (or no longer) this agent's.
    Unknown,
    /// The job posted more than [`MAX_JOB_EVENTS`] events.
    TooManyEvents,
}

/// Every job in flight, by id.
pub struct Jobs {
    lease: Duration,
    table: Mutex<HashMap<String, Job>>,
    changed: watch::Sender<u64>,
}

impl Jobs {
    /// No jobs yet; held ones last `lease` without a word from their agent.
    pub fn new(lease: Duration) -> Self {
        Jobs {
            lease,
            table: Mutex::default(),
            changed: watch::channel(0).0,
        }
    }

    /// The lease.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Job>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues agent `vantage`'s part of probe `probe_id` with the `options`
    /// as sent; it ends at the latest `max_time` (plus a lease) from now.
    ///
    /// # Errors
    /// When the random source fails (no job id).
    pub fn enqueue(
        &self,
        probe_id: &str,
        vantage: &str,
        options: ProbeOptions,
        max_time: Duration,
    ) -> Result<(), getrandom::Error> {
        let id = crate::store::new_id()?;
        let now = crate::probe::trace::now();
        self.lock().insert(
            id,
            Job {
                probe_id: probe_id.to_owned(),
                vantage: vantage.to_owned(),
                options,
                held: false,
                deadline: now + self.lease,
                hard_deadline: now + max_time + self.lease,
                claims: 0,
                events: 0,
            },
        );
        self.changed.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Hands agent `vantage` its oldest queued job, if any, under a fresh lease.
    pub fn try_claim(&self, vantage: &str) -> Option<AgentJob> {
        let now = crate::probe::trace::now();
        let mut table = self.lock();
        let (id, job) = table
            .iter_mut()
            .filter(|(_, job)| !job.held && job.vantage == vantage)
            .min_by_key(|(_, job)| job.deadline)?;
        job.held = true;
        job.claims += 1;
        job.deadline = now + self.lease;
        Some(AgentJob {
            job_id: id.clone(),
            probe_id: job.probe_id.clone(),
            options: job.options.clone(),
            lease_ms: u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX),
            rules: TargetRules::default(),
        })
    }

    /// Waits up to `wait` for a job for agent `vantage` (a long poll).
    pub async fn claim(&self, vantage: &str, wait: Duration) -> Option<AgentJob> {
        let mut changed = self.changed.subscribe();
        let deadline = tokio::time::sleep(wait);
        tokio::pin!(deadline);
        loop {
            changed.borrow_and_update();
            if let Some(job) = self.try_claim(vantage) {
                return Some(job);
            }
            tokio::select! {
                seen = changed.changed() => if seen.is_err() { return None },
                () = &mut deadline => return None,
            }
        }
    }

    /// Renews the lease of job `id` held by agent `vantage`, counting `events`
    /// more events; returns its probe's id.
    ///
    /// # Errors
    /// [`NotHeld`] when the job is not this agent's, or posted too many events.
    pub fn renew(&self, id: &str, vantage: &str, events: usize) -> Result<String, NotHeld> {
        let mut table = self.lock();
        let job = table
            .get_mut(id)
            .filter(|job| job.held && job.vantage == vantage)
            .ok_or(NotHeld::Unknown)?;
        job.events = job.events.saturating_add(events);
        if job.events > MAX_JOB_EVENTS {
            return Err(NotHeld::TooManyEvents);
        }
        job.deadline = crate::probe::trace::now() + self.lease;
        Ok(job.probe_id.clone())
    }

    /// Ends job `id` held by agent `vantage` (its result arrived); returns its probe's id.
    ///
    /// # Errors
    /// [`NotHeld::Unknown`] when the job is not this agent's.
    pub fn finish(&self, id: &str, vantage: &str) -> Result<String, NotHeld> {
        let mut table = self.lock();
        if !table
            .get(id)
            .is_some_and(|job| job.held && job.vantage == vantage)
        {
            return Err(NotHeld::Unknown);
        }
        table
            .remove(id)
            .map(|job| job.probe_id)
            .ok_or(NotHeld::Unknown)
    }

    /// Puts back the jobs whose lease ran out for the first time, and ends
    /// (returns) those that ran out again, were never claimed within a lease,
    /// or outlived the longest probe.
    pub fn sweep(&self) -> Vec<Expired> {
        let now = crate::probe::trace::now();
        let mut table = self.lock();
        let mut ended = Vec::new();
        let mut requeued = false;
        table.retain(|_, job| {
            let late = now >= job.hard_deadline;
            if !late && now < job.deadline {
                return true;
            }
            if !late && job.held && job.claims < MAX_CLAIMS {
                job.held = false;
                job.deadline = now + self.lease;
                requeued = true;
                return true;
            }
            let reason = ended_reason(&job.vantage, late, job.claims, self.lease);
            ended.push(Expired {
                probe_id: job.probe_id.clone(),
                vantage: job.vantage.clone(),
                reason,
            });
            false
        });
        drop(table);
        if requeued {
            self.changed.send_modify(|n| *n += 1);
        }
        ended
    }

    /// Forgets every job of probe `probe_id` (it finished otherwise, e.g. cancelled).
    pub fn forget_probe(&self, probe_id: &str) {
        self.lock().retain(|_, job| job.probe_id != probe_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(lease: Duration) -> Jobs {
        let jobs = Jobs::new(lease);
        let options = ProbeOptions::default();
        jobs.enqueue("abcdefghijkl", "fra1", options, Duration::from_secs(60))
            .unwrap();
        jobs
    }

    #[test]
    fn a_job_is_only_its_agents_and_bounded_in_events() {
        let jobs = queued(Duration::from_secs(30));
        assert!(jobs.try_claim("sfo1").is_none(), "another agent's job");
        let job = jobs.try_claim("fra1").expect("fra1's job");
        assert_eq!(job.probe_id, "abcdefghijkl");
        assert_eq!(job.lease_ms, 30_000);
        assert!(
            jobs.try_claim("fra1").is_none(),
            "held, not handed out twice"
        );
        assert_eq!(
            jobs.renew(&job.job_id, "sfo1", 1).err(),
            Some(NotHeld::Unknown)
        );
        assert!(jobs.renew(&job.job_id, "fra1", MAX_JOB_EVENTS).is_ok());
        assert_eq!(
            jobs.renew(&job.job_id, "fra1", 1).err(),
            Some(NotHeld::TooManyEvents)
        );
        assert!(jobs.finish(&job.job_id, "sfo1").is_err());
        assert!(jobs.finish(&job.job_id, "fra1").is_ok());
        assert!(jobs.finish(&job.job_id, "fra1").is_err(), "once");
        assert!(jobs.sweep().is_empty());
    }

    #[test]
    fn an_expired_lease_requeues_once_then_fails_with_the_reason() {
        let jobs = queued(Duration::ZERO);
        let first = jobs.try_claim("fra1").unwrap();
        assert!(jobs.sweep().is_empty(), "requeued, not failed");
        assert_eq!(
            jobs.renew(&first.job_id, "fra1", 0).err(),
            Some(NotHeld::Unknown),
            "the old holder lost it"
        );
        let second = jobs.try_claim("fra1").expect("handed out again");
        assert_eq!(second.job_id, first.job_id);
        let ended = jobs.sweep();
        assert_eq!(ended.len(), 1);
        assert_eq!(ended[0].vantage, "fra1");
        assert_eq!(ended[0].reason, "agent fra1 stopped answering");
        assert!(jobs.try_claim("fra1").is_none());
    }

    #[test]
    fn a_job_never_taken_fails_saying_so() {
        let jobs = queued(Duration::ZERO);
        let ended = jobs.sweep();
        assert_eq!(ended.len(), 1);
        assert!(
            ended[0]
                .reason
                .starts_with("agent fra1 did not take the probe"),
            "{}",
            ended[0].reason
        );
    }
}
