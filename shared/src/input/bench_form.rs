//! The load comparison form's fields, checked as they are typed: the options they describe or
//! the first thing wrong with them, and the note under the URL (the server checks again).

use crate::Protocol;
use crate::api::BenchBounds;
use crate::bench::BenchOptions;
use crate::input::check_url;
use crate::network::NetworkProfile;
use crate::sweep::Sweep;

/// What the load comparison form's fields hold, as typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchFields {
    /// The target URL.
    pub url: String,
    /// The protocols ticked, in protocol order.
    pub protocols: Vec<Protocol>,
    /// Requests in flight at once (already clamped to the server's bound).
    pub concurrency: u32,
    /// Seconds per protocol (already clamped to the server's bound).
    pub duration_s: u64,
    /// Connections, empty for "auto".
    pub connections: String,
    /// A fixed arrival rate per second, empty for "as fast as answers come".
    pub rate: String,
    /// A new connection per request.
    pub cold: bool,
    /// Network conditions' text, empty for none.
    pub network: String,
    /// The sweep's text, empty for one bench.
    pub sweep: String,
}

/// Parses an optional whole number within `1..=max`; empty means "not set".
fn optional(text: &str, name: &str, max: u64) -> Result<Option<u64>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "{name} must be a whole number from 1 to {max}, or empty."
        )),
    }
}

/// Text with something in it, trimmed.
fn given(text: &str) -> Option<&str> {
    Some(text.trim()).filter(|t| !t.is_empty())
}

impl BenchFields {
    /// The options the fields describe, or the first thing wrong with them.
    ///
    /// # Errors
    /// A sentence naming the field and what it must be.
    pub fn options(&self, bounds: &BenchBounds) -> Result<BenchOptions, String> {
        let url = check_url(&self.url)?;
        if self.protocols.is_empty() {
            return Err("Pick at least one protocol.".into());
        }
        let connections = self.connections_problem(bounds)?;
        let rate = self.rate_problem(bounds)?;
        let network = given(&self.network)
            .map(NetworkProfile::parse)
            .transpose()
            .map_err(|e| format!("Network: {e}."))?;
        let sweep = given(&self.sweep)
            .map(Sweep::parse)
            .transpose()
            .map_err(|e| format!("Sweep: {e}."))?;
        let seconds = self.duration_s * runs(self.protocols.len(), sweep.as_ref());
        if seconds * 1000 > bounds.max_total_ms {
            return Err(format!(
                "This would run for {seconds} s; this server allows {} s in all: fewer steps or seconds.",
                bounds.max_total_ms / 1000
            ));
        }
        Ok(BenchOptions {
            network,
            sweep,
            url,
            protocols: self.protocols.clone(),
            concurrency: self.concurrency,
            duration_ms: Some(self.duration_s * 1000),
            connections: connections.and_then(|c| u32::try_from(c).ok()),
            rate: rate.and_then(|r| u32::try_from(r).ok()),
            cold: self.cold,
            ..BenchOptions::default()
        })
    }

    /// The connections asked for (within the server's bound and the requests in flight).
    fn connections_problem(&self, bounds: &BenchBounds) -> Result<Option<u64>, String> {
        let most = bounds.max_connections.min(self.concurrency);
        optional(&self.connections, "Connections", u64::from(most))
    }

    /// The rate asked for (within the server's bound).
    fn rate_problem(&self, bounds: &BenchBounds) -> Result<Option<u64>, String> {
        optional(&self.rate, "Rate", u64::from(bounds.max_rate))
    }

    /// Whether the connections field is refused.
    pub fn connections_refused(&self, bounds: &BenchBounds) -> bool {
        self.connections_problem(bounds).is_err()
    }

    /// Whether the rate field is refused.
    pub fn rate_refused(&self, bounds: &BenchBounds) -> bool {
        self.rate_problem(bounds).is_err()
    }

