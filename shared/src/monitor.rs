//! Monitors: a probe repeated on a schedule, each run kept as compact points
//! (one per vantage and protocol, with the figures a chart needs), and those
//! points read back as a series over a window, downsampled into buckets.
//!
//! Pure: the server schedules, runs, stores and serves; this module says what
//! a request means ([`MonitorRequest::spec`]), where a monitor's slots fall
//! ([`first_slot`], [`Claim`]), what a finished run's points are
//! ([`points_of`]), and what a window of points says ([`series`],
//! [`window_verdict`]).
//!
//! **Slots.** A monitor every `E` runs at `anchor + n·E`; the anchor is its
//! creation time plus an offset from its id (below `E`), so a thousand
//! monitors made in the same second spread over their interval. A slot is
//! run late rather than never; slots that passed while nobody could run them
//! (the server down longer than an interval) are recorded as one missed
//! stretch, never silently skipped.

use crate::alert::AlertRules;
use crate::api::ProbeRecord;
use crate::chain::{Chain, ConnState, chains};
use crate::format;
use crate::json::ReadJson;
use crate::schema::{Micros, ProbeOptions, Protocol, ProtocolRun, Visibility};
use crate::slo::{self, Gate, Judgement};
use crate::stats::{Metric, percentile};
use crate::table::chain_value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Longest interval a monitor may have: a day.
pub const MAX_EVERY_MS: u64 = 24 * 3600 * 1000;

/// Most buckets a series is cut into (a chart's width in points).
pub const MAX_BUCKETS: u64 = 1000;

/// `POST /api/v1/monitors`: what to probe, how often, and what is too slow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MonitorRequest {
    /// The URL to probe.
    pub url: String,
    /// The protocols, in order (all three when absent).
    #[serde(default)]
    pub protocols: Option<Vec<Protocol>>,
    /// Vantage names (see `GET /api/v1/vantages`); the server's own when empty.
    #[serde(default)]
    pub vantages: Vec<String>,
    /// The interval: `30s`, `5m`, `1h` (the server sets the shortest it allows).
    pub every: String,
    /// Any other probe option (`url`, `protocols` and `vantages` go above).
    #[serde(default)]
    pub options: Option<ProbeOptions>,
    /// Thresholds per metric, as `--slo` gates without the `=`:
    /// `{"total": "300ms", "h3:ttfb.p95": "150ms"}`.
    #[serde(default)]
    pub thresholds: BTreeMap<String, String>,
    /// Whether everyone's list shows the monitor (its runs share it).
    #[serde(default)]
    pub visibility: Visibility,
    /// Where notifications go (at most [`MAX_ALERT_TARGETS`]).
    #[serde(default)]
    pub alerts: Vec<AlertTarget>,
    /// When the conditions fire (`shared::alert`).
    #[serde(default)]
    pub alerting: AlertRules,
}

/// Most places one monitor notifies.
pub const MAX_ALERT_TARGETS: usize = 5;

/// Where a monitor's notifications go: one of a webhook (signed JSON) or an Alertmanager.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AlertTarget {
    /// An http(s) URL that receives each notification as JSON, signed with the monitor's
    /// webhook secret (`X-H123-Signature: sha256=HEX`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// An Alertmanager's base URL: notifications are posted to its `/api/v2/alerts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alertmanager: Option<String>,
}

impl AlertTarget {
    /// The URL to post to, and whether it is a webhook (else an Alertmanager).
    pub fn url(&self) -> (&str, bool) {
        match (&self.webhook, &self.alertmanager) {
            (Some(url), _) => (url, true),
            (None, Some(url)) => (url, false),
            (None, None) => ("", true),
        }
    }

    /// The target as readers see it: scheme and host, never a path or query (a webhook's
    /// path is often its secret).
    pub fn redacted(&self) -> AlertTarget {
        let shown = |url: &Option<String>| {
            url.as_deref().map(|u| match crate::uri::parse(u) {
                Some(parts) if parts.host.contains(':') => {
                    format!("{}://[{}]:{}/…", parts.scheme, parts.host, parts.port)
                }
                Some(parts) => format!("{}://{}:{}/…", parts.scheme, parts.host, parts.port),
                None => "[redacted]".to_owned(),
            })
        };
        AlertTarget {
            webhook: shown(&self.webhook),
            alertmanager: shown(&self.alertmanager),
        }
    }
}

/// A monitor as stored: the whole probe it repeats, its interval and its gates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonitorSpec {
    /// The probe each run makes (its `visibility` is the monitor's).
    pub options: ProbeOptions,
    /// The interval, in milliseconds.
    pub every_ms: u64,
    /// The thresholds as gates (`total=300ms`), judged on every run.
    pub thresholds: Vec<String>,
    /// Where notifications go.
    #[serde(default)]
    pub alerts: Vec<AlertTarget>,
    /// When the conditions fire.
    #[serde(default)]
    pub alerting: AlertRules,
}

