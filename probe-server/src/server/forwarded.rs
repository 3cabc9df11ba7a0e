//! The client's address behind reverse proxies the operator trusts
//! (`h123 serve --trusted-proxy RANGE`).
//!
//! Behind a load balancer every connection comes from the balancer, so every
//! per-client limit would be shared by all clients. A connection from a
//! trusted proxy is believed about `X-Forwarded-For`: reading the list from
//! its right end (the hop nearest to this server), each address a trusted
//! proxy appended is skipped, and the first one that is not a trusted proxy
//! is the client. Anything left of it was written by the client itself and
//! is never read. A connection from anyone else is its own TCP peer,
//! whatever headers it sends.

use axum::http::HeaderMap;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;

/// An address range: `ADDR/PREFIX`, or one address.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IpRange {
    base: IpAddr,
    prefix: u8,
}

impl IpRange {
    /// Whether `ip` (IPv4-mapped IPv6 read as IPv4) is in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.base, ip.to_canonical()) {
            (IpAddr::V4(base), IpAddr::V4(ip)) => same_prefix(
                u32::from(base).into(),
                u32::from(ip).into(),
                32,
                self.prefix,
            ),
            (IpAddr::V6(base), IpAddr::V6(ip)) => {
                same_prefix(u128::from(base), u128::from(ip), 128, self.prefix)
            }
            _ => false,
        }
    }
}

/// Whether the first `prefix` of `bits` bits of `a` and `b` agree.
fn same_prefix(a: u128, b: u128, bits: u8, prefix: u8) -> bool {
    let shift = u32::from(bits - prefix);
    a.checked_shr(shift).unwrap_or(0) == b.checked_shr(shift).unwrap_or(0)
}

impl FromStr for IpRange {
    type Err = String;

    fn from_str(text: &str) -> Result<IpRange, String> {
        let bad = || format!("`{text}` is not an address or ADDR/PREFIX range");
        let (addr, prefix) = match text.split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix)),
            None => (text, None),
        };
        let base = addr.parse::<IpAddr>().map_err(|_| bad())?.to_canonical();
        let bits = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits)
                .ok_or_else(bad)?,
            None => bits,
        };
        Ok(IpRange { base, prefix })
    }
}

/// The proxies whose `X-Forwarded-For` is believed (none by default).
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(Arc<[IpRange]>);

impl TrustedProxies {
    /// Trusts the proxies in `ranges`.
    pub fn new(ranges: Vec<IpRange>) -> TrustedProxies {
        TrustedProxies(ranges.into())
    }

    /// Whether `ip` is a trusted proxy.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|range| range.contains(ip))
    }

    /// The client behind a request from `peer` with `headers` (see the
    /// module docs). When every hop listed is a trusted proxy, or the list
    /// is unreadable past the trusted hops, the client is the last trusted
    /// hop that wrote it.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let listed: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .collect();
        let mut client = peer;
        for hop in listed.iter().rev() {
            let Ok(ip) = hop.trim().parse::<IpAddr>() else {
                return client;
            };
            client = ip.to_canonical();
            if !self.trusts(client) {
                return client;
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn proxies(ranges: &[&str]) -> TrustedProxies {
        TrustedProxies::new(ranges.iter().map(|r| r.parse().unwrap()).collect())
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        headers
    }

    #[test]
    fn ranges_parse_and_contain() {
        let net: IpRange = "10.1.0.0/16".parse().unwrap();
        assert!(net.contains(ip("10.1.255.3")) && !net.contains(ip("10.2.0.1")));
        assert!(net.contains(ip("::ffff:10.1.0.9")), "IPv4-mapped IPv6");
        let v6: IpRange = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains(ip("2001:db8:1::1")) && !v6.contains(ip("2001:db9::1")));
        assert!(!v6.contains(ip("10.1.0.1")));
        let one: IpRange = "127.0.0.1".parse().unwrap();
        assert!(one.contains(ip("127.0.0.1")) && !one.contains(ip("127.0.0.2")));
        let all: IpRange = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("203.0.113.7")));
        for bad in ["10.0.0.0/33", "::/129", "example.com", "10.0.0.0/x", ""] {
            assert!(bad.parse::<IpRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn only_a_trusted_peer_is_believed() {
        let trusted = proxies(&["127.0.0.1", "10.0.0.0/8"]);
        let headers = forwarded(&["198.51.100.7"]);
        assert_eq!(
            trusted.client(ip("127.0.0.1"), &headers),
            ip("198.51.100.7")
        );
        assert_eq!(
            trusted.client(ip("203.0.113.9"), &headers),
            ip("203.0.113.9"),
            "an untrusted peer's header is not read"
        );
        assert_eq!(
            TrustedProxies::default().client(ip("127.0.0.1"), &headers),
            ip("127.0.0.1"),
            "no proxy is trusted by default"
        );
        assert_eq!(
            trusted.client(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1"),
            "no header: the proxy itself"
        );
    }

    #[test]
    fn the_client_is_the_first_untrusted_hop_from_the_right() {
        let trusted = proxies(&["127.0.0.1", "10.0.0.0/8"]);
        // The client forged the first entry; two trusted proxies appended the rest.
        let headers = forwarded(&["1.2.3.4, 198.51.100.7", "10.0.0.5"]);
        assert_eq!(
            trusted.client(ip("127.0.0.1"), &headers),
            ip("198.51.100.7")
        );
        let all_trusted = forwarded(&["10.0.0.9, 10.0.0.5"]);
        assert_eq!(
            trusted.client(ip("127.0.0.1"), &all_trusted),
            ip("10.0.0.9")
        );
        let garbage = forwarded(&["not-an-ip, 10.0.0.5"]);
        assert_eq!(
            trusted.client(ip("127.0.0.1"), &garbage),
            ip("10.0.0.5"),
            "unreadable past the trusted hops: the last of them"
        );
        let v6 = forwarded(&["2001:db8::7"]);
        assert_eq!(
            trusted.client(ip("::ffff:127.0.0.1"), &v6),
            ip("2001:db8::7")
        );
    }
}