    /// The note under the URL and whether it is an error: the options' problem once `show`
    /// (the URL typed in and left, or a submit), else the connections' or the rate's problem,
    /// else the URL's rule; "Ready" with the time in all when the options hold.
    pub fn note(&self, bounds: &BenchBounds, show: bool) -> (String, bool) {
        match self.options(bounds) {
            Ok(o) => (
                format!(
                    "Ready: about {} s in all.",
                    self.duration_s * runs(o.protocols.len(), o.sweep.as_ref())
                ),
                false,
            ),
            Err(reason) if show => (reason, true),
            Err(_) => match self
                .connections_problem(bounds)
                .err()
                .or_else(|| self.rate_problem(bounds).err())
            {
                Some(problem) => (problem, true),
                None => ("http or https; HTTP/3 needs https.".into(), false),
            },
        }
    }
}

/// Runs of a bench: one per protocol at each sweep step.
fn runs(protocols: usize, sweep: Option<&Sweep>) -> u64 {
    protocols as u64 * sweep.map_or(1, |s| s.steps.len() as u64)
}

/// Why the typed sweep is refused, if it is (empty: one bench, no problem).
pub fn sweep_problem(text: &str) -> Option<String> {
    given(text).and_then(|t| Sweep::parse(t).err())
}

/// Why the typed network figures are refused, if they are (empty: none, no problem).
pub fn network_problem(text: &str) -> Option<String> {
    given(text).and_then(|t| NetworkProfile::parse(t).err())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds() -> BenchBounds {
        BenchBounds {
            max_concurrency: 64,
            max_connections: 16,
            max_duration_ms: 30_000,
            max_requests: 100_000,
            max_rate: 1000,
            max_warmup_ms: 5_000,
            max_total_ms: 60_000,
            network: true,
        }
    }

    fn fields() -> BenchFields {
        BenchFields {
            url: "https://example.com/".into(),
            protocols: Protocol::ALL.to_vec(),
            concurrency: 4,
            duration_s: 10,
            ..BenchFields::default()
        }
    }

    #[test]
    fn good_fields_make_options_and_say_how_long() {
        let f = BenchFields {
            connections: "2".into(),
            rate: " 50 ".into(),
            cold: true,
            ..fields()
        };
        let o = f.options(&bounds()).unwrap();
        assert_eq!(o.url, "https://example.com/");
        assert_eq!(
            (o.concurrency, o.duration_ms, o.connections, o.rate, o.cold),
            (4, Some(10_000), Some(2), Some(50), true)
        );
        assert_eq!(
            f.note(&bounds(), false),
            ("Ready: about 30 s in all.".into(), false)
        );
        let swept = BenchFields {
            sweep: "rtt=0,40ms".into(),
            duration_s: 1,
            ..fields()
        };
        assert_eq!(swept.note(&bounds(), true).0, "Ready: about 6 s in all.");
    }

    #[test]
    fn bounds_and_fields_are_checked() {
        let b = bounds();
        let many = BenchFields {
            connections: "5".into(),
            ..fields()
        };
        assert!(
            many.connections_refused(&b),
            "more connections than in flight"
        );
        assert_eq!(
            many.note(&b, false),
            (
                "Connections must be a whole number from 1 to 4, or empty.".into(),
                true
            )
        );
        let fast = BenchFields {
            rate: "1001".into(),
            url: String::new(),
            ..fields()
        };
        assert!(fast.rate_refused(&b));
        assert!(fast.note(&b, true).0.starts_with("Enter the URL"));
        let long = BenchFields {
            sweep: "rtt=0,25,50,100,200ms".into(),
            ..fields()
        };
        assert_eq!(
            long.options(&b).unwrap_err(),
            "This would run for 150 s; this server allows 60 s in all: fewer steps or seconds."
        );
        let none = BenchFields {
            protocols: Vec::new(),
            ..fields()
        };
        assert_eq!(none.options(&b).unwrap_err(), "Pick at least one protocol.");
        let quiet = BenchFields {
            url: String::new(),
            ..fields()
        };
        assert_eq!(
            quiet.note(&b, false),
            ("http or https; HTTP/3 needs https.".into(), false)
        );
        assert!(sweep_problem("rtt=40,0ms").unwrap().contains("must grow"));
        assert_eq!(sweep_problem("  "), None);
        assert!(network_problem("rtt=fast").is_some());
        assert_eq!(network_problem("rtt=60ms"), None);
    }
}