/// Why a monitor request cannot be taken: the API's error code and a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// `invalid_interval`, `invalid_threshold` or `invalid_body`.
    pub code: &'static str,
    /// What is wrong, naming the field.
    pub message: String,
}

impl MonitorRequest {
    /// The monitor this request asks for, its interval at least `min_every_ms`.
    ///
    /// # Errors
    /// A [`SpecError`] naming the field that is wrong.
    pub fn spec(self, min_every_ms: u64) -> Result<MonitorSpec, SpecError> {
        let every_ms = parse_every(&self.every).map_err(|message| SpecError {
            code: "invalid_interval",
            message,
        })?;
        if !(min_every_ms..=MAX_EVERY_MS).contains(&every_ms) {
            return Err(SpecError {
                code: "invalid_interval",
                message: format!(
                    "every: this server runs monitors every {} to {} (got {})",
                    every_text(min_every_ms),
                    every_text(MAX_EVERY_MS),
                    self.every.trim()
                ),
            });
        }
        let mut options = self.options.unwrap_or_default();
        if !options.url.is_empty() || !options.vantages.is_empty() {
            return Err(SpecError {
                code: "invalid_body",
                message: "options: give `url` and `vantages` at the top level, not in `options`"
                    .into(),
            });
        }
        options.url = self.url;
        if let Some(protocols) = self.protocols {
            options.protocols = protocols;
        }
        options.vantages = self.vantages;
        options.visibility = self.visibility;
        let thresholds: Vec<String> = self
            .thresholds
            .iter()
            .map(|(metric, limit)| format!("{}={}", metric.trim(), limit.trim()))
            .collect();
        let gates = slo::parse_gates(&thresholds).map_err(|message| SpecError {
            code: "invalid_threshold",
            message: format!("thresholds: {message}"),
        })?;
        slo::check_protocols(&gates, &options.protocols).map_err(|message| SpecError {
            code: "invalid_threshold",
            message: format!("thresholds: {message}"),
        })?;
        self.alerting.check().map_err(|message| SpecError {
            code: "invalid_body",
            message,
        })?;
        if self.alerts.len() > MAX_ALERT_TARGETS {
            return Err(SpecError {
                code: "invalid_body",
                message: format!("alerts: at most {MAX_ALERT_TARGETS} places to notify"),
            });
        }
        for target in &self.alerts {
            let (url, _) = target.url();
            let one = target.webhook.is_some() != target.alertmanager.is_some();
            let web = crate::uri::parse(url)
                .is_some_and(|p| matches!(p.scheme.as_str(), "http" | "https"));
            if !one || !web {
                return Err(SpecError {
                    code: "invalid_body",
                    message: "alerts: each is {\"webhook\": URL} or {\"alertmanager\": URL}, an http(s) URL".into(),
                });
            }
        }
        Ok(MonitorSpec {
            options,
            every_ms,
            thresholds,
            alerts: self.alerts,
            alerting: self.alerting,
        })
    }
}

impl MonitorSpec {
    /// The thresholds as gates (checked when the spec was made).
    pub fn gates(&self) -> Vec<Gate> {
        slo::parse_gates(&self.thresholds).unwrap_or_default()
    }
}

/// An interval as written: a whole number of `ms`, `s`, `m` or `h` (`30s`, `5m`).
///
/// # Errors
/// A sentence saying what an interval looks like.
pub fn parse_every(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let bad = || format!("every: `{text}` is not an interval; write 30s, 5m or 1h");
    let (number, scale) = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        .into_iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, scale)))
        .ok_or_else(bad)?;
    let value: u64 = number.parse().map_err(|_| bad())?;
    value
        .checked_mul(scale)
        .filter(|ms| *ms > 0)
        .ok_or_else(bad)
}

/// An interval in the largest unit that writes it whole: `500ms`, `30s`, `5m`, `24h`.
pub fn every_text(ms: u64) -> String {
    [(3_600_000, "h"), (60_000, "m"), (1000, "s")]
        .into_iter()
        .find(|(unit, _)| ms > 0 && ms.is_multiple_of(*unit))
        .map_or_else(
            || format!("{ms}ms"),
            |(unit, name)| format!("{}{name}", ms / unit),
        )
}

/// One try to deliver a notification, as logged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryLog {
    /// When it was tried, milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// Where to: scheme, host and port only.
    pub target: String,
    /// The condition's key.
    pub key: String,
    /// `firing` or `resolved`.
    pub status: String,
    /// The try's number (1 for the first).
    pub attempt: u32,
    /// How it went: the HTTP status, or why there was none.
    pub outcome: String,
    /// Whether the receiver took it (a 2xx).
    pub delivered: bool,
}

/// A monitor as the API serves it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Monitor {
    /// The monitor's id.
    pub id: String,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_unix_ms: u64,
    /// What it runs (the probe's options redacted as every record's are).
    pub spec: MonitorSpec,
    /// Whether its runs are held.
    pub paused: bool,
    /// The next slot it runs at, milliseconds since the Unix epoch.
    pub next_slot_unix_ms: u64,
}

/// A page of `GET /api/v1/monitors`, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonitorList {
    /// The monitors on this page.
    pub items: Vec<Monitor>,
}

