//! Runs one protocol's attempts: fresh connection first, reuse after (or a
//! new one each time in cold mode), redirect hops as their own entries.

use super::budget::{MAX_RECORD_BYTES, RecordBudget};
use super::cert::summarize_chain;
use super::connection::{ConnectSettings, Connection, Target, Tunnel};
use super::dns::NameResolver;
use super::egress;
use super::failure::{failure, timed_out};
use super::http::{Exchange, RequestSpec};
use super::plan::Plan;
use super::proxy::Proxy;
use super::proxy::tunnel::Destination;
use super::trace::{self, AttemptId, AttemptTrace, Progress};
use h123_shared::api::ProbeEvent;
use h123_shared::{
    Attempt, ConnectionInfo, ConnectionMode, DnsInfo, Failure, FailureKind, Method, Micros,
    NotOffered, Phase, Protocol, ProtocolRun, ProxyInfo, QuicInfo, TcpInfo, TcpInfoSnapshots,
    TlsInfo, TtfbSource,
};
use rustls_pki_types::CertificateDer;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::{Host, Url};

/// A connection kept between attempts, with the facts of its setup.
struct Pooled<C> {
    conn: C,
    origin: String,
    id: u32,
    requests: u32,
    idle_since: Instant,
    local: Option<SocketAddr>,
    remote: SocketAddr,
    tls: Option<TlsInfo>,
    /// The peer's certificates, until summarised into `tls` (untimed).
    chain: Vec<CertificateDer<'static>>,
    proxy: Option<ProxyInfo>,
    /// TCP facts at connect, until the connection's first attempt takes them.
    tcp_at_connect: Option<TcpInfo>,
}

/// How an attempt gets its connection: a pooled one, or a new one from its
/// prepared setup.
enum Way<C: Connection> {
    Pooled(Box<Pooled<C>>),
    New(C::Setup),
}

/// Everything one protocol's attempts share.
pub struct ProtocolRunner<'a, C> {
    protocol: Protocol,
    plan: &'a Plan,
    resolver: &'a NameResolver,
    settings: ConnectSettings,
    progress: Progress,
    pool: Vec<Pooled<C>>,
    next_id: u32,
    connect_to: Option<(String, u16)>,
    pin: Option<IpAddr>,
    budget: Option<&'a RecordBudget>,
    attempts: Vec<Attempt>,
    cut_short: Option<String>,
    stopped: Option<String>,
    not_offered: Option<NotOffered>,
    /// Whether the server has sent a ticket in time so far (resumed mode).
    tickets_come: bool,
}

/// How long a resumed run waits, after an answer, for the ticket its next
/// connection resumes: servers send it right after the handshake, one
/// round trip at most after the answer.
const TICKET_WAIT: Duration = Duration::from_secs(1);

/// What one attempt found out besides its timeline.
#[derive(Default)]
struct Findings {
    dns: Option<DnsInfo>,
    connection: Option<ConnectionInfo>,
    tls: Option<TlsInfo>,
    quic: Option<QuicInfo>,
    tcp_at_connect: Option<TcpInfo>,
    exchange: Exchange,
}

/// Why an attempt's peer is silent, when it timed out setting up a
/// connection: asking again would only wait the same phase timeout again.
fn silent_setup(attempt: &Attempt) -> Option<String> {
    let f = attempt.failure.as_ref()?;
    let setup = matches!(
        f.phase,
        Phase::Dns | Phase::Connect | Phase::Tls | Phase::Quic
    );
    (setup && f.kind == FailureKind::Timeout).then(|| match f.phase {
        Phase::Quic => "got no answer over UDP (QUIC timed out)".to_string(),
        phase => format!("timed out in the {} phase", phase.as_str()),
    })
}

/// Whether `failure` says the server does not speak the protocol asked for:
/// its TLS handshake agreed to another (or to none) of those offered.
fn not_offered(failure: &Failure) -> bool {
    failure.phase == Phase::Tls && failure.kind == FailureKind::Unsupported
}

