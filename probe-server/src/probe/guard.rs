//! The safety policy: which addresses the probe may connect to.
//!
//! Checked at connect time, on the address about to be dialled (after DNS,
//! on every redirect hop), so a name that resolves or re-resolves to private
//! space (DNS rebinding) is refused all the same.
//!
//! The deny list is data: the IANA IPv4 and IPv6 special-purpose address
//! registries, one line per entry with its reference. IPv6 is deny by
//! default: only global unicast (2000::/3) outside the registry passes. An
//! IPv6 address that carries an IPv4 one (mapped, compatible, SIIT, NAT64,
//! 6to4) is also judged by the IPv4 address it carries.
//!
//! A probe may carry a gate of its own ([`DialGate`]), asked last about every
//! address the policy lets through: a monitor's run counts the sites it dials
//! against the monitors' per-site cap this way (`server::host_runs`).

mod rules;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// One probe's own say on the addresses its policy lets through, asked right before each is
/// dialled (and where the probe picks among its addresses): it may keep count of them.
pub trait DialGate: std::fmt::Debug + Send + Sync {
    /// `Ok` when `addr` may be dialled now, else why not, as a sentence.
    ///
    /// # Errors
    /// The reason the probe gives for not dialling `addr`.
    fn admit(&self, addr: SocketAddr) -> Result<(), String>;
}

/// Which targets may be connected to.
#[derive(Clone, Debug, Default)]
pub struct ConnectPolicy {
    allow_private: bool,
    allowed: Vec<AllowedTarget>,
    only_listed: bool,
    ports: Vec<u16>,
    /// Another policy every address must pass as well (an agent's server's).
    also: Option<Box<ConnectPolicy>>,
    /// The probe's own gate, asked last.
    gate: Option<Arc<dyn DialGate>>,
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

/// One line of a special-purpose registry: the prefix, its length, what it
/// is (with its article, to read "10.0.0.5 is a private-use address") and
/// the document that defines it.
pub type Special<A> = (A, u8, &'static str, &'static str);

/// The IANA IPv4 special-purpose address registry, in full, plus multicast
/// (from the IPv4 address space registry). The first matching line names
/// the range, so a more specific line comes before the one containing it.
#[rustfmt::skip]
pub const IPV4_SPECIAL: &[Special<Ipv4Addr>] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "a \"this network\" (unspecified)", "RFC 791"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "a private-use", "RFC 1918"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "a shared (carrier-grade NAT)", "RFC 6598"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "a loopback", "RFC 1122"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "a link-local (cloud metadata)", "RFC 3927"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "a private-use", "RFC 1918"),
    (Ipv4Addr::new(192, 0, 0, 0), 29, "an IPv4 service continuity", "RFC 7335"),
    (Ipv4Addr::new(192, 0, 0, 8), 32, "an IPv4 dummy", "RFC 7600"),
    (Ipv4Addr::new(192, 0, 0, 9), 32, "a port control protocol anycast", "RFC 7723"),
    (Ipv4Addr::new(192, 0, 0, 10), 32, "a traversal using relays around NAT anycast", "RFC 8155"),
    (Ipv4Addr::new(192, 0, 0, 170), 31, "a NAT64/DNS64 discovery", "RFC 8880"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "an IETF protocol assignments", "RFC 6890"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "a documentation (TEST-NET-1)", "RFC 5737"),
    (Ipv4Addr::new(192, 31, 196, 0), 24, "an AS112-v4", "RFC 7535"),
    (Ipv4Addr::new(192, 52, 193, 0), 24, "an automatic multicast tunneling", "RFC 7450"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "a deprecated 6to4 relay anycast", "RFC 7526"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "a private-use", "RFC 1918"),
    (Ipv4Addr::new(192, 175, 48, 0), 24, "a direct delegation AS112 service", "RFC 7534"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "a benchmarking", "RFC 2544"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "a documentation (TEST-NET-2)", "RFC 5737"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "a documentation (TEST-NET-3)", "RFC 5737"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "a multicast", "RFC 5771"),
    (Ipv4Addr::new(255, 255, 255, 255), 32, "a limited broadcast", "RFC 919"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "a reserved", "RFC 1112"),
];

