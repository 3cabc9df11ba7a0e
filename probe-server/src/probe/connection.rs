//! The one interface every protocol implements, and the TCP+TLS setup that
//! HTTP/1.1 and HTTP/2 share.

use super::egress::{Egress, Metered};
use super::guard::ConnectPolicy;
use super::http::{Exchange, RequestSpec};
use super::network::Link;
use super::proxy::tunnel::{self, Destination};
use super::proxy::{Proxy, ProxySettings};
use super::resumption::ResumableConfigs;
use super::tls::{self, TrustSettings};
use super::trace::AttemptTrace;
use super::{tcp, wire::TimedIo, wire::WireTap};
use h123_shared::migration::Migrate;
use h123_shared::network::NetworkProfile;
use h123_shared::{Failure, ProxyInfo, QuicInfo, TcpInfo, TlsInfo};
use rustls::ClientConfig;
use rustls_pki_types::CertificateDer;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Where a new connection goes, after name resolution.
#[derive(Debug)]
pub struct Target<'a> {
    /// Host name or literal, as in the URL (for SNI and certificate checks).
    pub host: &'a str,
    /// Whether TLS is used.
    pub https: bool,
    /// Addresses to try, in order (the proxy's, through a tunnel).
    pub addrs: &'a [SocketAddr],
    /// The proxy tunnel to open once connected, if any.
    pub tunnel: Option<Tunnel<'a>>,
}

/// A proxy tunnel a TCP connection goes through.
#[derive(Clone, Copy, Debug)]
pub struct Tunnel<'a> {
    /// The proxy (already resolved into [`Target::addrs`]).
    pub proxy: &'a Proxy,
    /// Where the tunnel leads.
    pub to: Destination<'a>,
}

/// Settings every connection of a probe shares.
#[derive(Clone, Debug)]
pub struct ConnectSettings {
    /// Which addresses may be dialled.
    pub policy: ConnectPolicy,
    /// Trusted roots.
    pub trust: TrustSettings,
    /// Whether certificate checks are off.
    pub insecure: bool,
    /// Limit on each connection phase.
    pub phase_limit: Duration,
    /// Limit on a QUIC handshake, when shorter than `phase_limit`
    /// (`h123_shared::quic_budget`); set per HTTP/3 run.
    pub quic_limit: Option<Duration>,
    /// Configurations whose sessions are resumed (resumed mode); `None`
    /// makes every handshake a full one.
    pub sessions: Option<Arc<ResumableConfigs>>,
    /// Where each QUIC connection writes its qlog (the CLI's `--qlog`; the
    /// server never sets it).
    pub qlog_dir: Option<std::path::PathBuf>,
    /// Proxies to tunnel through (the CLI's `-x` or `--proxy-env`; never the server's).
    pub proxy: Option<Arc<ProxySettings>>,
    /// Whether a resumed QUIC handshake may carry the request as 0-RTT early
    /// data: never for a method that is not idempotent (POST, PATCH).
    pub early_data: bool,
    /// The emulated network every connection crosses (`--network`), one per
    /// protocol run.
    pub link: Option<Arc<Link>>,
    /// Where each new HTTP/3 connection moves during its first response
    /// (`--migrate`); HTTP/1.1 and HTTP/2 cannot move.
    pub migrate: Option<Migrate>,
    /// The probe's byte budget from its target, charged by every
    /// connection's reads (a server's probes; `None` reads without a bound).
    pub egress: Option<Arc<Egress>>,
}

impl ConnectSettings {
    /// These settings with a fresh emulated link for `network`, if any (each
    /// protocol run gets its own, so none inherits another's queue).
    pub fn across(&self, network: Option<&NetworkProfile>) -> ConnectSettings {
        ConnectSettings {
            link: network.map(Link::seeded_now),
            ..self.clone()
        }
    }

    /// A TLS client configuration offering `alpn`, with these settings.
    pub fn tls_config(&self, alpn: &[&[u8]]) -> Arc<ClientConfig> {
        match &self.sessions {
            None => self.trust.client_config(alpn, self.insecure, None),
            Some(configs) => configs.get(alpn, |keeping| {
                self.trust.client_config(alpn, self.insecure, Some(keeping))
            }),
        }
    }
}

