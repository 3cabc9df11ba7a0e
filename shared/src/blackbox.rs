//! A probe result as Prometheus' blackbox_exporter would report a scrape of
//! it, plus what blackbox cannot say: every protocol in one scrape.
//!
//! The `probe_*` series keep blackbox's names, labels and units, so a
//! Prometheus configuration or Grafana dashboard made for blackbox works by
//! changing the address. One blackbox module is one protocol; here they
//! describe the module's *primary* protocol: the first of its protocols the
//! server offered (`compare` and `http_2xx`: HTTP/2, as blackbox's own
//! client negotiates, else HTTP/1.1), from its first chain (a new
//! connection, redirects followed, phases summed over them as blackbox
//! does). The `h123_*` series carry every protocol, by connection state.

use crate::analysis::analyzed;
use crate::chain::{Chain, ConnState, chains};
use crate::format::unix_seconds_of_rfc3339;
use crate::schema::{
    AddressFamily, Header, Method, Micros, Phase, ProbeResult, Protocol, ProtocolRun,
};
use crate::stats::percentile;
use std::fmt::Write;

/// A scrape module: which protocols a scrape measures, how it asks, and
/// what counts as success (blackbox's `http` prober fields where they mean
/// the same, plus the protocols and whether a whole probe is made).
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// The name a scrape asks for (`module=`).
    pub name: String,
    /// What the module is for, in a line.
    pub about: String,
    /// The protocols measured, the primary's candidates first.
    pub protocols: Vec<Protocol>,
    /// Whether the scrape makes a whole default probe (rounds of new and
    /// reused connections, enough for a verdict) rather than one request a protocol.
    pub full: bool,
    /// Statuses that count as success; none: any 2xx (blackbox's `valid_status_codes`).
    pub valid_status_codes: Vec<u16>,
    /// Protocols whose answer counts as success; none: any (`valid_http_versions`).
    pub valid_http_versions: Vec<Protocol>,
    /// A final answer over TLS fails the probe (`fail_if_ssl`).
    pub fail_if_ssl: bool,
    /// A final answer without TLS fails the probe (`fail_if_not_ssl`).
    pub fail_if_not_ssl: bool,
    /// The request's method.
    pub method: Method,
    /// Extra request headers.
    pub headers: Vec<Header>,
    /// The request body, as text.
    pub body: Option<String>,
    /// The address family resolved and dialled.
    pub family: AddressFamily,
    /// The module's own limit on a scrape, in ms (Prometheus' may be shorter).
    pub timeout_ms: Option<u64>,
    /// The hosts (`host` or `host:port`, lower case) its headers and body may go to; a scrape
    /// of any other target is refused. Empty for a module that sends neither.
    pub targets: Vec<String>,
}

impl Module {
    /// A module with blackbox's defaults: a GET, any 2xx, any version.
    pub fn new(name: &str, about: &str, protocols: &[Protocol], full: bool) -> Module {
        Module {
            name: name.to_owned(),
            about: about.to_owned(),
            protocols: protocols.to_vec(),
            full,
            valid_status_codes: Vec::new(),
            valid_http_versions: Vec::new(),
            fail_if_ssl: false,
            fail_if_not_ssl: false,
            method: Method::Get,
            headers: Vec::new(),
            body: None,
            family: AddressFamily::Any,
            timeout_ms: None,
            targets: Vec::new(),
        }
    }

