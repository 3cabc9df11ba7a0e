//! What `h123 probe` and `h123 watch` measure, and this machine's side of it:
//! the request and probe options, and the engine they make (trust, client
//! certificate, key log, proxy, qlog), warmed up for its first timed attempt.

use super::request_body::{self, BodyArgs};
use crate::probe::Engine;
use crate::probe::guard::ConnectPolicy;
use crate::probe::keylog::KeyLogPath;
use crate::probe::plan::{Limits, Plan};
use crate::probe::proxy::{Proxy, ProxySettings};
use crate::probe::tls::TrustSettings;
use clap::Args;
use h123_shared::migration::Migrate;
use h123_shared::network::NetworkProfile;
use h123_shared::{ConnectionMode, Header, Method, ProbeOptions, Protocol, ResolveOverride};
use std::path::PathBuf;

/// The request and how to measure it, shared by `h123 probe` and `h123 watch`.
#[derive(Debug, Args)]
pub struct MeasureArgs {
    /// The http or https URL to measure (`https://` is assumed when it names no scheme, as in
    /// `h123 probe www.example.com`).
    pub url: String,
    /// Protocols to measure, comma-separated: h1, h2, h3.
    #[arg(long = "proto", value_delimiter = ',', default_value = "h1,h2,h3")]
    pub protocols: Vec<Protocol>,
    /// Requests per round; a round's later ones reuse its connection unless --cold.
    #[arg(short = 'n', long = "repeat", default_value_t = 2)]
    pub repeat: u32,
    /// Rounds per protocol, each from a new connection: how many new
    /// connections a verdict on them rests on (4 or more to call a difference).
    #[arg(long, default_value_t = 4)]
    pub rounds: u32,
    /// Open a new connection for every request.
    #[arg(long, conflicts_with = "resumed")]
    pub cold: bool,
    /// Open a new connection for every request, resuming the TLS session
    /// (and sending 0-RTT over HTTP/3 when the server allows).
    #[arg(long)]
    pub resumed: bool,
    /// Pause between requests, in milliseconds (shows idle reuse).
    #[arg(long, default_value_t = 0, value_name = "MS")]
    pub idle_gap: u64,
    /// Follow redirects; each hop is its own entry.
    #[arg(short = 'L', long = "location")]
    pub follow: bool,
    /// Most redirects followed per request.
    #[arg(long, default_value_t = 5)]
    pub max_redirs: u32,
    /// Request method: GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS; POST
    /// when a body is given, else GET.
    #[arg(short = 'X', long = "request")]
    pub method: Option<Method>,
    /// Request body and credentials.
    #[command(flatten)]
    pub body: BodyArgs,
    /// Extra request header, "Name: value" (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// A credential-looking header or query parameter to keep in a server's record
    /// (repeatable; by default `api_key`, `token`, `X-Api-Key`, ... are redacted there).
    #[arg(long = "keep-secret", value_name = "NAME")]
    pub keep_secret: Vec<String>,
    /// Limit on each request, in seconds.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub timeout: f64,
    /// Limit on each phase, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub phase_timeout: f64,
    /// Limit on each QUIC handshake, in seconds (at most the phase limit; by
    /// default 2 s plus 10 TCP round trips to the host, at most 3 s).
    #[arg(long, value_name = "SECS")]
    pub quic_timeout: Option<f64>,
    /// Body bytes read at most; the rest is cut and marked truncated.
    #[arg(long, default_value_t = 10 * 1024 * 1024, value_name = "BYTES")]
    pub max_body: u64,
    /// Skip certificate verification (recorded in the result).
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Trust only the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Tunnel HTTP/1.1 and HTTP/2 through a proxy, like curl -x:
    /// http://[user:pass@]host:port (CONNECT), socks5:// (names resolved
    /// here) or socks5h:// (names resolved by the proxy). HTTP/3 is skipped.
    #[arg(
        short = 'x',
        long = "proxy",
        value_name = "URL",
        conflicts_with = "proxy_env"
    )]
    pub proxy: Option<String>,
    /// Take the proxy from the environment as curl does: https_proxy /
    /// HTTPS_PROXY, http_proxy, all_proxy / ALL_PROXY, and no_proxy / NO_PROXY.
    #[arg(long)]
    pub proxy_env: bool,
    /// Client certificate (PEM) for servers that ask for one (mutual TLS),
    /// over TCP and QUIC; the private key may be in the same file.
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of the client certificate, when not in --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Append the TLS secrets of every connection to FILE (NSS key log
    /// format, for Wireshark); SSLKEYLOGFILE does the same.
    #[arg(
        long,
        value_name = "FILE",
        env = "SSLKEYLOGFILE",
        hide_env_values = true
    )]
    pub keylog: Option<PathBuf>,
    /// Pin an address like curl: host:port:addr (repeatable).
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,
    /// Ask this DNS server instead of the system's: ip[:port].
    #[arg(long, value_name = "ADDR")]
    pub dns_server: Option<String>,
    /// Try HTTP/3 on the URL's host and port even if nothing advertises it.
    #[arg(long)]
    pub h3_direct: bool,
    /// Emulated network conditions for every protocol, both directions: a
    /// profile (3g, 4g, cable, lossy-mobile, satellite) or figures such as
    /// rtt=100ms,jitter=10ms,loss=2%,down=10mbit,up=2mbit.
    #[arg(long, value_name = "PROFILE", value_parser = NetworkProfile::parse)]
    pub network: Option<NetworkProfile>,
    /// Move each new HTTP/3 connection mid-response, to see whether it
    /// survives: `port` (a new UDP port, as a NAT rebinding) or a local IP
    /// address (as a change of network). HTTP/1.1 and HTTP/2 show what a
    /// new connection costs instead.
    #[arg(long, value_name = "port|ADDRESS")]
    pub migrate: Option<Migrate>,
    /// After each protocol's attempts, send N requests at once (N streams
    /// over one HTTP/2 or HTTP/3 connection, N HTTP/1.1 connections) and
    /// time each one: head-of-line blocking, under loss above all.
    #[arg(long, value_name = "N")]
    pub streams: Option<u32>,
    /// Resolve and connect over IPv4 only (like curl -4); a name without an
    /// A record fails in the dns phase.
    #[arg(short = '4', long = "ipv4")]
    pub ipv4: bool,
    /// Resolve and connect over IPv6 only (like curl -6); a name without an
    /// AAAA record fails in the dns phase.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Also probe every other address the host resolves to (of the family
    /// chosen by -4/-6; at most 3 more per protocol), each with the same
    /// attempts, shown side by side; the diagnosis says when a family is
    /// slower or broken.
    #[arg(long)]
    pub all_addresses: bool,
    /// Write a qlog of every QUIC connection into this directory (one
    /// `.sqlog` file per connection, for qvis or any qlog viewer).
    #[arg(long, value_name = "DIR")]
    pub qlog: Option<PathBuf>,
}

