//! Monitor runs per target site: however many monitors (made by however many clients) name
//! one site, this instance starts at most `--max-monitor-runs-per-host-minute` of their runs
//! at it a minute (a token bucket per site, that many at once and that many a minute), so
//! monitors cannot multiply requests at a third party the way the byte quota alone allowed.
//! A slot over the cap passes unrun and is recorded as missed, saying why (`server::schedule`).
//!
//! A site is what one party answers for: a name's registrable domain (its public suffix and
//! one label more, from the public suffix list compiled into `psl`), so `a1.example.com`,
//! `a2.example.com` and a whole wildcard share one cap; an IPv4 address; an IPv6 /64. The
//! address a name resolves to is not counted: it is known only inside the run, after its
//! checks, and the names an attacker can point at one address are as many registrable
//! domains as they hold, each bought or claimed under a listed suffix, where a wildcard's
//! subdomains were free.

use super::buckets::Buckets;
use super::client::ClientKey;
use std::net::IpAddr;

/// The runs a minute one site gets by default (`--max-monitor-runs-per-host-minute`): one a
/// second, a whole owner's monitors every minute three times over.
pub const DEFAULT_PER_MINUTE: u64 = 60;

/// The per-site buckets of monitor runs.
#[derive(Debug)]
pub struct HostRuns {
    per_minute: u64,
    buckets: Buckets<String>,
}

impl HostRuns {
    /// `per_minute` runs a minute at each site (at least one), as many at once.
    pub fn new(per_minute: u64) -> Self {
        let per_minute = per_minute.max(1);
        HostRuns {
            per_minute,
            buckets: Buckets::new(per_minute as f64, per_minute as f64 / 60.0),
        }
    }

    /// The runs a minute each site gets.
    pub fn per_minute(&self) -> u64 {
        self.per_minute
    }

    /// Takes a run at `site` (see [`site_of`]); `false` when its runs are spent for now.
    pub fn take(&self, site: &str) -> bool {
        self.buckets
            .take(site.to_owned(), 1.0, crate::probe::trace::now())
            .1
    }

    /// Gives back a run taken at `site` that did not start (no room, no bytes).
    pub fn give_back(&self, site: &str) {
        self.buckets.give_back(site.to_owned(), 1.0);
    }
}

/// The site a monitor of `url` runs against, as the cap counts it, whatever the port: a
/// name's registrable domain in lower case without a final dot (`A1.Example.COM.` and
/// `a2.example.com` are `example.com`; a name that is itself a public suffix, or one label,
/// counts whole), an IPv4 address (an IPv4-mapped IPv6 one as such), or an IPv6 address's
/// /64 (`2001:db8::/64`). A URL that does not parse (monitors' URLs are checked when made)
/// counts as itself.
pub fn site_of(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return url.to_owned();
    };
    match parsed.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            match psl::domain_str(&name) {
                Some(domain) => domain.to_owned(),
                None => name,
            }
        }
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ClientKey::new(IpAddr::V6(ip), 64).to_string(),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_gets_its_runs_then_none_whatever_the_spelling_and_others_keep_theirs() {
        let runs = HostRuns::new(3);
        let site = site_of("https://Victim.EXAMPLE./a?x=1");
        assert_eq!(site, "victim.example");
        assert_eq!(site_of("http://victim.example:8080/b"), site);
        for _ in 0..3 {
            assert!(runs.take(&site));
        }
        assert!(!runs.take(&site), "the fourth run this minute");
        assert!(runs.take(&site_of("https://other.example/")));
        runs.give_back(&site);
        assert!(runs.take(&site), "a run given back is taken again");
        assert!(!runs.take(&site));
    }

    #[test]
    fn a_wildcards_subdomains_are_one_site() {
        let runs = HostRuns::new(2);
        let sites: Vec<String> = ["a1", "a2", "x.a3", "A4"]
            .iter()
            .map(|label| site_of(&format!("https://{label}.victim.com/")))
            .collect();
        assert!(sites.iter().all(|site| site == "victim.com"), "{sites:?}");
        assert!(runs.take(&sites[0]) && runs.take(&sites[1]));
        assert!(
            !runs.take(&sites[2]),
            "a third subdomain finds the cap spent"
        );
        assert_eq!(site_of("https://victim.com/"), "victim.com");
    }

    #[test]
    fn a_site_is_a_registrable_domain_under_the_public_suffix_list() {
        // Multi-label public suffixes, ICANN's and private ones (each user's own site).
        assert_eq!(site_of("https://www.shop.example.co.uk/"), "example.co.uk");
        assert_eq!(site_of("https://a.b.alice.github.io/"), "alice.github.io");
        assert_ne!(
            site_of("https://alice.github.io/"),
            site_of("https://bob.github.io/")
        );
        // A suffix itself, one label, and a name under no listed suffix.
        assert_eq!(site_of("https://github.io/"), "github.io");
        assert_eq!(site_of("http://intranet:8080/"), "intranet");
        assert_eq!(site_of("https://m1.cap.h123.test/"), "h123.test");
        // An internationalised name, as URLs spell it (punycode).
        assert_eq!(
            site_of("https://a.xn--bcher-kva.example/"),
            "xn--bcher-kva.example"
        );
    }

    #[test]
    fn addresses_are_sites_ipv6_by_its_64() {
        assert_eq!(site_of("http://192.0.2.7:8080/"), "192.0.2.7");
        assert_ne!(site_of("http://192.0.2.7/"), site_of("http://192.0.2.8/"));
        assert_eq!(site_of("https://[2001:db8::1]:443/"), "2001:db8::/64");
        assert_eq!(
            site_of("https://[2001:db8::ffff:1]/"),
            site_of("https://[2001:db8::2]/")
        );
        assert_ne!(
            site_of("https://[2001:db8:0:1::1]/"),
            site_of("https://[2001:db8::1]/")
        );
        assert_eq!(site_of("http://[::ffff:192.0.2.7]/"), "192.0.2.7");
        assert_eq!(site_of("not a url"), "not a url");
    }

    #[test]
    fn no_cap_is_below_one_run_a_minute() {
        let runs = HostRuns::new(0);
        assert_eq!(runs.per_minute(), 1);
        assert!(runs.take("a.example"));
        assert!(!runs.take("a.example"));
    }
}
