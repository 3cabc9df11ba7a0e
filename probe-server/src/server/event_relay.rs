//! Live events of this instance's probes, published to the shared database
//! for SSE subscribers at the other instances (PostgreSQL only; see
//! `store::postgres::events`). Each probe's events go out in batches a few
//! tens of milliseconds apart, in its own order, and the last batch before
//! its final record is stored, so a reader that sees the record finished has
//! seen every event.

use super::cluster::Cluster;
use super::registry::LiveProbe;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long events gather before a batch goes out.
const BATCH_WAIT: Duration = Duration::from_millis(25);

/// How many events of each probe went out, per probe in flight here.
type Cursors = Mutex<HashMap<String, Arc<tokio::sync::Mutex<usize>>>>;

/// The publisher: the shared database, if any, and the probes it follows.
#[derive(Default)]
pub struct EventRelay {
    cluster: Option<Cluster>,
    cursors: Cursors,
}

impl EventRelay {
    /// Publishes through `cluster`; with `None` (SQLite) nothing is published.
    pub fn new(cluster: Option<Cluster>) -> Self {
        EventRelay {
            cluster,
            cursors: Mutex::default(),
        }
    }

    fn cursors(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<usize>>>> {
        self.cursors.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts publishing the events of `live` as they come.
    pub fn follow(&self, live: Arc<LiveProbe>) {
        let Some(cluster) = self.cluster.clone() else {
            return;
        };
        let cursor = Arc::new(tokio::sync::Mutex::new(0));
        self.cursors().insert(live.id(), cursor.clone());
        tokio::spawn(async move {
            let mut changed = live.subscribe();
            while changed.changed().await.is_ok() {
                tokio::time::sleep(BATCH_WAIT).await;
                let mut at = cursor.lock().await;
                if live.is_finished() {
                    break;
                }
                publish(&cluster, &live, &mut at).await;
            }
        });
    }

    /// Publishes what is left of `live`'s events now and stops following it
    /// (called before its final record is stored).
    pub async fn flush(&self, live: &LiveProbe) {
        let Some(cluster) = &self.cluster else {
            return;
        };
        let Some(cursor) = self.cursors().remove(&live.id()) else {
            return;
        };
        let mut at = cursor.lock().await;
        publish(cluster, live, &mut at).await;
    }
}

/// Publishes `live`'s events from `at` on, moving `at` past them; a failure
/// is logged and tried again with the next batch.
async fn publish(cluster: &Cluster, live: &LiveProbe, at: &mut usize) {
    let update = live.read_from(*at);
    if update.events.is_empty() {
        return;
    }
    let json: Vec<String> = update
        .events
        .iter()
        .map(|event| serde_json::to_string(&**event).unwrap_or_else(|_| "{}".to_owned()))
        .collect();
    let id = live.id();
    match cluster.store.publish_events(&id, *at, &json).await {
        Ok(()) => *at += json.len(),
        Err(e) => eprintln!("h123 serve: probe {id}: cannot publish its live events: {e}"),
    }
}
