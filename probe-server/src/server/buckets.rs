//! Token buckets keyed by client (IPv4 address or IPv6 prefix) or by anything else (a
//! monitored host), in this process: each holds up to a capacity, refills at a steady rate,
//! gives an amount when it has it and takes back what was not used.

use super::client::ClientKey;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Instant;

/// Buckets kept before full (idle) ones are dropped.
const PRUNE_AT: usize = 10_000;

/// One bucket per key (a client by default), full when first seen.
#[derive(Debug)]
pub struct Buckets<K = ClientKey> {
    capacity: f64,
    per_sec: f64,
    buckets: Mutex<HashMap<K, Bucket>>,
}

#[derive(Copy, Clone, Debug)]
struct Bucket {
    level: f64,
    at: Instant,
}

impl<K: Hash + Eq> Buckets<K> {
    /// Buckets of `capacity`, each refilled at `per_sec`.
    pub fn new(capacity: f64, per_sec: f64) -> Self {
        Buckets {
            capacity,
            per_sec,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes `amount` from `client`'s bucket as refilled by `at`, if it
    /// holds that much; what the bucket holds afterwards, and whether it gave.
    pub fn take(&self, client: K, amount: f64, at: Instant) -> (f64, bool) {
        self.take_sized(client, amount, self.capacity, self.per_sec, at)
    }

    /// [`Buckets::take`] with the bucket's size and rate given now rather than at creation
    /// (a share that changes as clients come and go): a bucket over `capacity` holds `capacity`.
    pub fn take_sized(
        &self,
        client: K,
        amount: f64,
        capacity: f64,
        per_sec: f64,
        at: Instant,
    ) -> (f64, bool) {
        let refilled = |b: &Bucket| {
            (b.level + at.saturating_duration_since(b.at).as_secs_f64() * per_sec).min(capacity)
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= PRUNE_AT {
            buckets.retain(|_, b| refilled(b) < capacity);
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            level: capacity,
            at,
        });
        bucket.level = refilled(bucket);
        bucket.at = at;
        let gives = bucket.level >= amount;
        if gives {
            bucket.level -= amount;
        }
        (bucket.level, gives)
    }

    /// Puts `amount` back into `client`'s bucket (never over its capacity).
    pub fn give_back(&self, client: K, amount: f64) {
        self.give_back_sized(client, amount, self.capacity);
    }

    /// Puts `amount` back into `client`'s bucket, never over `capacity`.
    pub fn give_back_sized(&self, client: K, amount: f64, capacity: f64) {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bucket) = buckets.get_mut(&client) {
            bucket.level = (bucket.level + amount).min(capacity);
        }
    }
}