impl MeasureArgs {
    /// The probe options these arguments ask for.
    ///
    /// # Errors
    /// A readable line when a header, `--resolve` entry or body option is
    /// malformed. A body from standard input (`@-`) is read here, once.
    pub fn options(&self) -> Result<ProbeOptions, String> {
        let mut headers = self
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, String>>()?;
        let parts = self.body.parts(&headers)?;
        let method = request_body::method(self.method, parts.body.as_ref())?;
        headers.extend(parts.headers);
        let resolve = self
            .resolve
            .iter()
            .map(|entry| parse_resolve(entry))
            .collect::<Result<Vec<_>, String>>()?;
        // The output names the URL measured, so the assumed scheme shows there.
        let url = assumed_https(&self.url).unwrap_or_else(|| self.url.clone());
        Ok(ProbeOptions {
            url,
            protocols: self.protocols.clone(),
            method,
            body: parts.body,
            repeat: self.repeat,
            rounds: self.rounds,
            mode: match (self.cold, self.resumed) {
                (true, _) => ConnectionMode::Cold,
                (_, true) => ConnectionMode::Resumed,
                _ => ConnectionMode::Warm,
            },
            idle_gap_ms: self.idle_gap,
            follow_redirects: self.follow,
            max_redirects: self.max_redirs,
            headers,
            timeout_ms: seconds_to_ms(self.timeout),
            phase_timeout_ms: seconds_to_ms(self.phase_timeout),
            quic_timeout_ms: self.quic_timeout.map(seconds_to_ms),
            max_body_bytes: self.max_body,
            insecure: self.insecure,
            resolve,
            dns_server: self.dns_server.clone(),
            h3_direct: self.h3_direct,
            visibility: h123_shared::Visibility::Unlisted,
            family: self.family()?,
            all_addresses: self.all_addresses,
            vantages: Vec::new(),
            network: self.network.clone(),
            migrate: self.migrate.clone(),
            streams: self.streams,
            keep_secret: self.keep_secret.clone(),
        })
    }
}

