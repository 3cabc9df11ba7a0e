//! A host's addresses side by side (`--all-addresses`): one row per address a
//! protocol dialled, its main run's first and then each
//! [`AddressRun`](crate::schema::AddressRun), with medians and failures, for
//! the CLI, the web UI and the diagnosis.

use crate::chain::{Chain, chains_of};
use crate::schema::{AddressFamily, Attempt, Failure, Micros, ProtocolRun};
use crate::stats::{Metric, percentile};
use std::net::{IpAddr, SocketAddr};

/// One address of one protocol, summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct AddressRow<'a> {
    /// The address (no port), e.g. `::1`; "unknown" when the main run never
    /// reached one.
    pub address: String,
    /// Its family; [`AddressFamily::Any`] when the address is unknown.
    pub family: AddressFamily,
    /// Whether this is the main run (the first address, as without the option).
    pub main: bool,
    /// The attempts made to it.
    pub attempts: &'a [Attempt],
}

/// Medians of one address's attempts (nearest rank): setup phases over the
/// new connections, ttfb and total over every chain that was answered.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddressFigures {
    /// Chains (attempts with their redirect hops) made.
    pub chains: usize,
    /// Chains that ended in a network failure.
    pub failures: usize,
    /// Median connect of new connections.
    pub connect: Option<Micros>,
    /// Median TLS (or, over HTTP/3, QUIC) handshake of new connections.
    pub handshake: Option<Micros>,
    /// Median time to first byte.
    pub ttfb: Option<Micros>,
    /// Median total.
    pub total: Option<Micros>,
    /// The first failure, if any.
    pub first_failure: Option<Failure>,
}

impl AddressRow<'_> {
    /// The address as a report names it: the main run's marked `(main)`.
    pub fn shown(&self) -> String {
        if self.main {
            format!("{} (main)", self.address)
        } else {
            self.address.clone()
        }
    }

    /// The chains of this row's attempts.
    pub fn chains(&self, protocol: crate::schema::Protocol) -> Vec<Chain<'_>> {
        chains_of(protocol, self.attempts)
    }

    /// This row's medians and failure count.
    pub fn figures(&self, protocol: crate::schema::Protocol) -> AddressFigures {
        let chains = self.chains(protocol);
        let answered: Vec<&Chain<'_>> = chains.iter().filter(|c| c.answered()).collect();
        let first = chains.iter().find_map(|c| c.failure()).cloned();
        AddressFigures {
            chains: chains.len(),
            failures: chains.iter().filter(|c| c.failure().is_some()).count(),
            connect: median(new_connection_values(&chains, Metric::Connect)),
            handshake: median(new_connection_values(&chains, handshake_metric(protocol))),
            ttfb: median(answered.iter().filter_map(|c| c.ttfb()).collect()),
            total: median(answered.iter().map(|c| c.total()).collect()),
            first_failure: first,
        }
    }
}

/// The rows of a run: none unless it has [`ProtocolRun::other_addresses`];
/// else the main run's address first, then each other address.
pub fn rows(run: &ProtocolRun) -> Vec<AddressRow<'_>> {
    if run.other_addresses.is_empty() {
        return Vec::new();
    }
    let main_ip = main_address(&run.attempts);
    let mut out = vec![AddressRow {
        address: main_ip.map_or_else(|| "unknown".to_owned(), |ip| ip.to_string()),
        family: main_ip.map_or(AddressFamily::Any, AddressFamily::of),
        main: true,
        attempts: &run.attempts,
    }];
    out.extend(run.other_addresses.iter().map(|other| AddressRow {
        address: other.address.clone(),
        family: other.family,
        main: false,
        attempts: &other.attempts,
    }));
    out
}

/// The address a run's first connection went to: the first hop-0 attempt
/// that connected, else the first address its lookup gave.
pub fn main_address(attempts: &[Attempt]) -> Option<IpAddr> {
    let first_hops = || attempts.iter().filter(|a| a.hop == 0);
    first_hops()
        .find_map(|a| a.connection.as_ref())
        .and_then(|c| c.remote_addr.parse::<SocketAddr>().ok())
        .map(|s| s.ip())
        .or_else(|| {
            first_hops().find_map(|a| a.dns.as_ref()?.addresses.first()?.parse::<IpAddr>().ok())
        })
}

/// The setup phase that holds the handshake over `protocol`: QUIC for
/// HTTP/3, TLS otherwise.
pub fn handshake_metric(protocol: crate::schema::Protocol) -> Metric {
    if protocol == crate::schema::Protocol::H3 {
        Metric::Quic
    } else {
        Metric::Tls
    }
}

/// `metric` over the answered chains whose first hop opened a new
/// connection (a handshake, a connect, or the whole first request).
pub fn new_connection_values(chains: &[Chain<'_>], metric: Metric) -> Vec<Micros> {
    chains
        .iter()
        .filter(|c| c.answered() && !c.first().connection.as_ref().is_some_and(|c| c.reused))
        .filter_map(|c| match metric {
            Metric::Total => Some(c.total()),
            Metric::Ttfb => c.ttfb(),
            _ => metric.value(c.first()),
        })
        .collect()
}

fn median(mut values: Vec<Micros>) -> Option<Micros> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    Some(percentile(&values, 50))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, reused, run};
    use crate::schema::{AddressRun, Protocol};

    #[test]
    fn rows_put_the_main_address_first_with_its_medians() {
        let mut r = run(
            Protocol::H2,
            vec![fresh(1, 1_000, 500, 2_000, 3_000), reused(2, 3_000)],
        );
        assert!(rows(&r).is_empty(), "no rows without other addresses");
        let mut slow = fresh(1, 1_000, 500, 52_000, 3_000);
        slow.connection.as_mut().unwrap().remote_addr = "[2001:db8::1]:443".into();
        r.other_addresses.push(AddressRun {
            address: "2001:db8::1".into(),
            family: AddressFamily::V6,
            stopped: None,
            cut_short: None,
            attempts: vec![slow, reused(2, 3_000)],
        });
        let rows = rows(&r);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].address.as_str(), rows[0].family, rows[0].main),
            ("192.0.2.1", AddressFamily::V4, true)
        );
        let main = rows[0].figures(Protocol::H2);
        let other = rows[1].figures(Protocol::H2);
        assert_eq!((main.chains, main.failures), (2, 0));
        assert_eq!(main.connect, Some(Micros(500)));
        assert_eq!(main.handshake, Some(Micros(2_000)));
        assert_eq!(other.handshake, Some(Micros(52_000)));
        assert_eq!(rows[1].family, AddressFamily::V6);
        assert_eq!(
            (rows[0].shown(), rows[1].shown()),
            ("192.0.2.1 (main)".to_owned(), "2001:db8::1".to_owned())
        );
    }
}