/// The answer to `POST /api/v1/monitors`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonitorCreated {
    /// The monitor.
    pub monitor: Monitor,
    /// The token that may pause, resume and delete it (and read it when unlisted, in lists).
    pub owner_token: String,
    /// The key webhooks' signatures are made with (`X-H123-Signature: sha256=` and the
    /// HMAC-SHA256 of the body), when it has a webhook: given once, here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
}

/// A monitor's first slot: its creation plus an offset below `every_ms` from its id.
pub fn first_slot(id: &str, created_at_unix_ms: u64, every_ms: u64) -> u64 {
    // FNV-1a: a fixed spread from the id alone, the same in every instance.
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    created_at_unix_ms + hash % every_ms.max(1)
}

/// The first slot at or after `now` of a monitor whose slots fall on `anchor + n·every_ms`.
pub fn slot_at_or_after(anchor: u64, every_ms: u64, now: u64) -> u64 {
    let every = every_ms.max(1);
    anchor + now.saturating_sub(anchor).div_ceil(every) * every
}

/// What a scheduler takes when it finds a monitor's slot due at `now`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The slot to run now: the latest one due.
    pub run: u64,
    /// Slots that passed unrun before it, from `due` on.
    pub missed: u64,
    /// The first of those, when there are any.
    pub missed_from: u64,
    /// The slot after the one run.
    pub next: u64,
}

impl Claim {
    /// The claim on a monitor every `every_ms` whose next slot `due` is at or before `now`:
    /// a slot more than an interval late is missed, and the latest due one runs.
    pub fn at(due: u64, every_ms: u64, now: u64) -> Claim {
        let every = every_ms.max(1);
        let missed = now.saturating_sub(due) / every;
        let run = due + missed * every;
        Claim {
            run,
            missed,
            missed_from: due,
            next: run + every,
        }
    }
}

/// How one protocol's run came out at one vantage, or a missed stretch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum PointState {
    /// Every attempt answered without an HTTP error.
    Ok,
    /// Every attempt answered, some with a 4xx or 5xx.
    HttpError,
    /// Some attempt failed (its phase and reason in `detail`).
    Failed,
    /// The protocol was not measured (HTTP/3 not advertised, HTTP/2 not offered, ...).
    Skipped,
    /// The slot (and `missed - 1` after it) passed without a run.
    Missed,
    /// The slot's run is under way: stored when the slot is claimed, and replaced by the run's
    /// points (or a missed one) when it ends. Counted nowhere: neither up nor down.
    Running,
    /// The server stopped while the slot's run was under way (`detail` says so): no answer
    /// was measured, so it is not an outage of the target, and it is counted nowhere.
    Cancelled,
}