impl MeasureArgs {
    /// The address family of `-4` / `-6`.
    ///
    /// # Errors
    /// A readable line when both are given.
    fn family(&self) -> Result<h123_shared::AddressFamily, String> {
        match (self.ipv4, self.ipv6) {
            (true, true) => {
                Err("-4 (IPv4 only) and -6 (IPv6 only) exclude each other; give one".into())
            }
            (true, false) => Ok(h123_shared::AddressFamily::V4),
            (false, true) => Ok(h123_shared::AddressFamily::V6),
            (false, false) => Ok(h123_shared::AddressFamily::Any),
        }
    }

    /// The engine with this user's client side (trust, client certificate,
    /// key log, proxy, qlog, all read before any attempt starts), warmed up
    /// and settled: ready for its first timed attempt. The CLI runs with its
    /// user's own rights, so it may probe any address.
    ///
    /// # Errors
    /// One readable line when a file (CA, certificate, key log) or the proxy is bad.
    pub async fn ready_engine(&self) -> Result<Engine, String> {
        let mut trust = match &self.cacert {
            Some(path) => TrustSettings::from_ca_file(path)?,
            None => TrustSettings::system(),
        };
        if let Some(cert) = &self.cert {
            trust = trust.with_client_cert(cert, self.key.as_deref())?;
        }
        if let Some(path) = &self.keylog {
            trust = trust.with_key_log(KeyLogPath::open(path)?);
        }
        let proxy = match (&self.proxy, self.proxy_env) {
            (Some(url), _) => ProxySettings::always(Proxy::parse(url)?),
            (None, true) => ProxySettings::from_env(|name| std::env::var(name).ok())?,
            (None, false) => ProxySettings::default(),
        };
        let mut engine = Engine::new(trust, ConnectPolicy::allow_all()).with_proxy(proxy);
        if let Some(dir) = &self.qlog {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create the qlog directory {}: {e}", dir.display()))?;
            engine = engine.with_qlog(dir.clone());
        }
        engine.warm_up().await;
        tokio::time::sleep(SETTLE).await;
        Ok(engine)
    }
}

/// The plan of `options`, checked against the CLI's limits.
///
/// # Errors
/// The refusal in one line (a bad URL, a count out of range, a forbidden header).
pub fn plan(options: ProbeOptions) -> Result<Plan, String> {
    Plan::new(options, &Limits::default()).map_err(|e| e.to_string())
}

/// A pause between the CLI's start-up and its first attempt. Start-up
/// (loading the trust store above all) is a burst of CPU; on a machine whose
/// cores are busy the scheduler takes that time back from the process later,
/// and without the pause it did so inside the first attempt's phases: median
/// connect and first byte 3.5 to 4.5 ms over curl's with both cores busy, in
/// 3 batches of 3 (30 runs each); with a pause of 2 ms or 5 ms, within
/// 0.1 ms of curl's in all 6 (5 ms keeps a margin for slower start-ups).
const SETTLE: std::time::Duration = std::time::Duration::from_millis(5);

fn seconds_to_ms(secs: f64) -> u64 {
    if secs.is_finite() && secs > 0.0 {
        (secs * 1000.0).round().max(1.0) as u64
    } else {
        0
    }
}