/// A first request the server closed the connection on, cleanly and without
/// a byte of answer, after a TLS handshake that agreed on no protocol (ALPN):
/// the server does not speak the one offered (an HTTP/2-only server asked
/// for HTTP/1.1: Go's TLS agrees on none rather than refuse, then the server
/// closes), the mirror of a handshake that chose another. `None` for any
/// other failure, which stands.
fn closed_unoffered(failure: &Failure, tls: Option<&TlsInfo>, unanswered: bool) -> Option<Failure> {
    let agreed_none = tls.is_some_and(|t| t.alpn.is_none());
    (unanswered && agreed_none).then(|| Failure {
        phase: Phase::Tls,
        kind: FailureKind::Unsupported,
        message: format!(
            "TLS agreed on no protocol (ALPN) and the server then closed the connection \
             without answering: {}",
            failure.message
        ),
    })
}

fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

impl<'a, C: Connection> ProtocolRunner<'a, C> {
    /// A runner for `protocol` with its own connection pool, reporting to `progress`.
    pub fn new(
        protocol: Protocol,
        plan: &'a Plan,
        resolver: &'a NameResolver,
        settings: &'a ConnectSettings,
        progress: Progress,
    ) -> Self {
        let mut settings = settings.clone();
        if plan.options.mode == ConnectionMode::Resumed {
            settings.sessions = Some(Arc::default());
        }
        // A request that is not idempotent never leaves as 0-RTT early data,
        // which an attacker could replay (RFC 8470, RFC 9114 section 4.1).
        settings.early_data &= plan.options.method.is_idempotent();
        ProtocolRunner {
            protocol,
            plan,
            resolver,
            settings,
            progress,
            pool: Vec::new(),
            next_id: 1,
            connect_to: None,
            pin: None,
            budget: None,
            attempts: Vec::new(),
            cut_short: None,
            stopped: None,
            not_offered: None,
            tickets_come: true,
        }
    }

    /// Connects to `host:port` instead of the URL's authority for requests to
    /// the plan's origin (like curl's `--connect-to`), keeping the URL's name
    /// for TLS: how an `Alt-Svc` or HTTPS-record endpoint is reached.
    pub fn connect_to(mut self, endpoint: Option<(String, u16)>) -> Self {
        self.connect_to = endpoint;
        self
    }

    /// Gives each QUIC handshake `limit` instead of the phase limit (the
    /// HTTP/3 run's budget, `h123_shared::quic_budget`).
    pub fn quic_limit(mut self, limit: Duration) -> Self {
        self.settings.quic_limit = Some(limit);
        self
    }

    /// Dials only `ip` for requests to the plan's origin (after the lookup,
    /// which is still made and timed): a side run of `--all-addresses`.
    pub fn pin(mut self, ip: IpAddr) -> Self {
        self.pin = Some(ip);
        self
    }

