//! The probe service behind the API: configuration, shared state, admission
//! of new probes (and of the one bench at a time), running them, and graceful shutdown.

pub mod agent_part;
pub mod agents;
pub mod alerts;
pub mod bench_slot;
pub mod buckets;
pub mod client;
pub mod cluster;
pub mod cors_origin;
pub mod delivery_budget;
pub mod dispatch;
pub mod egress_quota;
pub mod event_relay;
pub mod fair;
pub mod forwarded;
pub mod host_runs;
pub mod jobs;
pub mod limit;
pub mod listener;
pub mod metrics;
pub mod modules_file;
pub mod owner;
pub mod partial;
pub mod queue;
pub mod registry;
pub mod retention;
pub mod runner;
pub mod schedule;
pub mod seal;
pub mod share;
pub mod stream_cap;
pub mod target_guard;

use crate::bench::{BenchLimits, Bencher};
use crate::probe::Engine;
use crate::probe::dns::NameResolver;
use crate::probe::guard::{AllowedTarget, ConnectPolicy};
use crate::probe::plan::Limits;
use crate::probe::tls::TrustSettings;
use crate::server::cors_origin::CorsOrigin;
use crate::store::SharedStore;
use bench_slot::BenchSlot;
use client::ClientKey;
use fair::FairSlots;
use h123_shared::Method;
use h123_shared::vantage::{OWN_VANTAGE, Vantage};
use limit::{CreationLimiter, RateConfig, RateLimiter};
use metrics::{Gauges, Metrics};
use registry::Registry;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use target_guard::TargetGuard;

/// Everything `h123 serve` is configured with (besides where it listens).
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Bounds on each probe's options.
    pub limits: Limits,
    /// Where probes may connect; checked early by the API, and by the engine on every connect.
    pub guard: TargetGuard,
    /// DNS server for probes that name none (`ip:port`); the system's when `None`.
    pub dns_server: Option<SocketAddr>,
    /// Certificates trusted by probes.
    pub trust: TrustSettings,
    /// Probes running at once, over all clients.
    pub max_running: usize,
    /// Probes waiting for a running slot; beyond it new probes get 503.
    pub max_queued: usize,
    /// Probes one client may have in flight (running or queued).
    pub per_client_probes: usize,
    /// Running slots only a client with no probe running may take (at most
    /// a quarter of `max_running`), so a newcomer need not wait for a slow probe.
    pub reserved_slots: usize,
    /// IPv6 clients are one client per prefix of this many bits.
    pub ipv6_client_prefix: u8,
    /// How fast one client may create probes.
    pub rate: RateConfig,
    /// How fast one client may read records, exports, lists, pages and event streams.
    pub read_rate: RateConfig,
    /// Expensive reads (records, exports, lists) built at once over all clients; more wait, then 503.
    pub max_concurrent_reads: usize,
    /// How fast one client may ask for light answers (the UI's files and pages' shells,
    /// configuration, vantages, the OpenAPI document, metrics).
    pub light_rate: RateConfig,
    /// How fast one client may scrape `/probe` (each scrape is a probe).
    pub scrape_rate: RateConfig,
    /// Event streams one client may hold open; more get 429.
    pub max_streams_per_client: usize,
    /// Event streams held open over all clients; more get 503.
    pub max_streams: usize,
    /// Longest a whole probe may take; it is then stopped and stored as cancelled.
    pub max_probe_time: Duration,
    /// Bytes one client may make the server receive from targets per
    /// minute (each probe reserves its `limits.max_probe_bytes` up front).
    pub client_bytes_per_minute: u64,
    /// Bytes all clients together may make the server receive from targets per minute: however
    /// many addresses a stranger has, the server as a whole fetches no more.
    pub server_bytes_per_minute: u64,
    /// Benches (load comparisons): `None` unless `h123 serve --enable-bench`.
    pub bench: Option<BenchConfig>,
    /// The server's own vantage: its name, label and tags, stamped on what it measures.
    pub vantage: Vantage,
    /// The agents that may work for this server (`--agent NAME=TOKEN`): their
    /// names and their tokens' digests.
    pub agents: Vec<agents::AgentSpec>,
    /// How long an agent holds a job without a word, and counts as online
    /// after its last request ([`agents::LEASE`]; shorter in tests).
    pub agent_lease: Duration,
    /// Origins whose pages may read the API (`--cors-origin`); none by default.
    pub cors_origins: Vec<CorsOrigin>,
    /// The `/probe` scrape modules: the built-in ones and `--modules`' (`shared::blackbox`).
    pub modules: Vec<h123_shared::blackbox::Module>,
    /// The bounds on monitors.
    pub monitors: MonitorLimits,
    /// The SHA-256 digest of the bearer token `/metrics` asks for (`--metrics-token`); anyone
    /// may read it when `None`.
    pub metrics_token: Option<[u8; 32]>,
}