/// Parses a `-H 'Name: value'` argument (the name lowercased).
pub(super) fn parse_header(text: &str) -> Result<Header, String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("header `{text}` must look like `Name: value`"))?;
    Ok(Header {
        name: name.trim().to_ascii_lowercase(),
        value: value.trim().to_owned(),
    })
}

/// `url` as an https URL when it names no scheme (`www.example.com/x`), as curl assumes one:
/// HTTP/2 and HTTP/3 are offered over TLS, so https is what a comparison of the three needs.
/// `None` when it names one, or when the https URL would not parse either (the error then
/// names what was typed).
fn assumed_https(url: &str) -> Option<String> {
    let named = url.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    let https = format!("https://{url}");
    (!named && url::Url::parse(&https).is_ok()).then_some(https)
}

/// Parses curl's `host:port:addr` (the address may be `[v6]`).
fn parse_resolve(entry: &str) -> Result<ResolveOverride, String> {
    let bad = || format!("--resolve `{entry}` must look like host:port:addr");
    let (host, rest) = entry.split_once(':').ok_or_else(bad)?;
    let (port, addr) = rest.split_once(':').ok_or_else(bad)?;
    Ok(ResolveOverride {
        host: host.to_owned(),
        port: port.parse().map_err(|_| bad())?,
        addr: addr.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_a_scheme_is_https() {
        let assumed = |url: &str| assumed_https(url);
        assert_eq!(
            assumed("www.example.com").as_deref(),
            Some("https://www.example.com")
        );
        assert_eq!(
            assumed("e.test:8443/x?a=b://").as_deref(),
            Some("https://e.test:8443/x?a=b://")
        );
        assert_eq!(assumed("http://e.test/"), None);
        assert_eq!(assumed("ftp://e.test/"), None, "refused later, by name");
        assert_eq!(assumed("not a url"), None, "the error names what was typed");
    }
    use clap::Parser;

    fn args(line: &[&str]) -> MeasureArgs {
        let mut argv = vec!["h123", "probe"];
        argv.extend_from_slice(line);
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Probe(a) => a.measure,
            other => panic!("not `h123 probe`: {other:?}"),
        }
    }

    #[test]
    fn the_cli_measures_as_the_api_and_the_form_do_by_default() {
        let o = args(&["https://e.test/"]).options().unwrap();
        let defaults = ProbeOptions::default();
        assert_eq!(
            (o.rounds, o.repeat, o.mode, &o.protocols),
            (
                defaults.rounds,
                defaults.repeat,
                defaults.mode,
                &defaults.protocols
            )
        );
    }

    #[test]
    fn flags_map_to_options() {
        let a = args(&[
            "https://e.test/",
            "--proto",
            "h2,h1",
            "-n",
            "5",
            "--rounds",
            "3",
            "--cold",
            "-L",
            "-X",
            "HEAD",
            "-H",
            "X-Test: 1",
            "--timeout",
            "2.5",
            "--resolve",
            "e.test:443:[::1]",
            "-k",
        ]);
        let o = a.options().unwrap();
        assert_eq!(o.protocols, vec![Protocol::H2, Protocol::H1]);
        assert_eq!(o.repeat, 5);
        assert_eq!(o.rounds, 3);
        assert_eq!(o.mode, ConnectionMode::Cold);
        assert!(o.follow_redirects && o.insecure);
        assert_eq!(o.method, Method::Head);
        assert_eq!(o.headers[0].name, "x-test");
        assert_eq!(o.timeout_ms, 2500);
        assert_eq!(o.resolve[0].addr, "[::1]");
    }

    #[test]
    fn malformed_header_and_resolve_are_one_line_errors() {
        assert!(
            args(&["https://e.test/", "-H", "nocolon"])
                .options()
                .is_err()
        );
        let e = args(&["https://e.test/", "--resolve", "e.test:x:1.2.3.4"])
            .options()
            .unwrap_err();
        assert_eq!(
            e,
            "--resolve `e.test:x:1.2.3.4` must look like host:port:addr"
        );
    }
}