    /// Spends `budget` (this run's share of the record's size cap): an
    /// attempt that does not fit is dropped and the run stops, saying why.
    pub fn budget(mut self, budget: &'a RecordBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Runs every round, reporting each attempt as it completes: a protocol
    /// run on its own (a side run of `--all-addresses`).
    pub async fn run(mut self) -> ProtocolRun {
        for round in 0..self.plan.options.rounds.max(1) {
            self.round(round).await;
        }
        self.finish()
    }

    /// Makes round `round`'s attempts (from 0), from a new connection (a
    /// resumed run keeps its tickets); nothing once the run has ended (a
    /// silent peer, the record's cap, a protocol the server does not offer).
    pub async fn round(&mut self, round: u32) {
        let options = &self.plan.options;
        let hops = if options.follow_redirects {
            options.max_redirects
        } else {
            0
        };
        let first = round * options.repeat + 1;
        self.pool.clear();
        for number in first..first + options.repeat {
            if self.ended() {
                return;
            }
            if let Some(egress) = self.settings.egress.as_deref().filter(|e| e.is_spent()) {
                let reason = format!(
                    "{} before attempt {number}; later attempts were not made",
                    egress.reason()
                );
                self.stop(reason);
                return;
            }
            if number > 1 && !self.plan.idle_gap.is_zero() {
                tokio::time::sleep(self.plan.idle_gap).await;
            }
            let mut url = self.plan.url.clone();
            // Hops lie end to end on the chain's clock, which runs only
            // while a hop's own clock does (the tool's work between hops is
            // not the chain's).
            let mut chain_elapsed = Micros(0);
            let mut method = options.method;
            for hop in 0..=hops {
                let chain_start_us = (hop > 0).then_some(chain_elapsed);
                let (attempt, next) = self
                    .attempt(number, hop, &url, method, chain_start_us)
                    .await;
                chain_elapsed = Micros(chain_elapsed.0 + attempt.phases.total.duration().0);
                if number == 1 && hop == 0 && attempt.failure.as_ref().is_some_and(not_offered) {
                    self.not_offered(&attempt);
                    return;
                }
                if self.budget.is_some_and(|b| !b.take(&attempt)) {
                    self.cut_short = Some(format!(
                        "stopped before attempt {number}, hop {hop}: the record reached its size cap of {} KiB",
                        MAX_RECORD_BYTES / 1024
                    ));
                    return;
                }
                self.progress.send(ProbeEvent::Attempt {
                    protocol: self.protocol,
                    attempt: Box::new(attempt.clone()),
                });
                let silent = silent_setup(&attempt);
                self.attempts.push(attempt);
                if let Some(reason) = silent {
                    self.stop(format!(
                        "attempt {number} {reason}; later attempts were not made"
                    ));
                    return;
                }
                if let Some(egress) = self.settings.egress.as_deref().filter(|e| e.is_spent()) {
                    let reason = format!(
                        "{} in attempt {number}; later attempts were not made",
                        egress.reason()
                    );
                    self.stop(reason);
                    return;
                }
                match next {
                    Some((next, status)) if hop < hops => {
                        url = next;
                        method = method.after_redirect(status);
                    }
                    _ => break,
                }
            }
        }
    }

    /// Ends the run for `reason`, saying so to the live view.
    fn stop(&mut self, reason: String) {
        self.progress.send(ProbeEvent::Stopped {
            protocol: self.protocol,
            reason: reason.clone(),
        });
        self.stopped = Some(reason);
    }

    /// Whether no more attempts will be made.
    fn ended(&self) -> bool {
        self.stopped.is_some() || self.cut_short.is_some() || self.not_offered.is_some()
    }

    /// The attempts made so far (HTTP/3's discovery reads their `Alt-Svc`).
    pub fn attempts(&self) -> &[Attempt] {
        &self.attempts
    }

    /// The run, with every attempt made; a protocol the server does not
    /// offer is skipped, saying so, without the attempt that showed it.
    pub fn finish(self) -> ProtocolRun {
        ProtocolRun {
            skipped: self.not_offered.as_ref().map(|n| n.reason(self.protocol)),
            not_offered: self.not_offered,
            stopped: self.stopped,
            cut_short: self.cut_short,
            attempts: self.attempts,
            ..ProtocolRun::empty(self.protocol)
        }
    }

    /// Ends the run of a protocol the server does not offer, as its first
    /// attempt's TLS handshake showed.
    fn not_offered(&mut self, attempt: &Attempt) {
        let not_offered = NotOffered {
            offered: C::ALPN
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect(),
            chosen: attempt.tls.as_ref().and_then(|t| t.alpn.clone()),
            // A handshake that agreed on none, then the request sent and
            // the connection closed on it (`closed_unoffered`).
            closed: attempt.tls.as_ref().is_some_and(|t| t.alpn.is_none())
                && attempt.phases.send.is_some(),
        };
        self.progress.send(ProbeEvent::Skipped {
            protocol: self.protocol,
            reason: not_offered.reason(self.protocol),
        });
        self.not_offered = Some(not_offered);
    }

    /// One entry, a hop starting `chain_start_us` into its chain, sent with
    /// `method`; also returns where a followed redirect leads, and its status.
    ///
    /// The clock starts after the tool's own preparation (a pooled
    /// connection checked, a new one's TLS and QUIC configuration made, the
    /// request built) and stops at the last body byte; what is learnt after
    /// it (certificate summaries, QUIC statistics) is read untimed. So the
    /// phases of an attempt add up to its total.
    async fn attempt(
        &mut self,
        number: u32,
        hop: u32,
        url: &Url,
        method: Method,
        chain_start_us: Option<Micros>,
    ) -> (Attempt, Option<(Url, u16)>) {
        let id = AttemptId {
            protocol: self.protocol,
            attempt: number,
            hop,
        };
        let origin = origin_of(url);
        let ready = self.take_pooled(&origin).await;
        let way = match ready {
            Some(pooled) => Ok(Way::Pooled(Box::new(pooled))),
            None => C::prepare(&self.settings).map(Way::New),
        };
        let spec = request_spec(self.plan, url, method);
        let mut trace = AttemptTrace::observed(self.progress.clone(), Some(id));
        let mut found = Findings::default();
        let mut kept = None;
        let limit = self.plan.timeout;
        let egress = self.settings.egress.clone();
        let steps = async {
            match way {
                Ok(way) => {
                    self.steps(url, origin, way, &spec, &mut trace, &mut found, &mut kept)
                        .await
                }
                Err(f) => Err(f),
            }
        };
        let steps = egress::within(egress.as_deref(), steps);
        let failure = match tokio::time::timeout(limit, steps).await {
            Ok(Some(Ok(()))) => None,
            // A read that failed as the budget ran out failed because of it.
            Ok(Some(Err(f))) => Some(match egress.as_deref().filter(|e| e.is_spent()) {
                Some(egress) => egress.failure(f.phase),
                None => f,
            }),
            Ok(None) => egress
                .as_deref()
                .map(|e| e.failure(trace.open_phase().unwrap_or(Phase::Receive))),
            Err(_) => {
                let mut f = timed_out(trace.open_phase().unwrap_or(Phase::Dns), limit);
                f.message = format!(
                    "attempt exceeded its total timeout of {} ms",
                    limit.as_millis()
                );
                Some(f)
            }
        };
        let phases = trace.finish();
        let failure = match failure {
            Some(f) if number == 1 && hop == 0 => {
                // The connection's TLS facts are read after the attempt: what
                // the handshake agreed is in the trace until then.
                let tls = found
                    .tls
                    .as_ref()
                    .or_else(|| trace.agreed())
                    .or_else(|| kept.as_ref().and_then(|p| p.tls.as_ref()));
                Some(closed_unoffered(&f, tls, found.exchange.unanswered).unwrap_or(f))
            }
            other => other,
        };
        if found.tls.is_none() && failure.as_ref().is_some_and(not_offered) {
            found.tls = trace.agreed().cloned();
        }
        if let Some(mut pooled) = kept {
            self.learn_after(&mut pooled, &mut found);
            if let Some(moved) = &found.exchange.migration {
                pooled.local = moved.to_addr.parse().ok();
            }
            if failure.is_none()
                && found.exchange.reusable
                && self.plan.options.mode == ConnectionMode::Warm
            {
                pooled.idle_since = trace::now();
                self.pool.push(pooled);
            } else if failure.is_none()
                && self.plan.options.mode == ConnectionMode::Resumed
                && number < self.plan.options.attempts()
            {
                // Closing at once could lose the ticket a one-ticket server
                // sends after its answer, and with it the next resumption.
                self.await_ticket().await;
            }
        }
        let next = found
            .exchange
            .response
            .as_ref()
            .filter(|r| (300..400).contains(&r.status))
            .and_then(|r| Some((url.join(r.header("location")?).ok()?, r.status)))
            .filter(|(next, _)| matches!(next.scheme(), "http" | "https"));
        let attempt = Attempt {
            attempt: number,
            hop,
            url: url.to_string(),
            started_at_unix_ms: trace.started_at_unix_ms(),
            chain_start_us,
            phases,
            ttfb_source: found.exchange.ttfb_source.unwrap_or(match self.protocol {
                Protocol::H2 => TtfbSource::Http2HeadersFrame,
                _ => TtfbSource::TransportRead,
            }),
            dns: found.dns,
            connection: found.connection,
            tls: found.tls,
            response: found.exchange.response,
            quic: found.quic,
            migration: found.exchange.migration,
            failure,
            tcp_info: tcp_snapshots(
                found.tcp_at_connect,
                found.exchange.tcp_at_first_byte,
                found.exchange.tcp_at_end,
            ),
        };
        (attempt, next)
    }

    /// Waits, untimed and bounded, until the run holds a session for its
    /// next connection to resume; a server that sent none in time is not
    /// waited for again.
    async fn await_ticket(&mut self) {
        let Some(configs) = &self.settings.sessions else {
            return;
        };
        if self.tickets_come {
            let limit = TICKET_WAIT.min(self.plan.phase_limit);
            self.tickets_come = configs.await_ticket(C::ALPN, limit).await;
        }
    }

    /// A pooled connection to `origin` that can take another request.
    async fn take_pooled(&mut self, origin: &str) -> Option<Pooled<C>> {
        let index = self.pool.iter().position(|p| p.origin == origin)?;
        let mut candidate = self.pool.swap_remove(index);
        candidate
            .conn
            .ready(self.plan.phase_limit)
            .await
            .then_some(candidate)
    }

    /// What the connection tells once the attempt's clock has stopped:
    /// certificate summaries (parsed once per connection), late TLS facts,
    /// QUIC statistics.
    fn learn_after(&self, pooled: &mut Pooled<C>, found: &mut Findings) {
        if !pooled.chain.is_empty() {
            let chain = std::mem::take(&mut pooled.chain);
            if let Some(tls) = pooled.tls.as_mut() {
                tls.certificates = summarize_chain(&chain);
            }
        }
        if let Some(tls) = pooled.conn.tls_facts() {
            pooled.tls = Some(tls);
        }
        found.quic = pooled.conn.quic_facts();
        found.tls = pooled.tls.clone();
    }

    #[allow(clippy::too_many_arguments)]
    async fn steps(
        &mut self,
        url: &Url,
        origin: String,
        way: Way<C>,
        spec: &RequestSpec,
        trace: &mut AttemptTrace,
        found: &mut Findings,
        kept: &mut Option<Pooled<C>>,
    ) -> Result<(), Failure> {
        let (reused, mut pooled) = match way {
            Way::Pooled(pooled) => (true, *pooled),
            Way::New(setup) => (false, self.open(url, origin, setup, trace, found).await?),
        };
        let now = trace::now();
        let idle = reused.then(|| trace::between(pooled.idle_since, now));
        pooled.requests += 1;
        found.connection = Some(ConnectionInfo {
            id: pooled.id,
            reused,
            was_idle: reused,
            idle_us: idle,
            request_index: pooled.requests,
            local_addr: pooled.local.map(|a| a.to_string()),
            remote_addr: pooled.remote.to_string(),
            proxy: pooled.proxy.clone(),
        });
        found.tcp_at_connect = pooled.tcp_at_connect.take();
        let pooled = kept.insert(pooled);
        pooled.conn.exchange(spec, trace, &mut found.exchange).await
    }

    /// A refused name's addresses stay out of the record, as they stay out
    /// of the API's 403: a redirect hop or an Alt-Svc endpoint naming an
    /// internal host must not map the server's DNS for whoever probes it.
    /// Address literals (typed or advertised as such) are named as they are.
    fn hide_refused_addresses(
        &self,
        mut refused: Failure,
        host: &Host<&str>,
        port: u16,
        found: &mut Findings,
    ) -> Failure {
        let Host::Domain(name) = host else {
            return refused;
        };
        refused.message = match self.settings.policy.check_port(port) {
            Err(reason) => format!("refusing to connect to {name}:{port}: {reason}"),
            Ok(()) => format!(
                "refusing to connect to {name}: it resolves to an address this server does not probe"
            ),
        };
        if let Some(dns) = found.dns.as_mut() {
            dns.addresses.clear();
        }
        refused
    }

    async fn open(
        &mut self,
        url: &Url,
        origin: String,
        setup: C::Setup,
        trace: &mut AttemptTrace,
        found: &mut Findings,
    ) -> Result<Pooled<C>, Failure> {
        let no_host = || failure(Phase::Dns, FailureKind::Dns, "URL has no host or port");
        let redirected = self
            .connect_to
            .as_ref()
            .filter(|_| url.origin() == self.plan.url.origin());
        let (host, port) = match redirected {
            Some((host, port)) => (endpoint_host(host).ok_or_else(no_host)?, *port),
            None => (
                url.host().ok_or_else(no_host)?.to_owned(),
                url.port_or_known_default().ok_or_else(no_host)?,
            ),
        };
        let host = borrowed(&host);
        let host_text = url.host_str().unwrap_or_default();
        let host_text = host_text.trim_start_matches('[').trim_end_matches(']');
        let proxies = self.settings.proxy.clone();
        let proxy = proxies
            .as_deref()
            .and_then(|p| p.for_url(url))
            .filter(|_| redirected.is_none());
        let (addrs, tunnel) = match proxy {
            None => {
                let (dns, addrs) = self
                    .resolver
                    .resolve(&host, port, self.plan.phase_limit, trace)
                    .await?;
                found.dns = dns;
                (addrs, None)
            }
            Some(proxy) => {
                let to = self
                    .destination(proxy, &host, host_text, port, trace, found)
                    .await?;
                let proxy_host = endpoint_host(&proxy.host).ok_or_else(no_host)?;
                let (dns, addrs) = self
                    .resolver
                    .resolve(
                        &borrowed(&proxy_host),
                        proxy.port,
                        self.plan.phase_limit,
                        trace,
                    )
                    .await?;
                if found.dns.is_none() {
                    found.dns = dns;
                }
                (addrs, Some(Tunnel { proxy, to }))
            }
        };
        let on_origin = url.origin() == self.plan.url.origin() && tunnel.is_none();
        let addrs = self.chosen(&host, addrs, on_origin)?;
        let target = Target {
            host: host_text,
            https: url.scheme() == "https",
            addrs: &addrs,
            tunnel,
        };
        let opened = match C::open(&target, &self.settings, setup, trace).await {
            Ok(opened) => opened,
            Err(f) if f.kind == FailureKind::Blocked => {
                return Err(self.hide_refused_addresses(f, &host, port, found));
            }
            Err(f) => return Err(f),
        };
        let id = self.next_id;
        self.next_id += 1;
        Ok(Pooled {
            conn: opened.conn,
            origin,
            id,
            requests: 0,
            idle_since: trace::now(),
            local: opened.local,
            remote: opened.remote,
            tls: opened.tls,
            chain: opened.chain,
            proxy: opened.proxy,
            tcp_at_connect: opened.tcp_at_connect,
        })
    }

    /// The resolved `addrs` this run may dial: those of the probe's family
    /// (`-4` / `-6`) and, `on_origin`, only a side run's pinned address; a
    /// dns-phase failure saying why when none is left.
    fn chosen(
        &self,
        host: &Host<&str>,
        addrs: Vec<SocketAddr>,
        on_origin: bool,
    ) -> Result<Vec<SocketAddr>, Failure> {
        let family = self.plan.options.family;
        let kept: Vec<SocketAddr> = addrs
            .into_iter()
            .filter(|a| family.admits(a.ip()))
            .collect();
        if kept.is_empty() {
            let message = match host {
                Host::Domain(name) => format!(
                    "{name} has no {} address ({} record), and the probe asks for {} only",
                    family.name(),
                    family.record(),
                    family.name()
                ),
                literal => format!(
                    "{literal} is not an {} address, and the probe asks for {} only",
                    family.name(),
                    family.name()
                ),
            };
            return Err(failure(Phase::Dns, FailureKind::NameNotFound, message));
        }
        let Some(pin) = self.pin.filter(|_| on_origin) else {
            return Ok(kept);
        };
        let pinned: Vec<SocketAddr> = kept.into_iter().filter(|a| a.ip() == pin).collect();
        if pinned.is_empty() {
            return Err(failure(
                Phase::Dns,
                FailureKind::Dns,
                format!("{host} no longer resolves to {pin}, the address this run is pinned to"),
            ));
        }
        Ok(pinned)
    }

    /// Where a proxy tunnel leads: the URL's name, which the proxy resolves
    /// (HTTP `CONNECT`, `socks5h`), or for plain `socks5` the first address
    /// looked up here (that lookup is the attempt's DNS phase and facts).
    async fn destination<'h>(
        &self,
        proxy: &Proxy,
        host: &Host<&str>,
        name: &'h str,
        port: u16,
        trace: &mut AttemptTrace,
        found: &mut Findings,
    ) -> Result<Destination<'h>, Failure> {
        if !proxy.resolves_locally() {
            return Ok(Destination::Name(name, port));
        }
        let (dns, addrs) = self
            .resolver
            .resolve(host, port, self.plan.phase_limit, trace)
            .await?;
        found.dns = dns;
        let addr = addrs
            .into_iter()
            .find(|a| self.settings.policy.check(*a).is_ok())
            .ok_or_else(|| {
                failure(
                    Phase::Dns,
                    FailureKind::Blocked,
                    format!("refusing to tunnel to {name}: no allowed address"),
                )
            })?;
        Ok(Destination::Addr(addr))
    }
}

