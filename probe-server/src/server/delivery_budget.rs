//! What the server spends on monitors' notifications, whoever made the monitors: every try
//! of a delivery (a webhook's POST, an Alertmanager's) takes a token from one bucket for the
//! whole server (`--max-deliveries-per-minute`) and a place among the tries in flight
//! (`--max-deliveries-in-flight`), one try at a time per receiver (its scheme, host and
//! port); a receiver whose last [`FAILURES_TO_REST`] tries failed is rested for [`REST`], its
//! deliveries skipped meanwhile (then one try again: a success wakes it, a failure rests it
//! once more). And a notification another one about the same condition and receiver overtook
//! is not tried again ([`Conditions`]), so a flapping target costs each receiver at most one
//! try per change of its condition. Strangers' monitors thus cannot turn the server's
//! notifications into a stream of POSTs at a URL of their choice, nor hold its sockets open.
//! In memory, per instance.

use super::buckets::Buckets;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Consecutive failed tries after which a receiver is rested.
pub const FAILURES_TO_REST: u32 = 3;

/// How long a failing receiver is rested.
pub const REST: Duration = Duration::from_secs(600);

/// Deliveries a minute by default over the whole server (`--max-deliveries-per-minute`).
pub const DEFAULT_PER_MINUTE: u64 = 120;

/// Tries in flight by default over the whole server (`--max-deliveries-in-flight`).
pub const DEFAULT_IN_FLIGHT: usize = 16;

/// Receivers remembered before the healthy idle ones are forgotten.
const PRUNE_AT: usize = 10_000;

/// The server's budget for deliveries.
pub struct DeliveryBudget {
    per_minute: u64,
    in_flight: usize,
    bucket: Buckets<()>,
    places: Arc<Semaphore>,
    receivers: Mutex<HashMap<String, Receiver>>,
}

/// One receiver's standing.
struct Receiver {
    /// One try at a time.
    place: Arc<Semaphore>,
    /// Tries failed in a row.
    failures: u32,
    /// Skipped until then (milliseconds since the epoch).
    rested_until_ms: u64,
}

impl Default for Receiver {
    fn default() -> Self {
        Receiver {
            place: Arc::new(Semaphore::new(1)),
            failures: 0,
            rested_until_ms: 0,
        }
    }
}

/// Why a try was not made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotSent {
    /// The receiver failed its last `failures` tries and rests until `until_unix_ms`: the
    /// delivery is given up.
    Resting {
        /// Tries failed in a row.
        failures: u32,
        /// When it is tried again, in milliseconds since the epoch.
        until_unix_ms: u64,
    },
    /// The server's deliveries a minute are spent.
    Spent {
        /// The server's deliveries a minute.
        per_minute: u64,
    },
    /// No place for a try came free within the wait.
    Busy {
        /// The wait, in seconds.
        waited_secs: u64,
        /// The server's tries in flight.
        in_flight: usize,
    },
}

impl NotSent {
    /// Its reason on `/metrics` (`h123_deliveries_skipped_total`): one of [`SKIP_REASONS`].
    pub fn reason(&self) -> &'static str {
        match self {
            NotSent::Resting { .. } => "receiver_resting",
            NotSent::Spent { .. } => "budget_spent",
            NotSent::Busy { .. } => "no_place",
        }
    }
}

/// Every reason a delivery's try is skipped for, as `/metrics` labels them: the three of
/// [`NotSent`], and `overtaken`, a retry not made because a newer notification of its
/// condition is on its way.
pub const SKIP_REASONS: [&str; 4] = ["receiver_resting", "budget_spent", "no_place", "overtaken"];

impl std::fmt::Display for NotSent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotSent::Resting {
                failures,
                until_unix_ms,
            } => write!(
                f,
                "skipped: its last {failures} tries failed, so this server rests it until {}",
                h123_shared::har::iso8601(*until_unix_ms)
            ),
            NotSent::Spent { per_minute } => write!(
                f,
                "not sent: this server's {per_minute} deliveries a minute are spent"
            ),
            NotSent::Busy {
                waited_secs,
                in_flight,
            } => write!(
                f,
                "not sent: no place for a try within {waited_secs} s (one at a time to a \
                 receiver, {in_flight} in all)"
            ),
        }
    }
}

