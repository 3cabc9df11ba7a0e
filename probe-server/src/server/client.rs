//! Who a client is, for every per-client limit: an IPv4 address, or an IPv6 prefix (a /64 by default).
//!
//! An IPv6 client usually holds a whole /64 (2^64 addresses), so limits
//! keyed by the exact address would be no limits at all. IPv4-mapped IPv6
//! addresses (`::ffff:a.b.c.d`, as a dual-stack socket reports IPv4 peers)
//! are the IPv4 client they stand for.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The IPv6 prefix length clients are grouped by unless configured otherwise.
pub const DEFAULT_IPV6_PREFIX: u8 = 64;

/// One client, as the rate limiter, the probe caps, the running-slot share
/// and the connection caps count it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientKey {
    /// An IPv4 address (mapped IPv6 forms included).
    V4(Ipv4Addr),
    /// An IPv6 network: the address with every bit past the prefix cleared, and the prefix length.
    V6(Ipv6Addr, u8),
}

impl ClientKey {
    /// The client `ip` belongs to, IPv6 addresses grouped by their first `ipv6_prefix` bits (0 to 128).
    pub fn new(ip: IpAddr, ipv6_prefix: u8) -> Self {
        match ip {
            IpAddr::V4(v4) => ClientKey::V4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientKey::V4(v4),
                None => {
                    let prefix = ipv6_prefix.min(128);
                    let mask = if prefix == 0 {
                        0
                    } else {
                        u128::MAX << (128 - u32::from(prefix))
                    };
                    ClientKey::V6(Ipv6Addr::from(u128::from(v6) & mask), prefix)
                }
            },
        }
    }
}

impl std::str::FromStr for ClientKey {
    type Err = String;

    /// A client as [`fmt::Display`] writes it: `a.b.c.d`, or `net/prefix` for IPv6.
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("not a client: {text:?}");
        match text.split_once('/') {
            None => match text.parse::<Ipv4Addr>() {
                Ok(v4) => Ok(ClientKey::V4(v4)),
                Err(_) => Err(bad()),
            },
            Some((net, prefix)) => {
                let net: Ipv6Addr = net.parse().map_err(|_| bad())?;
                let prefix: u8 = prefix.parse().map_err(|_| bad())?;
                (prefix <= 128)
                    .then(|| ClientKey::new(IpAddr::V6(net), prefix))
                    .ok_or_else(bad)
            }
        }
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientKey::V4(ip) => write!(f, "{ip}"),
            ClientKey::V6(net, prefix) => write!(f, "{net}/{prefix}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ip: &str) -> ClientKey {
        ClientKey::new(ip.parse().unwrap(), DEFAULT_IPV6_PREFIX)
    }

    #[test]
    fn ipv6_addresses_of_one_64_are_one_client() {
        assert_eq!(
            key("2001:db8:1:2::1"),
            key("2001:db8:1:2:ffff:ffff:ffff:ffff")
        );
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_eq!(key("2001:db8:1:2::9").to_string(), "2001:db8:1:2::/64");
        let wide = |ip: &str| ClientKey::new(ip.parse().unwrap(), 48);
        assert_eq!(wide("2001:db8:1:2::1"), wide("2001:db8:1:ffff::1"));
        let exact = |ip: &str| ClientKey::new(ip.parse().unwrap(), 128);
        assert_ne!(exact("2001:db8::1"), exact("2001:db8::2"));
        assert_eq!(
            ClientKey::new("2001:db8::1".parse().unwrap(), 0).to_string(),
            "::/0"
        );
    }

    #[test]
    fn a_client_reads_back_as_written() {
        for ip in ["192.0.2.1", "2001:db8:1:2::9", "::1"] {
            let client = key(ip);
            assert_eq!(client.to_string().parse::<ClientKey>(), Ok(client));
        }
        for bad in ["", "192.0.2", "2001:db8::/129", "192.0.2.1/32", "x/64"] {
            assert!(bad.parse::<ClientKey>().is_err(), "{bad}");
        }
    }

    #[test]
    fn ipv4_is_per_address_and_mapped_forms_are_ipv4() {
        assert_ne!(key("192.0.2.1"), key("192.0.2.2"));
        assert_eq!(key("::ffff:192.0.2.1"), key("192.0.2.1"));
        assert_eq!(key("::ffff:192.0.2.1").to_string(), "192.0.2.1");
        assert_ne!(
            key("::ffff:192.0.2.1"),
            key("::ffff:192.0.2.2"),
            "not grouped by /64"
        );
    }
}