    /// Whether a scrape of `host` on `port` may use this module: any target when it lists none,
    /// else one it lists by its host (any port) or its host and port. `host` is compared without
    /// case or a final dot, an IPv6 address in brackets.
    pub fn may_send_to(&self, host: &str, port: u16) -> bool {
        if self.targets.is_empty() {
            return true;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let with_port = format!("{host}:{port}");
        self.targets.iter().any(|t| *t == host || *t == with_port)
    }

    /// Whether `chain` is a success under this module: no failure, a valid
    /// status and version, and TLS as the module wants it.
    pub fn succeeded(&self, chain: &Chain) -> bool {
        let Some(status) = chain.status().filter(|_| chain.failure().is_none()) else {
            return false;
        };
        let status_ok = if self.valid_status_codes.is_empty() {
            (200..300).contains(&status)
        } else {
            self.valid_status_codes.contains(&status)
        };
        let version_ok = self.valid_http_versions.is_empty()
            || self.valid_http_versions.contains(&chain.protocol);
        let tls = chain.last().url.starts_with("https://");
        let tls_ok = if tls {
            !self.fail_if_ssl
        } else {
            !self.fail_if_not_ssl
        };
        status_ok && version_ok && tls_ok
    }
}

/// The modules every server has: `compare`, `http_2xx` (blackbox's default
/// name), `h1`, `h2` and `h3`.
pub fn built_in() -> Vec<Module> {
    vec![
        Module::new(
            "compare",
            "HTTP/1.1, HTTP/2 and HTTP/3 in the default rounds, with the verdict",
            &[Protocol::H2, Protocol::H1, Protocol::H3],
            true,
        ),
        Module::new(
            "http_2xx",
            "one request as blackbox_exporter's http_2xx makes it (HTTP/2 where offered, else HTTP/1.1)",
            &[Protocol::H2, Protocol::H1],
            false,
        ),
        Module::new("h1", "one HTTP/1.1 request", &[Protocol::H1], false),
        Module::new("h2", "one HTTP/2 request", &[Protocol::H2], false),
        Module::new(
            "h3",
            "one HTTP/3 request, discovered as a browser would",
            &[Protocol::H3],
            false,
        ),
    ]
}

/// The exposition text of `result` measured for `module`, the whole scrape
/// having taken `took`.
pub fn exposition(result: &ProbeResult, module: &Module, took: Micros) -> String {
    let result = analyzed(result.clone());
    let mut out = Exposition::default();
    let primary = primary(&result, module);
    let first = primary.and_then(|run| chains(run).into_iter().next());
    blackbox_series(&mut out, first.as_ref(), module, took);
    h123_series(&mut out, &result, module);
    out.text
}

/// The run the `probe_*` series describe: the first of the module's
/// protocols that the server did not turn down.
fn primary<'a>(result: &'a ProbeResult, module: &Module) -> Option<&'a ProtocolRun> {
    let runs = || {
        module
            .protocols
            .iter()
            .filter_map(|p| result.runs.iter().find(|r| r.protocol == *p))
    };
    runs()
        .find(|r| r.not_offered.is_none() && r.skipped.is_none())
        .or_else(|| runs().next())
}

/// Series written in the exposition format, each family's HELP and TYPE once.
#[derive(Default)]
struct Exposition {
    text: String,
    families: Vec<&'static str>,
}

impl Exposition {
    /// One sample of gauge `name` with `labels` (name, value pairs).
    fn gauge(&mut self, name: &'static str, help: &str, labels: &[(&str, &str)], value: f64) {
        if !self.families.contains(&name) {
            self.families.push(name);
            let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} gauge");
        }
        let labels: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escaped(v)))
            .collect();
        let labels = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{}}}", labels.join(","))
        };
        let _ = writeln!(self.text, "{name}{labels} {value}");
    }
}

