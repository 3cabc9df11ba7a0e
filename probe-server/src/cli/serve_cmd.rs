//! `h123 serve`: the API server, its store, its limits and graceful shutdown.

use super::safety_args::SafetyArgs;
use crate::api;
use crate::bench::BenchLimits;
use crate::probe::guard::AllowedTarget;
use crate::probe::tls::TrustSettings;
use crate::server::agents::{AGENTS_ENV, AgentSpec, parse_list};
use crate::server::cors_origin::CorsOrigin;
use crate::server::forwarded::{IpRange, TrustedProxies};
use crate::server::limit::RateConfig;
use crate::server::listener::{self, ListenerConfig};
use crate::server::retention::{self, Retention};
use crate::server::target_guard::TargetGuard;
use crate::server::{
    AppState, BenchConfig, SERVER_BENCH_MAX_BYTES, SERVER_BYTES_PER_MINUTE,
    SERVER_CLIENT_BYTES_PER_MINUTE, SERVER_MAX_BODY_BYTES, SERVER_MAX_PROBE_BYTES,
    SERVER_MAX_REQUEST_BODY, ServerConfig, server_bench_limits, server_limits,
};
use crate::store::SharedStore;
use crate::store::location::DbLocation;
use crate::store::postgres::PostgresSettings;
use clap::Args;
use h123_shared::Method;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `h123 serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// SQLite database file (created with its folder if missing), or a
    /// PostgreSQL URL, postgres://USER[:PASSWORD]@HOST[:PORT]/DB (several
    /// instances may share it; no TLS to the database).
    #[arg(long, default_value = "./data/h123.sqlite", value_name = "FILE|URL")]
    pub db: DbLocation,
    /// The built web UI; default ./dist when it exists, else a built-in page.
    #[arg(long, value_name = "DIR")]
    pub web_root: Option<PathBuf>,
    /// What probes may reach.
    #[command(flatten)]
    pub safety: SafetyArgs,
    /// DNS server for probes that name none: ip[:port].
    #[arg(long, value_name = "ADDR")]
    pub dns_server: Option<String>,
    /// Trust only the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Most attempts per protocol in one probe (rounds × repeat).
    #[arg(long, default_value_t = 24)]
    pub max_repeat: u32,
    /// Longest per-attempt timeout a probe may ask for, in milliseconds.
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    pub max_timeout_ms: u64,
    /// Largest body a probe may read per answer, in bytes (a page, not a download).
    #[arg(long, default_value_t = SERVER_MAX_BODY_BYTES, value_name = "BYTES")]
    pub max_body_bytes: u64,
    /// Most bytes one probe may receive from its target over all its
    /// requests (attempts, redirects, streams, addresses, protocols).
    #[arg(long, default_value_t = SERVER_MAX_PROBE_BYTES, value_name = "BYTES")]
    pub max_probe_bytes: u64,
    /// Bytes one client (IPv4 address or IPv6 prefix) may make the server
    /// receive from targets per minute; each probe reserves --max-probe-bytes
    /// of it when created (else 429 with Retry-After) and gets back what it did not use.
    #[arg(long, default_value_t = SERVER_CLIENT_BYTES_PER_MINUTE, value_name = "BYTES")]
    pub client_bytes_per_minute: u64,
    /// Bytes all clients together may make the server receive from targets per minute; a
    /// probe that finds them spent gets 503 with Retry-After. Bounds the server however many
    /// addresses its clients have.
    #[arg(long, default_value_t = SERVER_BYTES_PER_MINUTE, value_name = "BYTES")]
    pub server_bytes_per_minute: u64,
    /// Methods probes may use, comma-separated: a public server does not send
    /// POST, PUT, PATCH or DELETE to strangers unless its operator says so.
    #[arg(long, value_delimiter = ',', default_value = "GET,HEAD,OPTIONS")]
    pub allow_methods: Vec<Method>,
    /// Largest request body a probe may send, in bytes.
    #[arg(long, default_value_t = SERVER_MAX_REQUEST_BODY, value_name = "BYTES")]
    pub max_request_body: u64,
    /// Let probes ask for emulated network conditions (`network`: delay,
    /// loss, rate limits); off by default, as they make probes last longer.
    #[arg(long)]
    pub allow_network: bool,
    /// Longest a whole probe may run before it is stopped and stored as cancelled, in seconds.
    #[arg(long, default_value_t = 120, value_name = "SECS")]
    pub max_probe_secs: u64,
    /// Probes running at once, over all clients.
    #[arg(long, default_value_t = 16)]
    pub max_running: usize,
    /// Probes waiting for a slot before new ones get 503.
    #[arg(long, default_value_t = 256)]
    pub max_queued: usize,
    /// Probes one client (IP address) may have in flight.
    #[arg(long, default_value_t = 4)]
    pub per_client_probes: usize,
    /// Running slots kept for clients with no probe running (at most a
    /// quarter of --max-running), so a newcomer starts while others hold the rest.
    #[arg(long, default_value_t = 2)]
    pub reserved_slots: usize,
    /// Probe creations one client may burst.
    #[arg(long, default_value_t = 10)]
    pub rate_burst: u32,
    /// Sustained probe creations per client per minute.
    #[arg(long, default_value_t = 30)]
    pub rate_per_minute: u32,
    /// On SIGTERM or Ctrl-C, how long in-flight probes may finish before being stored as cancelled.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub shutdown_grace_secs: u64,
    /// This server's own vantage name, stamped on what it measures and named
    /// in a probe's `vantages` (letters, digits, `-` and `_`, at most 32).
    #[arg(long, default_value = h123_shared::vantage::OWN_VANTAGE, value_name = "NAME")]
    pub vantage_name: String,
    /// What people read for this server's vantage, e.g. "Frankfurt, DE".
    #[arg(long, value_name = "TEXT")]
    pub vantage_label: Option<String>,
    /// Tags of this server's vantage, comma-separated, e.g. eu,datacenter.
    #[arg(long, value_delimiter = ',', value_name = "TAGS")]
    pub vantage_tags: Vec<String>,
    /// Accept benches (load comparisons, `POST /api/v1/benches`), one at a time,
    /// against the --bench-target addresses only.
    #[arg(long)]
    pub enable_bench: bool,
    /// An address (and port) benches may load: repeatable, required with --enable-bench.
    /// Nothing else is ever dialled by a bench, whatever a name resolves to.
    #[arg(long = "bench-target", value_name = "ADDR[:PORT]")]
    pub bench_targets: Vec<AllowedTarget>,
    /// Longest a bench may measure each protocol, in seconds.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub bench_max_secs: u64,
    /// Most bytes one bench (every protocol and sweep step) may receive from
    /// its target; then it is stopped and stored as cancelled.
    #[arg(long, default_value_t = SERVER_BENCH_MAX_BYTES, value_name = "BYTES")]
    pub bench_max_bytes: u64,
    /// Longest a client may take to send a request header (a silent or trickling socket is closed then).
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub header_timeout_secs: u64,
    /// Longest a connection may stay with no byte either way before it is closed.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub idle_timeout_secs: u64,
    /// Longest a request body may take to arrive (then 408).
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub body_timeout_secs: u64,
    /// Open connections one client (IPv4 address or IPv6 prefix) may hold; more get 503 and are closed.
    #[arg(long, default_value_t = 64)]
    pub max_conns_per_client: usize,
    /// Open connections over all clients; more get 503 and are closed.
    #[arg(long, default_value_t = 4096)]
    pub max_conns: usize,
    /// Reads (records, exports, lists, comparisons, pages' records, opened event streams) one client may burst.
    #[arg(long, default_value_t = 120)]
    pub read_rate_burst: u32,
    /// Sustained reads per client per minute.
    #[arg(long, default_value_t = 1200)]
    pub read_rate_per_minute: u32,
    /// Expensive reads (records, exports, lists) served at once over all clients; more wait up to 5 s, then 503.
    #[arg(long, default_value_t = 32)]
    pub max_concurrent_reads: usize,
    /// Light requests (the web UI's files and pages, configuration, vantages, OpenAPI, metrics) one client may burst.
    #[arg(long, default_value_t = 240)]
    pub light_rate_burst: u32,
    /// Sustained light requests per client per minute.
    #[arg(long, default_value_t = 2400)]
    pub light_rate_per_minute: u32,
    /// `/probe` scrapes (blackbox_exporter's contract) one client may burst; each is a probe.
    #[arg(long, default_value_t = 20)]
    pub scrape_rate_burst: u32,
    /// Sustained `/probe` scrapes per client per minute.
    #[arg(long, default_value_t = 120)]
    pub scrape_rate_per_minute: u32,
    /// Event streams one client may hold open; more get 429.
    #[arg(long, default_value_t = 16)]
    pub max_streams_per_client: usize,
    /// Event streams held open over all clients; more get 503.
    #[arg(long, default_value_t = 1024)]
    pub max_streams: usize,
    /// Delete finished probes and benches older than this many days (default: keep forever).
    #[arg(long, value_name = "DAYS")]
    pub retention_days: Option<u64>,
    /// Prune the database to this many bytes (default: no limit), every table counted: each
    /// monitor's newest 50 deliveries kept, then the oldest finished records and monitor points
    /// deleted. Freed space is reused; the file does not shrink.
    #[arg(long, value_name = "BYTES")]
    pub max_db_bytes: Option<u64>,
    /// What --max-db-bytes never deletes: records and monitor points younger than this many
    /// seconds (when only those are left over the cap, the log and /metrics' h123_db_over_cap
    /// say so).
    #[arg(long, default_value_t = 3600, value_name = "SECS")]
    pub keep_records_secs: u64,
    /// Delete the records of monitor runs older than this many days; the monitors' history
    /// (their points) stays. 0 keeps them as long as other records.
    #[arg(long, default_value_t = 7, value_name = "DAYS")]
    pub monitor_records_days: u64,
    /// How often retention runs, in seconds.
    #[arg(long, default_value_t = 3600, value_name = "SECS")]
    pub prune_interval_secs: u64,
    /// IPv6 clients are one client per prefix of this length (an IPv6 user usually holds a /64).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u8).range(0..=128))]
    pub ipv6_client_prefix: u8,
    /// A reverse proxy or load balancer in front of this server (an address or ADDR/PREFIX;
    /// repeatable): its `X-Forwarded-For` names the client for every per-client limit, and its
    /// own connections are not capped per client. Without it the client is the TCP peer.
    #[arg(long = "trusted-proxy", value_name = "RANGE")]
    pub trusted_proxies: Vec<IpRange>,
    /// An origin whose pages may call the API, scheme://host[:port] (repeatable; `*` for any):
    /// a web UI served from a static host or CDN, for instance. No credentials are ever
    /// allowed (the API has none ambient). Without it, only same-origin pages can.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<CorsOrigin>,
    /// The bearer token `/metrics` asks for (`Authorization: Bearer TOKEN`, as Prometheus'
    /// `authorization` sends it): then only the operator reads it. Without it anyone may (it
    /// names public monitors only).
    #[arg(long = "metrics-token", value_name = "TOKEN")]
    pub metrics_token: Option<String>,
    /// `/probe` scrape modules in blackbox_exporter's format (`modules:` by name, `prober: http`,
    /// `timeout`, the `http:` fields valid_status_codes, valid_http_versions, method, headers,
    /// body, preferred_ip_protocol, ip_protocol_fallback, fail_if_ssl, fail_if_not_ssl; plus
    /// `protocols` and `whole_probe`), beside the built-in compare, http_2xx, h1, h2 and h3.
    #[arg(long, value_name = "FILE")]
    pub modules: Option<std::path::PathBuf>,
    /// Most monitors the server keeps (`POST /api/v1/monitors`); 0 turns monitors off.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub max_monitors: u64,
    /// Most monitors one owner token may hold.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_monitors_per_owner: u64,
    /// Most monitors one client (an IPv4 address or an IPv6 prefix, see --ipv6-client-prefix)
    /// may make, whatever owner tokens it uses.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_monitors_per_client: u64,
    /// The bytes all monitors' runs together may make the server receive from targets in a
    /// minute (at least --max-probe-bytes), shared evenly among the clients that made running
    /// monitors: a run that finds its client's share or the whole spent is a missed slot.
    #[arg(long, default_value_t = 128 << 20, value_name = "BYTES")]
    pub monitor_bytes_per_minute: u64,
    /// The runs a minute all monitors together may start at one target site, whatever the port
    /// (as many at once): a name's registrable domain under the public suffix list, so all
    /// subdomains of example.com share it, an IPv4 address, or an IPv6 /64. A slot over it is
    /// missed, saying so. Bytes are bounded by --monitor-bytes-per-minute, requests at a third
    /// party by this.
    #[arg(long, default_value_t = crate::server::host_runs::DEFAULT_PER_MINUTE, value_name = "N")]
    pub max_monitor_runs_per_host_minute: u64,
    /// Notifications' tries (webhook or Alertmanager POSTs) a minute over the whole server, as
    /// many at once; a try that finds them spent is not sent, saying so in the delivery log.
    #[arg(long, default_value_t = crate::server::delivery_budget::DEFAULT_PER_MINUTE, value_name = "N")]
    pub max_deliveries_per_minute: u64,
    /// Notifications' tries in flight at once over the whole server (one at a time to a
    /// receiver; each within 5 s): what bounds the sockets silent receivers can hold.
    #[arg(long, default_value_t = crate::server::delivery_budget::DEFAULT_IN_FLIGHT, value_name = "N")]
    pub max_deliveries_in_flight: usize,
    /// The shortest interval a monitor may run at: 30s, 5m, 1h.
    #[arg(long, default_value = "60s", value_name = "INTERVAL", value_parser = parse_interval)]
    pub monitor_min_interval: u64,
    /// An agent that may work for this server (`h123 agent --name NAME --token TOKEN`):
    /// repeatable; also from H123_AGENTS="NAME=TOKEN,NAME=TOKEN", which keeps tokens out of `ps`.
    /// Only each token's SHA-256 is kept.
    #[arg(long = "agent", value_name = "NAME=TOKEN")]
    pub agents: Vec<AgentSpec>,
    /// How long an agent holds a job without a word from it, in milliseconds (tests shorten it).
    #[arg(long, hide = true, default_value_t = 30_000, value_name = "MS")]
    pub agent_lease_ms: u64,
    /// With PostgreSQL, how old another instance's heartbeat may get before its
    /// running probes are finished as cancelled, in milliseconds (tests shorten it;
    /// the heartbeat is a sixth of it).
    #[arg(long, hide = true, default_value_t = 30_000, value_name = "MS")]
    pub instance_lease_ms: u64,
}

/// `--dns-server`'s `ip[:port]` (port 53 when absent).
///
/// # Errors
/// A readable line when it is neither.
pub fn dns_server(text: &str) -> Result<SocketAddr, String> {
    text.parse::<SocketAddr>()
        .or_else(|_| {
            let bare = text.trim_start_matches('[').trim_end_matches(']');
            bare.parse().map(|ip| SocketAddr::new(ip, 53))
        })
        .map_err(|_| format!("--dns-server `{text}` must be ip or ip:port"))
}

impl ServeArgs {
    /// How the listener treats connections, from these arguments.
    pub fn listener(&self) -> ListenerConfig {
        ListenerConfig {
            header_timeout: Duration::from_secs(self.header_timeout_secs.max(1)),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs.max(1)),
            body_timeout: Duration::from_secs(self.body_timeout_secs.max(1)),
            max_conns_per_client: self.max_conns_per_client.max(1),
            max_conns: self.max_conns.max(1),
            ipv6_prefix: self.ipv6_client_prefix,
            trusted_proxies: TrustedProxies::new(self.trusted_proxies.clone()),
        }
    }

    /// The server configuration these arguments describe.
    ///
    /// # Errors
    /// A readable line when the CA file or DNS server is unusable, or the
    /// bench flags do not go together.
    pub fn config(&self) -> Result<ServerConfig, String> {
        if !h123_shared::vantage::valid_name(&self.vantage_name) {
            return Err(format!(
                "--vantage-name `{}` must be 1 to 32 letters, digits, `-` or `_`",
                self.vantage_name
            ));
        }
        let bench = match (self.enable_bench, self.bench_targets.is_empty()) {
            (true, true) => {
                return Err(
                    "--enable-bench needs at least one --bench-target ADDR[:PORT]: \
                            benches load only addresses listed at start"
                        .to_owned(),
                );
            }
            (false, false) => {
                return Err("--bench-target has no effect without --enable-bench".to_owned());
            }
            (true, false) => Some(BenchConfig {
                targets: self.bench_targets.clone(),
                limits: BenchLimits {
                    max_duration_ms: self.bench_max_secs.max(1).saturating_mul(1000),
                    network: self.allow_network,
                    ..server_bench_limits()
                },
                max_bytes: self.bench_max_bytes.max(1),
            }),
            (false, true) => None,
        };
        let trust = match &self.cacert {
            Some(path) => TrustSettings::from_ca_file(path)?,
            None => TrustSettings::system(),
        };
        let dns_server = self.dns_server.as_deref().map(dns_server).transpose()?;
        let policy = self.safety.policy();
        let mut agents = match std::env::var(AGENTS_ENV) {
            Ok(list) => parse_list(&list).map_err(|e| format!("{AGENTS_ENV}: {e}"))?,
            Err(_) => Vec::new(),
        };
        agents.extend(self.agents.iter().cloned());
        for agent in &agents {
            if agent.name == self.vantage_name {
                return Err(format!(
                    "agent `{}` has the server's own vantage name (--vantage-name)",
                    agent.name
                ));
            }
        }
        if self.monitor_bytes_per_minute < self.max_probe_bytes {
            return Err(format!(
                "--monitor-bytes-per-minute ({}) must hold at least one probe's --max-probe-bytes ({})",
                self.monitor_bytes_per_minute, self.max_probe_bytes
            ));
        }
        if self.max_monitor_runs_per_host_minute == 0 {
            return Err(
                "--max-monitor-runs-per-host-minute must be at least 1 (--max-monitors 0 turns monitors off)"
                    .to_owned(),
            );
        }
        if self.client_bytes_per_minute < self.max_probe_bytes {
            return Err(format!(
                "--client-bytes-per-minute ({}) must hold at least one probe's --max-probe-bytes ({})",
                self.client_bytes_per_minute, self.max_probe_bytes
            ));
        }
        let mut limits = server_limits();
        limits.max_probe_bytes = Some(self.max_probe_bytes.max(1));
        limits.max_repeat = self.max_repeat.max(1);
        limits.max_timeout_ms = self.max_timeout_ms.max(1);
        limits.max_body_bytes = self.max_body_bytes.max(1);
        limits.allowed_methods = self.allow_methods.clone();
        limits.max_request_body = self.max_request_body;
        limits.allow_network = self.allow_network;
        let modules = match &self.modules {
            Some(path) => crate::server::modules_file::load(path, &limits)?,
            None => h123_shared::blackbox::built_in(),
        };
        Ok(ServerConfig {
            modules,
            limits,
            guard: TargetGuard { policy },
            dns_server,
            trust,
            max_running: self.max_running.max(1),
            max_queued: self.max_queued,
            per_client_probes: self.per_client_probes.max(1),
            reserved_slots: self.reserved_slots,
            ipv6_client_prefix: self.ipv6_client_prefix,
            rate: RateConfig {
                burst: self.rate_burst,
                per_minute: self.rate_per_minute,
            },
            read_rate: RateConfig {
                burst: self.read_rate_burst,
                per_minute: self.read_rate_per_minute,
            },
            max_concurrent_reads: self.max_concurrent_reads.max(1),
            light_rate: RateConfig {
                burst: self.light_rate_burst,
                per_minute: self.light_rate_per_minute,
            },
            scrape_rate: RateConfig {
                burst: self.scrape_rate_burst,
                per_minute: self.scrape_rate_per_minute,
            },
            max_streams_per_client: self.max_streams_per_client.max(1),
            max_streams: self.max_streams.max(1),
            max_probe_time: Duration::from_secs(self.max_probe_secs.max(1)),
            client_bytes_per_minute: self.client_bytes_per_minute,
            server_bytes_per_minute: self.server_bytes_per_minute,
            bench,
            vantage: h123_shared::vantage::Vantage {
                name: self.vantage_name.clone(),
                label: self.vantage_label.clone(),
                tags: self.vantage_tags.clone(),
            },
            agents,
            agent_lease: Duration::from_millis(self.agent_lease_ms.max(100)),
            cors_origins: self.cors_origins.clone(),
            metrics_token: self
                .metrics_token
                .as_deref()
                .map(crate::server::agents::digest),
            monitors: crate::server::MonitorLimits {
                max_total: self.max_monitors,
                per_owner: self.max_monitors_per_owner,
                per_client: self.max_monitors_per_client,
                min_every_ms: self.monitor_min_interval,
                bytes_per_minute: self.monitor_bytes_per_minute,
                runs_per_host_minute: self.max_monitor_runs_per_host_minute,
                deliveries_per_minute: self.max_deliveries_per_minute.max(1),
                deliveries_in_flight: self.max_deliveries_in_flight.max(1),
            },
        })
    }
}

/// `--monitor-min-interval`: an interval as monitors write it, in milliseconds.
fn parse_interval(text: &str) -> Result<u64, String> {
    h123_shared::monitor::parse_every(text)
}

/// Runs the server until SIGTERM or Ctrl-C. Exit code 2 when the options
/// are refused, 1 when the server cannot start or fails.
pub async fn run(args: ServeArgs) -> ExitCode {
    let config = match args.config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("h123 serve: {e}");
            return ExitCode::from(2);
        }
    };
    match serve(args, config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("h123 serve: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs, config: ServerConfig) -> anyhow::Result<()> {
    raise_nofile_limit();
    let lease = Duration::from_millis(args.instance_lease_ms.max(600));
    let settings = PostgresSettings {
        lease,
        heartbeat: lease / 6,
        ..PostgresSettings::default()
    };
    let store = SharedStore::open(&args.db, settings).await?;
    let recovered = store.cancel_running().await?;
    if recovered > 0 {
        eprintln!(
            "h123 serve: {recovered} probe(s) left running by an earlier stop are now cancelled"
        );
    }
    let runs = store.cancel_running_points().await?;
    if runs > 0 {
        eprintln!(
            "h123 serve: {runs} monitor run(s) under way at an earlier stop are now cancelled"
        );
    }
    let benches = store
        .cancel_running_benches(crate::probe::trace::unix_ms())
        .await?;
    if benches > 0 {
        eprintln!(
            "h123 serve: {benches} bench(es) left running by an earlier stop are now cancelled"
        );
    }
    let web_root = args.web_root.clone().or_else(|| {
        let dist = PathBuf::from("./dist");
        dist.join("index.html").is_file().then_some(dist)
    });
    let state = AppState::new(config, store);
    retention::spawn(
        state.clone(),
        Retention {
            max_age: args
                .retention_days
                .map(|days| Duration::from_secs(days.saturating_mul(86_400))),
            max_db_bytes: args.max_db_bytes,
            keep_records: Duration::from_secs(args.keep_records_secs),
            monitor_records_max_age: (args.monitor_records_days > 0)
                .then(|| Duration::from_secs(args.monitor_records_days.saturating_mul(86_400))),
            interval: Duration::from_secs(args.prune_interval_secs.max(1)),
        },
    );
    crate::server::schedule::spawn(state.clone());
    if !state.config.agents.is_empty() {
        crate::server::dispatch::spawn_sweeper(state.clone());
        crate::server::dispatch::spawn_post_taker(state.clone());
    }
    let app = api::app_with_web_root(state.clone(), web_root.as_deref());
    let listener = listen(args.listen)?;
    let local = listener.local_addr()?;
    let bench = match &state.config.bench {
        Some(b) => format!(
            "benches on, only to {}",
            b.targets
                .iter()
                .map(|t| match t.port {
                    Some(port) => std::net::SocketAddr::new(t.ip, port).to_string(),
                    None => t.ip.to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => "benches off".to_owned(),
    };
    let bench = match state.config.agents.len() {
        0 => bench,
        n => format!("{bench}, {n} agent(s)"),
    };
    let db = match state.store.instance_id() {
        Some(instance) => format!("{} as instance {instance}", args.db),
        None => args.db.to_string(),
    };
    eprintln!(
        "h123 serve: listening on http://{local} (db {db}, web {}, {bench})",
        web_root
            .as_deref()
            .map_or_else(|| "built-in page".to_owned(), |p| p.display().to_string())
    );
    let grace = Duration::from_secs(args.shutdown_grace_secs);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let drain = {
        let state = state.clone();
        let mut stop = stop_rx.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
            let cancelled = state.shutdown(grace).await;
            if cancelled > 0 {
                eprintln!(
                    "h123 serve: {cancelled} unfinished probe(s) or bench stored as cancelled at shutdown"
                );
            }
        }
    };
    let mut drain = tokio::spawn(drain);
    let mut stopped = stop_rx.clone();
    let server = listener::serve(listener, app, args.listener(), async move {
        let _ = stopped.wait_for(|s| *s).await;
    });
    tokio::spawn(async move {
        shutdown_signal().await;
        eprintln!(
            "h123 serve: stopping: no new probes or benches; in-flight ones get {grace:?} to finish"
        );
        let _ = stop_tx.send(true);
    });
    let mut serving = tokio::spawn(server);
    tokio::select! {
        served = &mut serving => {
            // The server ends by itself only on an error, or once the stop
            // signal closed the listener: then let the drain finish.
            served??;
            let _ = (&mut drain).await;
        }
        _ = &mut drain => {
            // Connections (event streams included) end once their probes are
            // finished or cancelled; give them a moment, then exit.
            if let Ok(Ok(Err(e))) = tokio::time::timeout(Duration::from_secs(3), serving).await {
                return Err(e.into());
            }
        }
    }
    eprintln!("h123 serve: stopped");
    Ok(())
}

/// Raises the soft limit on open files to the hard limit, so connections
/// (each a descriptor) run into the listener's caps, not into `EMFILE`.
fn raise_nofile_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if let Err(e) = setrlimit(Resource::Nofile, raised) {
            eprintln!("h123 serve: cannot raise the open-file limit: {e}");
        }
    }
}

/// Binds `addr` with a deep accept queue, so a burst of new connections is
/// not dropped (and retried a second later by the client's kernel).
fn listen(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
