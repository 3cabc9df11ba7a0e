//! h123's test target: HTTPS (h1/h2), plaintext (h1/h2c), a slow-TLS front, a loopback DNS server, a silent server and a refused address, all started in-process.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use h123_target::{TargetConfig, TestTarget};
//! let target = TestTarget::start(TargetConfig::default()).await?;
//! let url = target.https_url("/delay/50"); // https://127.0.0.1:<port>/delay/50
//! let ca = target.ca_file(); // pass as --cacert
//! # let _ = (url, ca); Ok(()) }
//! ```

pub mod body;
pub mod ca;
pub mod clock;
mod dns;
mod h3;
mod https;
mod net;
pub mod postgres;
pub mod relay;
pub mod routes;
mod silent;
pub mod slow_link;
mod slow_tls;
pub mod upload;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context as _;
use tokio::net::{TcpListener, UdpSocket};
use tokio_rustls::TlsAcceptor;

pub use body::{BodyError, TargetBody, take_drip_spans};
pub use ca::TestCa;
pub use dns::ANSWER_TTL;
pub use routes::route;

/// ALPN protocols of the HTTPS listener, in preference order.
pub const HTTPS_ALPN: &[&[u8]] = &[b"h2", b"http/1.1"];

/// What the target does with UDP on its HTTPS port number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H3Mode {
    /// Serve HTTP/3 over QUIC (the default).
    Serve,
    /// Serve HTTP/3, but drop every packet of a connection that arrives from
    /// a new client address or port (QUIC connection migration off), as a
    /// load balancer that routes by address does.
    ServeWithoutMigration,
    /// Drop every datagram, like a firewall that blocks UDP.
    BlockUdp,
    /// Bind nothing on UDP.
    Off,
}

/// How to start a [`TestTarget`].
#[derive(Debug, Clone)]
pub struct TargetConfig {
    /// Address every listener binds to. Default `127.0.0.1`.
    pub bind_ip: IpAddr,
    /// TCP port of the HTTPS listener; 0 (default) picks a free one.
    pub https_port: u16,
    /// TCP port of the plaintext listener; 0 (default) picks a free one.
    pub http_port: u16,
    /// TCP port of the slow-TLS front; 0 (default) picks a free one.
    pub slow_tls_port: u16,
    /// UDP port of the DNS server; 0 (default) picks a free one.
    pub dns_port: u16,
    /// TCP port of the silent server; 0 (default) picks a free one.
    pub silent_port: u16,
    /// How long the slow-TLS front holds the server's first handshake flight. Default 200 ms.
    pub slow_tls_delay: Duration,
    /// How long the DNS server waits before each answer. Default zero (no sleep at all).
    pub dns_delay: Duration,
    /// Names the DNS server knows, with their addresses: IPv4 ones answer A queries and IPv6
    /// ones AAAA queries. Names are matched case-insensitively, with or without the trailing
    /// dot; a name may be listed several times. Default: `target.h123.test` -> `127.0.0.1`
    /// (IPv4 only, since the listeners bind IPv4 by default).
    pub dns_records: Vec<(String, IpAddr)>,
    /// Names that get an HTTPS DNS record `1 . alpn=h3 port=<port>`. Default none.
    pub dns_https: Vec<(String, u16)>,
    /// Whether HTTPS (type 65) queries go unanswered, as behind a resolver or middlebox that
    /// drops them. Default false.
    pub dns_https_silent: bool,
    /// What happens on UDP at the HTTPS port number. Default [`H3Mode::Serve`].
    pub h3: H3Mode,
    /// Whether HTTPS (h1/h2) responses advertise HTTP/3 with `Alt-Svc: h3=":<port>"`.
    /// Default true.
    pub advertise_h3: bool,
    /// The authority the `Alt-Svc` advertisement names (`host:port`); default `:<https port>`,
    /// the target itself.
    pub alt_svc_authority: Option<String>,
    /// When set, the HTTPS port number answers on `[::1]` too: a TCP front there
    /// relays to the HTTPS listener, holding the server's first handshake flight
    /// for this long (zero: no hold), and HTTP/3 is served there as well (without
    /// a hold), so a name with A `127.0.0.1` and AAAA `::1` reaches the target on
    /// both families, IPv6's TLS slowed. Default none (nothing on `[::1]`, so
    /// IPv6 connects are refused).
    pub ipv6_https_delay: Option<Duration>,
    /// Whether HTTPS (h1, h2 and h3) asks for a client certificate signed by the
    /// target's CA and refuses handshakes without one (mutual TLS). Default false.
    pub require_client_cert: bool,
}