impl PointState {
    /// The name, as on the wire and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            PointState::Ok => "ok",
            PointState::HttpError => "http_error",
            PointState::Failed => "failed",
            PointState::Skipped => "skipped",
            PointState::Missed => "missed",
            PointState::Running => "running",
            PointState::Cancelled => "cancelled",
        }
    }

    /// The state a stored name stands for.
    pub fn parse(name: &str) -> Option<PointState> {
        [
            PointState::Ok,
            PointState::HttpError,
            PointState::Failed,
            PointState::Skipped,
            PointState::Missed,
            PointState::Running,
            PointState::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// The figures of one protocol's run: medians over its attempts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Figures {
    /// Name lookup, over the new connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<Micros>,
    /// TCP connect, over the new connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Micros>,
    /// TLS or QUIC handshake, over the new connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<Micros>,
    /// Time to first byte, over the new connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb: Option<Micros>,
    /// Total, over the new connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Micros>,
    /// Total, over the reused connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_total: Option<Micros>,
}

/// One run of one protocol at one vantage (or a missed stretch): a row of a
/// monitor's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonitorPoint {
    /// The slot, milliseconds since the Unix epoch.
    pub slot_unix_ms: u64,
    /// When the run started (its lateness is this less the slot); the slot for a missed one.
    pub started_unix_ms: u64,
    /// The vantage's name (empty for a missed stretch and a running or cancelled slot).
    pub vantage: String,
    /// The protocol (`None` for a missed stretch and a running or cancelled slot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// How it came out.
    pub state: PointState,
    /// Slots in a missed stretch (0 otherwise).
    #[serde(default)]
    pub missed: u64,
    /// The run's probe record (its permalink is `/r/{probe_id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_id: Option<String>,
    /// The status of the first answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The figures.
    #[serde(default)]
    pub figures: Figures,
    /// The thresholds this protocol breached (`total.median <= 300 ms`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breached: Vec<String>,
    /// The failure (phase and reason) or why the protocol was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The points of a finished run of slot `slot`, started at `started`: one per vantage and
/// protocol, with the gates judged on each.
pub fn points_of(
    record: &ProbeRecord,
    slot: u64,
    started: u64,
    gates: &[Gate],
) -> Vec<MonitorPoint> {
    let results = record
        .vantages
        .iter()
        .filter_map(|v| v.result.as_ref())
        .chain(record.vantages.is_empty().then_some(&record.result));
    let mut points = Vec::new();
    for result in results {
        let vantage = result
            .vantage
            .as_ref()
            .map(|v| v.name.clone())
            .unwrap_or_default();
        let report = slo::evaluate(result, gates);
        for run in &result.runs {
            let breached = report
                .checks
                .iter()
                .filter(|c| c.protocol == run.protocol && c.judgement == Judgement::Breached)
                .map(|c| c.gate.to_string())
                .collect();
            points.push(MonitorPoint {
                slot_unix_ms: slot,
                started_unix_ms: started,
                vantage: vantage.clone(),
                protocol: Some(run.protocol),
                missed: 0,
                probe_id: Some(record.id.clone()),
                breached,
                ..point_of(run)
            });
        }
    }
    points
}

/// A missed stretch: `count` slots from `from` on.
pub fn missed_point(from: u64, count: u64) -> MonitorPoint {
    MonitorPoint {
        slot_unix_ms: from,
        started_unix_ms: from,
        vantage: String::new(),
        protocol: None,
        state: PointState::Missed,
        missed: count,
        probe_id: None,
        status: None,
        figures: Figures::default(),
        breached: Vec::new(),
        detail: None,
    }
}

/// The point a slot holds while its run is under way (claimed at `started`), for the whole
/// slot: no vantage, no protocol, counted nowhere until the run's own points replace it.
pub fn running_point(slot: u64, started: u64) -> MonitorPoint {
    MonitorPoint {
        started_unix_ms: started,
        state: PointState::Running,
        ..missed_point(slot, 0)
    }
}

/// The points of a slot whose run the server refused (`reason`), one per protocol asked for.
pub fn refused_points(
    options: &ProbeOptions,
    slot: u64,
    started: u64,
    vantage: &str,
    reason: &str,
) -> Vec<MonitorPoint> {
    options
        .protocols
        .iter()
        .map(|protocol| MonitorPoint {
            started_unix_ms: started,
            vantage: vantage.to_owned(),
            protocol: Some(*protocol),
            state: PointState::Failed,
            missed: 0,
            detail: Some(reason.to_owned()),
            ..missed_point(slot, 0)
        })
        .collect()
}

/// One protocol's run as a point (without its slot, vantage and gates).
fn point_of(run: &ProtocolRun) -> MonitorPoint {
    let all = chains(run);
    let mut point = missed_point(0, 0);
    point.protocol = Some(run.protocol);
    if let Some(reason) = &run.skipped {
        point.state = PointState::Skipped;
        point.detail = Some(reason.clone());
        return point;
    }
    point.status = all.first().and_then(Chain::status);
    let failed = all.iter().find_map(Chain::failure);
    point.state = match (failed, all.iter().all(Chain::succeeded)) {
        (Some(_), _) => PointState::Failed,
        (None, true) if !all.is_empty() => PointState::Ok,
        _ => PointState::HttpError,
    };
    point.detail = failed.map(|f| format!("{}: {}", f.phase.as_str(), f.message));
    let fresh: Vec<&Chain> = all
        .iter()
        .filter(|c| c.state() != ConnState::Reused)
        .collect();
    let reused: Vec<&Chain> = all
        .iter()
        .filter(|c| c.state() == ConnState::Reused)
        .collect();
    let median = |chains: &[&Chain], metric: Metric| {
        let mut values: Vec<Micros> = chains
            .iter()
            .filter(|c| c.succeeded())
            .filter_map(|c| chain_value(metric, c))
            .collect();
        values.sort_unstable();
        (!values.is_empty()).then(|| percentile(&values, 50))
    };
    let handshake = if run.protocol == Protocol::H3 {
        Metric::Quic
    } else {
        Metric::Tls
    };
    point.figures = Figures {
        dns: median(&fresh, Metric::Dns),
        connect: median(&fresh, Metric::Connect),
        tls: median(&fresh, handshake),
        ttfb: median(&fresh, Metric::Ttfb),
        total: median(&fresh, Metric::Total),
        reused_total: median(&reused, Metric::Total),
    };
    point
}

/// A figure a series can follow.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SeriesMetric {
    /// Name lookup.
    Dns,
    /// TCP connect.
    Connect,
    /// TLS or QUIC handshake.
    Tls,
    /// Time to first byte on a new connection.
    Ttfb,
    /// Total on a new connection.
    Total,
    /// Total on a reused connection.
    ReusedTotal,
}

impl SeriesMetric {
    /// Every metric, in the order a page shows them.
    pub const ALL: [SeriesMetric; 6] = [
        SeriesMetric::Total,
        SeriesMetric::Ttfb,
        SeriesMetric::Dns,
        SeriesMetric::Connect,
        SeriesMetric::Tls,
        SeriesMetric::ReusedTotal,
    ];

