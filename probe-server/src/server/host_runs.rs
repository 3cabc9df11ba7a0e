//! Monitor runs per target site: however many monitors (made by however many clients) name
//! one site, this instance starts at most `--max-monitor-runs-per-host-minute` of their runs
//! at it a minute (a token bucket per site, that many at once and that many a minute), so
//! monitors cannot multiply requests at a third party the way the byte quota alone allowed.
//! A slot over the cap passes unrun and is recorded as missed, saying why (`server::schedule`).
//!
//! A site is what one party answers for: a name's registrable domain (its public suffix and
//! one label more, from the public suffix list compiled into `psl`), so `a1.example.com`,
//! `a2.example.com` and a whole wildcard share one cap; an IPv4 address; an IPv6 /64. A run
//! takes from its URL's site before it starts, and from the site of every address it dials
//! (its IPv4 address or IPv6 /64), once a run, right before the first dial, when the engine's
//! safety check has let the address through ([`RunSites`], the run's `DialGate`): many names,
//! however registered, pointed at one address share that address's cap. A run that finds an
//! address's runs spent dials nothing there, and its slot is missed, saying so, as at its name.

use super::buckets::Buckets;
use super::client::ClientKey;
use crate::probe::guard::DialGate;
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

/// The runs a minute one site gets by default (`--max-monitor-runs-per-host-minute`): one a
/// second, a whole owner's monitors every minute three times over.
pub const DEFAULT_PER_MINUTE: u64 = 60;

/// The per-site buckets of monitor runs (a clone shares them).
#[derive(Clone, Debug)]
pub struct HostRuns {
    per_minute: u64,
    buckets: Arc<Buckets<String>>,
}

impl HostRuns {
    /// `per_minute` runs a minute at each site (at least one), as many at once.
    pub fn new(per_minute: u64) -> Self {
        let per_minute = per_minute.max(1);
        HostRuns {
            per_minute,
            buckets: Arc::new(Buckets::new(per_minute as f64, per_minute as f64 / 60.0)),
        }
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

    /// Why a slot found the runs at `site` spent, as its missed point says.
    pub fn spent(&self, site: &str) -> String {
        format!(
            "the monitors' runs at {site} are spent: at most {} a minute at one site",
            self.per_minute
        )
    }
}

/// One monitor run's sites, as its probe's [`DialGate`]: each address it is about to dial
/// takes a run from its site's bucket ([`address_site`]) the first time that site comes up
/// in the run (its URL's own site, taken before the run, not again). Once a site's runs are
/// found spent, the run takes no more: every address of a site it holds no run at is refused.
#[derive(Debug)]
pub struct RunSites {
    runs: HostRuns,
    sites: Mutex<Sites>,
}

#[derive(Debug)]
struct Sites {
    /// The sites this run holds a run at.
    taken: HashSet<String>,
    /// The first site found spent.
    spent: Option<String>,
}

impl RunSites {
    /// The gate of a run that took its run at `site` (its URL's) already.
    pub fn new(runs: HostRuns, site: String) -> Arc<Self> {
        Arc::new(RunSites {
            runs,
            sites: Mutex::new(Sites {
                taken: HashSet::from([site]),
                spent: None,
            }),
        })
    }

    /// The first site whose runs the run found spent, if any.
    pub fn spent_site(&self) -> Option<String> {
        self.sites
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .spent
            .clone()
    }
}

impl DialGate for RunSites {
    fn admit(&self, addr: SocketAddr) -> Result<(), String> {
        let site = address_site(addr.ip());
        let mut sites = self.sites.lock().unwrap_or_else(|e| e.into_inner());
        if sites.taken.contains(&site) {
            return Ok(());
        }
        if sites.spent.is_none() && self.runs.take(&site) {
            sites.taken.insert(site);
            return Ok(());
        }
        Err(self.runs.spent(sites.spent.get_or_insert(site)))
    }
}

/// The site an address counts as: an IPv4 address (an IPv4-mapped IPv6 one as such), or an
/// IPv6 address's /64.
pub fn address_site(ip: IpAddr) -> String {
    ClientKey::new(ip, 64).to_string()
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
        Some(url::Host::Ipv4(ip)) => address_site(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => address_site(IpAddr::V6(ip)),
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
    fn a_run_takes_once_at_each_address_site_it_dials_and_none_after_one_is_spent() {
        let runs = HostRuns::new(2);
        let addr = |text: &str| text.parse::<SocketAddr>().unwrap();
        // Another name's run at 192.0.2.7 and another at the /64 of 2001:db8::1.
        assert!(runs.take("192.0.2.7") && runs.take("2001:db8::/64"));
        let run = RunSites::new(runs.clone(), site_of("https://one.example/"));
        assert_eq!(run.admit(addr("192.0.2.7:443")), Ok(()));
        assert_eq!(
            run.admit(addr("[::ffff:192.0.2.7]:80")),
            Ok(()),
            "taken once a run"
        );
        assert_eq!(run.admit(addr("[2001:db8::2]:443")), Ok(()));
        assert_eq!(run.spent_site(), None);
        // A second name's run finds both addresses' runs spent.
        let other = RunSites::new(runs.clone(), site_of("https://two.example/"));
        let spent = "the monitors' runs at 192.0.2.7 are spent: at most 2 a minute at one site";
        assert_eq!(other.admit(addr("192.0.2.7:443")), Err(spent.to_owned()));
        assert_eq!(other.spent_site().as_deref(), Some("192.0.2.7"));
        // Nor does it take at an address whose runs are left, once one was spent.
        assert_eq!(other.admit(addr("192.0.2.9:443")), Err(spent.to_owned()));
        assert!(runs.take("192.0.2.9") && runs.take("192.0.2.9"));
        // A URL's own address is its site, taken before the run: not again.
        let literal = RunSites::new(runs.clone(), site_of("http://192.0.2.10/"));
        assert!(
            runs.take("192.0.2.10") && runs.take("192.0.2.10"),
            "its run and another's"
        );
        assert_eq!(literal.admit(addr("192.0.2.10:80")), Ok(()));
    }

    #[test]
    fn no_cap_is_below_one_run_a_minute() {
        let runs = HostRuns::new(0);
        assert!(runs.spent("a.example").contains("at most 1 a minute"));
        assert!(runs.take("a.example"));
        assert!(!runs.take("a.example"));
    }
}
