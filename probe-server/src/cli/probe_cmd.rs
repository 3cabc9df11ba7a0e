//! `h123 probe URL`: options, running the engine, and choosing the output.

use super::exit::Exit;
use super::remote::{self, RemoteError};
use super::request_body::{self, BodyArgs};
use crate::probe::Engine;
use crate::probe::guard::ConnectPolicy;
use crate::probe::keylog::KeyLogPath;
use crate::probe::plan::{Limits, Plan};
use crate::probe::proxy::{Proxy, ProxySettings};
use crate::probe::tls::TrustSettings;
use clap::{Args, ValueEnum};
use h123_shared::api::ProbeStatus;
use h123_shared::migration::Migrate;
use h123_shared::network::NetworkProfile;
use h123_shared::slo::{self, Gate, SloReport};
use h123_shared::{
    ConnectionMode, Header, Method, ProbeOptions, ProbeResult, Protocol, ResolveOverride,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `h123 probe`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Waterfalls, a comparison table, facts and findings, for people.
    Text,
    /// The full result in the h123 schema.
    Json,
    /// HAR 1.2, for browser dev tools and HAR viewers.
    Har,
    /// curl's `-w` timing variables, per attempt.
    Curl,
    /// JUnit XML: a testsuite per protocol, a testcase per attempt and SLO gate.
    Junit,
}

/// Options of `h123 probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// The http or https URL to measure.
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
    /// Compare connection arms: one probe per arm (cold, warm, resumed), then a
    /// table of what setup costs per protocol and arm (text or json output).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["cold", "resumed"])]
    pub arms: Vec<ConnectionMode>,
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
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// SLO gates, [PROTO:]METRIC[.STAT]=DURATION, comma-separated or repeated,
    /// e.g. total=300ms,h2:ttfb.p95=150ms; a breach exits 3 (see Exit codes).
    ///
    /// METRIC: dns, connect, tls, quic, send, wait, receive, ttfb, total. STAT:
    /// median (default), p95 or max, by nearest rank over each protocol's
    /// attempts (a redirect chain is one attempt; a setup phase is judged over
    /// the attempts that opened a connection). DURATION: a number with us, ms
    /// or s. A gate is met when the statistic is at most the threshold; an
    /// attempt that failed or answered 4xx/5xx never meets a gate; a gate
    /// without PROTO applies to every protocol measured.
    #[arg(long, value_name = "GATES", conflicts_with = "arms")]
    pub slo: Vec<String>,
    /// Also write the result as JUnit XML to FILE (with any --output).
    #[arg(long, value_name = "FILE", conflicts_with = "arms")]
    pub junit: Option<PathBuf>,
    /// Run the probe on this h123 server (its REST API) instead of here, and
    /// print what it measured, with the permalink on standard error. The
    /// server's own limits and safety policy apply; options about this
    /// machine's side (proxy, client certificate, key log, qlog, CA file)
    /// do not travel.
    #[arg(
        long,
        value_name = "URL",
        env = "H123_SERVER",
        conflicts_with_all = ["arms", "proxy", "proxy_env", "cert", "keylog", "qlog", "cacert"]
    )]
    pub server: Option<String>,
    /// Trust only the CA certificates in this PEM file for an https --server.
    #[arg(long, value_name = "FILE", requires = "server")]
    pub server_cacert: Option<PathBuf>,
    /// Measure from these vantages of --server (its own, `server` by default,
    /// and its agents': `h123 serve` lists them at /api/v1/vantages), each
    /// printed as a group, then where the answer differs between them (-o
    /// har: the server's HAR, a page per vantage and protocol; JUnit: a
    /// testsuite per vantage and protocol).
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        requires = "server",
        conflicts_with = "slo"
    )]
    pub from: Vec<String>,
}

