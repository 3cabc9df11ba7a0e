//! `h123-target`: runs the test target standalone, for people and benchmarks to poke with curl.

use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use h123_target::{H3Mode, TargetConfig, TestTarget};

/// h123's test target: HTTPS (h1/h2, and h3 over UDP on the same port) with its own CA,
/// plaintext h1/h2c, a slow-TLS front,
/// a loopback DNS server and a silent server. Prints one `<name> <address>` line per
/// listener, then serves until Ctrl-C.
#[derive(Debug, Parser)]
#[command(name = "h123-target", version)]
struct Args {
    /// TCP port of the HTTPS listener (0 picks a free one).
    #[arg(long, default_value_t = 8443)]
    port: u16,
    /// TCP port of the plaintext HTTP/1.1 + h2c listener (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    http_port: u16,
    /// TCP port of the slow-TLS front (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    slow_tls_port: u16,
    /// UDP port of the DNS server (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    dns_port: u16,
    /// TCP port of the silent server (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    silent_port: u16,
    /// Address every listener binds to.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// How long the slow-TLS front holds the server's handshake flight, in ms.
    #[arg(long, default_value_t = 200)]
    slow_tls_delay_ms: u64,
    /// How long the DNS server waits before answering, in ms.
    #[arg(long, default_value_t = 0)]
    dns_delay_ms: u64,
    /// A DNS record `name=ip` (repeatable; IPv4 answers A, IPv6 answers AAAA). When given,
    /// replaces the default `target.h123.test=127.0.0.1`.
    #[arg(long = "dns-record", value_name = "NAME=IP", value_parser = parse_record)]
    dns_records: Vec<(String, IpAddr)>,
    /// Drop every UDP datagram on the HTTPS port instead of serving HTTP/3
    /// (a network that blocks UDP).
    #[arg(long)]
    block_udp: bool,
    /// Do not advertise HTTP/3 with `Alt-Svc` on HTTPS responses.
    #[arg(long)]
    no_alt_svc: bool,
    /// An HTTPS DNS record `name=port` (`1 . alpn=h3 port=<port>`; repeatable).
    #[arg(long = "dns-https", value_name = "NAME=PORT", value_parser = parse_https)]
    dns_https: Vec<(String, u16)>,
    /// Ask every HTTPS client (h1, h2, h3) for a certificate signed by the target's CA
    /// (mutual TLS); the `client-cert` and `client-key` lines name one.
    #[arg(long)]
    require_client_cert: bool,
    /// Also write the CA certificate PEM to this path.
    #[arg(long, value_name = "PATH")]
    ca_out: Option<PathBuf>,
}

/// Parses `name=ip`.
fn parse_record(s: &str) -> Result<(String, IpAddr), String> {
    let (name, ip) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=IP, got {s:?}"))?;
    if name.is_empty() {
        return Err(format!("empty name in {s:?}"));
    }
    let ip = ip
        .parse::<IpAddr>()
        .map_err(|e| format!("bad IP in {s:?}: {e}"))?;
    Ok((name.to_owned(), ip))
}

/// Parses `name=port`.
fn parse_https(s: &str) -> Result<(String, u16), String> {
    let (name, port) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=PORT, got {s:?}"))?;
    let port = port
        .parse::<u16>()
        .map_err(|e| format!("bad port in {s:?}: {e}"))?;
    Ok((name.to_owned(), port))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut config = TargetConfig {
        bind_ip: args.bind,
        https_port: args.port,
        http_port: args.http_port,
        slow_tls_port: args.slow_tls_port,
        dns_port: args.dns_port,
        silent_port: args.silent_port,
        slow_tls_delay: Duration::from_millis(args.slow_tls_delay_ms),
        dns_delay: Duration::from_millis(args.dns_delay_ms),
        dns_https: args.dns_https,
        h3: if args.block_udp {
            H3Mode::BlockUdp
        } else {
            H3Mode::Serve
        },
        advertise_h3: !args.no_alt_svc,
        require_client_cert: args.require_client_cert,
        ..TargetConfig::default()
    };
    if !args.dns_records.is_empty() {
        config.dns_records = args.dns_records;
    }
    let target = TestTarget::start(config).await?;

    let ca_path = match &args.ca_out {
        Some(path) => {
            std::fs::write(path, &target.ca.ca_pem)
                .with_context(|| format!("writing the CA to {}", path.display()))?;
            path.clone()
        }
        None => target.ca_file().to_path_buf(),
    };

    let mut out = std::io::stdout().lock();
    writeln!(out, "https {}", target.https_addr)?;
    writeln!(out, "narrow {}", target.narrow_addr)?;
    writeln!(out, "http {}", target.http_addr)?;
    writeln!(out, "slow-tls {}", target.slow_tls_addr)?;
    writeln!(out, "dns {}", target.dns_addr)?;
    writeln!(out, "silent {}", target.silent_addr)?;
    writeln!(out, "refused {}", target.refused_addr)?;
    writeln!(out, "ca {}", ca_path.display())?;
    writeln!(out, "wrong-ca {}", target.wrong_ca_file().display())?;
    writeln!(
        out,
        "client-cert {}",
        target.ca.client_cert_file().display()
    )?;
    writeln!(out, "client-key {}", target.ca.client_key_file().display())?;
    out.flush()?;
    drop(out);

    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    drop(target);
    Ok(())
}