/// How many monitors a server keeps and how often they may run: with each probe's byte
/// budget, what bounds the traffic monitors can send to targets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MonitorLimits {
    /// Most monitors on the server (`--max-monitors`).
    pub max_total: u64,
    /// Most monitors one owner token may hold (`--max-monitors-per-owner`).
    pub per_owner: u64,
    /// Most monitors one client (an IPv4 address or an IPv6 prefix) may make
    /// (`--max-monitors-per-client`): owner tokens are free, addresses are not.
    pub per_client: u64,
    /// The shortest interval, in milliseconds (`--monitor-min-interval`).
    pub min_every_ms: u64,
    /// The bytes all monitors' runs together may make the server receive in a minute
    /// (`--monitor-bytes-per-minute`).
    pub bytes_per_minute: u64,
    /// The runs a minute all monitors together may start at one target host
    /// (`--max-monitor-runs-per-host-minute`): bytes are bounded above, requests here.
    pub runs_per_host_minute: u64,
    /// The notifications' tries a minute over the whole server (`--max-deliveries-per-minute`).
    pub deliveries_per_minute: u64,
    /// The notifications' tries in flight at once over the whole server
    /// (`--max-deliveries-in-flight`).
    pub deliveries_in_flight: usize,
}

impl Default for MonitorLimits {
    /// 1,000 monitors, 20 an owner, 100 a client, every minute at most, 128 MiB a minute in all,
    /// 60 runs a minute at one host, 120 deliveries a minute and 16 at once.
    fn default() -> Self {
        MonitorLimits {
            max_total: 1000,
            per_owner: 20,
            per_client: 100,
            min_every_ms: 60_000,
            bytes_per_minute: 128 << 20,
            runs_per_host_minute: host_runs::DEFAULT_PER_MINUTE,
            deliveries_per_minute: delivery_budget::DEFAULT_PER_MINUTE,
            deliveries_in_flight: delivery_budget::DEFAULT_IN_FLIGHT,
        }
    }
}

/// How a server with benches enabled runs them.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// The only addresses (and ports) a bench may connect to; never empty.
    pub targets: Vec<AllowedTarget>,
    /// Bounds on each bench's options.
    pub limits: BenchLimits,
    /// Most bytes one bench (every protocol and sweep step) may receive
    /// from its target; past them it is stopped and stored as cancelled.
    pub max_bytes: u64,
}

impl BenchConfig {
    /// The connect policy of benches: the listed targets and nothing else,
    /// checked on every dialled address.
    pub fn policy(&self) -> ConnectPolicy {
        ConnectPolicy::only(self.targets.clone())
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            limits: server_limits(),
            guard: TargetGuard {
                policy: ConnectPolicy::public_only(Vec::new()),
            },
            dns_server: None,
            trust: TrustSettings::system(),
            max_running: 16,
            max_queued: 256,
            per_client_probes: 4,
            reserved_slots: 2,
            ipv6_client_prefix: client::DEFAULT_IPV6_PREFIX,
            rate: RateConfig {
                burst: 10,
                per_minute: 30,
            },
            read_rate: RateConfig {
                burst: 120,
                per_minute: 1200,
            },
            max_concurrent_reads: 32,
            light_rate: RateConfig {
                burst: 240,
                per_minute: 2400,
            },
            scrape_rate: RateConfig {
                burst: 20,
                per_minute: 120,
            },
            max_streams_per_client: 16,
            max_streams: 1024,
            max_probe_time: Duration::from_secs(120),
            client_bytes_per_minute: SERVER_CLIENT_BYTES_PER_MINUTE,
            server_bytes_per_minute: SERVER_BYTES_PER_MINUTE,
            bench: None,
            vantage: Vantage::named(OWN_VANTAGE),
            agents: Vec::new(),
            agent_lease: agents::LEASE,
            cors_origins: Vec::new(),
            modules: h123_shared::blackbox::built_in(),
            monitors: MonitorLimits::default(),
            metrics_token: None,
        }
    }
}