    /// The name, as in `?metric=`.
    pub fn as_str(self) -> &'static str {
        match self {
            SeriesMetric::Dns => "dns",
            SeriesMetric::Connect => "connect",
            SeriesMetric::Tls => "tls",
            SeriesMetric::Ttfb => "ttfb",
            SeriesMetric::Total => "total",
            SeriesMetric::ReusedTotal => "reused_total",
        }
    }

    /// The metric a name stands for.
    pub fn parse(name: &str) -> Option<SeriesMetric> {
        SeriesMetric::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// This metric's figure in `figures`.
    pub fn of(self, figures: &Figures) -> Option<Micros> {
        match self {
            SeriesMetric::Dns => figures.dns,
            SeriesMetric::Connect => figures.connect,
            SeriesMetric::Tls => figures.tls,
            SeriesMetric::Ttfb => figures.ttfb,
            SeriesMetric::Total => figures.total,
            SeriesMetric::ReusedTotal => figures.reused_total,
        }
    }
}

/// The runs of one line that fell in one bucket of time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Bucket {
    /// The bucket's start, milliseconds since the Unix epoch.
    pub start_unix_ms: u64,
    /// Runs in it.
    pub runs: u32,
    /// Of those, runs that failed, answered an HTTP error or were skipped.
    pub failures: u32,
    /// Of those, runs that breached a threshold.
    pub breaches: u32,
    /// The smallest figure (absent when no run in it has the figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Micros>,
    /// The median figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<Micros>,
    /// The 95th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95: Option<Micros>,
    /// The largest figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Micros>,
    /// The run's probe, when the bucket holds one run (a point links to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_id: Option<String>,
    /// The probe of the run with the largest figure (the one worth opening; a chart's point
    /// links to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest_probe_id: Option<String>,
}

/// One protocol at one vantage over the window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SeriesLine {
    /// The protocol.
    pub protocol: Protocol,
    /// The vantage.
    pub vantage: String,
    /// The buckets that hold a run, oldest first.
    pub buckets: Vec<Bucket>,
}

/// Slots that passed without a run, per bucket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MissedBucket {
    /// The bucket's start, milliseconds since the Unix epoch.
    pub start_unix_ms: u64,
    /// Slots missed in it.
    pub missed: u64,
}

/// `GET /api/v1/monitors/{id}/series`: one metric over a window, a line per protocol and vantage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Series {
    /// The metric.
    pub metric: SeriesMetric,
    /// The window's start, milliseconds since the Unix epoch.
    pub from_unix_ms: u64,
    /// The window's end (exclusive).
    pub to_unix_ms: u64,
    /// Each bucket's length: the monitor's interval, or longer so the window has at most
    /// [`MAX_BUCKETS`].
    pub bucket_ms: u64,
    /// The lines.
    pub lines: Vec<SeriesLine>,
    /// Missed slots.
    pub missed: Vec<MissedBucket>,
    /// What the window says about the protocols, when it can tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<WindowVerdict>,
}

/// The bucket length for a window of `span_ms` of a monitor every `every_ms`, in at most
/// `max_buckets` buckets.
pub fn bucket_ms(span_ms: u64, every_ms: u64, max_buckets: u64) -> u64 {
    every_ms.max(1).max(span_ms.div_ceil(max_buckets.max(1)))
}

/// The points (of one monitor, inside `[from, to)`) as a series of `metric`, in at most
/// `max_buckets` buckets ([`MAX_BUCKETS`] for the API; fewer for a chart on a page).
pub fn series(
    points: &[MonitorPoint],
    metric: SeriesMetric,
    (from, to): (u64, u64),
    every_ms: u64,
    max_buckets: u64,
) -> Series {
    let width = bucket_ms(to.saturating_sub(from), every_ms, max_buckets);
    let bucket_of = |slot: u64| from + (slot.saturating_sub(from) / width) * width;
    let mut lines: BTreeMap<(Protocol, &str), BTreeMap<u64, Vec<&MonitorPoint>>> = BTreeMap::new();
    let mut missed: BTreeMap<u64, u64> = BTreeMap::new();
    let inside = |slot: u64| (from..to).contains(&slot);
    for point in points {
        match point.protocol {
            Some(protocol) if inside(point.slot_unix_ms) => lines
                .entry((protocol, point.vantage.as_str()))
                .or_default()
                .entry(bucket_of(point.slot_unix_ms))
                .or_default()
                .push(point),
            Some(_) => {}
            None => {
                let every = every_ms.max(1);
                // Only the stretch's slots inside the window, counted without walking a long one.
                let first = point.slot_unix_ms;
                let skip = from.saturating_sub(first).div_ceil(every);
                for n in skip..point.missed {
                    let slot = first + n * every;
                    if slot >= to {
                        break;
                    }
                    *missed.entry(bucket_of(slot)).or_default() += 1;
                }
            }
        }
    }
    Series {
        metric,
        from_unix_ms: from,
        to_unix_ms: to,
        bucket_ms: width,
        lines: lines
            .into_iter()
            .map(|((protocol, vantage), buckets)| SeriesLine {
                protocol,
                vantage: vantage.to_owned(),
                buckets: buckets
                    .into_iter()
                    .map(|(start, runs)| bucket(start, &runs, metric))
                    .collect(),
            })
            .collect(),
        missed: missed
            .into_iter()
            .map(|(start_unix_ms, missed)| MissedBucket {
                start_unix_ms,
                missed,
            })
            .collect(),
        verdict: window_verdict(points.iter().filter(|p| inside(p.slot_unix_ms))),
    }
}