/// The IANA IPv6 special-purpose address registry (the prefixes that carry
/// an IPv4 address are in [`IPV6_CARRIERS`]), plus the non-global parts of
/// the IPv6 address space. Anything outside 2000::/3 not listed here is
/// refused as well.
#[rustfmt::skip]
pub const IPV6_SPECIAL: &[Special<Ipv6Addr>] = &[
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 128, "an unspecified", "RFC 4291"),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 1), 128, "a loopback", "RFC 4291"),
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, "a discard-only", "RFC 6666"),
    (Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0), 64, "a dummy IPv6", "RFC 9780"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, "a Teredo", "RFC 4380"),
    (Ipv6Addr::new(0x2001, 2, 0, 0, 0, 0, 0, 0), 48, "a benchmarking", "RFC 5180"),
    (Ipv6Addr::new(0x2001, 3, 0, 0, 0, 0, 0, 0), 32, "an automatic multicast tunneling", "RFC 7450"),
    (Ipv6Addr::new(0x2001, 4, 0x112, 0, 0, 0, 0, 0), 48, "an AS112-v6", "RFC 7535"),
    (Ipv6Addr::new(0x2001, 0x10, 0, 0, 0, 0, 0, 0), 28, "a deprecated ORCHID", "RFC 4843"),
    (Ipv6Addr::new(0x2001, 0x20, 0, 0, 0, 0, 0, 0), 28, "an ORCHIDv2", "RFC 7343"),
    (Ipv6Addr::new(0x2001, 0x30, 0, 0, 0, 0, 0, 0), 28, "a drone remote ID (DET)", "RFC 9374"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, "an IETF protocol assignments", "RFC 2928"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, "a documentation", "RFC 3849"),
    (Ipv6Addr::new(0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0), 48, "a direct delegation AS112 service", "RFC 7534"),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, "a documentation", "RFC 9637"),
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16, "a segment routing (SRv6 SID)", "RFC 9602"),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, "a unique-local", "RFC 4193"),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "a link-local", "RFC 4291"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "a deprecated site-local", "RFC 3879"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "a multicast", "RFC 4291"),
];

/// IPv6 prefixes whose addresses carry an IPv4 address, and what decides:
/// (prefix, length, what, reference, segment where the IPv4 address starts,
/// whether a public IPv4 address lets it through). Only the IPv4-mapped form
/// (the same socket destination) and the well-known NAT64 prefix (which
/// reaches that IPv4 address) pass with a public one; the others are refused
/// whatever they carry, as special-purpose or outside global unicast, and
/// are named by the IPv4 address they carry when that one is not public.
#[rustfmt::skip]
pub const IPV6_CARRIERS: &[(Ipv6Addr, u8, &str, &str, usize, bool)] = &[
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96, "an IPv4-mapped", "RFC 4291", 6, true),
    (Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96, "a NAT64 (IPv4/IPv6 translation)", "RFC 6052", 6, true),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, "a local-use NAT64 (IPv4/IPv6 translation)", "RFC 8215", 6, false),
    (Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0), 96, "an IPv4-translated (SIIT)", "RFC 6145", 6, false),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, "a 6to4", "RFC 3056", 1, false),
    (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96, "a deprecated IPv4-compatible", "RFC 4291", 6, false),
];

impl ConnectPolicy {
    /// Anything goes: for the CLI, which runs with its user's own rights.
    pub fn allow_all() -> Self {
        ConnectPolicy {
            allow_private: true,
            allowed: Vec::new(),
            only_listed: false,
            ports: Vec::new(),
            also: None,
            gate: None,
        }
    }

    /// Public addresses only, plus the given exceptions.
    pub fn public_only(allowed: Vec<AllowedTarget>) -> Self {
        ConnectPolicy {
            allow_private: false,
            allowed,
            only_listed: false,
            ports: Vec::new(),
            also: None,
            gate: None,
        }
    }

    /// Only the given targets, public addresses included: for tests and
    /// closed deployments, where nothing else may be reached at all.
    pub fn only(allowed: Vec<AllowedTarget>) -> Self {
        ConnectPolicy {
            allow_private: false,
            allowed,
            only_listed: true,
            ports: Vec::new(),
            also: None,
            gate: None,
        }
    }

    /// The same policy, letting only these ports through (any when empty):
    /// `--allow-port`, checked on every dialled address (redirect hops,
    /// Alt-Svc and HTTPS-record endpoints included), whatever else allows it.
    pub fn with_ports(mut self, ports: Vec<u16>) -> Self {
        self.ports = ports;
        self
    }

