//! The probe engine: runs a [`Plan`] round by round over its protocols and returns the
//! measured [`ProbeResult`].

pub mod addresses;
pub mod arrival;
pub mod budget;
pub mod burst;
pub mod cert;
pub mod connection;
pub mod discover;
pub mod dns;
pub mod egress;
pub mod failure;
pub mod guard;
pub mod h1;
pub mod h1_load;
pub mod h2;
pub mod h2_frames;
pub mod h3;
pub mod http;
pub mod icmp;
pub mod keylog;
pub mod lanes;
pub mod load;
pub mod migration;
pub mod network;
pub mod plain_client;
pub mod plan;
pub mod proxy;
pub mod qlog;
pub mod quic_socket;
pub mod resumption;
pub mod run;
pub mod stamped_tcp;
pub mod tcp;
pub mod tcp_info;
pub mod tls;
pub mod trace;
pub mod warmup;
pub mod wire;

use connection::ConnectSettings;
use dns::NameResolver;
use guard::ConnectPolicy;
use h123_shared::{ProbeResult, Protocol, SCHEMA_VERSION};
use lanes::{Lane, Runner};
use plan::Plan;
use proxy::ProxySettings;
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
        arrival::keep_stamping_on();
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

    /// Runs `plan`: its rounds in turn, each over every protocol (see [`lanes`]).
    pub async fn run(&self, plan: &Plan) -> ProbeResult {
        self.run_observed(plan, Progress::default()).await
    }

    /// Runs `plan`, reporting phases and attempts to `progress` as they happen.
    pub async fn run_observed(&self, plan: &Plan, progress: Progress) -> ProbeResult {
        let started_at_unix_ms = trace::unix_ms();
        let resolver = NameResolver::new(plan.dns_server, plan.options.resolve.clone());
        let policy = match &plan.gate {
            Some(gate) => self.policy.clone().with_gate(gate.clone()),
            None => self.policy.clone(),
        };
        let settings = ConnectSettings {
            policy,
            trust: self.trust.clone(),
            insecure: plan.options.insecure,
            phase_limit: plan.phase_limit,
            quic_limit: None,
            sessions: None,
            qlog_dir: self.qlog_dir.clone(),
            proxy: self.proxy.clone(),
            early_data: true,
            link: None,
            migrate: plan.options.migrate.clone(),
            egress: plan.egress.clone(),
        };
        // HTTP/3 runs last in each round, so the h1/h2 responses of the first
        // can advertise it (Alt-Svc); the result keeps the order asked for.
        let mut order: Vec<Protocol> = plan.options.protocols.clone();
        order.sort_by_key(|p| *p == Protocol::H3);
        let lanes: Vec<Lane> = order
            .into_iter()
            .map(|protocol| Lane::new(protocol, plan, &settings, &resolver))
            .collect();
        let mut runners: Vec<Runner> = Vec::new();
        for round in 0..plan.options.rounds.max(1) {
            for (i, lane) in lanes.iter().enumerate() {
                if runners.len() == i {
                    let runner = Runner::start(lane, plan, &runners, &progress).await;
                    runners.push(runner);
                }
                runners[i].round(round).await;
            }
        }
        let mut runs = Vec::new();
        for (lane, runner) in lanes.iter().zip(runners) {
            runs.push(runner.finish(lane, plan).await);
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
}
