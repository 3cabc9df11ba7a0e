//! Load comparison (`h123 bench`): what was asked, what each protocol
//! achieved, and the pure logic on it (rates, ratios, caveats).
//!
//! Latency is measured per request from its send (or, at a fixed `rate`, from
//! its *intended* send time, so a stalled server cannot hide its backlog:
//! no coordinated omission) to the last body byte. Time to first byte ends
//! when the response headers arrive.

pub mod table;
pub mod words;

use crate::json::ReadJson;
use crate::schema::{Failure, Header, Method, Micros, Protocol, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a bench asks for; the same settings run for each protocol in turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct BenchOptions {
    /// The target URL (http or https; HTTP/3 needs https).
    pub url: String,
    /// Protocols to measure, in order.
    pub protocols: Vec<Protocol>,
    /// Requests in flight at once.
    pub concurrency: u32,
    /// Connections to open; for HTTP/2 and HTTP/3 the in-flight requests are
    /// spread over them as streams. `None`: one per in-flight request for
    /// HTTP/1.1, one in all for HTTP/2 and HTTP/3. HTTP/1.1 always has one
    /// request in flight per connection.
    pub connections: Option<u32>,
    /// How long to measure, in milliseconds (after the warm-up).
    pub duration_ms: Option<u64>,
    /// How many requests to measure; the run ends when they are done.
    pub requests: Option<u64>,
    /// Fixed arrival rate in requests per second (open loop), instead of
    /// sending as fast as responses return.
    pub rate: Option<u32>,
    /// Requests during this first period are sent but not counted, in milliseconds.
    pub warmup_ms: u64,
    /// A new connection for every request, to show handshake cost.
    pub cold: bool,
    /// Request method.
    pub method: Method,
    /// Extra request headers.
    pub headers: Vec<Header>,
    /// Limit on one request, in milliseconds; a request over it is a timeout error.
    pub timeout_ms: u64,
    /// Whether certificate verification is off (like curl -k).
    pub insecure: bool,
    /// Network conditions every connection goes through, as a probe's
    /// ([`crate::ProbeOptions::network`]); none: the real path alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::network::NetworkProfile>,
    /// Run the whole bench at each step of one network figure, on top of
    /// `network` (a decay curve); none: one bench.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<crate::sweep::Sweep>,
    /// Who may find the bench in a server's list (the permalink opens it either way), as a
    /// probe's [`crate::ProbeOptions::visibility`].
    pub visibility: crate::Visibility,
    /// Credential-looking headers or query parameters to keep in the record, as a probe's
    /// [`crate::ProbeOptions::keep_secret`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keep_secret: Vec<String>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            url: String::new(),
            protocols: Protocol::ALL.to_vec(),
            concurrency: 16,
            connections: None,
            duration_ms: None,
            requests: None,
            rate: None,
            warmup_ms: 0,
            cold: false,
            method: Method::Get,
            headers: Vec::new(),
            timeout_ms: 10_000,
            insecure: false,
            network: None,
            sweep: None,
            visibility: crate::Visibility::Unlisted,
            keep_secret: Vec::new(),
        }
    }
}

/// A finished bench: options and one run per protocol.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchResult {
    /// Version of this schema (shared with probe results).
    pub schema_version: u32,
    /// When the bench started, in Unix milliseconds.
    pub started_at_unix_ms: u64,
    /// What was asked.
    pub options: BenchOptions,
    /// One entry per protocol, in the order asked.
    pub runs: Vec<BenchRun>,
    /// The addresses the target's name resolved to (the ones dialled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
}

impl BenchResult {
    /// An empty result for `options`, started at `started_at_unix_ms`.
    pub fn new(options: BenchOptions, started_at_unix_ms: u64) -> Self {
        BenchResult {
            schema_version: SCHEMA_VERSION,
            started_at_unix_ms,
            options,
            runs: Vec::new(),
            addresses: Vec::new(),
        }
    }
}

/// How far a running bench has come, for progress bars and live pages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchProgress {
    /// The protocol running now; `None` before the first and after the last.
    pub protocol: Option<Protocol>,
    /// Protocols finished so far.
    pub protocols_done: u32,
    /// Whether the current protocol is still in its warm-up.
    pub warming_up: bool,
    /// Requests counted so far for the current protocol.
    pub requests: u64,
    /// Errors among them.
    pub errors: u64,
    /// Time spent measuring the current protocol, in milliseconds.
    pub elapsed_ms: u64,
}

