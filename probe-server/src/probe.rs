//! The probe engine: runs a [`Plan`] over each protocol and returns the
//! measured [`ProbeResult`].

pub mod addresses;
pub mod budget;
pub mod burst;
pub mod cert;
pub mod connection;
pub mod discover;
pub mod dns;
pub mod failure;
pub mod guard;
pub mod h1;
pub mod h2;
pub mod h2_frames;
pub mod h3;
pub mod http;
pub mod keylog;
pub mod migration;
pub mod network;
pub mod plan;
pub mod proxy;
pub mod qlog;
pub mod quic_socket;
pub mod run;
pub mod tcp;
pub mod tcp_info;
pub mod tls;
pub mod trace;
pub mod warmup;
pub mod wire;

use budget::RecordBudget;
use connection::ConnectSettings;
use dns::NameResolver;
use guard::ConnectPolicy;
use h123_shared::api::ProbeEvent;
use h123_shared::{ProbeResult, Protocol, ProtocolRun, SCHEMA_VERSION};
use plan::Plan;
use proxy::ProxySettings;
use run::ProtocolRunner;
use std::sync::Arc;
use tls::TrustSettings;
use trace::Progress;

/// Runs probes with one trust store and one safety policy.
#[derive(Clone, Debug)]
pub struct Engine {
    trust: TrustSettings,
    policy: ConnectPolicy,
    qlog_dir: Option<std::path::PathBuf>,
    proxy: Option<Arc<ProxySettings>>,
}

impl Engine {
    /// An engine that trusts `trust` and connects only where `policy` allows.
    pub fn new(trust: TrustSettings, policy: ConnectPolicy) -> Self {
        Engine {
            trust,
            policy,
            qlog_dir: None,
            proxy: None,
        }
    }

    /// Writes a qlog of every QUIC connection into `dir` (for qvis or any
    /// qlog viewer); a local user's choice, never the server's.
    pub fn with_qlog(mut self, dir: std::path::PathBuf) -> Self {
        self.qlog_dir = Some(dir);
        self
    }

    /// The same engine tunnelling through `proxy` where it applies (the
    /// CLI's `-x` and `--proxy-env`; `h123 serve` never sets one). HTTP/3
    /// cannot cross a TCP proxy, so its run is skipped when the URL is proxied.
    pub fn with_proxy(mut self, proxy: ProxySettings) -> Self {
        self.proxy = (!proxy.is_empty()).then(|| Arc::new(proxy));
        self
    }

    /// Runs `plan`, protocol after protocol.
    pub async fn run(&self, plan: &Plan) -> ProbeResult {
        self.run_observed(plan, Progress::default()).await
    }

    /// Runs `plan`, reporting phases and attempts to `progress` as they happen.
    pub async fn run_observed(&self, plan: &Plan, progress: Progress) -> ProbeResult {
        let started_at_unix_ms = trace::unix_ms();
        let resolver = NameResolver::new(plan.dns_server, plan.options.resolve.clone());
        let settings = ConnectSettings {
            policy: self.policy.clone(),
            trust: self.trust.clone(),
            insecure: plan.options.insecure,
            phase_limit: plan.phase_limit,
            sessions: None,
            qlog_dir: self.qlog_dir.clone(),
            proxy: self.proxy.clone(),
            early_data: true,
            link: None,
            migrate: plan.options.migrate.clone(),
        };
        // HTTP/3 runs last, so the h1/h2 responses can advertise it (Alt-Svc);
        // the result keeps the order asked for.
        let mut order: Vec<Protocol> = plan.options.protocols.clone();
        order.sort_by_key(|p| *p == Protocol::H3);
        let mut runs = Vec::new();
        for protocol in order {
            let budget = RecordBudget::share(&plan.options);
            let settings = settings.across(plan.options.network.as_ref());
            let resolver = resolver.behind(settings.link.clone());
            let mut run = match protocol {
                Protocol::H1 => {
                    run_tcp::<h1::H1>(protocol, plan, &resolver, &settings, &progress, &budget)
                        .await
                }
                Protocol::H2 => {
                    run_tcp::<h2::H2>(protocol, plan, &resolver, &settings, &progress, &budget)
                        .await
                }
                Protocol::H3 => {
                    self.run_h3(plan, &runs, &resolver, &settings, &progress, &budget)
                        .await
                }
            };
            if let Some(link) = settings.link.as_ref().filter(|_| run.skipped.is_none()) {
                run.emulated = Some(link.path(protocol));
            }
            runs.push(run);
        }
        runs.sort_by_key(|r| plan.options.protocols.iter().position(|p| *p == r.protocol));
        ProbeResult {
            vantage: None,
            schema_version: SCHEMA_VERSION,
            started_at_unix_ms,
            options: plan.options.clone(),
            runs,
            analysis: None,
        }
    }

