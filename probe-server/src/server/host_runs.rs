//! Monitor runs per target host: however many monitors (made by however many clients) name
//! one host, this instance starts at most `--max-monitor-runs-per-host-minute` of their runs
//! at it a minute (a token bucket per host, that many at once and that many a minute), so
//! monitors cannot multiply requests at a third party the way the byte quota alone allowed.
//! A slot over the cap passes unrun and is recorded as missed, saying why (`server::schedule`).

use super::buckets::Buckets;

/// The runs a minute one host gets by default (`--max-monitor-runs-per-host-minute`): one a
/// second, a whole owner's monitors every minute three times over.
pub const DEFAULT_PER_MINUTE: u64 = 60;

/// The per-host buckets of monitor runs.
#[derive(Debug)]
pub struct HostRuns {
    per_minute: u64,
    buckets: Buckets<String>,
}

impl HostRuns {
    /// `per_minute` runs a minute at each host (at least one), as many at once.
    pub fn new(per_minute: u64) -> Self {
        let per_minute = per_minute.max(1);
        HostRuns {
            per_minute,
            buckets: Buckets::new(per_minute as f64, per_minute as f64 / 60.0),
        }
    }

    /// The runs a minute each host gets.
    pub fn per_minute(&self) -> u64 {
        self.per_minute
    }

    /// Takes a run at `host` (see [`host_of`]); `false` when its runs are spent for now.
    pub fn take(&self, host: &str) -> bool {
        self.buckets
            .take(host.to_owned(), 1.0, crate::probe::trace::now())
            .1
    }

    /// Gives back a run taken at `host` that did not start (no room, no bytes).
    pub fn give_back(&self, host: &str) {
        self.buckets.give_back(host.to_owned(), 1.0);
    }
}

/// The host a monitor of `url` runs against, as the cap counts it: the URL's name in lower
/// case without a final dot (`Example.COM.` and `example.com` are one host), or its address.
/// A URL that does not parse (monitors' URLs are checked when made) counts as itself.
pub fn host_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => parsed
            .host_str()
            .map(|host| host.trim_end_matches('.').to_ascii_lowercase())
            .unwrap_or_else(|| url.to_owned()),
        Err(_) => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_gets_its_runs_then_none_whatever_the_spelling_and_others_keep_theirs() {
        let runs = HostRuns::new(3);
        let host = host_of("https://Victim.EXAMPLE./a?x=1");
        assert_eq!(host, "victim.example");
        assert_eq!(host_of("http://victim.example:8080/b"), host);
        for _ in 0..3 {
            assert!(runs.take(&host));
        }
        assert!(!runs.take(&host), "the fourth run this minute");
        assert!(runs.take(&host_of("https://other.example/")));
        runs.give_back(&host);
        assert!(runs.take(&host), "a run given back is taken again");
        assert!(!runs.take(&host));
        assert_eq!(host_of("https://[2001:db8::1]:443/"), "[2001:db8::1]");
    }

    #[test]
    fn no_cap_is_below_one_run_a_minute() {
        let runs = HostRuns::new(0);
        assert_eq!(runs.per_minute(), 1);
        assert!(runs.take("a.example"));
        assert!(!runs.take("a.example"));
    }
}