impl Default for TargetConfig {
    fn default() -> Self {
        TargetConfig {
            bind_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            https_port: 0,
            http_port: 0,
            slow_tls_port: 0,
            dns_port: 0,
            silent_port: 0,
            slow_tls_delay: Duration::from_millis(200),
            dns_delay: Duration::ZERO,
            dns_records: vec![(
                "target.h123.test".to_owned(),
                IpAddr::V4(Ipv4Addr::LOCALHOST),
            )],
            dns_https: Vec::new(),
            dns_https_silent: false,
            h3: H3Mode::Serve,
            advertise_h3: true,
            alt_svc_authority: None,
            require_client_cert: false,
            ipv6_https_delay: None,
        }
    }
}

/// A running test target. Every listener stops (its tasks are aborted) when this is dropped,
/// and the CA files are removed.
pub struct TestTarget {
    /// HTTPS over TCP: TLS with ALPN `h2` / `http/1.1`, served by hyper-util's auto server.
    /// The same port number is meant for a future QUIC (HTTP/3) listener over UDP.
    pub https_addr: SocketAddr,
    /// Plaintext HTTP over TCP: HTTP/1.1, or HTTP/2 with prior knowledge (h2c).
    pub http_addr: SocketAddr,
    /// HTTPS (h1/h2, no HTTP/3 advertised) over sockets with narrow kernel buffers
    /// ([`net::narrow_listener`]): a request body larger than them waits for the
    /// server to read it, so `/upload?read_delay_ms=N` holds an HTTP/1.1 sender too
    /// (on loopback, default buffers swallow megabytes).
    pub narrow_addr: SocketAddr,
    /// Slow-TLS front: relays to `https_addr`, holding the server's first handshake flight
    /// for [`TargetConfig::slow_tls_delay`].
    pub slow_tls_addr: SocketAddr,
    /// DNS over UDP (no TCP): point a resolver here as its only name server.
    pub dns_addr: SocketAddr,
    /// Accepts TCP connections and never reads or writes on them.
    pub silent_addr: SocketAddr,
    /// A TCP address where nothing listens: connecting is refused.
    pub refused_addr: SocketAddr,
    /// The HTTPS port number on `[::1]`, with [`TargetConfig::ipv6_https_delay`].
    pub ipv6_https_addr: Option<SocketAddr>,
    /// The CA that signed the server certificate, and an unrelated one.
    pub ca: TestCa,
    dns_stats: Arc<dns::DnsStats>,
    slow_tls_holds: slow_tls::Holds,
    _tasks: net::Tasks,
}