/// What one protocol achieved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchRun {
    /// The protocol.
    pub protocol: Protocol,
    /// Why the run could not start (no connection could be opened), if so.
    pub failure: Option<Failure>,
    /// Length of the measured window (warm-up excluded).
    pub elapsed_us: Micros,
    /// Requests counted: `successes + errors`.
    pub requests: u64,
    /// Responses with a 1xx, 2xx or 3xx status.
    pub successes: u64,
    /// Requests that failed or got a 4xx/5xx status.
    pub errors: u64,
    /// Errors by kind: a failure kind (`timeout`, `reset`, ...) or `status 500`.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Responses by status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Response body bytes received.
    pub body_bytes: u64,
    /// Connections opened (warm-up included).
    pub connections_opened: u64,
    /// Requests started per second in the measured window (with `rate`,
    /// compare it with the rate asked for).
    pub send_rate: f64,
    /// Latency of completed requests, send (or intended send) to last byte.
    pub latency: LatencySummary,
    /// Time to first byte (response headers) of completed requests.
    pub ttfb: LatencySummary,
    /// The latency distribution as percentile points, for the percentile chart.
    pub latency_percentiles: Vec<PercentilePoint>,
    /// The latency distribution as counts in log-spaced buckets.
    pub latency_histogram: Vec<HistogramBucket>,
    /// With [`BenchOptions::network`]: how this protocol's packets went
    /// through the emulated network, and what the link did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<crate::network::EmulatedPath>,
}

/// Latency figures of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LatencySummary {
    /// Values summarised.
    pub count: u64,
    /// Fastest.
    pub min: Micros,
    /// Arithmetic mean.
    pub mean: Micros,
    /// Standard deviation.
    pub stdev: Micros,
    /// Median.
    pub p50: Micros,
    /// 90th percentile.
    pub p90: Micros,
    /// 99th percentile.
    pub p99: Micros,
    /// 99.9th percentile.
    pub p999: Micros,
    /// Slowest.
    pub max: Micros,
}

/// "`percentile` percent of requests took at most `value`".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PercentilePoint {
    /// Percentile, 0 to 100.
    pub percentile: f64,
    /// Latency at that percentile.
    pub value: Micros,
}

/// Requests whose latency fell at or below `upper` (and above the previous bucket's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HistogramBucket {
    /// Upper bound of the bucket.
    pub upper: Micros,
    /// Requests in it.
    pub count: u64,
}

impl BenchRun {
    /// A run of `protocol` with nothing counted yet.
    pub fn new(protocol: Protocol) -> Self {
        BenchRun {
            protocol,
            failure: None,
            elapsed_us: Micros(0),
            requests: 0,
            successes: 0,
            errors: 0,
            errors_by_kind: BTreeMap::new(),
            statuses: BTreeMap::new(),
            body_bytes: 0,
            connections_opened: 0,
            send_rate: 0.0,
            latency: LatencySummary::default(),
            ttfb: LatencySummary::default(),
            latency_percentiles: Vec::new(),
            latency_histogram: Vec::new(),
            emulated: None,
        }
    }

    /// Completed requests per second over the measured window.
    pub fn requests_per_sec(&self) -> f64 {
        per_sec(self.requests, self.elapsed_us)
    }

    /// Body bytes per second over the measured window.
    pub fn bytes_per_sec(&self) -> f64 {
        per_sec(self.body_bytes, self.elapsed_us)
    }
}

fn per_sec(count: u64, elapsed: Micros) -> f64 {
    if elapsed.0 == 0 {
        0.0
    } else {
        count as f64 / elapsed.as_secs()
    }
}

/// One line of the comparison: a protocol's throughput against the best.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    /// The protocol.
    pub protocol: Protocol,
    /// Its requests per second.
    pub requests_per_sec: f64,
    /// Its requests per second divided by the highest of the bench (1.0 for the best).
    pub of_best: f64,
    /// Its median latency divided by the lowest median of the bench (1.0 for the best).
    pub p50_of_best: f64,
}