/// A label value as the exposition format writes it.
fn escaped(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The `probe_*` series of blackbox's http prober, for the primary chain.
fn blackbox_series(out: &mut Exposition, chain: Option<&Chain>, module: &Module, took: Micros) {
    let success = chain.is_some_and(|c| module.succeeded(c));
    out.gauge(
        "probe_success",
        "Whether the probe succeeded (blackbox_exporter's contract)",
        &[],
        f64::from(u8::from(success)),
    );
    out.gauge(
        "probe_duration_seconds",
        "How long the whole scrape's probe took, in seconds",
        &[],
        took.as_secs(),
    );
    let Some(chain) = chain else {
        return;
    };
    let sum = |phases: &[Phase]| -> Micros {
        let us = chain
            .hops
            .iter()
            .flat_map(|(a, _)| phases.iter().filter_map(|p| a.phases.get(*p)))
            .map(|span| span.duration().0)
            .sum();
        Micros(us)
    };
    let first = chain.first();
    out.gauge(
        "probe_dns_lookup_time_seconds",
        "How long the first name lookup took, in seconds",
        &[],
        first
            .phases
            .get(Phase::Dns)
            .map_or(0.0, |s| s.duration().as_secs()),
    );
    // HTTP/3's handshake is QUIC's, which carries TLS: it is `tls`, and
    // `connect` is zero, as there is no connect before it.
    for (phase, of) in [
        ("resolve", &[Phase::Dns][..]),
        ("connect", &[Phase::Connect, Phase::Proxy][..]),
        ("tls", &[Phase::Tls, Phase::Quic][..]),
        ("processing", &[Phase::Send, Phase::Wait][..]),
        ("transfer", &[Phase::Receive][..]),
    ] {
        out.gauge(
            "probe_http_duration_seconds",
            "Duration of an HTTP request by phase, summed over redirects, in seconds",
            &[("phase", phase)],
            sum(of).as_secs(),
        );
    }
    let response = chain.response();
    out.gauge(
        "probe_http_status_code",
        "The final response's status code (0 without one)",
        &[],
        f64::from(chain.status().unwrap_or(0)),
    );
    let version = match chain.protocol {
        Protocol::H1 => 1.1,
        Protocol::H2 => 2.0,
        Protocol::H3 => 3.0,
    };
    out.gauge(
        "probe_http_version",
        "The final response's HTTP version (0 without one)",
        &[],
        if response.is_some() { version } else { 0.0 },
    );
    out.gauge(
        "probe_http_redirects",
        "How many redirects were followed",
        &[],
        chain.redirects() as f64,
    );
    let last = chain.last();
    out.gauge(
        "probe_http_ssl",
        "Whether the final request was made over TLS",
        &[],
        f64::from(u8::from(last.url.starts_with("https://"))),
    );
    let content_length = response
        .and_then(|r| r.headers.iter().find(|h| h.name == "content-length"))
        .and_then(|h| h.value.trim().parse::<f64>().ok())
        .unwrap_or(-1.0);
    out.gauge(
        "probe_http_content_length",
        "The final response's Content-Length (-1 when it has none)",
        &[],
        content_length,
    );
    out.gauge(
        "probe_http_uncompressed_body_length",
        "Bytes of the final response's body as read",
        &[],
        response.map_or(0.0, |r| r.body_bytes as f64),
    );
    out.gauge(
        "probe_failed_due_to_regex",
        "Whether a body or header regex failed the probe (h123 modules have none)",
        &[],
        0.0,
    );
    if let Some(remote) = last.connection.as_ref().map(|c| c.remote_addr.as_str()) {
        let ip = remote
            .rsplit_once(':')
            .map_or(remote, |(ip, _)| ip)
            .trim_matches(['[', ']']);
        out.gauge(
            "probe_ip_protocol",
            "The IP version of the final connection (4 or 6)",
            &[],
            if ip.contains(':') { 6.0 } else { 4.0 },
        );
        out.gauge(
            "probe_ip_addr_hash",
            "FNV-1a hash of the final connection's address, to see it change",
            &[],
            f64::from(fnv1a(ip)),
        );
    }
    if let Some(tls) = &last.tls {
        let expiries: Vec<i64> = tls
            .certificates
            .iter()
            .filter_map(|c| unix_seconds_of_rfc3339(&c.not_after))
            .collect();
        if let Some(earliest) = expiries.iter().min() {
            out.gauge(
                "probe_ssl_earliest_cert_expiry",
                "When the first certificate of the chain expires, in Unix seconds",
                &[],
                *earliest as f64,
            );
            out.gauge(
                "probe_ssl_last_chain_expiry_timestamp_seconds",
                "When the first certificate of the chain the server sent expires, in Unix seconds",
                &[],
                *earliest as f64,
            );
        }
        if let Some(leaf) = tls.certificates.first()
            && let Some(fingerprint) = &leaf.fingerprint_sha256
        {
            let names: Vec<&str> = leaf
                .sans
                .iter()
                .map(String::as_str)
                .filter(|name| name.parse::<std::net::IpAddr>().is_err())
                .collect();
            out.gauge(
                "probe_ssl_last_chain_info",
                "The leaf certificate of the chain the server sent",
                &[
                    ("fingerprint_sha256", fingerprint),
                    ("issuer", &leaf.issuer.replace(", ", ",")),
                    ("subject", &leaf.subject.replace(", ", ",")),
                    ("subjectalternative", &names.join(",")),
                ],
                1.0,
            );
        }
        let version = tls.version.replace("TLSv", "TLS ");
        out.gauge(
            "probe_tls_version_info",
            "The TLS version the final connection agreed",
            &[("version", &version)],
            1.0,
        );
    }
}

/// A connection state as a label value: `new`, `resumed`, `reused`.
fn connection(state: ConnState) -> &'static str {
    match state {
        ConnState::New => "new",
        ConnState::Resumed => "resumed",
        ConnState::Reused => "reused",
    }
}

