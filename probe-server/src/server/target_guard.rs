//! The API's early target check: refuse a probe whose URL points at a
//! forbidden address, or a bench whose URL points at no allowed one.
//!
//! This is a courtesy, so that a client is told "blocked" at once and why.
//! The barrier is the engine's connect-time check on every dialled address
//! (redirect hops and DNS rebinding included), which this does not replace.

use crate::probe::dns::NameResolver;
use crate::probe::guard::{AllowedTarget, ConnectPolicy, non_public};
use crate::probe::plan::Plan;
use crate::probe::trace::AttemptTrace;
use std::net::SocketAddr;
use std::time::Duration;
use url::{Host, Url};

/// How long the early lookup may take; on timeout the probe runs and shows it.
const LOOKUP_LIMIT: Duration = Duration::from_secs(3);

/// Where a probe may go, as far as the API checks before starting it.
#[derive(Clone, Debug)]
pub struct TargetGuard {
    /// The connect policy, with its port list (the engine enforces the same one).
    pub policy: ConnectPolicy,
}

impl TargetGuard {
    /// `Ok` when `plan` may run, else the reason it is refused, e.g.
    /// "internal.example resolves to a non-public address, which this server
    /// does not probe". A name's addresses are never named in the reason
    /// (they are logged); an address literal's range is.
    ///
    /// # Errors
    /// The reason, as a sentence.
    /// Names are looked up through the plan's DNS server (which must itself
    /// pass the policy) or else `lookups` (the server's own, trusted).
    pub async fn check(&self, plan: &Plan, lookups: &NameResolver) -> Result<(), String> {
        if let Some(dns) = plan.dns_server {
            self.policy
                .check(dns)
                .map_err(|reason| format!("dns_server {dns} is not allowed: {reason}"))?;
        }
        let port = plan.url.port_or_known_default().unwrap_or(80);
        self.policy.check_port(port)?;
        let Some(host) = plan.url.host() else {
            return Err("the URL has no host".to_owned());
        };
        // `--allow-private` lets everything through, this machine's names included.
        if self.policy.allows_private() {
            return Ok(());
        }
        if let Host::Domain(name) = host {
            let bare = name.trim_end_matches('.').to_ascii_lowercase();
            if bare == "localhost" || bare.ends_with(".localhost") {
                return Err(format!(
                    "{name} always names this machine (a loopback address)"
                ));
            }
        }
        let pins = plan.options.resolve.clone();
        let resolver = match plan.dns_server {
            Some(dns) => NameResolver::new(Some(dns), pins),
            None => lookups.with_pins(pins),
        };
        let mut trace = AttemptTrace::start();
        let addrs = match resolver
            .resolve(&host, port, LOOKUP_LIMIT, &mut trace)
            .await
        {
            Ok((_, addrs)) => addrs,
            // The probe will meet (and record) the same failure.
            Err(_) => return Ok(()),
        };
        for addr in addrs {
            if let Err(reason) = self.policy.check(addr) {
                let Host::Domain(name) = host else {
                    return Err(reason);
                };
                // The answer never names the address, or anyone could map
                // this server's internal DNS; the operator's log does.
                eprintln!("h123 serve: refused a probe of {name}: {reason}");
                let what = if non_public(addr.ip()).is_some() {
                    "a non-public address"
                } else {
                    "an address that is not on this server's list of allowed targets"
                };
                return Err(format!(
                    "{name} resolves to {what}, which this server does not probe"
                ));
            }
        }
        Ok(())
    }
}

