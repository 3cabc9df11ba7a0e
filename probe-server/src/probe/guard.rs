//! The safety policy: which addresses the probe may connect to.
//!
//! Checked at connect time, on the address about to be dialled (after DNS,
//! on every redirect hop), so a name that resolves or re-resolves to private
//! space (DNS rebinding) is refused all the same.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Which targets may be connected to.
#[derive(Clone, Debug, Default)]
pub struct ConnectPolicy {
    allow_private: bool,
    allowed: Vec<AllowedTarget>,
    only_listed: bool,
}

/// One explicitly allowed target: an address, and optionally one port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AllowedTarget {
    /// The allowed address.
    pub ip: IpAddr,
    /// The allowed port; any port when `None`.
    pub port: Option<u16>,
}

impl std::str::FromStr for AllowedTarget {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(addr) = s.parse::<SocketAddr>() {
            return Ok(AllowedTarget {
                ip: addr.ip(),
                port: Some(addr.port()),
            });
        }
        let bare = s.trim_start_matches('[').trim_end_matches(']');
        bare.parse::<IpAddr>()
            .map(|ip| AllowedTarget { ip, port: None })
            .map_err(|_| format!("`{s}` is not an address or address:port"))
    }
}

impl ConnectPolicy {
    /// Anything goes: for the CLI, which runs with its user's own rights.
    pub fn allow_all() -> Self {
        ConnectPolicy {
            allow_private: true,
            allowed: Vec::new(),
            only_listed: false,
        }
    }

    /// Public addresses only, plus the given exceptions.
    pub fn public_only(allowed: Vec<AllowedTarget>) -> Self {
        ConnectPolicy {
            allow_private: false,
            allowed,
            only_listed: false,
        }
    }

    /// Only the given targets, public addresses included: for tests and
    /// closed deployments, where nothing else may be reached at all.
    pub fn only(allowed: Vec<AllowedTarget>) -> Self {
        ConnectPolicy {
            allow_private: false,
            allowed,
            only_listed: true,
        }
    }

    /// `Ok` when `addr` may be connected to, else the reason it may not.
    pub fn check(&self, addr: SocketAddr) -> Result<(), String> {
        if self.allow_private {
            return Ok(());
        }
        let ip = canonical(addr.ip());
        let excepted = self
            .allowed
            .iter()
            .any(|a| canonical(a.ip) == ip && a.port.is_none_or(|p| p == addr.port()));
        match forbidden_range(ip) {
            Some(range) if !excepted => Err(format!("{ip} is {range} address")),
            None if self.only_listed && !excepted => Err(format!(
                "{ip} is not on this server's list of allowed targets"
            )),
            _ => Ok(()),
        }
    }
}

/// IPv4-mapped and IPv4-compatible IPv6 addresses judged as the IPv4 they carry.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                let compatible = s[..6].iter().all(|&x| x == 0) && (s[6] != 0 || s[7] > 1);
                if compatible {
                    IpAddr::V4(Ipv4Addr::from(((s[6] as u32) << 16) | s[7] as u32))
                } else {
                    IpAddr::V6(v6)
                }
            }
        },
        v4 => v4,
    }
}