/// A try's places (the receiver's and one of the server's), given back when dropped; its
/// outcome is told through [`DeliveryBudget::outcome`].
pub struct Place {
    _receiver: OwnedSemaphorePermit,
    _server: OwnedSemaphorePermit,
}

impl DeliveryBudget {
    /// `per_minute` tries a minute (at least one; as many at once) and `in_flight` at once (at
    /// least one), over the whole server.
    pub fn new(per_minute: u64, in_flight: usize) -> Self {
        let per_minute = per_minute.max(1);
        let in_flight = in_flight.max(1);
        DeliveryBudget {
            per_minute,
            in_flight,
            bucket: Buckets::new(per_minute as f64, per_minute as f64 / 60.0),
            places: Arc::new(Semaphore::new(in_flight)),
            receivers: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Receiver>> {
        self.receivers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `receiver` rests now (without waiting for anything).
    fn resting(&self, receiver: &str) -> Option<NotSent> {
        let receivers = self.lock();
        let standing = receivers.get(receiver)?;
        (standing.failures >= FAILURES_TO_REST
            && crate::probe::trace::unix_ms() < standing.rested_until_ms)
            .then_some(NotSent::Resting {
                failures: standing.failures,
                until_unix_ms: standing.rested_until_ms,
            })
    }

    /// A try at `receiver` (see [`receiver_of`]): its places, waited for up to `wait`, and a
    /// token.
    ///
    /// # Errors
    /// [`NotSent`]: the receiver rests, no place came free, or the tokens are spent.
    pub async fn admit(&self, receiver: &str, wait: Duration) -> Result<Place, NotSent> {
        if let Some(resting) = self.resting(receiver) {
            return Err(resting);
        }
        let busy = NotSent::Busy {
            waited_secs: wait.as_secs(),
            in_flight: self.in_flight,
        };
        let place = {
            let mut receivers = self.lock();
            if receivers.len() >= PRUNE_AT {
                receivers.retain(|_, r| r.failures > 0 || Arc::strong_count(&r.place) > 1);
            }
            receivers
                .entry(receiver.to_owned())
                .or_default()
                .place
                .clone()
        };
        let deadline = tokio::time::sleep(wait);
        tokio::pin!(deadline);
        let mine = tokio::select! {
            permit = place.acquire_owned() => permit.map_err(|_| busy.clone())?,
            () = &mut deadline => return Err(busy),
        };
        // The try before this one may have rested it.
        if let Some(resting) = self.resting(receiver) {
            return Err(resting);
        }
        let server = tokio::select! {
            permit = self.places.clone().acquire_owned() => permit.map_err(|_| busy.clone())?,
            () = &mut deadline => return Err(busy),
        };
        if !self.bucket.take((), 1.0, crate::probe::trace::now()).1 {
            return Err(NotSent::Spent {
                per_minute: self.per_minute,
            });
        }
        Ok(Place {
            _receiver: mine,
            _server: server,
        })
    }

    /// Tells how a try at `receiver` went: a success clears its failures, a failure counts,
    /// and [`FAILURES_TO_REST`] in a row rest it for [`REST`].
    pub fn outcome(&self, receiver: &str, delivered: bool) {
        let mut receivers = self.lock();
        let Some(standing) = receivers.get_mut(receiver) else {
            return;
        };
        if delivered {
            standing.failures = 0;
            standing.rested_until_ms = 0;
            return;
        }
        standing.failures = standing.failures.saturating_add(1);
        if standing.failures >= FAILURES_TO_REST {
            let rest = u64::try_from(REST.as_millis()).unwrap_or(u64::MAX);
            standing.rested_until_ms = crate::probe::trace::unix_ms().saturating_add(rest);
        }
    }
}

/// The receiver a delivery to `url` counts against: its scheme, host and port (a webhook's
/// paths are one receiver), or the URL itself when it does not parse.
pub fn receiver_of(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.origin().ascii_serialization())
}

/// The latest notification of each condition to each receiver of each monitor, so an older
/// one still waiting for its next try gives up: at most one notification per change is tried.
#[derive(Default)]
pub struct Conditions {
    next: AtomicU64,
    latest: Mutex<HashMap<(String, String, String), u64>>,
}

/// A notification's place in [`Conditions`].
pub struct Turn {
    key: (String, String, String),
    number: u64,
}

impl Conditions {
    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String, String), u64>> {
        self.latest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new notification of condition `key` of monitor `monitor` to `url`: from now on the
    /// latest.
    pub fn begin(&self, monitor: &str, url: &str, key: &str) -> Turn {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let key = (monitor.to_owned(), url.to_owned(), key.to_owned());
        self.lock().insert(key.clone(), number);
        Turn { key, number }
    }

    /// Whether a newer notification of `turn`'s condition began since.
    pub fn overtaken(&self, turn: &Turn) -> bool {
        self.lock().get(&turn.key) != Some(&turn.number)
    }

    /// `turn`'s notification is done: forgotten unless a newer one holds its condition.
    pub fn end(&self, turn: Turn) {
        let mut latest = self.lock();
        if latest.get(&turn.key) == Some(&turn.number) {
            latest.remove(&turn.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn a_receiver_failing_in_a_row_is_rested_and_a_success_wakes_it() {
        let budget = DeliveryBudget::new(1000, 4);
        let hook = receiver_of("https://Hooks.example:443/a/secret?x=1");
        assert_eq!(hook, "https://hooks.example");
        assert_eq!(receiver_of("https://hooks.example/b"), hook, "one receiver");
        for _ in 0..FAILURES_TO_REST - 1 {
            let place = budget.admit(&hook, WAIT).await.expect("a place");
            budget.outcome(&hook, false);
            drop(place);
        }
        // A success clears the streak.
        let place = budget.admit(&hook, WAIT).await.expect("a place");
        budget.outcome(&hook, true);
        drop(place);
        for _ in 0..FAILURES_TO_REST {
            let place = budget.admit(&hook, WAIT).await.expect("a place");
            budget.outcome(&hook, false);
            drop(place);
        }
        let Err(refused) = budget.admit(&hook, WAIT).await else {
            panic!("a receiver that failed three times in a row is rested");
        };
        assert!(
            matches!(refused, NotSent::Resting { failures: 3, until_unix_ms }
                if until_unix_ms > crate::probe::trace::unix_ms() + 590_000),
            "{refused:?}"
        );
        assert!(
            refused
                .to_string()
                .starts_with("skipped: its last 3 tries failed"),
            "{refused}"
        );
        assert!(
            budget.admit("https://other.example", WAIT).await.is_ok(),
            "another receiver is not"
        );
    }

    #[tokio::test]
    async fn one_try_at_a_time_to_a_receiver_and_the_server_in_flight_and_per_minute_bounded() {
        let budget = DeliveryBudget::new(3, 2);
        let short = Duration::from_millis(50);
        let a = budget.admit("http://a.example", short).await.expect("a");
        let busy = budget.admit("http://a.example", short).await.err();
        assert!(
            matches!(busy, Some(NotSent::Busy { in_flight: 2, .. })),
            "{busy:?}"
        );
        let b = budget.admit("http://b.example", short).await.expect("b");
        let full = budget.admit("http://c.example", short).await.err();
        assert!(matches!(full, Some(NotSent::Busy { .. })), "{full:?}");
        drop((a, b));
        let c = budget.admit("http://c.example", short).await.expect("c");
        drop(c);
        let spent = budget.admit("http://d.example", short).await.err();
        assert_eq!(spent, Some(NotSent::Spent { per_minute: 3 }));
        assert_eq!(
            spent.unwrap().to_string(),
            "not sent: this server's 3 deliveries a minute are spent"
        );
    }

    #[test]
    fn a_newer_notification_of_a_condition_overtakes_the_older_only() {
        let conditions = Conditions::default();
        let firing = conditions.begin("m1", "https://h.example/x", "lost:server:h2");
        let other = conditions.begin("m1", "https://h.example/x", "lost:server:h3");
        assert!(!conditions.overtaken(&firing));
        let resolved = conditions.begin("m1", "https://h.example/x", "lost:server:h2");
        assert!(conditions.overtaken(&firing));
        assert!(!conditions.overtaken(&other), "another condition");
        conditions.end(firing);
        assert!(
            !conditions.overtaken(&resolved),
            "the older's end leaves it"
        );
        conditions.end(resolved);
        conditions.end(other);
        assert!(conditions.lock().is_empty());
    }
}