/// The per-probe bounds a public server starts with: tighter than the CLI's.
pub fn server_limits() -> Limits {
    Limits {
        max_repeat: 10,
        max_redirects: 10,
        max_timeout_ms: 30_000,
        max_body_bytes: SERVER_MAX_BODY_BYTES,
        max_idle_gap_ms: 10_000,
        max_url_len: 2048,
        max_headers: 20,
        max_header_bytes: 4096,
        max_request_body: SERVER_MAX_REQUEST_BODY,
        allowed_methods: SERVER_METHODS.to_vec(),
        allow_network: false,
        allow_migrate_address: false,
        max_streams: SERVER_MAX_STREAMS,
        max_probe_bytes: Some(SERVER_MAX_PROBE_BYTES),
    }
}

/// Largest body a server's probe reads per answer by default, in bytes
/// (1 MiB, `--max-body-bytes`): enough to time a page, not a download.
pub const SERVER_MAX_BODY_BYTES: u64 = 1024 * 1024;

/// Most bytes a server's probe receives from its target over all its
/// requests by default (8 MiB, `--max-probe-bytes`).
pub const SERVER_MAX_PROBE_BYTES: u64 = 8 * 1024 * 1024;

/// Most bytes one bench receives by default (1 GiB, `--bench-max-bytes`).
pub const SERVER_BENCH_MAX_BYTES: u64 = 1 << 30;

/// Bytes one client may make a server receive from targets per minute by
/// default (32 MiB, `--client-bytes-per-minute`): four whole probe budgets.
pub const SERVER_CLIENT_BYTES_PER_MINUTE: u64 = 32 * 1024 * 1024;

/// Bytes all clients together may make a server receive from targets per minute by default
/// (1 GiB, `--server-bytes-per-minute`, about 143 Mbit/s): 128 whole probe budgets, so the 16
/// running probes and 112 queued ones reserve theirs before a burst meets it.
pub const SERVER_BYTES_PER_MINUTE: u64 = 1 << 30;

/// Most requests a server's probe sends at once per protocol (`streams`):
/// as many HTTP/1.1 connections to one target as a few browsers would open.
pub const SERVER_MAX_STREAMS: u32 = 16;

/// Largest request body a server sends by default, in bytes (1 MiB; `--max-request-body`).
pub const SERVER_MAX_REQUEST_BODY: u64 = 1024 * 1024;

/// Methods a server's probes may use by default (`--allow-methods`): none
/// that changes anything, so a public server does not POST at strangers.
pub const SERVER_METHODS: &[Method] = &[Method::Get, Method::Head, Method::Options];

/// The per-bench bounds a server starts with: much tighter than the CLI's,
/// since a bench holds the server's one bench slot while it runs.
pub fn server_bench_limits() -> BenchLimits {
    BenchLimits {
        max_concurrency: 1024,
        max_connections: 1024,
        max_duration_ms: 60_000,
        max_requests: 1_000_000,
        max_rate: 100_000,
        max_warmup_ms: 10_000,
        max_total_ms: 600_000,
        network: false,
    }
}

/// The state every handler shares: cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