/// The name of the non-public range `ip` falls in, if any.
fn forbidden_range(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "an unspecified (0.0.0.0/8)",
        (10, _, _) => "a private (10.0.0.0/8)",
        (100, 64..=127, _) => "a carrier-grade NAT (100.64.0.0/10)",
        (127, _, _) => "a loopback",
        (169, 254, _) => "a link-local (169.254.0.0/16, cloud metadata)",
        (172, 16..=31, _) => "a private (172.16.0.0/12)",
        (192, 0, 0) => "an IETF protocol assignment (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation",
        (192, 168, _) => "a private (192.168.0.0/16)",
        (198, 18..=19, _) => "a benchmarking (198.18.0.0/15)",
        (224..=239, _, _) => "a multicast",
        (240..=255, _, _) => "a reserved (240.0.0.0/4) or broadcast",
        _ => return None,
    })
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    Some(match s[0] {
        _ if ip.is_unspecified() => "an unspecified",
        _ if ip.is_loopback() => "a loopback",
        0x64 if s[1] == 0xff9b => "a NAT64 (64:ff9b::/96)",
        0x100 if s[1..4] == [0, 0, 0] => "a discard-only (100::/64)",
        0x2001 if s[1] == 0xdb8 => "a documentation",
        0x2002 => "a 6to4 (2002::/16)",
        x if x & 0xfe00 == 0xfc00 => "a unique-local (fc00::/7)",
        x if x & 0xffc0 == 0xfe80 => "a link-local",
        x if x & 0xffc0 == 0xfec0 => "a site-local",
        x if x & 0xff00 == 0xff00 => "a multicast",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(policy: &ConnectPolicy, addr: &str) -> Result<(), String> {
        policy.check(addr.parse().unwrap())
    }

    #[test]
    fn public_only_refuses_every_private_range() {
        let policy = ConnectPolicy::public_only(Vec::new());
        for addr in [
            "0.0.0.0:80",
            "10.0.0.5:443",
            "100.64.1.1:80",
            "127.0.0.1:80",
            "127.255.0.9:80",
            "169.254.169.254:80",
            "172.16.0.1:80",
            "172.31.255.255:80",
            "192.0.0.8:80",
            "192.0.2.1:80",
            "192.168.1.1:80",
            "198.18.0.1:80",
            "198.51.100.7:80",
            "203.0.113.9:80",
            "224.0.0.1:80",
            "255.255.255.255:80",
            "[::]:80",
            "[::1]:80",
            "[::ffff:127.0.0.1]:80",
            "[::ffff:10.1.2.3]:80",
            "[::127.0.0.1]:80",
            "[64:ff9b::a00:1]:80",
            "[fc00::1]:80",
            "[fd12:3456::1]:80",
            "[fe80::1]:80",
            "[ff02::1]:80",
            "[2001:db8::1]:80",
            "[2002:7f00:1::]:80",
        ] {
            assert!(verdict(&policy, addr).is_err(), "{addr} was allowed");
        }
    }

    #[test]
    fn public_addresses_pass() {
        let policy = ConnectPolicy::public_only(Vec::new());
        for addr in [
            "93.184.216.34:443",
            "1.1.1.1:53",
            "[2606:4700::1111]:443",
            "172.32.0.1:80",
        ] {
            assert_eq!(verdict(&policy, addr), Ok(()), "{addr}");
        }
    }

    #[test]
    fn reason_names_the_address_and_range() {
        let policy = ConnectPolicy::public_only(Vec::new());
        let reason = verdict(&policy, "10.0.0.5:443").unwrap_err();
        assert_eq!(reason, "10.0.0.5 is a private (10.0.0.0/8) address");
    }

    #[test]
    fn exceptions_are_exact() {
        let allowed = vec!["127.0.0.1:8443".parse().unwrap(), "::1".parse().unwrap()];
        let policy = ConnectPolicy::public_only(allowed);
        assert_eq!(verdict(&policy, "127.0.0.1:8443"), Ok(()));
        assert!(verdict(&policy, "127.0.0.1:8444").is_err());
        assert_eq!(verdict(&policy, "[::1]:9"), Ok(()));
        assert_eq!(verdict(&policy, "[::ffff:127.0.0.1]:8443"), Ok(()));
        assert!(verdict(&policy, "127.0.0.2:8443").is_err());
    }

    #[test]
    fn only_allows_nothing_but_the_list() {
        let policy = ConnectPolicy::only(vec!["127.0.0.1:8443".parse().unwrap()]);
        assert_eq!(verdict(&policy, "127.0.0.1:8443"), Ok(()));
        assert!(
            verdict(&policy, "1.1.1.1:443")
                .unwrap_err()
                .contains("not on this server")
        );
        assert!(
            verdict(&policy, "10.0.0.1:443")
                .unwrap_err()
                .contains("private")
        );
    }

    #[test]
    fn allow_all_allows_loopback() {
        assert_eq!(verdict(&ConnectPolicy::allow_all(), "127.0.0.1:1"), Ok(()));
    }
}
