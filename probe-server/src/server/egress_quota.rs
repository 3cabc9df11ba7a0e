//! Per-client egress over time: a byte bucket per client (IPv4 address or
//! IPv6 prefix) from which each probe reserves its whole byte budget before
//! it is accepted, and to which it gives back what it did not receive when
//! it ends. So what a client makes the server fetch is bounded by
//! construction: at most the bucket, then its refill rate.
//!
//! A shared quota (the monitors': one amount for all of them) is also split
//! evenly among the clients that share it, as the running slots are shared
//! (`server::fair`): each client's bucket holds its share (the whole over the
//! number of sharers, one probe's budget at least) and refills at that share a
//! minute, and a run takes from its client's share and from the whole, so one
//! client's big answers cannot spend what another client's monitors need.
//!
//! The buckets live in this process: behind several instances on one
//! PostgreSQL database, each instance bounds a client on its own.

use super::buckets::Buckets;
use super::client::ClientKey;
use crate::probe::egress::Egress;
use crate::probe::trace::now;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The one key of a shared quota's whole (a set of buckets of its own, so no client's).
const WHOLE: ClientKey = ClientKey::V6(std::net::Ipv6Addr::UNSPECIFIED, 0);

/// Bytes per client: refilled at `per_minute`, holding at most one minute's worth.
#[derive(Debug)]
pub struct EgressQuota {
    per_minute: u64,
    buckets: Buckets,
    /// For a shared quota, how many clients share it now (else 0); see [`EgressQuota::shared`].
    sharers: AtomicU64,
    /// For a shared quota, the bytes of every client together.
    whole: Option<Buckets>,
}

/// Why a budget could not be reserved, and how long until it could.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Spent {
    /// How long until the bucket holds it.
    pub wait: Duration,
    /// Whether it was the client's share of a shared quota (else the client's bucket, or the
    /// whole of a shared quota).
    pub share: bool,
}

/// A probe's budget taken from its client's bucket; what the probe did not
/// receive goes back when this is dropped.
#[derive(Debug)]
pub struct Reservation {
    quota: Arc<EgressQuota>,
    client: ClientKey,
    egress: Arc<Egress>,
    /// The client's share when taken, for a shared quota.
    share: Option<f64>,
    /// The same budget taken from the server's whole bucket, given back with this one.
    whole: Option<Box<Reservation>>,
}

impl EgressQuota {
    /// Buckets of `per_minute` bytes, refilled at that rate.
    pub fn new(per_minute: u64) -> Arc<Self> {
        let per_minute = per_minute.max(1);
        Arc::new(EgressQuota {
            per_minute,
            buckets: Buckets::new(per_minute as f64, per_minute as f64 / 60.0),
            sharers: AtomicU64::new(0),
            whole: None,
        })
    }

    /// One quota of `per_minute` bytes for every client together, split evenly among the
    /// number of clients [`EgressQuota::set_sharers`] last said (one until then).
    pub fn shared(per_minute: u64) -> Arc<Self> {
        let per_minute = per_minute.max(1);
        Arc::new(EgressQuota {
            per_minute,
            buckets: Buckets::new(per_minute as f64, per_minute as f64 / 60.0),
            sharers: AtomicU64::new(1),
            whole: Some(Buckets::new(per_minute as f64, per_minute as f64 / 60.0)),
        })
    }

    /// Bytes per minute one client may make the server receive (of a shared quota, all
    /// clients together).
    pub fn per_minute(&self) -> u64 {
        self.per_minute
    }

    /// How many clients share a shared quota from now on (at least one).
    pub fn set_sharers(&self, clients: u64) {
        if self.whole.is_some() {
            self.sharers.store(clients.max(1), Ordering::Relaxed);
        }
    }

    /// Takes `egress`'s whole budget from `client`'s bucket (of a shared quota, from the
    /// client's share and from the whole).
    ///
    /// # Errors
    /// Which bucket is short of it, and how long until it holds it.
    pub fn reserve(
        self: &Arc<Self>,
        client: ClientKey,
        egress: Arc<Egress>,
    ) -> Result<Reservation, Spent> {
        let share = self.take_at(client, egress.limit(), now())?;
        Ok(Reservation {
            quota: self.clone(),
            client,
            egress,
            share,
            whole: None,
        })
    }

    /// `egress`'s budget taken from this quota's one bucket for every client together (the
    /// server's, `--server-bytes-per-minute`), or how long until it holds it.
    ///
    /// # Errors
    /// [`Spent`] when the bucket does not hold the budget now.
    pub fn reserve_whole(self: &Arc<Self>, egress: Arc<Egress>) -> Result<Reservation, Spent> {
        self.reserve(WHOLE, egress)
    }