/// Request headers that carry credentials: sent to the probed origin only.
pub const SENSITIVE_HEADERS: &[&str] = &["authorization", "cookie", "proxy-authorization"];

/// An attempt's TCP snapshots, `None` when none was taken (HTTP/3, or
/// off Linux).
fn tcp_snapshots(
    at_connect: Option<TcpInfo>,
    at_first_byte: Option<TcpInfo>,
    at_end: Option<TcpInfo>,
) -> Option<TcpInfoSnapshots> {
    let snapshots = TcpInfoSnapshots {
        at_connect,
        at_first_byte,
        at_end,
    };
    (snapshots != TcpInfoSnapshots::default()).then_some(snapshots)
}

/// The request `plan` sends to `url` with `method` (the body only while the
/// method is the one asked for).
pub fn request_spec(plan: &Plan, url: &Url, method: Method) -> RequestSpec {
    // A redirect that changed the method (POST to GET after a 303) drops the body.
    let body = plan.body.clone().filter(|_| method == plan.options.method);
    let mut headers = headers_for(plan, url);
    if body.is_some() {
        headers.extend(content_type(plan, &headers));
    }
    RequestSpec {
        method: http::Method::from_bytes(method.as_str().as_bytes()).unwrap_or(http::Method::GET),
        url: url.clone(),
        headers,
        body: body.unwrap_or_default(),
        max_body: plan.options.max_body_bytes,
        phase_limit: plan.phase_limit,
    }
}

