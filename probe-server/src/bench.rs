//! The load comparison engine behind `h123 bench` and `POST /api/v1/benches`:
//! the same request over HTTP/1.1, HTTP/2 and HTTP/3 in turn, as fast as the
//! target answers or at a fixed rate, counted into HDR histograms.
//!
//! Connections are set up exactly as a probe's (same safety policy, TLS and
//! ALPN checks, through each protocol's [`crate::probe::connection::Connection`]),
//! but requests go through the lean [`crate::probe::load::Load`] path: no phase recording,
//! no wire tap, so the generator is not the bottleneck.

pub mod live;
pub mod plan;
pub mod run;
pub mod schedule;
pub mod tally;

pub use live::BenchLive;
pub use plan::{BenchLimits, BenchPlan};

use crate::probe::connection::ConnectSettings;
use crate::probe::dns::NameResolver;
use crate::probe::egress::Egress;
use crate::probe::guard::ConnectPolicy;
use crate::probe::tls::TrustSettings;
use crate::probe::trace::{self, AttemptTrace};
use crate::probe::{h1::H1, h2::H2, h3::H3};
use h123_shared::Protocol;
use h123_shared::bench::{BenchResult, BenchRun};
use run::Endpoint;
use std::net::SocketAddr;
use std::sync::Arc;
use url::Host;

/// Runs benches with one trust store and one safety policy.
#[derive(Clone, Debug)]
pub struct Bencher {
    trust: TrustSettings,
    policy: ConnectPolicy,
    dns_server: Option<SocketAddr>,
    egress: Option<Arc<Egress>>,
}

impl Bencher {
    /// A bencher that trusts `trust` and connects only where `policy` allows.
    pub fn new(trust: TrustSettings, policy: ConnectPolicy) -> Self {
        Bencher {
            trust,
            policy,
            dns_server: None,
            egress: None,
        }
    }

    /// The same bencher, every connection's reads charged to `egress` (a
    /// server's bench: its reads stop when the budget is spent).
    pub fn with_egress(self, egress: Arc<Egress>) -> Self {
        Bencher {
            egress: Some(egress),
            ..self
        }
    }

    /// The same bencher, resolving names with `dns_server` instead of the system's resolver.
    pub fn with_dns_server(self, dns_server: Option<SocketAddr>) -> Self {
        Bencher { dns_server, ..self }
    }

    /// Runs `plan`, protocol after protocol, reporting to `live`; after
    /// [`BenchLive::cancel`] it returns what was measured so far.
    pub async fn run(&self, plan: &BenchPlan, live: &BenchLive) -> BenchResult {
        let mut result = BenchResult::new(plan.options().clone(), trace::unix_ms());
        let endpoint = match self.endpoint(plan).await {
            Ok(endpoint) => Arc::new(endpoint),
            Err(failure) => {
                result.runs = plan
                    .options()
                    .protocols
                    .iter()
                    .map(|&protocol| BenchRun {
                        failure: Some(failure.clone()),
                        ..BenchRun::new(protocol)
                    })
                    .collect();
                return result;
            }
        };
        result.addresses = endpoint.addrs.iter().map(|a| a.ip().to_string()).collect();
        for &protocol in &plan.options().protocols {
            if live.is_cancelled() {
                break;
            }
            // Each protocol crosses an emulated network of its own, as a probe's runs do.
            let settings = endpoint.settings.across(plan.options().network.as_ref());
            let link = settings.link.clone();
            let endpoint = Arc::new(Endpoint {
                settings,
                ..Endpoint::clone(&endpoint)
            });
            let mut run = match protocol {
                Protocol::H1 => run::run::<H1>(protocol, plan, endpoint, live).await,
                Protocol::H2 => run::run::<H2>(protocol, plan, endpoint, live).await,
                Protocol::H3 => run::run::<H3>(protocol, plan, endpoint, live).await,
            };
            run.emulated = link.map(|l| l.path(protocol));
            result.runs.push(run);
        }
        result
    }

    /// Resolves the target once for the whole bench.
    async fn endpoint(&self, plan: &BenchPlan) -> Result<Endpoint, h123_shared::Failure> {
        let url = &plan.request.url;
        let host = url
            .host()
            .map(|h| h.to_owned())
            .unwrap_or(Host::Domain(String::new()));
        let borrowed = match &host {
            Host::Domain(name) => Host::Domain(name.as_str()),
            Host::Ipv4(ip) => Host::Ipv4(*ip),
            Host::Ipv6(ip) => Host::Ipv6(*ip),
        };
        let port = url.port_or_known_default().unwrap_or(443);
        let mut scratch = AttemptTrace::start();
        let (_, addrs) = NameResolver::new(self.dns_server, Vec::new())
            .resolve(&borrowed, port, plan.timeout, &mut scratch)
            .await?;
        Ok(Endpoint {
            host: url
                .host_str()
                .unwrap_or_default()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            https: url.scheme() == "https",
            addrs,
            settings: ConnectSettings {
                policy: self.policy.clone(),
                trust: self.trust.clone(),
                insecure: plan.options().insecure,
                phase_limit: plan.timeout,
                quic_limit: None,
                sessions: None,
                qlog_dir: None,
                proxy: None,
                early_data: true,
                link: None,
                migrate: None,
                egress: self.egress.clone(),
            },
        })
    }
}
