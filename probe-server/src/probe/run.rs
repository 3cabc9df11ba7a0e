//! Runs one protocol's attempts: fresh connection first, reuse after (or a
//! new one each time in cold mode), redirect hops as their own entries.

use super::budget::{MAX_RECORD_BYTES, RecordBudget};
use super::connection::{ConnectSettings, Connection, Target};
use super::dns::NameResolver;
use super::failure::{failure, timed_out};
use super::http::{Exchange, RequestSpec};
use super::plan::Plan;
use super::trace::{self, AttemptId, AttemptTrace, Progress};
use h123_shared::api::ProbeEvent;
use h123_shared::{
    Attempt, ConnectionInfo, ConnectionMode, DnsInfo, Failure, FailureKind, Micros, Phase,
    Protocol, ProtocolRun, QuicInfo, TlsInfo, TtfbSource,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
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
    budget: Option<&'a RecordBudget>,
}

/// What one attempt found out besides its timeline.
#[derive(Default)]
struct Findings {
    dns: Option<DnsInfo>,
    connection: Option<ConnectionInfo>,
    tls: Option<TlsInfo>,
    quic: Option<QuicInfo>,
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
        ProtocolRunner {
            protocol,
            plan,
            resolver,
            settings,
            progress,
            pool: Vec::new(),
            next_id: 1,
            connect_to: None,
            budget: None,
        }
    }

    /// Connects to `host:port` instead of the URL's authority for requests to
    /// the plan's origin (like curl's `--connect-to`), keeping the URL's name
    /// for TLS: how an `Alt-Svc` or HTTPS-record endpoint is reached.
    pub fn connect_to(mut self, endpoint: Option<(String, u16)>) -> Self {
        self.connect_to = endpoint;
        self
    }

    /// Spends `budget` (this run's share of the record's size cap): an
    /// attempt that does not fit is dropped and the run stops, saying why.
    pub fn budget(mut self, budget: &'a RecordBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Runs every attempt, reporting each as it completes.
    pub async fn run(mut self) -> ProtocolRun {
        let options = &self.plan.options;
        let hops = if options.follow_redirects {
            options.max_redirects
        } else {
            0
        };
        let mut attempts = Vec::new();
        let mut cut_short = None;
        let mut stopped = None;
        'attempts: for number in 1..=options.repeat {
            if number > 1 && !self.plan.idle_gap.is_zero() {
                tokio::time::sleep(self.plan.idle_gap).await;
            }
            let mut url = self.plan.url.clone();
            let chain_start = trace::now();
            for hop in 0..=hops {
                let (attempt, next) = self.attempt(number, hop, &url, chain_start).await;
                if self.budget.is_some_and(|b| !b.take(&attempt)) {
                    cut_short = Some(format!(
                        "stopped before attempt {number}, hop {hop}: the record reached its size cap of {} KiB",
                        MAX_RECORD_BYTES / 1024
                    ));
                    break 'attempts;
                }
                self.progress.send(ProbeEvent::Attempt {
                    protocol: self.protocol,
                    attempt: Box::new(attempt.clone()),
                });
                let silent = silent_setup(&attempt);
                attempts.push(attempt);
                if let Some(reason) = silent {
                    let reason = format!("attempt {number} {reason}; later attempts were not made");
                    self.progress.send(ProbeEvent::Stopped {
                        protocol: self.protocol,
                        reason: reason.clone(),
                    });
                    stopped = Some(reason);
                    break 'attempts;
                }
                match next {
                    Some(next) if hop < hops => url = next,
                    _ => break,
                }
            }
        }
        ProtocolRun {
            protocol: self.protocol,
            skipped: None,
            stopped,
            cut_short,
            discovery: None,
            attempts,
        }
    }

    /// One entry, a hop of the chain that started at `chain_start`; also
    /// returns where a followed redirect leads.
    async fn attempt(
        &mut self,
        number: u32,
        hop: u32,
        url: &Url,
        chain_start: Instant,
    ) -> (Attempt, Option<Url>) {
        let id = AttemptId {
            protocol: self.protocol,
            attempt: number,
            hop,
        };
        let mut trace = AttemptTrace::observed(self.progress.clone(), Some(id));
        let chain_start_us = (hop > 0).then(|| trace.since(chain_start));
        let mut found = Findings::default();
        let limit = self.plan.timeout;
        let steps = tokio::time::timeout(limit, self.steps(url, &mut trace, &mut found)).await;
        let failure = match steps {
            Ok(Ok(())) => None,
            Ok(Err(f)) => Some(f),
            Err(_) => {
                let mut f = timed_out(trace.open_phase().unwrap_or(Phase::Dns), limit);
                f.message = format!(
                    "attempt exceeded its total timeout of {} ms",
                    limit.as_millis()
                );
                Some(f)
            }
        };
        let next = found
            .exchange
            .response
            .as_ref()
            .filter(|r| (300..400).contains(&r.status))
            .and_then(|r| r.header("location"))
            .and_then(|location| url.join(location).ok())
            .filter(|next| matches!(next.scheme(), "http" | "https"));
        let attempt = Attempt {
            attempt: number,
            hop,
            url: url.to_string(),
            started_at_unix_ms: trace.started_at_unix_ms(),
            chain_start_us,
            phases: trace.finish(),
            ttfb_source: found.exchange.ttfb_source.unwrap_or(match self.protocol {
                Protocol::H2 => TtfbSource::Http2HeadersFrame,
                _ => TtfbSource::TransportRead,
            }),
            dns: found.dns,
            connection: found.connection,
            tls: found.tls,
            response: found.exchange.response,
            quic: found.quic,
            failure,
        };
        (attempt, next)
    }

    async fn steps(
        &mut self,
        url: &Url,
        trace: &mut AttemptTrace,
        found: &mut Findings,
    ) -> Result<(), Failure> {
        let origin = origin_of(url);
        let limit = self.plan.phase_limit;
        let mut pooled = None;
        if let Some(index) = self.pool.iter().position(|p| p.origin == origin) {
            let mut candidate = self.pool.swap_remove(index);
            if candidate.conn.ready(limit).await {
                pooled = Some(candidate);
            }
        }
        let reused = pooled.is_some();
        let mut pooled = match pooled {
            Some(p) => p,
            None => self.open(url, origin, trace, found).await?,
        };
        let now = trace::now();
        let idle = reused
            .then(|| Micros(now.saturating_duration_since(pooled.idle_since).as_micros() as u64));
        pooled.requests += 1;
        found.connection = Some(ConnectionInfo {
            id: pooled.id,
            reused,
            was_idle: reused,
            idle_us: idle,
            request_index: pooled.requests,
            local_addr: pooled.local.map(|a| a.to_string()),
            remote_addr: pooled.remote.to_string(),
        });
        found.tls = pooled.tls.clone();
        let spec = RequestSpec {
            method: match self.plan.options.method {
                h123_shared::Method::Get => http::Method::GET,
                h123_shared::Method::Head => http::Method::HEAD,
            },
            url: url.clone(),
            headers: headers_for(self.plan, url),
            max_body: self.plan.options.max_body_bytes,
            phase_limit: limit,
        };
        let exchanged = pooled
            .conn
            .exchange(&spec, trace, &mut found.exchange)
            .await;
        found.quic = pooled.conn.quic_facts();
        if let Some(tls) = pooled.conn.tls_facts() {
            pooled.tls = Some(tls.clone());
            found.tls = Some(tls);
        }
        exchanged?;
        if found.exchange.reusable && self.plan.options.mode == ConnectionMode::Warm {
            pooled.idle_since = trace::now();
            self.pool.push(pooled);
        }
        Ok(())
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
        let host = match &host {
            Host::Domain(name) => Host::Domain(name.as_str()),
            Host::Ipv4(ip) => Host::Ipv4(*ip),
            Host::Ipv6(ip) => Host::Ipv6(*ip),
        };
        let (dns, addrs) = self
            .resolver
            .resolve(&host, port, self.plan.phase_limit, trace)
            .await?;
        found.dns = dns;
        let host_text = url.host_str().unwrap_or_default();
        let target = Target {
            host: host_text.trim_start_matches('[').trim_end_matches(']'),
            https: url.scheme() == "https",
            addrs: &addrs,
        };
        let opened = match C::open(&target, &self.settings, trace).await {
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
        })
    }
}

/// Request headers that carry credentials: sent to the probed origin only.
pub const SENSITIVE_HEADERS: &[&str] = &["authorization", "cookie", "proxy-authorization"];

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