/// `Ok` when `url`'s host has an address on this server's bench `targets`,
/// else why not, in the words of someone filling in the bench form: which
/// targets there are, or which port a listed host is benched on. Names are
/// looked up through `dns`; a lookup that fails is let through, as the bench
/// will meet (and record) the same failure.
///
/// # Errors
/// The reason, as a sentence.
pub async fn check_bench(
    targets: &[AllowedTarget],
    url: &Url,
    dns: Option<SocketAddr>,
) -> Result<(), String> {
    let port = url.port_or_known_default().unwrap_or(80);
    let Some(host) = url.host() else {
        return Err("the URL has no host".to_owned());
    };
    let mut trace = AttemptTrace::start();
    let addrs = match NameResolver::new(dns, Vec::new())
        .resolve(&host, port, LOOKUP_LIMIT, &mut trace)
        .await
    {
        Ok((_, addrs)) => addrs,
        Err(_) => return Ok(()),
    };
    let policy = ConnectPolicy::only(targets.to_vec());
    if addrs.iter().any(|&addr| policy.check(addr).is_ok()) {
        return Ok(());
    }
    // A listed host asked on another port: name the ports it is benched on.
    let ports: Vec<String> = targets
        .iter()
        .filter(|t| addrs.iter().any(|a| a.ip() == t.ip))
        .filter_map(|t| t.port.map(|p| p.to_string()))
        .collect();
    let shown = addrs
        .iter()
        .map(SocketAddr::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let host_name = match &host {
        Host::Domain(name) => {
            // As for probes: the log names the addresses, the answer does not.
            eprintln!("h123 serve: refused a bench of {name}: it resolves to {shown}");
            (*name).to_owned()
        }
        _ => shown,
    };
    if !ports.is_empty() {
        return Err(format!(
            "{host_name} is a bench target of this server on port {} only, not on port {port}",
            ports.join(" or ")
        ));
    }
    Err(format!(
        "{host_name} is not one of this server's bench targets ({})",
        listed(targets)
    ))
}

/// The bench targets as a reader sees them: `127.0.0.1:8443, 10.0.0.7` (at most four, then how
/// many more).
pub fn listed(targets: &[AllowedTarget]) -> String {
    let mut shown: Vec<String> = targets.iter().take(4).map(ToString::to_string).collect();
    if targets.len() > 4 {
        shown.push(format!("and {} more", targets.len() - 4));
    }
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::plan::Limits;
    use h123_shared::ProbeOptions;

    /// Lookups as a server with no `--dns-server` makes them.
    fn system() -> NameResolver {
        NameResolver::new(None, Vec::new())
    }

    async fn verdict(url: &str) -> Result<(), String> {
        let guard = TargetGuard {
            policy: ConnectPolicy::public_only(Vec::new()),
        };
        let options = ProbeOptions {
            url: url.into(),
            ..ProbeOptions::default()
        };
        let plan = Plan::new(options, &Limits::default()).unwrap();
        guard.check(&plan, &system()).await
    }

    #[tokio::test]
    async fn literals_in_every_spelling_are_refused() {
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://0x7f000001/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::]/",
            "http://0.0.0.0/",
            "http://localhost./",
            "http://a.b.localhost/",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let reason = verdict(url).await.unwrap_err();
            assert!(
                reason.contains("loopback")
                    || reason.contains("unspecified")
                    || reason.contains("link-local"),
                "{url}: {reason}"
            );
        }
        assert_eq!(
            verdict("http://10.0.0.5/").await.unwrap_err(),
            "10.0.0.5 is a private-use address (10.0.0.0/8, RFC 1918)"
        );
    }

    #[tokio::test]
    async fn allow_private_lets_everything_through_localhost_included() {
        let guard = TargetGuard {
            policy: ConnectPolicy::allow_all(),
        };
        for url in [
            "https://localhost:8443/",
            "http://app.localhost/",
            "http://127.0.0.1/",
            "http://10.0.0.5/",
            "http://[::1]:8080/",
        ] {
            let options = ProbeOptions {
                url: url.into(),
                ..ProbeOptions::default()
            };
            let plan = Plan::new(options, &Limits::default()).unwrap();
            assert_eq!(guard.check(&plan, &system()).await, Ok(()), "{url}");
        }
    }

    #[tokio::test]
    async fn benches_need_an_address_on_their_own_list() {
        let targets: Vec<AllowedTarget> = vec!["127.0.0.1:8443".parse().unwrap()];
        let check = |url: &str| {
            let url = Url::parse(url).unwrap();
            let targets = targets.clone();
            async move { check_bench(&targets, &url, None).await }
        };
        assert_eq!(check("https://127.0.0.1:8443/x").await, Ok(()));
        assert_eq!(
            check("https://127.0.0.1:9443/").await.unwrap_err(),
            "127.0.0.1:9443 is a bench target of this server on port 8443 only, not on port 9443"
        );
        assert_eq!(
            check("http://[::1]:8443/").await.unwrap_err(),
            "[::1]:8443 is not one of this server's bench targets (127.0.0.1:8443)"
        );
        assert!(
            check("https://93.184.215.14/").await.is_err(),
            "public or not"
        );
    }

    #[test]
    fn targets_are_listed_four_at_most() {
        let targets: Vec<AllowedTarget> = [
            "10.0.0.1",
            "10.0.0.2:443",
            "10.0.0.3",
            "10.0.0.4",
            "10.0.0.5",
            "[::1]:8443",
        ]
        .iter()
        .map(|t| t.parse().unwrap())
        .collect();
        assert_eq!(
            listed(&targets),
            "10.0.0.1, 10.0.0.2:443, 10.0.0.3, 10.0.0.4, and 2 more"
        );
        assert_eq!(listed(&targets[5..]), "[::1]:8443");
    }

    #[tokio::test]
    async fn pins_and_dns_servers_are_checked_too() {
        let guard = TargetGuard {
            policy: ConnectPolicy::public_only(Vec::new()).with_ports(vec![443]),
        };
        let mut options = ProbeOptions {
            url: "https://example.com/".into(),
            ..ProbeOptions::default()
        };
        options.resolve = vec![h123_shared::ResolveOverride {
            host: "example.com".into(),
            port: 443,
            addr: "192.168.1.1".into(),
        }];
        let plan = Plan::new(options.clone(), &Limits::default()).unwrap();
        let reason = guard.check(&plan, &system()).await.unwrap_err();
        assert_eq!(
            reason,
            "example.com resolves to a non-public address, which this server does not probe"
        );
        options.resolve.clear();
        options.dns_server = Some("10.1.1.1:53".into());
        let plan = Plan::new(options.clone(), &Limits::default()).unwrap();
        assert!(
            guard
                .check(&plan, &system())
                .await
                .unwrap_err()
                .starts_with("dns_server")
        );
        options.dns_server = None;
        options.url = "https://example.com:8443/".into();
        let plan = Plan::new(options, &Limits::default()).unwrap();
        assert!(
            guard
                .check(&plan, &system())
                .await
                .unwrap_err()
                .contains("port 8443")
        );
    }
}