    /// A client's share of a shared quota for a budget of `bytes`: the whole over the
    /// sharers, but at least one budget, so every client's monitors can run.
    fn share_of(&self, bytes: u64) -> f64 {
        let sharers = self.sharers.load(Ordering::Relaxed).max(1);
        (self.per_minute / sharers).max(bytes) as f64
    }

    /// Takes `bytes` for `client` at `at`; the client's share it was taken under, if shared.
    fn take_at(&self, client: ClientKey, bytes: u64, at: Instant) -> Result<Option<f64>, Spent> {
        let wanted = bytes as f64;
        let Some(whole) = &self.whole else {
            return match self.buckets.take(client, wanted, at) {
                (_, true) => Ok(None),
                (left, false) => Err(self.spent(wanted - left, self.per_minute as f64, false)),
            };
        };
        let share = self.share_of(bytes);
        if let (left, false) = self
            .buckets
            .take_sized(client, wanted, share, share / 60.0, at)
        {
            return Err(self.spent(wanted - left, share, true));
        }
        match whole.take(WHOLE, wanted, at) {
            (_, true) => Ok(Some(share)),
            (left, false) => {
                self.buckets.give_back_sized(client, wanted, share);
                Err(self.spent(wanted - left, self.per_minute as f64, false))
            }
        }
    }

    /// `short` bytes missing from a bucket refilled at `per_minute`.
    fn spent(&self, short: f64, per_minute: f64, share: bool) -> Spent {
        Spent {
            wait: Duration::from_secs_f64(short * 60.0 / per_minute),
            share,
        }
    }
}

impl Reservation {
    /// This reservation, holding `whole` (the same budget from the server's bucket) until it
    /// is given back with it.
    pub fn within(mut self, whole: Reservation) -> Reservation {
        self.whole = Some(Box::new(whole));
        self
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let unused = self.egress.limit().saturating_sub(self.egress.used()) as f64;
        let quota = &self.quota;
        match (&quota.whole, self.share) {
            (Some(whole), Some(share)) => {
                quota.buckets.give_back_sized(self.client, unused, share);
                whole.give_back(WHOLE, unused);
            }
            _ => quota.buckets.give_back(self.client, unused),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(n: u8) -> ClientKey {
        ClientKey::new(std::net::IpAddr::from([127, 0, 0, n]), 64)
    }

    #[test]
    fn budgets_are_reserved_refunded_and_refilled() {
        let quota = EgressQuota::new(600);
        let (client, other) = (client(2), client(3));
        let first = quota.reserve(client, Egress::new(400)).unwrap();
        let spent = quota.reserve(client, Egress::new(400)).unwrap_err();
        let secs = spent.wait.as_secs_f64();
        assert!(
            (19.9..=20.0).contains(&secs),
            "200 bytes short at 10 bytes a second: {secs}"
        );
        assert!(!spent.share, "a quota of its own is no share");
        assert!(quota.reserve(other, Egress::new(400)).is_ok(), "per client");
        first.egress.charge(100);
        drop(first);
        let back = quota.reserve(client, Egress::new(400));
        assert!(back.is_ok(), "the 300 bytes not received came back");
        let t = now() + Duration::from_secs(60);
        assert!(quota.take_at(client, 600, t).is_ok(), "a minute refills it");
    }

    #[test]
    fn a_shared_quota_gives_each_client_its_share_and_keeps_the_whole() {
        let quota = EgressQuota::shared(1200);
        quota.set_sharers(2);
        let (hog, other, third) = (client(2), client(3), client(4));
        // The hog spends its share (600) and no more, whatever it asks.
        let spent: Vec<_> = (0..3)
            .map(|_| quota.reserve(hog, Egress::new(300)))
            .collect();
        let taken = spent.iter().filter(|r| r.is_ok()).count();
        assert_eq!(taken, 2, "two budgets of 300 in a share of 600");
        let refused = spent.iter().find_map(|r| r.as_ref().err()).unwrap();
        assert!(refused.share, "its share is spent, not the whole");
        for r in spent.iter().flatten() {
            r.egress.charge(300);
        }
        drop(spent);
        // The other client's share is whole.
        let mine = quota.reserve(other, Egress::new(300)).unwrap();
        let _more = quota.reserve(other, Egress::new(300)).unwrap();
        // A third client while the count still says two: the whole is spent, not its share.
        let late = quota.reserve(third, Egress::new(300)).unwrap_err();
        assert!(!late.share, "the whole is short, not its share");
        // Unused bytes come back to the whole as well as the share.
        drop(mine);
        assert!(quota.reserve(third, Egress::new(300)).is_ok());
        // A share is at least one budget however many share.
        quota.set_sharers(1000);
        let fresh = client(5);
        assert!(
            quota
                .take_at(fresh, 300, now() + Duration::from_secs(60))
                .is_ok()
        );
    }
}