fn bucket(start: u64, runs: &[&MonitorPoint], metric: SeriesMetric) -> Bucket {
    let answered: Vec<(Micros, &MonitorPoint)> = runs
        .iter()
        .filter(|p| p.state == PointState::Ok)
        .filter_map(|p| Some((metric.of(&p.figures)?, *p)))
        .collect();
    let slowest = answered.iter().max_by_key(|(value, _)| *value);
    let mut values: Vec<Micros> = answered.iter().map(|(value, _)| *value).collect();
    values.sort_unstable();
    let stat = |p: u32| (!values.is_empty()).then(|| percentile(&values, p));
    Bucket {
        start_unix_ms: start,
        runs: runs.len() as u32,
        failures: runs.iter().filter(|p| p.state != PointState::Ok).count() as u32,
        breaches: runs.iter().filter(|p| !p.breached.is_empty()).count() as u32,
        min: values.first().copied(),
        median: stat(50),
        p95: stat(95),
        max: values.last().copied(),
        probe_id: match runs {
            [one] => one.probe_id.clone(),
            _ => None,
        },
        slowest_probe_id: slowest.and_then(|(_, p)| p.probe_id.clone()),
    }
}

/// Share of runs (in percent) a protocol must lead for the window to name it.
pub const CONSISTENT_SHARE_PERCENT: u64 = 75;

/// What a window says about the protocols on new connections: which was fastest
/// in how many runs, and by how much.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WindowVerdict {
    /// Runs (per vantage) where at least two protocols answered.
    pub runs: u32,
    /// The protocol fastest in most of those runs.
    pub leader: Protocol,
    /// Of the runs, the share (percent) where it was fastest.
    pub share_percent: u32,
    /// Its median lead over the next fastest, in the runs it led.
    pub median_lead: Micros,
    /// Whether it led in at least [`CONSISTENT_SHARE_PERCENT`] of the runs.
    pub consistent: bool,
    /// The verdict in a sentence.
    pub sentence: String,
}

/// The window's verdict over new connections' totals, when two protocols answered in some run.
pub fn window_verdict<'a>(
    points: impl IntoIterator<Item = &'a MonitorPoint>,
) -> Option<WindowVerdict> {
    let mut runs: BTreeMap<(u64, &str), Vec<(Protocol, Micros)>> = BTreeMap::new();
    for point in points.into_iter().filter(|p| p.state == PointState::Ok) {
        if let (Some(protocol), Some(total)) = (point.protocol, point.figures.total) {
            runs.entry((point.slot_unix_ms, point.vantage.as_str()))
                .or_default()
                .push((protocol, total));
        }
    }
    let mut leads: BTreeMap<Protocol, Vec<Micros>> = BTreeMap::new();
    let mut compared = 0u32;
    for totals in runs.values_mut().filter(|t| t.len() >= 2) {
        totals.sort_by_key(|(_, total)| *total);
        compared += 1;
        leads
            .entry(totals[0].0)
            .or_default()
            .push(Micros(totals[1].1.0 - totals[0].1.0));
    }
    let (leader, mut lead) = leads.into_iter().max_by_key(|(_, l)| l.len())?;
    lead.sort_unstable();
    Some(verdict_of(
        compared,
        leader,
        lead.len() as u32,
        percentile(&lead, 50),
    ))
}

/// The verdict of a window where `leader` was fastest in `led` of `compared` runs, by a median
/// `median_lead` in those (`compared` at least 1).
pub fn verdict_of(compared: u32, leader: Protocol, led: u32, median_lead: Micros) -> WindowVerdict {
    let share_percent = (u64::from(led) * 100 / u64::from(compared.max(1))) as u32;
    let consistent = u64::from(share_percent) >= CONSISTENT_SHARE_PERCENT;
    let runs_word = if compared == 1 { "run" } else { "runs" };
    let sentence = if consistent {
        format!(
            "{} was the fastest on new connections in {share_percent}% of {compared} {runs_word}, by a median {}.",
            leader.http_version(),
            format::ms(median_lead)
        )
    } else {
        format!(
            "No protocol was consistently fastest on new connections: {} led in {share_percent}% of {compared} {runs_word}.",
            leader.http_version()
        )
    };
    WindowVerdict {
        runs: compared,
        leader,
        share_percent,
        median_lead,
        consistent,
        sentence,
    }
}