    /// `Ok` when `port` is on the port list (or there is none), else why not.
    ///
    /// # Errors
    /// The reason, as a sentence listing the allowed ports.
    pub fn check_port(&self, port: u16) -> Result<(), String> {
        if let Some(also) = &self.also {
            also.check_port(port)?;
        }
        if self.ports.is_empty() || self.ports.contains(&port) {
            return Ok(());
        }
        let list = self
            .ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        Err(format!(
            "port {port} is not allowed: this server probes only ports {list}"
        ))
    }

    /// The same policy, asking `gate` as well about every address it lets through.
    pub fn with_gate(mut self, gate: Arc<dyn DialGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Whether this policy lets every address through (`--allow-private`).
    pub fn allows_private(&self) -> bool {
        self.allow_private && self.also.as_ref().is_none_or(|also| also.allows_private())
    }

    /// The same policy with `other` checked as well: an address passes only
    /// when both let it through (an agent keeps its server's rules this way).
    pub fn and(mut self, other: ConnectPolicy) -> Self {
        self.also = Some(Box::new(match self.also.take() {
            Some(also) => also.and(other),
            None => other,
        }));
        self
    }

    /// `Ok` when `addr` may be connected to, else the reason it may not,
    /// e.g. "10.0.0.5 is a private-use address (10.0.0.0/8, RFC 1918)" or
    /// "port 22 is not allowed: ...". The port list applies even when
    /// private addresses are allowed: the operator set both. An address
    /// let through is then the gate's to admit ([`ConnectPolicy::with_gate`]).
    ///
    /// # Errors
    /// The reason, as a sentence naming the address and its range.
    pub fn check(&self, addr: SocketAddr) -> Result<(), String> {
        self.check_rules(addr)?;
        match &self.gate {
            Some(gate) => gate.admit(addr),
            None => Ok(()),
        }
    }

    /// [`ConnectPolicy::check`] without the gate.
    fn check_rules(&self, addr: SocketAddr) -> Result<(), String> {
        self.check_port(addr.port())?;
        if let Some(also) = &self.also {
            also.check(addr)?;
        }
        if self.allow_private {
            return Ok(());
        }
        let ip = addr.ip();
        let same = same_destination(ip);
        let excepted = self
            .allowed
            .iter()
            .any(|a| same_destination(a.ip) == same && a.port.is_none_or(|p| p == addr.port()));
        match non_public(ip) {
            Some(range) if !excepted => Err(format!("{ip} is {range}")),
            None if self.only_listed && !excepted => Err(format!(
                "{ip} is not on this server's list of allowed targets"
            )),
            _ => Ok(()),
        }
    }
}

/// `ip` as the socket destination it is: an IPv4-mapped IPv6 address is
/// the IPv4 address it carries, so an exception for one covers the other.
fn same_destination(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Why `ip` is not a public address ("a loopback address (127.0.0.0/8,
/// RFC 1122)"), or `None` when it is one.
pub fn non_public(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn describe<A: std::fmt::Display + Copy>(&(prefix, len, what, rfc): &Special<A>) -> String {
    format!("{what} address ({prefix}/{len}, {rfc})")
}

fn non_public_v4(ip: Ipv4Addr) -> Option<String> {
    let bits = u32::from(ip);
    IPV4_SPECIAL
        .iter()
        .find(|&&(prefix, len, _, _)| bits >> (32 - len) == u32::from(prefix) >> (32 - len))
        .map(describe)
}

fn in_v6(ip: Ipv6Addr, prefix: Ipv6Addr, len: u8) -> bool {
    let shift = 128 - u32::from(len);
    u128::from(ip).checked_shr(shift).unwrap_or(0)
        == u128::from(prefix).checked_shr(shift).unwrap_or(0)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<String> {
    if let Some(line) = IPV6_SPECIAL
        .iter()
        .find(|&&(prefix, len, _, _)| in_v6(ip, prefix, len))
    {
        return Some(describe(line));
    }
    if let Some(&(prefix, len, what, rfc, at, public_passes)) = IPV6_CARRIERS
        .iter()
        .find(|&&(prefix, len, ..)| in_v6(ip, prefix, len))
    {
        let s = ip.segments();
        let v4 = Ipv4Addr::from((u32::from(s[at]) << 16) | u32::from(s[at + 1]));
        let carrier = describe(&(prefix, len, what, rfc));
        return match non_public_v4(v4) {
            Some(range) => Some(format!("{carrier} carrying {v4}, {range}")),
            None if public_passes => None,
            None => Some(carrier),
        };
    }
    if !in_v6(ip, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return Some("an address outside IPv6 global unicast (2000::/3, RFC 4291)".to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(policy: &ConnectPolicy, addr: &str) -> Result<(), String> {
        policy.check(addr.parse().unwrap())
    }

    fn refused(ip: IpAddr) -> String {
        let policy = ConnectPolicy::public_only(Vec::new());
        policy
            .check(SocketAddr::new(ip, 443))
            .expect_err(&format!("{ip} was allowed"))
    }

    fn last_v4(prefix: Ipv4Addr, len: u8) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(prefix) | u32::MAX.checked_shr(u32::from(len)).unwrap_or(0))
    }

    fn last_v6(prefix: Ipv6Addr, len: u8) -> Ipv6Addr {
        Ipv6Addr::from(u128::from(prefix) | u128::MAX.checked_shr(u32::from(len)).unwrap_or(0))
    }

    /// The index of the registry line a reason names.
    fn line_named<A: std::fmt::Display + Copy>(table: &[Special<A>], reason: &str) -> usize {
        table
            .iter()
            .position(|(prefix, len, _, _)| reason.contains(&format!("({prefix}/{len}, ")))
            .unwrap_or_else(|| panic!("no line named in {reason}"))
    }

    #[test]
    fn every_ipv4_registry_line_is_refused_first_to_last() {
        for (i, &(prefix, len, _, _)) in IPV4_SPECIAL.iter().enumerate() {
            for ip in [prefix, last_v4(prefix, len)] {
                let reason = refused(IpAddr::V4(ip));
                // Named by this line or by a more specific one before it.
                assert!(line_named(IPV4_SPECIAL, &reason) <= i, "{ip}: {reason}");
                // Also through every IPv6 form that carries it.
                let [a, b] = [(u32::from(ip) >> 16) as u16, u32::from(ip) as u16];
                for carrier in [
                    ip.to_ipv6_mapped(),
                    Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, a, b),
                    Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, a, b),
                    Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, a, b),
                    Ipv6Addr::new(0x2002, a, b, 0, 0, 0, 0, 1),
                ] {
                    let why = refused(IpAddr::V6(carrier));
                    assert!(
                        why.contains(&format!("carrying {ip}, ")),
                        "{carrier}: {why}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_ipv6_registry_line_is_refused_first_to_last() {
        for (i, &(prefix, len, _, _)) in IPV6_SPECIAL.iter().enumerate() {
            for ip in [prefix, last_v6(prefix, len)] {
                let reason = refused(IpAddr::V6(ip));
                assert!(line_named(IPV6_SPECIAL, &reason) <= i, "{ip}: {reason}");
            }
        }
        for &(prefix, len, _, rfc, _, public_passes) in IPV6_CARRIERS {
            // Carrying a public IPv4 address (1.1.1.1).
            let ip = Ipv6Addr::from(u128::from(prefix) | 0x0101_0101);
            let ip = if prefix.segments()[0] == 0x2002 {
                Ipv6Addr::new(0x2002, 0x0101, 0x0101, 0, 0, 0, 0, 1)
            } else {
                ip
            };
            let verdict =
                ConnectPolicy::public_only(Vec::new()).check(SocketAddr::new(ip.into(), 443));
            assert_eq!(verdict.is_ok(), public_passes, "{ip}/{len}: {verdict:?}");
            if let Err(reason) = verdict {
                assert!(reason.contains(rfc), "{ip}: {reason}");
            }
        }
    }

    #[test]
    fn the_audits_gaps_are_closed() {
        for (addr, words) in [
            ("::ffff:0:a00:5", "SIIT"),
            ("::ffff:0:7f00:1", "loopback"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
            ("2001::1", "Teredo"),
            ("2001:2::1", "benchmarking"),
            ("192.88.99.1", "6to4 relay"),
            ("192.0.0.171", "NAT64/DNS64"),
            ("198.19.255.255", "benchmarking"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("64:ff9b:1::a00:1", "local-use NAT64"),
            ("2002:c0a8:101::1", "192.168.1.1"),
            ("::a00:5", "IPv4-compatible"),
            ("::8.8.8.8", "IPv4-compatible"),
            ("100::1", "discard-only"),
            ("3fff::1", "documentation"),
            ("5f00::1", "segment routing"),
            ("1000::1", "outside IPv6 global unicast"),
            ("4000::1", "outside IPv6 global unicast"),
            ("e000::1", "outside IPv6 global unicast"),
        ] {
            let reason = refused(addr.parse().unwrap());
            assert!(reason.contains(words), "{addr}: {reason}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        let policy = ConnectPolicy::public_only(Vec::new());
        for addr in [
            "93.184.216.34:443",
            "1.1.1.1:53",
            "8.8.8.8:53",
            "172.32.0.1:80",
            "100.128.0.1:80",
            "192.0.1.1:80",
            "192.88.98.255:80",
            "198.20.0.1:80",
            "223.255.255.255:80",
            "[2606:4700::1111]:443",
            "[2001:200::1]:443",
            "[2620:4f:8001::1]:443",
            "[2a00:1450:4001::200e]:443",
            "[3ffe::1]:443",
            "[::ffff:1.1.1.1]:443",
            "[64:ff9b::808:808]:443",
        ] {
            assert_eq!(verdict(&policy, addr), Ok(()), "{addr}");
        }
    }

    #[test]
    fn reason_names_the_address_range_and_reference() {
        let policy = ConnectPolicy::public_only(Vec::new());
        let reason = verdict(&policy, "10.0.0.5:443").unwrap_err();
        assert_eq!(
            reason,
            "10.0.0.5 is a private-use address (10.0.0.0/8, RFC 1918)"
        );
        let reason = verdict(&policy, "[::ffff:0:a00:5]:443").unwrap_err();
        assert_eq!(
            reason,
            "::ffff:0:a00:5 is an IPv4-translated (SIIT) address (::ffff:0:0:0/96, RFC 6145) \
             carrying 10.0.0.5, a private-use address (10.0.0.0/8, RFC 1918)"
        );
    }

    #[test]
    fn exceptions_are_exact() {
        let allowed = vec!["127.0.0.1:8443".parse().unwrap(), "::1".parse().unwrap()];
        let policy = ConnectPolicy::public_only(allowed);
        assert_eq!(verdict(&policy, "127.0.0.1:8443"), Ok(()));
        assert!(verdict(&policy, "127.0.0.1:8444").is_err());
        assert_eq!(verdict(&policy, "[::1]:9"), Ok(()));
        assert_eq!(verdict(&policy, "[::ffff:127.0.0.1]:8443"), Ok(()));
        assert!(verdict(&policy, "[::127.0.0.1]:8443").is_err());
        assert!(verdict(&policy, "[64:ff9b::7f00:1]:8443").is_err());
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
    fn the_port_list_applies_to_every_address() {
        let policy = ConnectPolicy::public_only(vec!["127.0.0.1".parse().unwrap()])
            .with_ports(vec![443, 80]);
        assert_eq!(verdict(&policy, "1.1.1.1:443"), Ok(()));
        assert_eq!(verdict(&policy, "127.0.0.1:80"), Ok(()));
        assert_eq!(
            verdict(&policy, "1.1.1.1:8443").unwrap_err(),
            "port 8443 is not allowed: this server probes only ports 443, 80"
        );
        assert!(
            verdict(&policy, "127.0.0.1:22")
                .unwrap_err()
                .contains("port 22")
        );
        let open = ConnectPolicy::allow_all().with_ports(vec![443]);
        assert_eq!(verdict(&open, "127.0.0.1:443"), Ok(()));
        assert!(verdict(&open, "127.0.0.1:444").is_err());
        assert_eq!(
            verdict(&ConnectPolicy::allow_all(), "127.0.0.1:444"),
            Ok(())
        );
    }

    #[test]
    fn allow_all_allows_loopback() {
        assert_eq!(verdict(&ConnectPolicy::allow_all(), "127.0.0.1:1"), Ok(()));
        assert_eq!(
            verdict(&ConnectPolicy::allow_all(), "[::ffff:0:a00:5]:1"),
            Ok(())
        );
    }
}