/// Throughput and median latency of each run that counted requests,
/// relative to the best of the bench.
pub fn ratios(result: &BenchResult) -> Vec<Ratio> {
    let runs: Vec<&BenchRun> = result.runs.iter().filter(|r| r.requests > 0).collect();
    let best_rate = runs
        .iter()
        .map(|r| r.requests_per_sec())
        .fold(0.0, f64::max);
    let best_p50 = runs
        .iter()
        .map(|r| r.latency.p50.0)
        .filter(|&p| p > 0)
        .min()
        .unwrap_or(0);
    runs.iter()
        .map(|r| Ratio {
            protocol: r.protocol,
            requests_per_sec: r.requests_per_sec(),
            of_best: if best_rate > 0.0 {
                r.requests_per_sec() / best_rate
            } else {
                0.0
            },
            p50_of_best: if best_p50 > 0 {
                r.latency.p50.0 as f64 / best_p50 as f64
            } else {
                0.0
            },
        })
        .collect()
}

/// The honest caveats a reader of this table should keep in mind, each one sentence.
pub fn caveats(result: &BenchResult) -> Vec<String> {
    let mut notes = Vec::new();
    // An emulated round trip or loss gives loopback the latency or loss it lacks.
    let clear = result
        .options
        .network
        .as_ref()
        .is_none_or(|n| n.rtt_ms == 0 && n.loss_basis_points == 0);
    if clear
        && (is_loopback(&result.options.url) || result.addresses.iter().any(|a| is_loopback_ip(a)))
    {
        notes.push(
            "Loopback has no latency or loss: handshake round trips cost almost nothing and \
             neither multiplexing nor QUIC's loss recovery can pay off, so this ranks the stacks' \
             CPU cost more than what users on real networks would see."
                .to_string(),
        );
    }
    if result.options.cold {
        notes.push(
            "Every request opened a new connection, so these figures are dominated by handshakes, \
             not by how each protocol carries requests."
                .to_string(),
        );
    } else {
        notes.push(
            "Connections were reused (opened before the clock started); a cold bench, a new \
             connection per request, pays for every handshake."
                .to_string(),
        );
    }
    let p50s: Vec<u64> = result
        .runs
        .iter()
        .filter(|r| r.requests > 0)
        .map(|r| r.ttfb.p50.0)
        .collect();
    if let (Some(&lo), Some(&hi)) = (p50s.iter().min(), p50s.iter().max())
        && p50s.len() > 1
        && lo >= 2_000
        && (hi - lo) * 10 < lo
    {
        notes.push(format!(
            "The server's own time dominates: median time to first byte is {} or more for every \
             protocol and differs by less than 10% between them.",
            crate::format::ms(Micros(lo))
        ));
    }
    let connections: Vec<(Protocol, u64)> = result
        .runs
        .iter()
        .filter(|r| r.requests > 0)
        .map(|r| (r.protocol, r.connections_opened))
        .collect();
    let fewest = connections.iter().map(|(_, n)| *n).min().unwrap_or(0);
    let most = connections.iter().map(|(_, n)| *n).max().unwrap_or(0);
    if !result.options.cold && fewest > 0 && most > fewest {
        let each: Vec<String> = connections
            .iter()
            .map(|(p, n)| format!("{} {n}", p.http_version()))
            .collect();
        notes.push(format!(
            "The protocols used different numbers of connections ({}): HTTP/1.1 needs one per \
             request in flight, while HTTP/2 and HTTP/3 multiplex; more connections can mean more \
             parallelism on the client and server, not a faster protocol.",
            each.join(", ")
        ));
    }
    if result.runs.iter().any(|r| r.errors > 0) {
        notes.push(
            "Some requests failed: errors are counted in the request rate, so compare successes too."
                .to_string(),
        );
    }
    notes
}

fn is_loopback_ip(address: &str) -> bool {
    address
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| match ip {
            std::net::IpAddr::V6(v6) => {
                v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
            v4 => v4.is_loopback(),
        })
}

fn is_loopback(url: &str) -> bool {
    crate::uri::parse(url).is_some_and(|parts| {
        let host = parts.host.to_ascii_lowercase();
        host == "localhost"
            || host.ends_with(".localhost")
            || host.starts_with("127.")
            || host == "::1"
    })
}

/// Adds `count` errors of `kind` to a tally.
pub fn count_error(errors: &mut BTreeMap<String, u64>, kind: &str, count: u64) {
    *errors.entry(kind.to_string()).or_default() += count;
}

