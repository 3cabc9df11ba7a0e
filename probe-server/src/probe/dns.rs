//! Name resolution, timed: hickory-resolver against the system's or a given
//! DNS server, with curl-style pinned addresses and IP literals skipping it.

use super::failure::{failure, timed_out};
use super::network::Link;
use super::network::link::until;
use super::trace::AttemptTrace;
use h123_shared::timeline::TraceEvent;
use h123_shared::{DnsInfo, Failure, FailureKind, HttpsRecord, Phase, ResolveOverride};
use hickory_resolver::TokioResolver;
use hickory_resolver::config::{
    ConnectionConfig, NameServerConfig, ResolveHosts, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::RData;
use hickory_resolver::proto::rr::RecordType;
use hickory_resolver::proto::rr::rdata::svcb::{SvcParamKey, SvcParamValue};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::time::error::Elapsed;
use url::Host;

/// Resolves names for one probe. Caching is off, so every new connection
/// pays (and shows) a real lookup. The hickory resolver is built at the first
/// name that needs it (IP literals and pinned names never do), and clones share it.
#[derive(Clone)]
pub struct NameResolver {
    server: Option<SocketAddr>,
    resolver: Arc<OnceLock<Result<TokioResolver, String>>>,
    source: String,
    pins: Vec<ResolveOverride>,
    /// The emulated network a lookup's query and answer cross, if any.
    link: Option<Arc<Link>>,
}

/// Bytes of a typical DNS query on the wire (IPv4 and UDP headers, a name).
const DNS_QUERY_BYTES: usize = 28 + 40;
/// Bytes of a typical answer with a few address records.
const DNS_ANSWER_BYTES: usize = 28 + 120;

impl NameResolver {
    /// A resolver using `server` (`ip:port`) or else the system configuration.
    pub fn new(server: Option<SocketAddr>, pins: Vec<ResolveOverride>) -> Self {
        NameResolver {
            server,
            resolver: Arc::default(),
            source: server.map_or_else(|| "system".to_owned(), |addr| addr.to_string()),
            pins,
            link: None,
        }
    }

    /// The same resolver (sharing its lookups' server) with `pins` instead of its own.
    pub fn with_pins(&self, pins: Vec<ResolveOverride>) -> NameResolver {
        NameResolver {
            pins,
            ..self.clone()
        }
    }

    /// The hickory resolver, built on first use.
    fn hickory(&self) -> Result<&TokioResolver, &String> {
        self.resolver.get_or_init(|| build(self.server)).as_ref()
    }

    /// The addresses to try for `host:port`, recording the lookup in `trace`.
    /// IP literals and pinned names take no time and record no DNS phase.
    pub async fn resolve(
        &self,
        host: &Host<&str>,
        port: u16,
        limit: Duration,
        trace: &mut AttemptTrace,
    ) -> Result<(Option<DnsInfo>, Vec<SocketAddr>), Failure> {
        let name = match host {
            Host::Ipv4(ip) => return Ok((None, vec![SocketAddr::new((*ip).into(), port)])),
            Host::Ipv6(ip) => return Ok((None, vec![SocketAddr::new((*ip).into(), port)])),
            Host::Domain(name) => *name,
        };
        if let Some(addrs) = self.pinned(name, port) {
            let info = DnsInfo {
                source: "pinned".to_owned(),
                addresses: addrs.iter().map(|a| a.ip().to_string()).collect(),
            };
            return Ok((Some(info), addrs));
        }
        let resolver = self
            .hickory()
            .map_err(|e| failure(Phase::Dns, FailureKind::Dns, e.clone()))?;
        trace.record(TraceEvent::DnsStart);
        let exchange = async {
            let answer = resolver.lookup_ip(name).await;
            if let Some(link) = &self.link {
                // One query up and its answer down (no loss: see `Emulation`).
                until(link.exchange_done(super::trace::now(), DNS_QUERY_BYTES, DNS_ANSWER_BYTES))
                    .await;
            }
            answer
        };
        let lookup = tokio::time::timeout(limit, exchange).await;
        let ips: Vec<IpAddr> = match lookup {
            Err(_) => return Err(timed_out(Phase::Dns, limit)),
            // hickory's own text of these errors is debug output (`Query { name: ... }`).
            Ok(Err(e)) if e.is_nx_domain() => {
                return Err(failure(
                    Phase::Dns,
                    FailureKind::NameNotFound,
                    format!("{name} does not exist (the DNS answered NXDOMAIN)"),
                ));
            }
            Ok(Err(e)) if e.is_no_records_found() => {
                return Err(failure(
                    Phase::Dns,
                    FailureKind::NameNotFound,
                    format!("{name} exists but has no address (A or AAAA) records"),
                ));
            }
            Ok(Err(e)) => {
                return Err(failure(
                    Phase::Dns,
                    FailureKind::Dns,
                    format!("{name}: {e}"),
                ));
            }
            Ok(Ok(found)) => found.iter().collect(),
        };
        trace.record(TraceEvent::DnsDone);
        if ips.is_empty() {
            return Err(failure(
                Phase::Dns,
                FailureKind::NameNotFound,
                format!("{name}: no address records"),
            ));
        }
        let info = DnsInfo {
            source: self.source.clone(),
            addresses: ips.iter().map(IpAddr::to_string).collect(),
        };
        Ok((
            Some(info),
            ips.into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect(),
        ))
    }

    /// The same resolver, its lookups crossing `link` (a protocol run's
    /// emulated network) when there is one.
    pub fn behind(&self, link: Option<Arc<Link>>) -> NameResolver {
        NameResolver {
            link,
            ..self.clone()
        }
    }

    /// Whether `name` is pinned (on any port), so it is never looked up.
    pub fn is_pinned(&self, name: &str) -> bool {
        self.pins.iter().any(|p| pins_name(p, name))
    }

    /// The best service-mode HTTPS (SVCB) record of `name`, if it has one;
    /// `Err` when no answer came within `limit`.
    /// Not part of any attempt's timeline: discovery happens between runs.
    pub async fn https_record(
        &self,
        name: &str,
        limit: Duration,
    ) -> Result<Option<HttpsRecord>, Elapsed> {
        let Ok(resolver) = self.hickory() else {
            return Ok(None);
        };
        let exchange = async {
            let answer = resolver.lookup(name, RecordType::HTTPS).await;
            if let Some(link) = &self.link {
                // Across the run's link, as an address lookup is.
                until(link.exchange_done(super::trace::now(), DNS_QUERY_BYTES, DNS_ANSWER_BYTES))
                    .await;
            }
            answer
        };
        let Ok(lookup) = tokio::time::timeout(limit, exchange).await? else {
            return Ok(None);
        };
        let mut records: Vec<HttpsRecord> = lookup
            .answers()
            .iter()
            .filter_map(|record| match &record.data {
                RData::HTTPS(https) if https.0.svc_priority > 0 => Some(&https.0),
                _ => None,
            })
            .map(|svcb| {
                let mut record = HttpsRecord {
                    priority: svcb.svc_priority,
                    target: svcb.target_name.to_string(),
                    alpn: Vec::new(),
                    port: None,
                    ipv4_hints: Vec::new(),
                    ipv6_hints: Vec::new(),
                };
                for (key, value) in &svcb.svc_params {
                    match (key, value) {
                        (SvcParamKey::Alpn, SvcParamValue::Alpn(alpn)) => {
                            record.alpn = alpn.0.clone()
                        }
                        (SvcParamKey::Port, SvcParamValue::Port(port)) => record.port = Some(*port),
                        (SvcParamKey::Ipv4Hint, SvcParamValue::Ipv4Hint(hint)) => {
                            record.ipv4_hints = hint.0.iter().map(|a| a.0.to_string()).collect();
                        }
                        (SvcParamKey::Ipv6Hint, SvcParamValue::Ipv6Hint(hint)) => {
                            record.ipv6_hints = hint.0.iter().map(|a| a.0.to_string()).collect();
                        }
                        _ => {}
                    }
                }
                record
            })
            .collect();
        records.sort_by_key(|r| r.priority);
        Ok(records.into_iter().next())
    }

    fn pinned(&self, name: &str, port: u16) -> Option<Vec<SocketAddr>> {
        let addrs: Vec<SocketAddr> = self
            .pins
            .iter()
            .filter(|p| p.port == port && pins_name(p, name))
            .filter_map(|p| {
                p.addr
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<IpAddr>()
                    .ok()
            })
            .map(|ip| SocketAddr::new(ip, port))
            .collect();
        (!addrs.is_empty()).then_some(addrs)
    }
}

/// A hickory resolver, caching off, asking `server` or else the system's servers.
fn build(server: Option<SocketAddr>) -> Result<TokioResolver, String> {
    let mut options = ResolverOpts::default();
    options.cache_size = 0;
    match server {
        Some(addr) => {
            options.use_hosts_file = ResolveHosts::Never;
            let mut udp = ConnectionConfig::udp();
            udp.port = addr.port();
            let mut tcp = ConnectionConfig::tcp();
            tcp.port = addr.port();
            let config = ResolverConfig::from_name_servers(vec![NameServerConfig::new(
                addr.ip(),
                true,
                vec![udp, tcp],
            )]);
            TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
                .with_options(options)
                .build()
                .map_err(|e| e.to_string())
        }
        None => TokioResolver::builder_tokio()
            .map(|b| b.with_options(options))
            .and_then(|b| b.build())
            .map_err(|e| format!("system resolver unavailable: {e}")),
    }
}

/// Whether `pin` names `name` (case and a trailing dot aside).
fn pins_name(pin: &ResolveOverride, name: &str) -> bool {
    pin.host
        .trim_end_matches('.')
        .eq_ignore_ascii_case(name.trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(host: &str, port: u16, addr: &str) -> ResolveOverride {
        ResolveOverride {
            host: host.into(),
            port,
            addr: addr.into(),
        }
    }

    #[tokio::test]
    async fn literals_and_pins_skip_the_lookup() {
        let resolver = NameResolver::new(None, vec![pin("Example.COM", 443, "[::1]")]);
        let mut trace = AttemptTrace::start();
        let limit = Duration::from_secs(1);
        let (info, addrs) = resolver
            .resolve(&Host::Domain("example.com."), 443, limit, &mut trace)
            .await
            .unwrap();
        assert_eq!(info.unwrap().source, "pinned");
        assert_eq!(addrs, vec!["[::1]:443".parse().unwrap()]);
        let (info, addrs) = resolver
            .resolve(&Host::Ipv4([127, 0, 0, 1].into()), 80, limit, &mut trace)
            .await
            .unwrap();
        assert!(info.is_none());
        assert_eq!(addrs, vec!["127.0.0.1:80".parse().unwrap()]);
        assert!(trace.events().is_empty());
    }

    #[test]
    fn pins_match_only_their_port() {
        let resolver = NameResolver::new(None, vec![pin("a.test", 443, "10.0.0.1")]);
        assert!(resolver.pinned("a.test", 80).is_none());
        assert!(resolver.pinned("A.test", 443).is_some());
    }
}