/// Lateness of the runs among `points` (start less slot), one per slot and vantage.
pub fn lateness(points: &[MonitorPoint]) -> Vec<u64> {
    let mut runs: BTreeMap<(u64, &str), u64> = BTreeMap::new();
    for point in points.iter().filter(|p| p.protocol.is_some()) {
        runs.insert(
            (point.slot_unix_ms, point.vantage.as_str()),
            point.started_unix_ms.saturating_sub(point.slot_unix_ms),
        );
    }
    runs.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ProbeStatus;
    use crate::fixture::{failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, Phase};

    fn request(every: &str) -> MonitorRequest {
        MonitorRequest {
            url: "https://example.com/".into(),
            protocols: Some(vec![Protocol::H2, Protocol::H3]),
            vantages: Vec::new(),
            every: every.into(),
            options: None,
            thresholds: BTreeMap::from([("total".into(), "300ms".into())]),
            visibility: Visibility::Public,
            alerts: vec![AlertTarget {
                webhook: Some("https://hooks.example/T0/s3cret".into()),
                alertmanager: None,
            }],
            alerting: AlertRules::default(),
        }
    }

    fn record(runs: Vec<ProtocolRun>) -> ProbeRecord {
        ProbeRecord {
            created_at_unix_ms: 0,
            ..crate::fixture::record("p1", ProbeStatus::Done, result(runs))
        }
    }

    fn ok_point(slot: u64, protocol: Protocol, total_ms: u64) -> MonitorPoint {
        MonitorPoint {
            protocol: Some(protocol),
            state: PointState::Ok,
            vantage: "here".into(),
            probe_id: Some(format!("p{slot}")),
            figures: Figures {
                total: Some(Micros(total_ms * 1000)),
                ..Figures::default()
            },
            ..missed_point(slot, 0)
        }
    }

    #[test]
    fn intervals_read_in_whole_units() {
        assert_eq!(parse_every("30s"), Ok(30_000));
        assert_eq!(parse_every(" 5m "), Ok(300_000));
        assert_eq!(parse_every("1h"), Ok(3_600_000));
        assert_eq!(parse_every("250ms"), Ok(250));
        for bad in [
            "",
            "10",
            "1.5s",
            "0s",
            "-1s",
            "5 min",
            "99999999999999999999h",
        ] {
            assert!(parse_every(bad).is_err(), "{bad}");
        }
        assert_eq!(every_text(60_000), "1m");
        assert_eq!(every_text(90_000), "90s");
        assert_eq!(every_text(1500), "1500ms");
    }

    #[test]
    fn a_request_becomes_a_spec_or_names_its_wrong_field() {
        let spec = request("1m").spec(60_000).unwrap();
        assert_eq!(spec.every_ms, 60_000);
        assert_eq!(spec.options.url, "https://example.com/");
        assert_eq!(spec.options.protocols, vec![Protocol::H2, Protocol::H3]);
        assert_eq!(spec.options.visibility, Visibility::Public);
        assert_eq!(spec.thresholds, vec!["total=300ms".to_owned()]);
        assert_eq!(spec.gates().len(), 1);

        let short = request("10s").spec(60_000).unwrap_err();
        assert_eq!(short.code, "invalid_interval");
        assert!(
            short.message.contains("every 1m to 24h"),
            "{}",
            short.message
        );
        assert_eq!(
            request("2d").spec(1000).unwrap_err().code,
            "invalid_interval"
        );

        let mut gate = request("1m");
        gate.thresholds = BTreeMap::from([("h1:total".into(), "300ms".into())]);
        assert_eq!(
            gate.clone().spec(1000).unwrap_err().code,
            "invalid_threshold"
        );
        gate.thresholds = BTreeMap::from([("total".into(), "fast".into())]);
        assert_eq!(gate.spec(1000).unwrap_err().code, "invalid_threshold");

        assert_eq!(
            spec.alerts[0].redacted().webhook.as_deref(),
            Some("https://hooks.example:443/…")
        );
        let mut both = request("1m");
        both.alerts[0].alertmanager = Some("http://am.example:9093".into());
        assert_eq!(both.spec(1000).unwrap_err().code, "invalid_body");
        let mut ftp = request("1m");
        ftp.alerts[0].webhook = Some("ftp://hooks.example/".into());
        assert_eq!(ftp.spec(1000).unwrap_err().code, "invalid_body");
        let mut eager = request("1m");
        eager.alerting.after = 0;
        assert_eq!(eager.spec(1000).unwrap_err().code, "invalid_body");

        let mut nested = request("1m");
        nested.options = Some(ProbeOptions {
            url: "https://elsewhere.example/".into(),
            ..ProbeOptions::default()
        });
        assert_eq!(nested.spec(1000).unwrap_err().code, "invalid_body");
    }

    #[test]
    fn slots_spread_over_the_interval_and_late_ones_are_missed_not_skipped() {
        let every = 60_000;
        let offsets: std::collections::BTreeSet<u64> = (0..1000)
            .map(|i| first_slot(&format!("m{i}"), 0, every) / 1000)
            .collect();
        // A thousand monitors made at once fall in (nearly) every second of the minute.
        assert!(offsets.len() > 55, "{} distinct seconds", offsets.len());
        assert!(offsets.iter().all(|s| *s < 60));

        let on_time = Claim::at(120_000, every, 120_400);
        assert_eq!(
            (on_time.run, on_time.missed, on_time.next),
            (120_000, 0, 180_000)
        );
        // Down for three and a half intervals: the latest due slot runs, three are missed.
        assert_eq!(slot_at_or_after(1000, every, 500), 1000);
        assert_eq!(slot_at_or_after(1000, every, 1000), 1000);
        assert_eq!(slot_at_or_after(1000, every, 1001), 61_000);
        let late = Claim::at(120_000, every, 120_000 + 3 * every + 30_000);
        assert_eq!(late.missed, 3);
        assert_eq!(late.missed_from, 120_000);
        assert_eq!(late.run, 120_000 + 3 * every);
        assert_eq!(late.next, late.run + every);
    }

    #[test]
    fn a_run_becomes_a_point_per_protocol_with_its_state_and_breaches() {
        let record = record(vec![
            run(
                Protocol::H2,
                vec![fresh(1, 1000, 2000, 3000, 40_000), reused(2, 10_000)],
            ),
            run(
                Protocol::H3,
                vec![failed(
                    fresh(1, 1000, 0, 0, 0),
                    Phase::Quic,
                    FailureKind::Timeout,
                )],
            ),
        ]);
        let gates = slo::parse_gates(&["total.max=30ms".into()]).unwrap();
        let points = points_of(&record, 60_000, 60_250, &gates);
        assert_eq!(points.len(), 2);
        let h2 = &points[0];
        assert_eq!(h2.state, PointState::Ok);
        assert_eq!(h2.probe_id.as_deref(), Some("p1"));
        assert_eq!(h2.figures.dns, Some(Micros(1000)));
        assert_eq!(h2.figures.tls, Some(Micros(3000)));
        assert!(h2.figures.total.unwrap() > Micros(40_000));
        assert!(h2.figures.reused_total.unwrap() < Micros(20_000));
        assert_eq!(h2.breached, vec!["total.max <= 30.0 ms".to_owned()]);
        let h3 = &points[1];
        assert_eq!(h3.state, PointState::Failed);
        assert!(
            h3.detail.as_deref().unwrap().starts_with("quic: "),
            "{:?}",
            h3.detail
        );
        assert_eq!(h3.figures.total, None);
        assert_eq!(lateness(&points), vec![250]);
    }

    #[test]
    fn a_series_buckets_long_windows_and_counts_missed_slots() {
        let every = 60_000;
        let mut points: Vec<MonitorPoint> = (0..100)
            .flat_map(|i| {
                let slot = i * every;
                [
                    ok_point(slot, Protocol::H2, 50 + i % 5),
                    ok_point(slot, Protocol::H3, 40),
                ]
            })
            .collect();
        points.push(missed_point(100 * every, 3));
        let short = series(
            &points,
            SeriesMetric::Total,
            (0, 10 * every),
            every,
            MAX_BUCKETS,
        );
        assert_eq!(short.bucket_ms, every);
        assert_eq!(short.lines.len(), 2);
        assert_eq!(short.lines[0].buckets.len(), 10);
        assert_eq!(short.lines[0].buckets[0].probe_id.as_deref(), Some("p0"));

        let day = 24 * 3600 * 1000;
        let long = series(
            &points,
            SeriesMetric::Total,
            (0, 30 * day),
            every,
            MAX_BUCKETS,
        );
        assert_eq!(long.bucket_ms, 30 * day / MAX_BUCKETS);
        let h2 = &long.lines[0];
        assert_eq!(h2.protocol, Protocol::H2);
        assert_eq!(h2.buckets.iter().map(|b| b.runs).sum::<u32>(), 100);
        let first = &h2.buckets[0];
        assert!(first.runs > 1 && first.probe_id.is_none());
        assert_eq!(first.min, Some(Micros(50_000)));
        assert_eq!(first.max, Some(Micros(54_000)));
        assert_eq!(long.missed.iter().map(|m| m.missed).sum::<u64>(), 3);

        let verdict = long.verdict.unwrap();
        assert_eq!(verdict.leader, Protocol::H3);
        assert_eq!((verdict.runs, verdict.share_percent), (100, 100));
        assert!(verdict.consistent);
        assert_eq!(verdict.median_lead, Micros(12_000));
        assert!(
            verdict.sentence.starts_with("HTTP/3 was the fastest"),
            "{}",
            verdict.sentence
        );
    }

    #[test]
    fn a_window_where_the_lead_changes_hands_names_no_winner() {
        let points: Vec<MonitorPoint> = (0..10)
            .flat_map(|i| {
                let (h2, h3) = if i % 2 == 0 { (40, 50) } else { (50, 40) };
                [ok_point(i, Protocol::H2, h2), ok_point(i, Protocol::H3, h3)]
            })
            .collect();
        let verdict = window_verdict(&points).unwrap();
        assert!(!verdict.consistent);
        assert_eq!(verdict.share_percent, 50);
        assert!(
            verdict.sentence.starts_with("No protocol"),
            "{}",
            verdict.sentence
        );
    }
}