/// The error kind of a response status, or `None` when it counts as success.
pub fn status_error(status: u16) -> Option<String> {
    (status >= 400).then(|| format!("status {status}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(protocol: Protocol, requests: u64, elapsed_ms: u64, p50_ms: u64) -> BenchRun {
        BenchRun {
            protocol,
            elapsed_us: Micros(elapsed_ms * 1000),
            requests,
            successes: requests,
            latency: LatencySummary {
                p50: Micros(p50_ms * 1000),
                ..LatencySummary::default()
            },
            ttfb: LatencySummary {
                p50: Micros(p50_ms * 1000),
                ..LatencySummary::default()
            },
            ..BenchRun::new(protocol)
        }
    }

    fn result(url: &str, runs: Vec<BenchRun>) -> BenchResult {
        let mut r = BenchResult::new(
            BenchOptions {
                url: url.into(),
                ..BenchOptions::default()
            },
            0,
        );
        r.runs = runs;
        r
    }

    #[test]
    fn rates_are_per_second_of_the_measured_window() {
        let r = run(Protocol::H1, 500, 250, 1);
        assert_eq!(r.requests_per_sec(), 2000.0);
        assert_eq!(BenchRun::new(Protocol::H2).requests_per_sec(), 0.0);
    }

    #[test]
    fn ratios_are_relative_to_the_best_run() {
        let r = result(
            "https://example.com/",
            vec![
                run(Protocol::H1, 1000, 1000, 2),
                run(Protocol::H2, 500, 1000, 4),
                run(Protocol::H3, 0, 1000, 0),
            ],
        );
        let ratios = ratios(&r);
        assert_eq!(ratios.len(), 2, "a run without requests has no ratio");
        assert_eq!(ratios[0].of_best, 1.0);
        assert_eq!(ratios[1].of_best, 0.5);
        assert_eq!(ratios[1].p50_of_best, 2.0);
    }

    #[test]
    fn caveats_name_loopback_and_server_dominated_latency() {
        let r = result(
            "https://127.0.0.1:8443/delay/10",
            vec![
                run(Protocol::H1, 100, 1000, 10),
                run(Protocol::H2, 100, 1000, 10),
            ],
        );
        let notes = caveats(&r).join("\n");
        assert!(notes.contains("Loopback"), "{notes}");
        assert!(notes.contains("server's own time dominates"), "{notes}");
        let public = caveats(&result(
            "https://example.com/",
            vec![run(Protocol::H1, 100, 1000, 1)],
        ));
        assert!(!public.join(" ").contains("Loopback"));

        // A name that resolves to loopback is loopback too.
        let mut named = result(
            "https://target.test/",
            vec![run(Protocol::H1, 100, 1000, 1)],
        );
        named.addresses = vec!["::ffff:127.0.0.1".into()];
        assert!(caveats(&named).join(" ").contains("Loopback"));
    }

    #[test]
    fn unequal_connection_counts_are_called_out() {
        let mut h1 = run(Protocol::H1, 100, 1000, 1);
        h1.connections_opened = 8;
        let mut h2 = run(Protocol::H2, 100, 1000, 1);
        h2.connections_opened = 1;
        let notes = caveats(&result("https://example.com/", vec![h1, h2])).join(" ");
        assert!(
            notes.contains("different numbers of connections (HTTP/1.1 8, HTTP/2 1)"),
            "{notes}"
        );
    }

    #[test]
    fn failure_kind_names_match_their_wire_form() {
        use crate::schema::FailureKind as K;
        for kind in [
            K::Timeout,
            K::NameNotFound,
            K::Dns,
            K::Refused,
            K::Reset,
            K::Certificate,
            K::Tls,
            K::Protocol,
            K::Blocked,
            K::Unsupported,
            K::Io,
        ] {
            let wire = serde_json::to_string(&kind).unwrap();
            assert_eq!(wire, format!("\"{}\"", kind.as_str()));
        }
    }

    #[test]
    fn only_4xx_and_5xx_statuses_are_errors() {
        assert_eq!(status_error(200), None);
        assert_eq!(status_error(304), None);
        assert_eq!(status_error(500).as_deref(), Some("status 500"));
        let mut tally = BTreeMap::new();
        count_error(&mut tally, "timeout", 2);
        count_error(&mut tally, "timeout", 1);
        assert_eq!(tally["timeout"], 3);
    }
}