/// A unit enum's name as the schema writes it (`udp_silent`).
fn snake_case(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// 32-bit FNV-1a of the address's bytes (4 or 16), as blackbox hashes it;
/// of the text when it is not an address.
fn fnv1a(address: &str) -> u32 {
    let bytes = match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => v4.octets().to_vec(),
        Ok(std::net::IpAddr::V6(v6)) => v6.octets().to_vec(),
        Err(_) => address.as_bytes().to_vec(),
    };
    bytes.iter().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
    })
}

/// Phases as `h123_phase_seconds` labels them (and `total`).
const PHASES: [Phase; 8] = [
    Phase::Dns,
    Phase::Connect,
    Phase::Proxy,
    Phase::Tls,
    Phase::Quic,
    Phase::Send,
    Phase::Wait,
    Phase::Receive,
];

/// h123's own series: every protocol, by connection state.
fn h123_series(out: &mut Exposition, result: &ProbeResult, module: &Module) {
    for run in module
        .protocols
        .iter()
        .filter_map(|p| result.runs.iter().find(|r| r.protocol == *p))
    {
        let protocol = run.protocol.as_str();
        let all = chains(run);
        let success = !all.is_empty() && all.iter().all(|c| module.succeeded(c));
        out.gauge(
            "h123_protocol_success",
            "Whether every request over the protocol succeeded as the module says (any 2xx by default)",
            &[("protocol", protocol)],
            f64::from(u8::from(success)),
        );
        out.gauge(
            "h123_protocol_offered",
            "Whether the server offered the protocol (0: it does not speak it, or HTTP/3 was not found)",
            &[("protocol", protocol)],
            f64::from(u8::from(run.not_offered.is_none() && run.skipped.is_none())),
        );
        out.gauge(
            "h123_connection_reused",
            "Whether the protocol's later requests reused its connection",
            &[("protocol", protocol)],
            f64::from(u8::from(all.iter().any(|c| c.state() == ConnState::Reused))),
        );
        for state in ConnState::ALL {
            let of_state: Vec<&Chain> = all.iter().filter(|c| c.state() == state).collect();
            if of_state.is_empty() {
                continue;
            }
            let phases = PHASES.iter().map(|p| (p.as_str(), Some(*p)));
            for (name, phase) in phases.chain([("total", None)]) {
                let mut values: Vec<Micros> = of_state
                    .iter()
                    .filter_map(|c| {
                        let phases = &c.first().phases;
                        match phase {
                            Some(phase) => phases.get(phase).map(|s| s.duration()),
                            None => Some(phases.total.duration()),
                        }
                    })
                    .collect();
                if values.is_empty() {
                    continue;
                }
                values.sort_unstable();
                out.gauge(
                    "h123_phase_seconds",
                    "Median duration of a phase of the first request of a chain, in seconds",
                    &[
                        ("protocol", protocol),
                        ("connection", connection(state)),
                        ("phase", name),
                    ],
                    percentile(&values, 50).as_secs(),
                );
            }
        }
        if let Some(discovery) = &run.discovery {
            out.gauge(
                "h123_h3_discovery",
                "How HTTP/3 was found (or why not), by outcome",
                &[("outcome", &snake_case(discovery.outcome))],
                1.0,
            );
        }
    }
    if let Some(verdict) = result.analysis.as_ref().map(|a| &a.verdict) {
        out.gauge(
            "h123_verdict",
            "The verdict's kind (faster, no_difference, not_comparable, failed)",
            &[("kind", &snake_case(verdict.kind))],
            1.0,
        );
        for comparison in verdict.comparisons.iter().filter(|c| c.differs()) {
            for leader in &comparison.leaders {
                out.gauge(
                    "h123_faster",
                    "A protocol the verdict calls faster, by connection state",
                    &[
                        ("protocol", leader.as_str()),
                        ("connection", connection(comparison.state)),
                    ],
                    1.0,
                );
            }
        }
    }
}