/// A connection just opened, with the facts of its setup.
pub struct Opened<C> {
    /// The connection, ready for its first request.
    pub conn: C,
    /// Local socket address.
    pub local: Option<SocketAddr>,
    /// The address actually connected to.
    pub remote: SocketAddr,
    /// TLS facts, for https; certificates are summarised from `chain` once
    /// the attempt is over, so parsing them is not timed.
    pub tls: Option<TlsInfo>,
    /// The peer's certificate chain, not summarised yet.
    pub chain: Vec<CertificateDer<'static>>,
    /// The proxy tunnel's facts, through a proxy.
    pub proxy: Option<ProxyInfo>,
    /// The kernel's TCP facts right after the connect (TCP only, Linux only).
    pub tcp_at_connect: Option<TcpInfo>,
}

/// One HTTP protocol over one connection. Each of h1, h2 and h3 implements
/// it; only those modules touch their protocol crates.
pub trait Connection: Sized + Send + 'static {
    /// What a new connection needs made before it touches the network (TLS
    /// and QUIC configuration, a UDP socket).
    type Setup: Send;

    /// The application protocols a new TLS or QUIC connection offers (ALPN), in order.
    const ALPN: &'static [&'static [u8]];

    /// Makes a new connection's [`Connection::Setup`]. The engine calls it
    /// before an attempt's clock starts: it is the tool's own work, not the
    /// network's or the server's, and belongs to no phase.
    fn prepare(settings: &ConnectSettings) -> Result<Self::Setup, Failure>;

    /// Opens a new connection to `target`, recording its setup phases.
    fn open(
        target: &Target<'_>,
        settings: &ConnectSettings,
        setup: Self::Setup,
        trace: &mut AttemptTrace,
    ) -> impl Future<Output = Result<Opened<Self>, Failure>> + Send;

    /// Waits until the connection can take another request; `false` when the
    /// peer closed it meanwhile.
    fn ready(&mut self, limit: Duration) -> impl Future<Output = bool> + Send;

    /// Sends one request and reads its response, recording send, wait and
    /// receive; what it learns goes into `out` even when it fails.
    fn exchange(
        &mut self,
        spec: &RequestSpec,
        trace: &mut AttemptTrace,
        out: &mut Exchange,
    ) -> impl Future<Output = Result<(), Failure>> + Send;

    /// QUIC transport facts (HTTP/3 only).
    fn quic_facts(&self) -> Option<QuicInfo> {
        None
    }

    /// TLS facts learnt after the connection opened (a 0-RTT handshake ends
    /// while the first request is under way); `None` when nothing changed.
    fn tls_facts(&self) -> Option<TlsInfo> {
        None
    }
}

/// Any byte stream a hyper connection can run on.
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// A TCP connection, with TLS for https (under `config`), wrapped in the
/// timed I/O layer that reports to `tap`.
pub async fn open_tcp_tls(
    target: &Target<'_>,
    settings: &ConnectSettings,
    config: Arc<ClientConfig>,
    tap: Arc<WireTap>,
    trace: &mut AttemptTrace,
) -> Result<(TimedIo<Box<dyn Io>>, Opened<()>), Failure> {
    let dialled = tcp::connect(
        target.addrs,
        &settings.policy,
        settings.phase_limit,
        settings.link.as_ref(),
        settings
            .egress
            .as_ref()
            .map(|egress| super::egress::receive_buffer(egress.limit())),
        trace,
    )
    .await?;
    // Between the connect's end and the next phase's start: in no phase.
    tap.watch_socket(&dialled.socket);
    let tcp_at_connect = tap.tcp_info();
    let local = dialled.socket.local_addr().ok();
    let remote = dialled.remote;
    let mut stream = dialled.into_io(settings.link.as_ref(), tap.arrivals());
    if let Some(egress) = &settings.egress {
        stream = Box::new(Metered::new(stream, egress.clone()));
    }
    let proxy = match &target.tunnel {
        Some(t) => {
            Some(tunnel::open(&mut stream, t.proxy, t.to, settings.phase_limit, trace).await?)
        }
        None => None,
    };
    let (io, tls, chain): (Box<dyn Io>, _, _) = if target.https {
        let (stream, info, chain) = tls::handshake(
            stream,
            target.host,
            config,
            !settings.insecure,
            settings.phase_limit,
            trace,
        )
        .await?;
        trace.tls_agreed(&info);
        (Box::new(stream), Some(info), chain)
    } else {
        (Box::new(stream), None, Vec::new())
    };
    let opened = Opened {
        conn: (),
        local,
        remote,
        tls,
        chain,
        proxy,
        tcp_at_connect,
    };
    Ok((TimedIo::new(io, tap), opened))
}

/// Aborts a spawned connection task when the connection is dropped.
#[derive(Debug)]
pub struct TaskGuard(pub tokio::task::JoinHandle<()>);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}
