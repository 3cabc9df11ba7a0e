//! The instance's `LISTEN` connection: one connection of its own (a pooled
//! one cannot wait for notifications), listening on the jobs and posts
//! channels, reconnecting with backoff when the database goes away (a
//! restart), and announcing every (re)connection as a change on both, so a
//! notification missed while disconnected costs nothing.

use super::events::EVENTS_CHANNEL;
use super::jobs::{JOBS_CHANNEL, POSTS_CHANNEL};
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, broadcast, watch};
use tokio::task::AbortHandle;
use tokio_postgres::{AsyncMessage, NoTls};

/// What the listener announces.
#[derive(Clone)]
pub struct Signals {
    /// Bumped when some job may have become claimable.
    pub jobs: watch::Sender<u64>,
    /// Woken when posts may wait for this instance.
    pub posts: Arc<Notify>,
    /// The id of each probe with new live events (an empty id: any probe may have some).
    pub events: broadcast::Sender<String>,
}

impl Default for Signals {
    fn default() -> Self {
        Signals {
            jobs: watch::channel(0).0,
            posts: Arc::default(),
            events: broadcast::channel(1024).0,
        }
    }
}

impl Signals {
    fn all(&self) {
        self.jobs.send_modify(|n| *n += 1);
        self.posts.notify_one();
        let _ = self.events.send(String::new());
    }
}

/// The listening task; dropping it stops listening.
pub struct Listener(AbortHandle);

impl Drop for Listener {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Listener {
    /// Listens with `config` for instance `instance`, announcing on `signals`.
    pub fn spawn(config: tokio_postgres::Config, instance: String, signals: Signals) -> Self {
        let task = tokio::spawn(async move {
            let mut backoff = Duration::from_millis(100);
            loop {
                let why = match listen(&config, &instance, &signals).await {
                    Ok(()) => "the connection closed".to_owned(),
                    Err(e) => super::describe(&e),
                };
                eprintln!(
                    "h123 serve: PostgreSQL notifications stopped ({why}); listening again in {} ms",
                    backoff.as_millis()
                );
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        });
        Listener(task.abort_handle())
    }
}

/// One connection's life: `LISTEN`, then every notification, until it ends.
async fn listen(
    config: &tokio_postgres::Config,
    instance: &str,
    signals: &Signals,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (tx, mut messages) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            let end = message.is_err();
            if tx.send(message).is_err() || end {
                break;
            }
        }
    });
    let _stop_driver = AbortOnDrop(driver.abort_handle());
    client
        .batch_execute(&format!(
            "LISTEN {JOBS_CHANNEL}; LISTEN {POSTS_CHANNEL}; LISTEN {EVENTS_CHANNEL}"
        ))
        .await?;
    // Whatever was announced while no one listened.
    signals.all();
    while let Some(message) = messages.recv().await {
        match message? {
            AsyncMessage::Notification(n) if n.channel() == JOBS_CHANNEL => {
                signals.jobs.send_modify(|v| *v += 1);
            }
            AsyncMessage::Notification(n)
                if n.channel() == POSTS_CHANNEL && n.payload() == instance =>
            {
                signals.posts.notify_one();
            }
            AsyncMessage::Notification(n) if n.channel() == EVENTS_CHANNEL => {
                // Nobody may be listening: that is fine.
                let _ = signals.events.send(n.payload().to_owned());
            }
            _ => {}
        }
    }
    Ok(())
}

struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
