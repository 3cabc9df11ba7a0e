//! Per-client request rate: a token bucket per client (IPv4 address or IPv6 prefix).

use super::client::ClientKey;
use crate::probe::trace::now;
use std::collections::HashMap;
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

/// Token buckets keyed by client address.
#[derive(Debug)]
pub struct RateLimiter {
    config: RateConfig,
    buckets: Mutex<HashMap<ClientKey, Bucket>>,
}

#[derive(Copy, Clone, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Buckets kept before full (idle) ones are dropped.
const PRUNE_AT: usize = 10_000;

impl RateLimiter {
    /// A limiter with `config` (a zero rate or burst is raised to 1).
    pub fn new(config: RateConfig) -> Self {
        RateLimiter {
            config: RateConfig {
                burst: config.burst.max(1),
                per_minute: config.per_minute.max(1),
            },
            buckets: Mutex::new(HashMap::new()),
        }
    }

    fn per_sec(&self) -> f64 {
        f64::from(self.config.per_minute) / 60.0
    }

    /// Takes a token for `client` if one is there.
    pub fn check(&self, client: ClientKey) -> RateDecision {
        self.check_at(client, now())
    }

    fn check_at(&self, client: ClientKey, at: Instant) -> RateDecision {
        let burst = f64::from(self.config.burst);
        let rate = self.per_sec();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= PRUNE_AT {
            buckets.retain(|_, b| {
                b.tokens + at.saturating_duration_since(b.at).as_secs_f64() * rate < burst
            });
        }
        let bucket = buckets
            .entry(client)
            .or_insert(Bucket { tokens: burst, at });
        let refill = at.saturating_duration_since(bucket.at).as_secs_f64() * rate;
        bucket.tokens = (bucket.tokens + refill).min(burst);
        bucket.at = at;
        let allowed = bucket.tokens >= 1.0;
        if allowed {
            bucket.tokens -= 1.0;
        }
        let secs = |tokens: f64| (tokens.max(0.0) / rate).ceil() as u64;
        RateDecision {
            allowed,
            limit: self.config.burst,
            remaining: bucket.tokens.floor().max(0.0) as u32,
            reset_secs: secs(burst - bucket.tokens),
            retry_after_secs: if allowed {
                0
            } else {
                secs(1.0 - bucket.tokens).max(1)
            },
        }
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