/// What [`AppState`] holds.
pub struct Shared {
    /// The configuration.
    pub config: ServerConfig,
    /// Durable records.
    pub store: SharedStore,
    /// Probes in flight.
    pub registry: Registry,
    /// The engine, with the server's trust store and connect policy.
    pub engine: Engine,
    /// Name lookups through the server's own DNS server (`config.dns_server`), built once:
    /// the API's target check and the alerts' address check share it.
    pub lookups: NameResolver,
    /// Per-client creation rate (shared by every instance on PostgreSQL).
    pub limiter: CreationLimiter,
    /// Per-client read rate.
    pub read_limiter: RateLimiter,
    /// Places for expensive reads in flight.
    pub reads: Arc<tokio::sync::Semaphore>,
    /// Per-client rate of light answers.
    pub light_limiter: RateLimiter,
    /// Per-client rate of `/probe` scrapes.
    pub scrape_limiter: RateLimiter,
    /// Places for open event streams, per client and in all.
    pub streams: Arc<stream_cap::StreamCaps>,
    /// The live views drawn once per probe and shared by their viewers.
    pub views: crate::api::view::feed::Feeds,
    /// The link preview pictures drawn so far, and the places to draw more.
    pub previews: crate::api::preview::Previews,
    /// Monitors' statuses and pages' series, kept until their next run (at most 10 s).
    pub monitor_cache: crate::api::monitor_cache::MonitorCache,
    /// Counters for `/metrics`.
    pub metrics: Metrics,
    /// Running slots, shared fairly between clients; a probe waits for one in its client's queue.
    pub slots: FairSlots,
    /// Per-client bytes from targets over time.
    pub egress_quota: Arc<egress_quota::EgressQuota>,
    /// Bytes from targets over time for the whole server, every client's probes and scrapes
    /// together (one bucket, `--server-bytes-per-minute`).
    pub server_egress: Arc<egress_quota::EgressQuota>,
    /// All monitors' bytes from targets over time, shared evenly among the clients that made
    /// running monitors (`EgressQuota::shared`; the scheduler keeps their number).
    pub monitor_egress: Arc<egress_quota::EgressQuota>,
    /// Monitor runs a minute at each target host, over all monitors.
    pub monitor_hosts: host_runs::HostRuns,
    /// The notifications' tries: tokens, places, failing receivers rested.
    pub deliveries: delivery_budget::DeliveryBudget,
    /// The latest notification of each monitor's condition to each receiver.
    pub conditions: delivery_budget::Conditions,
    /// Probes holding a slot now.
    pub running: AtomicUsize,
    /// The bench engine, with the server's trust store and the bench allow list;
    /// `None` when benches are disabled.
    pub bencher: Option<Bencher>,
    /// The bench running now, if any.
    pub bench: BenchSlot,
    /// The configured agents and when each was last heard from.
    pub agents: agents::Agents,
    /// Agents' jobs in flight: in memory, or shared through PostgreSQL.
    pub jobs: queue::JobQueue,
    /// The other instances on the shared database and its notifications (PostgreSQL).
    pub cluster: Option<cluster::Cluster>,
    /// Live events published for the other instances (PostgreSQL).
    pub relay: event_relay::EventRelay,
    shutting_down: AtomicBool,
    /// The scheduler's pieces of work under way that may store points ([`SchedulerWork`]).
    scheduling: AtomicUsize,
}

/// How long a shutdown waits, after cancelling the monitor runs in flight, for them to store
/// their points (one store write each).
const SETTLE: Duration = Duration::from_secs(1);