    /// Discovers HTTP/3, runs it where found, and records the verdict.
    async fn run_h3(
        &self,
        plan: &Plan,
        earlier: &[ProtocolRun],
        resolver: &NameResolver,
        settings: &ConnectSettings,
        progress: &Progress,
        budget: &RecordBudget,
    ) -> ProtocolRun {
        if let Some(proxy) = settings.proxy.as_ref().and_then(|p| p.for_url(&plan.url)) {
            let reason = format!(
                "HTTP/3 runs over UDP and cannot go through the {} proxy {}; not attempted (no discovery either, so nothing is dialled around the proxy)",
                proxy.kind.as_str(),
                proxy.address()
            );
            progress.send(ProbeEvent::Skipped {
                protocol: Protocol::H3,
                reason: reason.clone(),
            });
            return ProtocolRun {
                emulated: None,
                streams: None,
                protocol: Protocol::H3,
                skipped: Some(reason),
                stopped: None,
                cut_short: None,
                attempts: Vec::new(),
                discovery: None,
                other_addresses: Vec::new(),
            };
        }
        let mut discovery = discover::discover(plan, earlier, resolver).await;
        let Some(endpoint) = discover::endpoint(&discovery) else {
            progress.send(ProbeEvent::Skipped {
                protocol: Protocol::H3,
                reason: discovery.detail.clone(),
            });
            return ProtocolRun {
                emulated: None,
                streams: None,
                protocol: Protocol::H3,
                skipped: Some(discovery.detail.clone()),
                stopped: None,
                cut_short: None,
                attempts: Vec::new(),
                discovery: Some(discovery),
                other_addresses: Vec::new(),
            };
        };
        let mut run =
            ProtocolRunner::<h3::H3>::new(Protocol::H3, plan, resolver, settings, progress.clone())
                .connect_to(Some(endpoint.clone()))
                .budget(budget)
                .run()
                .await;
        run.streams = burst::after::<h3::H3>(plan, settings, &run).await;
        discover::conclude(&mut discovery, &run);
        let ips = addresses::others(plan, &run, settings, endpoint.1);
        run.other_addresses = addresses::side_runs::<h3::H3>(
            Protocol::H3,
            plan,
            resolver,
            settings,
            budget,
            Some(endpoint),
            ips,
        )
        .await;
        run.discovery = Some(discovery);
        run
    }
}

/// One TCP protocol's run (HTTP/1.1 or HTTP/2), then with `--all-addresses`
/// its side runs to the host's other addresses.
async fn run_tcp<C: connection::Connection + crate::bench::load::Load>(
    protocol: Protocol,
    plan: &Plan,
    resolver: &NameResolver,
    settings: &ConnectSettings,
    progress: &Progress,
    budget: &RecordBudget,
) -> ProtocolRun {
    let mut run = ProtocolRunner::<C>::new(protocol, plan, resolver, settings, progress.clone())
        .budget(budget)
        .run()
        .await;
    run.streams = burst::after::<C>(plan, settings, &run).await;
    let port = plan.url.port_or_known_default().unwrap_or(443);
    let ips = addresses::others(plan, &run, settings, port);
    run.other_addresses =
        addresses::side_runs::<C>(protocol, plan, resolver, settings, budget, None, ips).await;
    run
}