impl TestTarget {
    /// Generates the CA, binds every listener and starts serving on the current tokio runtime.
    pub async fn start(config: TargetConfig) -> anyhow::Result<TestTarget> {
        let ca = TestCa::generate()?;
        let tls = ca.server_config_with(HTTPS_ALPN, config.require_client_cert)?;
        let acceptor = TlsAcceptor::from(Arc::new(tls));
        let ip = config.bind_ip;

        let https = bind_tcp(ip, config.https_port, "HTTPS").await?;
        let http = bind_tcp(ip, config.http_port, "plaintext HTTP").await?;
        let narrow = net::narrow_listener(SocketAddr::new(ip, 0))
            .context("binding the narrow HTTPS listener")?;
        let slow = bind_tcp(ip, config.slow_tls_port, "slow-TLS front").await?;
        let silent = bind_tcp(ip, config.silent_port, "silent").await?;
        let dns = UdpSocket::bind(SocketAddr::new(ip, config.dns_port))
            .await
            .with_context(|| format!("binding the DNS server on {ip} port {}", config.dns_port))?;
        let refused_addr = silent::refused_addr(ip)
            .await
            .context("reserving the refused address")?;

        let https_addr = https.local_addr()?;
        let http_addr = http.local_addr()?;
        let narrow_addr = narrow.local_addr()?;
        let slow_tls_addr = slow.local_addr()?;
        let silent_addr = silent.local_addr()?;
        let dns_addr = dns.local_addr()?;

        let zone = Arc::new(dns::Zone::new(&config.dns_records, &config.dns_https));
        let dns_stats = Arc::new(dns::DnsStats {
            https_silent: config.dns_https_silent,
            ..dns::DnsStats::default()
        });

        let mut tasks = net::Tasks::default();
        match config.h3 {
            H3Mode::Serve | H3Mode::ServeWithoutMigration => tasks.spawn(h3::serve(h3::endpoint(
                https_addr,
                &ca,
                config.require_client_cert,
                config.h3 == H3Mode::Serve,
            )?)),
            H3Mode::BlockUdp => {
                let socket = UdpSocket::bind(https_addr)
                    .await
                    .with_context(|| format!("binding the UDP black hole on {https_addr}"))?;
                tasks.spawn(h3::black_hole(socket));
            }
            H3Mode::Off => {}
        }
        let alt_svc = config.advertise_h3.then(|| {
            let authority = config
                .alt_svc_authority
                .clone()
                .unwrap_or_else(|| format!(":{}", https_addr.port()));
            http::HeaderValue::from_str(&format!("h3=\"{authority}\"; ma=86400"))
                .unwrap_or_else(|_| http::HeaderValue::from_static("clear"))
        });
        tasks.spawn(https::serve_tls(narrow, acceptor.clone(), None));
        tasks.spawn(https::serve_tls(https, acceptor, alt_svc));
        tasks.spawn(https::serve_plain(http));
        let slow_tls_holds = slow_tls::Holds::default();
        tasks.spawn(slow_tls::serve(
            slow,
            https_addr,
            config.slow_tls_delay,
            slow_tls_holds.clone(),
        ));
        let ipv6_https_addr = match config.ipv6_https_delay {
            Some(delay) => {
                let v6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), https_addr.port());
                let front = TcpListener::bind(v6)
                    .await
                    .with_context(|| format!("binding the IPv6 HTTPS front on {v6}"))?;
                tasks.spawn(slow_tls::serve(
                    front,
                    https_addr,
                    delay,
                    Default::default(),
                ));
                if config.h3 == H3Mode::Serve {
                    tasks.spawn(h3::serve(h3::endpoint(
                        v6,
                        &ca,
                        config.require_client_cert,
                        true,
                    )?));
                }
                Some(v6)
            }
            None => None,
        };
        tasks.spawn(silent::serve(silent));
        tasks.spawn(dns::serve(dns, zone, config.dns_delay, dns_stats.clone()));

        Ok(TestTarget {
            https_addr,
            http_addr,
            narrow_addr,
            slow_tls_addr,
            ipv6_https_addr,
            dns_addr,
            silent_addr,
            refused_addr,
            ca,
            dns_stats,
            slow_tls_holds,
            _tasks: tasks,
        })
    }

    /// Path of the CA certificate PEM (for `--cacert`).
    pub fn ca_file(&self) -> &Path {
        self.ca.ca_file()
    }

    /// Path of the unrelated CA's PEM: trusting only it makes verification fail.
    pub fn wrong_ca_file(&self) -> &Path {
        self.ca.wrong_ca_file()
    }

    /// `https://<https_addr><path>`, e.g. `https://127.0.0.1:40123/bytes/10` (IP literal,
    /// covered by the certificate; no DNS involved).
    pub fn https_url(&self, path: &str) -> String {
        format!("https://{}{path}", self.https_addr)
    }

    /// `http://<http_addr><path>`.
    pub fn http_url(&self, path: &str) -> String {
        format!("http://{}{path}", self.http_addr)
    }

    /// `https://<narrow_addr><path>`.
    pub fn narrow_url(&self, path: &str) -> String {
        format!("https://{}{path}", self.narrow_addr)
    }

    /// `https://<slow_tls_addr><path>`.
    pub fn slow_tls_url(&self, path: &str) -> String {
        format!("https://{}{path}", self.slow_tls_addr)
    }

    /// How long the DNS server held each answered A or AAAA query (receipt to the reply's
    /// send), in the order the queries arrived.
    pub fn dns_hold_times(&self) -> Vec<Duration> {
        let mut held = self
            .dns_stats
            .held
            .lock()
            .map(|held| held.clone())
            .unwrap_or_default();
        held.sort_by_key(|(received, _)| *received);
        held.into_iter().map(|(_, held)| held).collect()
    }

    /// How long the slow-TLS front held each server's first flight (from reading it to
    /// forwarding it: its delay and whatever a busy machine added), in the order the
    /// connections' flights were forwarded.
    pub fn slow_tls_holds(&self) -> Vec<Duration> {
        self.slow_tls_holds
            .lock()
            .map(|holds| holds.clone())
            .unwrap_or_default()
    }

    /// Number of well-formed DNS queries the DNS server has received so far.
    pub fn dns_query_count(&self) -> u64 {
        self.dns_stats.queries.load(Ordering::Relaxed)
    }

    /// Number of HTTPS (type 65) queries the DNS server has received so far, answered or not.
    pub fn dns_https_query_count(&self) -> u64 {
        self.dns_stats.https_queries.load(Ordering::Relaxed)
    }
}

/// Binds a TCP listener on `ip:port`.
async fn bind_tcp(ip: IpAddr, port: u16, what: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(SocketAddr::new(ip, port))
        .await
        .with_context(|| format!("binding the {what} listener on {ip} port {port}"))
}
