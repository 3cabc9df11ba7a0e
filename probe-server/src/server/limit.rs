//! Per-client request rate: a token bucket per client (IPv4 address or IPv6
//! prefix), in this process or, on PostgreSQL, in the database every
//! instance shares (the creation rate then holds whichever instance a client
//! reaches).

use super::buckets::Buckets;
use super::client::ClientKey;
use crate::probe::trace::now;
use crate::store::postgres::PostgresStore;
use crate::store::{SharedStore, StoreError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How fast one client may create probes.
#[derive(Copy, Clone, Debug)]
pub struct RateConfig {
    /// Bucket size: how many requests may come at once.
    pub burst: u32,
    /// Sustained rate, requests per minute.
    pub per_minute: u32,
}

impl RateConfig {
    /// This config with a zero rate or burst raised to 1.
    fn at_least_one(self) -> Self {
        RateConfig {
            burst: self.burst.max(1),
            per_minute: self.per_minute.max(1),
        }
    }

    fn per_sec(self) -> f64 {
        f64::from(self.per_minute) / 60.0
    }

    /// The time an empty bucket takes to fill.
    fn refill_time(self) -> Duration {
        Duration::from_secs_f64(f64::from(self.burst) / self.per_sec())
    }

    /// The decision for a request that left `tokens` in the bucket, having
    /// taken one if `allowed`.
    fn decision(self, tokens: f64, allowed: bool) -> RateDecision {
        let rate = self.per_sec();
        let secs = |tokens: f64| (tokens.max(0.0) / rate).ceil() as u64;
        RateDecision {
            allowed,
            limit: self.burst,
            remaining: tokens.floor().max(0.0) as u32,
            reset_secs: secs(f64::from(self.burst) - tokens),
            retry_after_secs: if allowed {
                0
            } else {
                secs(1.0 - tokens).max(1)
            },
        }
    }
}

/// The verdict on one request.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RateDecision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// The bucket size (`RateLimit-Limit`).
    pub limit: u32,
    /// Whole tokens left after this request (`RateLimit-Remaining`).
    pub remaining: u32,
    /// Seconds until the bucket is full again (`RateLimit-Reset`).
    pub reset_secs: u64,
    /// Seconds until the next token, when refused (`Retry-After`).
    pub retry_after_secs: u64,
}

/// Token buckets keyed by client address, in this process.
#[derive(Debug)]
pub struct RateLimiter {
    config: RateConfig,
    buckets: Buckets,
}

impl RateLimiter {
    /// A limiter with `config` (a zero rate or burst is raised to 1).
    pub fn new(config: RateConfig) -> Self {
        let config = config.at_least_one();
        RateLimiter {
            config,
            buckets: Buckets::new(f64::from(config.burst), config.per_sec()),
        }
    }

    /// Takes a token for `client` if one is there.
    pub fn check(&self, client: ClientKey) -> RateDecision {
        self.check_at(client, now())
    }

    fn check_at(&self, client: ClientKey, at: Instant) -> RateDecision {
        let (tokens, allowed) = self.buckets.take(client, 1.0, at);
        self.config.decision(tokens, allowed)
    }
}

/// The creation rate (probes and benches): buckets in this process, or in
/// the PostgreSQL database every instance shares.
pub enum CreationLimiter {
    /// One instance (SQLite): buckets in this process.
    Local(RateLimiter),
    /// Several instances on one PostgreSQL database: buckets in it.
    Shared(SharedBuckets),
}

/// Token buckets in PostgreSQL (see `store::postgres::rate`).
pub struct SharedBuckets {
    store: PostgresStore,
    config: RateConfig,
    /// When full buckets were last deleted.
    pruned_at: Mutex<Instant>,
}

/// How often an instance deletes full buckets from the database.
const SHARED_PRUNE_EVERY: Duration = Duration::from_secs(60);

impl CreationLimiter {
    /// The limiter for a server on `store`: shared through PostgreSQL, else local.
    pub fn new(config: RateConfig, store: &SharedStore) -> Self {
        match store.postgres_store() {
            Some(pg) => CreationLimiter::Shared(SharedBuckets {
                store: pg.clone(),
                config: config.at_least_one(),
                pruned_at: Mutex::new(now()),
            }),
            None => CreationLimiter::Local(RateLimiter::new(config)),
        }
    }

    /// Takes a token for `client` if one is there.
    ///
    /// # Errors
    /// When the shared buckets' database fails (the request cannot be counted).
    pub async fn check(&self, client: ClientKey) -> Result<RateDecision, StoreError> {
        match self {
            CreationLimiter::Local(local) => Ok(local.check(client)),
            CreationLimiter::Shared(shared) => shared.check(client).await,
        }
    }
}

impl SharedBuckets {
    async fn check(&self, client: ClientKey) -> Result<RateDecision, StoreError> {
        let config = self.config;
        let taken = self
            .store
            .take_rate_token(
                &client.to_string(),
                f64::from(config.burst),
                config.per_sec(),
            )
            .await?;
        self.prune_now_and_then();
        Ok(config.decision(taken.tokens, taken.took))
    }

    /// Deletes full buckets in the background, at most once a
    /// [`SHARED_PRUNE_EVERY`] per instance.
    fn prune_now_and_then(&self) {
        let at = now();
        {
            let mut pruned_at = self.pruned_at.lock().unwrap_or_else(|e| e.into_inner());
            if at.saturating_duration_since(*pruned_at) < SHARED_PRUNE_EVERY {
                return;
            }
            *pruned_at = at;
        }
        let store = self.store.clone();
        let full_after = self.config.refill_time();
        tokio::spawn(async move {
            if let Err(e) = store.prune_rate_buckets(full_after).await {
                eprintln!("h123 serve: cannot prune rate buckets: {e}");
            }
        });
    }
}

/// `Duration` as whole seconds, at least one (for `Retry-After`).
pub fn whole_secs(d: Duration) -> u64 {
    d.as_secs_f64().ceil().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_empties_refills_and_is_per_client() {
        let limiter = RateLimiter::new(RateConfig {
            burst: 2,
            per_minute: 60,
        });
        let key = |ip: [u8; 4]| ClientKey::new(std::net::IpAddr::from(ip), 64);
        let (a, b) = (key([127, 0, 0, 2]), key([127, 0, 0, 3]));
        let t0 = now();
        assert!(limiter.check_at(a, t0).allowed);
        let second = limiter.check_at(a, t0);
        assert!(second.allowed);
        assert_eq!(second.remaining, 0);
        let third = limiter.check_at(a, t0);
        assert!(!third.allowed);
        assert_eq!(third.retry_after_secs, 1);
        assert_eq!(third.limit, 2);
        assert!(
            limiter.check_at(b, t0).allowed,
            "another client is not affected"
        );
        let later = t0 + Duration::from_millis(1100);
        assert!(limiter.check_at(a, later).allowed, "one token per second");
    }
}