/// The plan's extra headers for a request to `url`: all of them on the
/// plan's own origin; without [`SENSITIVE_HEADERS`] once a redirect has
/// changed the scheme, host or port, as curl does, so a redirect cannot
/// hand the user's credentials to another origin.
fn headers_for(plan: &Plan, url: &Url) -> Vec<(http::HeaderName, http::HeaderValue)> {
    let same_origin = url.scheme() == plan.url.scheme()
        && url.host() == plan.url.host()
        && url.port_or_known_default() == plan.url.port_or_known_default();
    plan.headers
        .iter()
        .filter(|(name, _)| same_origin || !SENSITIVE_HEADERS.contains(&name.as_str()))
        .cloned()
        .collect()
}

/// `host` borrowed, as the resolver takes it.
fn borrowed(host: &Host) -> Host<&str> {
    match host {
        Host::Domain(name) => Host::Domain(name.as_str()),
        Host::Ipv4(ip) => Host::Ipv4(*ip),
        Host::Ipv6(ip) => Host::Ipv6(*ip),
    }
}

/// The body's `Content-Type` from its options, unless `headers` set one.
fn content_type(
    plan: &Plan,
    headers: &[(http::HeaderName, http::HeaderValue)],
) -> Option<(http::HeaderName, http::HeaderValue)> {
    if headers
        .iter()
        .any(|(name, _)| name == http::header::CONTENT_TYPE)
    {
        return None;
    }
    let given = plan.options.body.as_ref()?.content_type.as_deref()?;
    let value = http::HeaderValue::from_str(given.trim()).ok()?;
    Some((http::header::CONTENT_TYPE, value))
}

/// An endpoint's host (`Alt-Svc`, HTTPS record) as given: a bare IPv6
/// address (`::1`, with or without brackets), an IPv4 address or a name.
fn endpoint_host(text: &str) -> Option<Host> {
    let bare = text.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => Some(Host::Ipv4(ip)),
        Ok(std::net::IpAddr::V6(ip)) => Some(Host::Ipv6(ip)),
        Err(_) => Host::parse(text).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_hosts_keep_ipv6_whole() {
        assert_eq!(
            endpoint_host("::1"),
            Some(Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
        );
        assert_eq!(
            endpoint_host("[::1]"),
            Some(Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
        );
        assert_eq!(
            endpoint_host("127.0.0.1"),
            Some(Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
        );
        assert_eq!(
            endpoint_host("alt.example"),
            Some(Host::Domain("alt.example".to_owned()))
        );
        assert_eq!(endpoint_host("bad host"), None);
    }
}
