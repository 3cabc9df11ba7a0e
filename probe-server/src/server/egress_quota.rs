//! Per-client egress over time: a byte bucket per client (IPv4 address or
//! IPv6 prefix) from which each probe reserves its whole byte budget before
//! it is accepted, and to which it gives back what it did not receive when
//! it ends. So what a client makes the server fetch is bounded by
//! construction: at most the bucket, then its refill rate.
//!
//! The buckets live in this process: behind several instances on one
//! PostgreSQL database, each instance bounds a client on its own.

use super::buckets::Buckets;
use super::client::ClientKey;
use crate::probe::egress::Egress;
use crate::probe::trace::now;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes per client: refilled at `per_minute`, holding at most one minute's worth.
#[derive(Debug)]
pub struct EgressQuota {
    per_minute: u64,
    buckets: Buckets,
}

/// A probe's budget taken from its client's bucket; what the probe did not
/// receive goes back when this is dropped.
#[derive(Debug)]
pub struct Reservation {
    quota: Arc<EgressQuota>,
    client: ClientKey,
    egress: Arc<Egress>,
}

impl EgressQuota {
    /// Buckets of `per_minute` bytes, refilled at that rate.
    pub fn new(per_minute: u64) -> Arc<Self> {
        let per_minute = per_minute.max(1);
        Arc::new(EgressQuota {
            per_minute,
            buckets: Buckets::new(per_minute as f64, per_minute as f64 / 60.0),
        })
    }

    /// Bytes per minute one client may make the server receive.
    pub fn per_minute(&self) -> u64 {
        self.per_minute
    }

    /// Takes `egress`'s whole budget from `client`'s bucket.
    ///
    /// # Errors
    /// How long until the bucket holds it, when it does not now.
    pub fn reserve(
        self: &Arc<Self>,
        client: ClientKey,
        egress: Arc<Egress>,
    ) -> Result<Reservation, Duration> {
        self.take_at(client, egress.limit(), now())?;
        Ok(Reservation {
            quota: self.clone(),
            client,
            egress,
        })
    }

    fn take_at(&self, client: ClientKey, bytes: u64, at: Instant) -> Result<(), Duration> {
        let wanted = bytes as f64;
        match self.buckets.take(client, wanted, at) {
            (_, true) => Ok(()),
            (left, false) => Err(Duration::from_secs_f64(
                (wanted - left) * 60.0 / self.per_minute as f64,
            )),
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let unused = self.egress.limit().saturating_sub(self.egress.used());
        self.quota.buckets.give_back(self.client, unused as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_reserved_refunded_and_refilled() {
        let quota = EgressQuota::new(600);
        let client = ClientKey::new(std::net::IpAddr::from([127, 0, 0, 2]), 64);
        let other = ClientKey::new(std::net::IpAddr::from([127, 0, 0, 3]), 64);
        let first = quota.reserve(client, Egress::new(400)).unwrap();
        let wait = quota.reserve(client, Egress::new(400)).unwrap_err();
        let secs = wait.as_secs_f64();
        assert!(
            (19.9..=20.0).contains(&secs),
            "200 bytes short at 10 bytes a second: {secs}"
        );
        assert!(quota.reserve(other, Egress::new(400)).is_ok(), "per client");
        first.egress.charge(100);
        drop(first);
        let back = quota.reserve(client, Egress::new(400));
        assert!(back.is_ok(), "the 300 bytes not received came back");
        let t = now() + Duration::from_secs(60);
        assert!(quota.take_at(client, 600, t).is_ok(), "a minute refills it");
    }
}