impl ProbeArgs {
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
        Ok(ProbeOptions {
            url: self.url.clone(),
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

impl ProbeArgs {
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
}

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

/// Runs the probe, prints it, writes the `--junit` file, and exits by the
/// table in [`super::exit`].
pub async fn run(args: ProbeArgs) -> ExitCode {
    let outcome = match slo_gates(&args) {
        Err(message) => Err(message),
        Ok(_) if !args.from.is_empty() => match vantages_probe(&args).await {
            Ok((text, results)) => Ok((text, results, None)),
            Err(RemoteError::Refused(message)) => Err(message),
            Err(RemoteError::Trouble(message)) => {
                eprintln!("h123: {message}");
                return Exit::Trouble.into();
            }
        },
        Ok(gates) if args.server.is_some() => match remote_probe(&args).await {
            Ok(result) => {
                let slo = gates.map(|g| slo::evaluate(&result, &g));
                let text = render(&result, args.output, slo.as_ref());
                Ok((text, vec![result], slo))
            }
            Err(RemoteError::Refused(message)) => Err(message),
            Err(RemoteError::Trouble(message)) => {
                eprintln!("h123: {message}");
                return Exit::Trouble.into();
            }
        },
        Ok(gates) if args.arms.is_empty() => probe(&args).await.map(|result| {
            let slo = gates.map(|g| slo::evaluate(&result, &g));
            let text = render(&result, args.output, slo.as_ref());
            (text, vec![result], slo)
        }),
        Ok(_) => compare_arms(&args)
            .await
            .map(|(text, results)| (text, results, None)),
    };
    match outcome {
        Ok((text, results, slo)) => {
            if let Some(code) = super::emit(&text) {
                return code;
            }
            // With --from, `vantages_probe` wrote the JUnit file of every vantage.
            if let (Some(path), [result], true) = (&args.junit, &results[..], args.from.is_empty())
            {
                let xml = super::junit::report(result, slo.as_ref());
                if let Err(e) = std::fs::write(path, xml) {
                    eprintln!("h123: cannot write the JUnit file {}: {e}", path.display());
                    return Exit::Trouble.into();
                }
            }
            Exit::of(&results, slo.as_ref()).into()
        }
        Err(message) => {
            eprintln!("h123: {message}");
            Exit::Usage.into()
        }
    }
}

/// The `--slo` gates, checked against `--proto`; `None` without `--slo`.
fn slo_gates(args: &ProbeArgs) -> Result<Option<Vec<Gate>>, String> {
    if args.slo.is_empty() {
        return Ok(None);
    }
    let gates = slo::parse_gates(&args.slo)?;
    slo::check_protocols(&gates, &args.protocols)?;
    Ok(Some(gates))
}

/// Runs the probe on `--server` and returns the result it measured, saying
/// where to see it. A probe the server did not finish is trouble, not a result.
async fn remote_probe(args: &ProbeArgs) -> Result<ProbeResult, RemoteError> {
    Ok(remote_record(args).await?.result)
}

/// Runs the probe on `--server` from the `--from` vantages and renders each
/// vantage's result as a group (`-o json`: the runs as an array), then the
/// cross-vantage findings; `-o har` is the server's own HAR of the record,
/// `-o junit` and `--junit` a testsuite per vantage and protocol. A vantage
/// without a result is trouble, once all are printed.
async fn vantages_probe(args: &ProbeArgs) -> Result<(String, Vec<ProbeResult>), RemoteError> {
    if args.output == Output::Curl {
        return Err(RemoteError::Refused(
            "--from prints text, json, har or junit: a curl command runs from one place, not from a vantage"
                .into(),
        ));
    }
    let record = remote_record(args).await?;
    let har = match args.output {
        Output::Har => {
            let server = args.server.as_deref().unwrap_or_default();
            let path = h123_shared::api::ProbeLinks::for_id(&record.id).har;
            let body = remote::get(server, args.server_cacert.as_deref(), &path).await?;
            Some(String::from_utf8_lossy(&body).into_owned())
        }
        _ => None,
    };
    let url = record.options.url.clone();
    let runs = if record.vantages.is_empty() {
        // A server that ran it alone (only its own vantage was named).
        vec![h123_shared::vantage::VantageRun {
            vantage: record
                .result
                .vantage
                .clone()
                .unwrap_or_else(|| h123_shared::vantage::Vantage::named("server")),
            result: Some(record.result),
            problem: None,
        }]
    } else {
        record.vantages
    };
    let results: Vec<ProbeResult> = runs.iter().filter_map(|r| r.result.clone()).collect();
    let text = match (args.output, har) {
        (_, Some(har)) => format!("{}\n", har.trim_end()),
        (Output::Json, _) => format!(
            "{}\n",
            serde_json::to_string_pretty(&runs).unwrap_or_default()
        ),
        (Output::Junit, _) => super::junit::vantages_report(&url, &runs),
        _ => super::text::vantages_report(&runs, super::text::use_color()),
    };
    if let Some(path) = &args.junit {
        std::fs::write(path, super::junit::vantages_report(&url, &runs)).map_err(|e| {
            RemoteError::Trouble(format!(
                "cannot write the JUnit file {}: {e}",
                path.display()
            ))
        })?;
    }
    if let Some(missing) = runs.iter().find(|r| r.result.is_none()) {
        // Printed through `emit` (a closed stdout is no panic); the exit code
        // says a vantage is missing either way.
        let _ = super::emit(&text);
        return Err(RemoteError::Trouble(format!(
            "no result from {}: {}",
            missing.vantage.shown(),
            missing
                .problem
                .as_deref()
                .unwrap_or("it did not run the probe")
        )));
    }
    Ok((text, results))
}

/// Runs the probe on `--server` (from `--from`'s vantages, if any) and
/// returns its finished record, saying where to see it.
async fn remote_record(args: &ProbeArgs) -> Result<h123_shared::api::ProbeRecord, RemoteError> {
    let server = args.server.as_deref().unwrap_or_default();
    let mut options = args.options().map_err(RemoteError::Refused)?;
    options.vantages.clone_from(&args.from);
    let finished = remote::probe(server, args.server_cacert.as_deref(), &options).await?;
    eprintln!("h123: measured by {server}: {}", finished.permalink);
    match finished.record.status {
        ProbeStatus::Done => Ok(finished.record),
        status => Err(RemoteError::Trouble(format!(
            "the server ended the probe as {} before it finished",
            crate::store::status_str(status)
        ))),
    }
}

/// Validates the arguments and runs the probe. The CLI runs with its user's
/// own rights, so it may probe any address.
///
/// # Errors
/// One readable line when the options are refused or the CA file is bad.
pub async fn probe(args: &ProbeArgs) -> Result<ProbeResult, String> {
    let options = args.options()?;
    run_plan(args, options).await
}

async fn run_plan(args: &ProbeArgs, options: ProbeOptions) -> Result<ProbeResult, String> {
    let plan = Plan::new(options, &Limits::default()).map_err(|e| e.to_string())?;
    let engine = engine(args)?;
    engine.warm_up().await;
    tokio::time::sleep(SETTLE).await;
    let result = engine.run(&plan).await;
    Ok(h123_shared::analysis::analyzed(result))
}

/// A pause between the CLI's start-up and its first attempt. Start-up
/// (loading the trust store above all) is a burst of CPU; on a machine whose
/// cores are busy the scheduler takes that time back from the process later,
/// and without the pause it did so inside the first attempt's phases: median
/// connect and first byte 3.5 to 4.5 ms over curl's with both cores busy, in
/// 3 batches of 3 (30 runs each); with a pause of 2 ms or 5 ms, within
/// 0.1 ms of curl's in all 6 (5 ms keeps a margin for slower start-ups).
const SETTLE: std::time::Duration = std::time::Duration::from_millis(5);

/// The engine with this user's client side: trust, client certificate, key
/// log and proxy, all read before any attempt starts.
fn engine(args: &ProbeArgs) -> Result<Engine, String> {
    let mut trust = match &args.cacert {
        Some(path) => TrustSettings::from_ca_file(path)?,
        None => TrustSettings::system(),
    };
    if let Some(cert) = &args.cert {
        trust = trust.with_client_cert(cert, args.key.as_deref())?;
    }
    if let Some(path) = &args.keylog {
        trust = trust.with_key_log(KeyLogPath::open(path)?);
    }
    let proxy = match (&args.proxy, args.proxy_env) {
        (Some(url), _) => ProxySettings::always(Proxy::parse(url)?),
        (None, true) => ProxySettings::from_env(|name| std::env::var(name).ok())?,
        (None, false) => ProxySettings::default(),
    };
    let mut engine = Engine::new(trust, ConnectPolicy::allow_all()).with_proxy(proxy);
    if let Some(dir) = &args.qlog {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create the qlog directory {}: {e}", dir.display()))?;
        engine = engine.with_qlog(dir.clone());
    }
    Ok(engine)
}

/// One probe per arm, one after another, and the comparison in the chosen output.
async fn compare_arms(args: &ProbeArgs) -> Result<(String, Vec<ProbeResult>), String> {
    if !matches!(args.output, Output::Text | Output::Json) {
        return Err("--arms writes text or json output only".to_owned());
    }
    let mut results = Vec::new();
    let asked = args.options()?;
    for &arm in &args.arms {
        let mut options = asked.clone();
        options.mode = arm;
        results.push(run_plan(args, options).await?);
    }
    let rows = h123_shared::arms::arm_table(&results);
    let text = match args.output {
        Output::Json => {
            let both = serde_json::json!({ "arms": rows, "results": results });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&both).unwrap_or_default()
            )
        }
        _ => super::text::arms_report(&rows),
    };
    Ok((text, results))
}

/// The result in the chosen output format, with the judgement of its SLO
/// gates when given (text: a closing section; json: an `slo` field; junit:
/// testcases).
pub fn render(result: &ProbeResult, output: Output, slo: Option<&SloReport>) -> String {
    match output {
        Output::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&WithSlo { result, slo }).unwrap_or_default()
        ),
        Output::Har => format!(
            "{}\n",
            serde_json::to_string_pretty(&h123_shared::har::to_har(result)).unwrap_or_default()
        ),
        Output::Curl => super::text::curl_report(result),
        Output::Junit => super::junit::report(result, slo),
        Output::Text => {
            let report = super::text::report(result, super::text::use_color());
            match slo {
                Some(slo) => report + &super::slo_text::section(slo),
                None => report,
            }
        }
    }
}

/// `-o json`: the result, with an `slo` field after its own when gates were given.
#[derive(serde::Serialize)]
struct WithSlo<'a> {
    #[serde(flatten)]
    result: &'a ProbeResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    slo: Option<&'a SloReport>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(line: &[&str]) -> ProbeArgs {
        let mut argv = vec!["h123", "probe"];
        argv.extend_from_slice(line);
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Probe(a) => a,
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