/// Waits until `done` holds or `deadline` passes.
async fn wait_until(deadline: std::time::Instant, done: impl Fn() -> bool) {
    while !done() && crate::probe::trace::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A piece of the monitors' scheduler's work under way (a look for due slots, a slot's run):
/// [`AppState::shutdown`] waits for it to end.
pub struct SchedulerWork {
    state: AppState,
}

impl Drop for SchedulerWork {
    fn drop(&mut self) {
        self.state.inner.scheduling.fetch_sub(1, Ordering::SeqCst);
    }
}

impl AppState {
    /// State for a server with `config`, storing in `store`.
    pub fn new(config: ServerConfig, store: SharedStore) -> Self {
        let engine = Engine::new(config.trust.clone(), config.guard.policy.clone());
        let bencher = config.bench.as_ref().map(|bench| {
            Bencher::new(config.trust.clone(), bench.policy()).with_dns_server(config.dns_server)
        });
        let cluster = cluster::Cluster::join(&store);
        let jobs = queue::JobQueue::new(cluster.as_ref(), config.agent_lease);
        let relay = event_relay::EventRelay::new(cluster.clone());
        AppState {
            inner: Arc::new(Shared {
                limiter: CreationLimiter::new(config.rate, &store),
                read_limiter: RateLimiter::new(config.read_rate),
                reads: Arc::new(tokio::sync::Semaphore::new(
                    config.max_concurrent_reads.max(1),
                )),
                light_limiter: RateLimiter::new(config.light_rate),
                scrape_limiter: RateLimiter::new(config.scrape_rate),
                streams: stream_cap::StreamCaps::new(
                    config.max_streams_per_client,
                    config.max_streams,
                ),
                views: crate::api::view::feed::Feeds::default(),
                previews: crate::api::preview::Previews::default(),
                monitor_cache: Default::default(),
                slots: FairSlots::new(config.max_running, config.reserved_slots),
                egress_quota: egress_quota::EgressQuota::new(config.client_bytes_per_minute),
                server_egress: egress_quota::EgressQuota::new(config.server_bytes_per_minute),
                monitor_egress: egress_quota::EgressQuota::shared(config.monitors.bytes_per_minute),
                monitor_hosts: host_runs::HostRuns::new(config.monitors.runs_per_host_minute),
                deliveries: delivery_budget::DeliveryBudget::new(
                    config.monitors.deliveries_per_minute,
                    config.monitors.deliveries_in_flight,
                ),
                conditions: delivery_budget::Conditions::default(),
                engine,
                lookups: NameResolver::new(config.dns_server, Vec::new()),
                store,
                registry: Registry::default(),
                metrics: Metrics::default(),
                running: AtomicUsize::new(0),
                bencher,
                bench: BenchSlot::default(),
                agents: agents::Agents::new(&config.agents, config.agent_lease),
                jobs,
                cluster,
                relay,
                shutting_down: AtomicBool::new(false),
                scheduling: AtomicUsize::new(0),
                config,
            }),
        }
    }

    /// The client `ip` counts as, for every per-client limit.
    pub fn client_key(&self, ip: std::net::IpAddr) -> ClientKey {
        ClientKey::new(ip, self.config.ipv6_client_prefix)
    }

    /// Whether shutdown has begun (new probes are refused).
    pub fn is_shutting_down(&self) -> bool {
        self.inner.shutting_down.load(Ordering::SeqCst)
    }

    /// The gauges for `/metrics`.
    pub fn gauges(&self) -> Gauges {
        Gauges {
            in_flight: self.inner.registry.len(),
            running: self.inner.running.load(Ordering::Relaxed),
        }
    }

    /// Starts a piece of the monitors' scheduler's work, which `shutdown` waits for until the
    /// returned guard drops; `None` once the server is shutting down: the work is not to begin,
    /// so nothing it would store lands after `shutdown` returns.
    pub fn scheduler_work(&self) -> Option<SchedulerWork> {
        // Counted before the flag is read, and the flag set before `shutdown` reads the count:
        // either `shutdown` sees this work, or this work sees the shutdown.
        self.inner.scheduling.fetch_add(1, Ordering::SeqCst);
        let work = SchedulerWork {
            state: self.clone(),
        };
        (!self.is_shutting_down()).then_some(work)
    }

    /// Stops accepting probes and benches, lets those in flight (and the monitors' scheduler's
    /// work) finish for up to `grace`, then stores the rest as cancelled (probes with what
    /// they measured so far), and waits up to [`SETTLE`] more for the monitor runs so cancelled
    /// to store their points. Returns how many were cancelled.
    pub async fn shutdown(&self, grace: Duration) -> usize {
        self.inner.shutting_down.store(true, Ordering::SeqCst);
        let deadline = crate::probe::trace::now() + grace;
        wait_until(deadline, || {
            self.registry.is_empty()
                && self.bench.current().is_none()
                && self.inner.scheduling.load(Ordering::SeqCst) == 0
        })
        .await;
        let cancelled = self.cancel_in_flight().await;
        let settled = crate::probe::trace::now() + SETTLE;
        wait_until(settled, || {
            self.inner.scheduling.load(Ordering::SeqCst) == 0
        })
        .await;
        cancelled
    }

    /// Stores the probes and the bench still in flight as cancelled; how many there were.
    async fn cancel_in_flight(&self) -> usize {
        let mut cancelled = 0;
        for live in self.registry.all() {
            let record = live.cancelled_record();
            if self.store.update(record.clone()).await.is_ok() && live.finish(record) {
                cancelled += 1;
            }
            self.registry.remove(&live.record().id);
        }
        if bench_slot::cancel(self).await {
            cancelled += 1;
        }
        cancelled
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.inner
    }
}
