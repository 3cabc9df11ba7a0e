//! Agents' parts of a probe: taking in what an agent posts (events; its
//! outcome, redacted and stamped with its vantage), the sweeper
//! that ends the jobs of agents that went away, and, with a shared queue,
//! the task that takes in the posts other instances received for this
//! instance's probes.

use super::AppState;
use super::metrics::AgentJobEvent;
use super::queue::AgentPost;
use super::registry::LiveProbe;
use super::runner::store_final;
use crate::store::postgres::jobs::{Post, PostKind};
use h123_shared::ProbeResult;
use std::time::Duration;

/// Most posts taken from the database at once.
const POSTS_PER_TAKE: i64 = 64;

/// Takes agent `vantage`'s `post` (redacted by the API when it arrived) into
/// probe `probe_id`, if it is still in flight here (a probe that finished
/// otherwise ignores it).
pub async fn apply(state: &AppState, probe_id: &str, vantage: &str, post: AgentPost) {
    let Some(live) = state.registry.get(probe_id) else {
        return;
    };
    match post {
        AgentPost::Events(events) => {
            for event in events {
                live.push_from(Some(vantage.to_owned()), event);
            }
        }
        AgentPost::Outcome(outcome) => complete(state, &live, vantage, outcome.map(|r| *r)).await,
    }
}

/// Sets agent `vantage`'s outcome on probe `live`: a result (redacted by the
/// API when it arrived) is given the record's (redacted) options and stamped
/// with the vantage (the registry analyzes it); a problem is kept as said.
/// Stores the record once it is whole.
async fn complete(
    state: &AppState,
    live: &LiveProbe,
    vantage: &str,
    outcome: Result<ProbeResult, String>,
) {
    let record = live.record();
    let outcome = outcome.map(|mut result| {
        // What the agent says it ran is not trusted: the record says what was asked.
        result.options = record.options.clone();
        result.vantage = Some(state.agents.vantage(vantage));
        result
    });
    if let Some(record) = live.complete_agent(vantage, outcome) {
        store_final(state, live, record).await;
    }
}

/// Starts the task that ends expired jobs, checking a few times per lease.
pub fn spawn_sweeper(state: AppState) {
    let every = (state.jobs.lease() / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut failing = false;
        loop {
            tick.tick().await;
            let expired = match state.jobs.sweep().await {
                Ok(expired) => {
                    failing = false;
                    expired
                }
                Err(e) => {
                    if !failing {
                        eprintln!("h123 serve: cannot sweep agents' jobs: {e}");
                    }
                    failing = true;
                    continue;
                }
            };
            for expired in expired {
                state.metrics.agent_job(AgentJobEvent::Expired);
                eprintln!("h123 serve: probe {}: {}", expired.probe_id, expired.reason);
                let outcome = AgentPost::Outcome(Err(expired.reason));
                apply(&state, &expired.probe_id, &expired.vantage, outcome).await;
            }
        }
    });
}

/// With a shared queue, starts the task that takes in, in order, the posts
/// left for this instance's probes: when notified, and every second should
/// a notification be lost.
pub fn spawn_post_taker(state: AppState) {
    let Some(cluster) = state.cluster.clone() else {
        return;
    };
    tokio::spawn(async move {
        let mut failing = false;
        loop {
            tokio::select! {
                () = cluster.signals.posts.notified() => {}
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
            loop {
                let posts = match cluster.store.take_job_posts(POSTS_PER_TAKE).await {
                    Ok(posts) => {
                        failing = false;
                        posts
                    }
                    Err(e) => {
                        if !failing {
                            eprintln!("h123 serve: cannot take agents' posts: {e}");
                        }
                        failing = true;
                        break;
                    }
                };
                let more = posts.len() == usize::try_from(POSTS_PER_TAKE).unwrap_or(0);
                for post in posts {
                    take_in(&state, post).await;
                }
                if !more {
                    break;
                }
            }
        }
    });
}

/// One post from the database into its probe.
async fn take_in(state: &AppState, post: Post) {
    let parsed = match post.kind {
        PostKind::Events => serde_json::from_str(&post.body).map(AgentPost::Events),
        PostKind::Result => {
            serde_json::from_str(&post.body).map(|result| AgentPost::Outcome(Ok(Box::new(result))))
        }
        PostKind::Problem => Ok(AgentPost::Outcome(Err(post.body))),
    };
    match parsed {
        Ok(parsed) => apply(state, &post.probe_id, &post.vantage, parsed).await,
        Err(e) => eprintln!(
            "h123 serve: probe {}: agent {}'s post is unreadable: {e}",
            post.probe_id, post.vantage
        ),
    }
}
