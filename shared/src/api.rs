//! The REST API's data types, shared by the server and the web UI.

use crate::bench::{BenchOptions, BenchProgress, BenchResult};
use crate::json::ReadJson;
use crate::schema::{Attempt, ProbeOptions, ProbeResult, Protocol, Visibility};
use crate::timeline::TimedEvent;
use serde::{Deserialize, Serialize};

/// Where a stored probe or bench is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ProbeStatus {
    /// Still running: a probe's `result` holds the attempts finished so far,
    /// a bench's `progress` says how far it has come.
    Running,
    /// Finished; the record is immutable from now on.
    Done,
    /// Stopped before finishing (e.g. server shutdown); what finished is kept.
    Cancelled,
}

impl ProbeStatus {
    /// The status as the API, the store and the pages write it: `running`, `done`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeStatus::Running => "running",
            ProbeStatus::Done => "done",
            ProbeStatus::Cancelled => "cancelled",
        }
    }
}

/// A probe as stored and served at `/api/v1/probes/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProbeRecord {
    /// Short, unguessable, URL-safe id.
    pub id: String,
    /// Lifecycle state.
    pub status: ProbeStatus,
    /// When the probe was created, milliseconds since the Unix epoch.
    pub created_at_unix_ms: u64,
    /// The validated options.
    pub options: ProbeOptions,
    /// The result: partial while running, complete when done.
    pub result: ProbeResult,
    /// How long the probe waited for a running slot (the server's slots are
    /// shared fairly between clients), in milliseconds; absent until it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_ms: Option<u64>,
    /// Why a `cancelled` probe stopped, when the server knows more than the
    /// status says (e.g. the server instance that ran it stopped answering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
    /// One run per vantage, in the order the options name them, when the
    /// probe names an agent's vantage (absent otherwise: `result` is then
    /// the whole answer). `result` stays the server's own vantage's result
    /// when the server ran it, else the first vantage's. The record is
    /// finished only once every vantage finished or failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vantages: Vec<crate::vantage::VantageRun>,
    /// What the probe owner's own browser measured of the URL, when they asked for it
    /// (`POST /api/v1/probes/{id}/browser`, once the probe has finished; at most once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<crate::browser::BrowserRun>,
    /// The monitor whose scheduled run this probe is, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor: Option<MonitorLink>,
}

/// A monitor's run: which monitor, and which of its slots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonitorLink {
    /// The monitor's id (`/api/v1/monitors/{id}`).
    pub id: String,
    /// The slot the run was for, milliseconds since the Unix epoch.
    pub slot_unix_ms: u64,
}

/// How long after its creation a finished probe may still receive its owner's browser
/// measurement, in milliseconds; caches may keep the record forever only after that.
pub const BROWSER_WINDOW_MS: u64 = 24 * 3600 * 1000;

impl ProbeRecord {
    /// Whether the record can no longer change at `now_unix_ms`: finished, and holding a browser
    /// measurement or past the [`BROWSER_WINDOW_MS`] in which one may arrive.
    pub fn settled(&self, now_unix_ms: u64) -> bool {
        self.status != ProbeStatus::Running
            && (self.browser.is_some()
                || now_unix_ms.saturating_sub(self.created_at_unix_ms) > BROWSER_WINDOW_MS)
    }
}

/// Two finished probes compared, as served at `/api/v1/compare/{a}/{b}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProbeComparison {
    /// The first probe's record (the "before").
    pub a: ProbeRecord,
    /// The second probe's record (the "after").
    pub b: ProbeRecord,
    /// What differs between their results, by the verdict's significance rule.
    pub comparison: crate::compare::Comparison,
    /// The comparison's page people share, e.g. `/compare/{a}/{b}`.
    pub permalink: String,
}

impl ProbeComparison {
    /// Compares record `b` with record `a` (each by its `result`: the server's own vantage's, or
    /// the first vantage's), saying so when a record was measured from several vantages.
    pub fn of(a: ProbeRecord, b: ProbeRecord) -> Self {
        let mut comparison = crate::compare::compare(&a.result, &b.result);
        for (letter, record) in [("A", &a), ("B", &b)] {
            if record.vantages.len() > 1 {
                let shown = record
                    .result
                    .vantage
                    .as_ref()
                    .map_or("its first vantage", |v| v.shown());
                comparison.caveats.push(format!(
                    "{letter} was measured from {} vantages; compared here: its result from {shown}.",
                    record.vantages.len()
                ));
            }
        }
        ProbeComparison {
            permalink: format!("/compare/{}/{}", a.id, b.id),
            a,
            b,
            comparison,
        }
    }
}

/// Links to a probe's representations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProbeLinks {
    /// The JSON record.
    #[serde(rename = "self")]
    pub self_: String,
    /// Server-Sent Events stream.
    pub events: String,
    /// HAR 1.2 export.
    pub har: String,
    /// curl `-w` figures.
    pub curl: String,
    /// Server-rendered waterfall picture.
    pub waterfall_svg: String,
    /// The waterfall as a 1200×630 PNG, for link previews (a finished probe's); empty from a
    /// server older than it.
    #[serde(default)]
    pub preview_png: String,
    /// The result page's markup, as it stands.
    pub view: String,
    /// That markup redrawn as the probe runs (Server-Sent Events).
    pub view_events: String,
    /// The page people share.
    pub permalink: String,
}

impl ProbeLinks {
    /// The links of probe `id`, as absolute paths.
    pub fn for_id(id: &str) -> Self {
        let base = format!("/api/v1/probes/{id}");
        ProbeLinks {
            events: format!("{base}/events"),
            har: format!("{base}/har"),
            curl: format!("{base}/curl"),
            waterfall_svg: format!("{base}/waterfall.svg"),
            preview_png: format!("{base}/preview.png"),
            view: format!("{base}/view"),
            view_events: format!("{base}/view/events"),
            permalink: format!("/r/{id}"),
            self_: base,
        }
    }
}

/// The answer to `POST /api/v1/probes` (status 202).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProbeCreated {
    /// The new probe's id.
    pub id: String,
    /// Always `running` at creation.
    pub status: ProbeStatus,
    /// Where to find it.
    pub links: ProbeLinks,
    /// The owner token: send it back as `X-H123-Owner` to see this probe (and
    /// every other one made with the same token) in `GET /api/v1/probes`, and
    /// on `POST` to make more probes under it. The server keeps only its hash.
    pub owner_token: String,
}

/// One line of the recent-results list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProbeSummary {
    /// The probe's id.
    pub id: String,
    /// Target URL.
    pub url: String,
    /// Protocols asked for.
    pub protocols: Vec<Protocol>,
    /// Lifecycle state.
    pub status: ProbeStatus,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_unix_ms: u64,
    /// Whether everyone's list shows it, or only its owner's.
    #[serde(default)]
    pub visibility: Visibility,
    /// How a finished probe went, at a glance (from its analysis); absent while it runs, for a
    /// record stored without an analysis, and from a server older than the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ListOutcome>,
    /// The verdict's answer as the result page heads it (`result.analysis.verdict.summary`),
    /// cut to [`VERDICT_MAX_CHARS`] characters (ending in `…` when cut); absent as `outcome` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// The most characters of a verdict a list line carries (the link preview's description's
/// bound): a summary longer than that is cut, ending in `…`.
pub const VERDICT_MAX_CHARS: usize = 300;

/// How a finished probe went, as its line in the recent-results list says at a glance: the
/// result page's outcome, with a probe whose every answer was an HTTP error told apart from one
/// whose attempts failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ListOutcome {
    /// Every attempt got an answer below 400.
    Done,
    /// Some attempts failed or answered 4xx/5xx; some succeeded.
    DoneWithErrors,
    /// Nothing succeeded, and every attempt that counted got an answer: all 4xx or 5xx.
    HttpError,
    /// Nothing succeeded, and some attempt failed (no answer at all).
    Failed,
}

impl ListOutcome {
    /// The outcome of `analysis`.
    pub fn of(analysis: &crate::analysis::Analysis) -> Self {
        use crate::analysis::Outcome;
        match analysis.outcome {
            Outcome::Done => ListOutcome::Done,
            Outcome::DoneWithErrors => ListOutcome::DoneWithErrors,
            Outcome::Failed if analysis.counts.failed == 0 && analysis.counts.http_errors > 0 => {
                ListOutcome::HttpError
            }
            Outcome::Failed => ListOutcome::Failed,
        }
    }

    /// As stored and sent: `done`, `done_with_errors`, `http_error`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ListOutcome::Done => "done",
            ListOutcome::DoneWithErrors => "done_with_errors",
            ListOutcome::HttpError => "http_error",
            ListOutcome::Failed => "failed",
        }
    }

    /// The outcome stored as `text` ([`ListOutcome::as_str`]); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        [
            ListOutcome::Done,
            ListOutcome::DoneWithErrors,
            ListOutcome::HttpError,
            ListOutcome::Failed,
        ]
        .into_iter()
        .find(|o| o.as_str() == text)
    }
}

/// What a list line says of `record` beside its id and URL: its outcome and its verdict (the
/// result page's, [`crate::verdict::verdict`]'s summary as the finished record's analysis holds
/// it, cut to [`VERDICT_MAX_CHARS`]). Both `None` while it runs, or when the record has no
/// analysis (the result page then shows no verdict either). Stored as columns when the probe
/// finishes, so the list never reads whole records.
pub fn list_line(record: &ProbeRecord) -> (Option<ListOutcome>, Option<String>) {
    match (&record.status, &record.result.analysis) {
        (ProbeStatus::Running, _) | (_, None) => (None, None),
        (_, Some(analysis)) => (
            Some(ListOutcome::of(analysis)),
            Some(bounded(&analysis.verdict.summary, VERDICT_MAX_CHARS)),
        ),
    }
}

/// `text` in at most `max` characters: cut, ending in `…`, when longer.
pub fn bounded(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

impl ProbeSummary {
    /// The line's status word and its badge's classes, as the result page's badge words it, and
    /// an HTTP error named as such: never a success for a probe that failed, answered only with
    /// errors, or is still running.
    pub fn badge(&self) -> (&'static str, &'static str) {
        match (self.status, self.outcome) {
            (ProbeStatus::Running, _) => ("measuring…", "status running"),
            (ProbeStatus::Cancelled, _) => ("cancelled", "status cancelled"),
            (ProbeStatus::Done, Some(ListOutcome::Failed)) => ("failed", "status failed"),
            (ProbeStatus::Done, Some(ListOutcome::HttpError)) => ("HTTP error", "status failed"),
            (ProbeStatus::Done, Some(ListOutcome::DoneWithErrors)) => {
                ("done with errors", "status errors")
            }
            (ProbeStatus::Done, _) => ("done", "status done"),
        }
    }
}

/// A page of `GET /api/v1/probes`, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProbeList {
    /// The probes on this page.
    pub items: Vec<ProbeSummary>,
    /// Pass as `before=` to get the next (older) page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_before: Option<String>,
}

/// A bench as stored and served at `/api/v1/benches/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchRecord {
    /// Short, unguessable, URL-safe id (apart from probe ids).
    pub id: String,
    /// Lifecycle state.
    pub status: ProbeStatus,
    /// When the bench was created, milliseconds since the Unix epoch.
    pub created_at_unix_ms: u64,
    /// When it finished (done or cancelled), milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at_unix_ms: Option<u64>,
    /// The validated options.
    pub options: BenchOptions,
    /// How far it has come; only while running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<BenchProgress>,
    /// The measured figures; only when done (a cancelled bench has none).
    /// A sweep has its figures in `steps` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<BenchResult>,
    /// A sweep's benches, one per finished step, in order (while it runs,
    /// those finished so far).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::sweep::SweepStep>,
    /// Why a `cancelled` bench stopped, when the server knows more than the
    /// status says (e.g. the server instance that ran it stopped answering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
}

impl BenchRecord {
    /// A sweep's steps so far as a [`SweepResult`](crate::sweep::SweepResult);
    /// none for a single bench.
    pub fn sweep_result(&self) -> Option<crate::sweep::SweepResult> {
        Some(crate::sweep::SweepResult {
            sweep: self.options.sweep.clone()?,
            options: self.options.clone(),
            steps: self.steps.clone(),
        })
    }
}

/// Links to a bench.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchLinks {
    /// The JSON record (poll it while the bench runs).
    #[serde(rename = "self")]
    pub self_: String,
    /// The page people share.
    pub permalink: String,
}

impl BenchLinks {
    /// The links of bench `id`, as absolute paths.
    pub fn for_id(id: &str) -> Self {
        BenchLinks {
            self_: format!("/api/v1/benches/{id}"),
            permalink: format!("/b/{id}"),
        }
    }
}

/// The answer to `POST /api/v1/benches` (status 202).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchCreated {
    /// The new bench's id.
    pub id: String,
    /// Always `running` at creation.
    pub status: ProbeStatus,
    /// Where to find it.
    pub links: BenchLinks,
    /// The owner token, as a probe's ([`ProbeCreated::owner_token`]): send it back as
    /// `X-H123-Owner` to see this bench in `GET /api/v1/benches`. The server keeps only its hash.
    pub owner_token: String,
}

/// One line of the bench list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchSummary {
    /// The bench's id.
    pub id: String,
    /// Target URL.
    pub url: String,
    /// Protocols asked for.
    pub protocols: Vec<Protocol>,
    /// Lifecycle state.
    pub status: ProbeStatus,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_unix_ms: u64,
    /// Whether everyone's list shows it, or only its owner's.
    #[serde(default)]
    pub visibility: Visibility,
}

/// A page of `GET /api/v1/benches`, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchList {
    /// The benches on this page.
    pub items: Vec<BenchSummary>,
    /// Pass as `before=` to get the next (older) page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_before: Option<String>,
}

/// What this server offers, at `GET /api/v1/config`, so clients can adapt
/// (the web UI shows its load comparison form only when benches are enabled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerInfo {
    /// The server's version.
    pub version: String,
    /// Whether `POST /api/v1/benches` may run benches (`h123 serve --enable-bench`).
    pub bench_enabled: bool,
    /// Bounds on a bench's options; present when benches are enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench_limits: Option<BenchBounds>,
    /// Methods a probe may use here (`h123 serve --allow-methods`).
    #[serde(default)]
    pub allowed_methods: Vec<crate::schema::Method>,
    /// Largest request body a probe may send here, in bytes (`--max-request-body`).
    #[serde(default)]
    pub max_request_body: u64,
    /// Whether probes may ask for emulated network conditions
    /// ([`crate::ProbeOptions::network`]).
    #[serde(default)]
    pub network_enabled: bool,
    /// Whether probes here reach public addresses only (the default; `--allow-private` lifts
    /// it), so a page says so only where it is true.
    #[serde(default)]
    pub public_targets_only: bool,
    /// The addresses benches may load here, as `address` (any port) or `address:port`
    /// (`--bench-target`); empty when benches are off.
    #[serde(default)]
    pub bench_targets: Vec<String>,
}

/// A vantage a probe can be measured from, as `GET /api/v1/vantages` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VantageInfo {
    /// Its name, label and tags.
    #[serde(flatten)]
    pub vantage: crate::vantage::Vantage,
    /// `server` for the server's own, `agent` for an `h123 agent`.
    pub kind: VantageKind,
    /// The h123 version it runs, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Whether it can take a probe now (an agent: heard from within its lease).
    pub online: bool,
    /// How long ago an agent was last heard from, in milliseconds; absent
    /// for the server itself and for an agent never heard from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen_ms_ago: Option<u64>,
}

impl VantageInfo {
    /// Its health in words, for a picker: `online (this server)`, `online ·
    /// last seen 3 s ago`, `offline · last seen 5 min ago`, `offline · never connected`.
    pub fn health(&self) -> String {
        if self.kind == VantageKind::Server {
            return "online (this server)".into();
        }
        let state = if self.online { "online" } else { "offline" };
        match self.last_seen_ms_ago {
            Some(ms) => format!("{state} · last seen {} ago", age(ms)),
            None if self.online => state.into(),
            None => format!("{state} · never connected"),
        }
    }
}

/// A time ago in whole seconds, minutes, hours or days, whichever reads best.
fn age(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..120 => format!("{secs} s"),
        120..7_200 => format!("{} min", secs / 60),
        7_200..172_800 => format!("{} h", secs / 3_600),
        _ => format!("{} days", secs / 86_400),
    }
}

/// What runs a vantage.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum VantageKind {
    /// The server itself.
    Server,
    /// An `h123 agent` connected to the server.
    Agent,
}

/// `GET /api/v1/vantages`: every vantage this server knows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VantageList {
    /// The server's own first, then the agents by name.
    pub items: Vec<VantageInfo>,
}

/// The largest values a bench may ask for on this server.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BenchBounds {
    /// Most requests in flight at once.
    pub max_concurrency: u32,
    /// Most connections.
    pub max_connections: u32,
    /// Longest measured duration per protocol, in milliseconds.
    pub max_duration_ms: u64,
    /// Most requests per protocol.
    pub max_requests: u64,
    /// Highest fixed arrival rate, in requests per second.
    pub max_rate: u32,
    /// Longest warm-up per protocol, in milliseconds.
    pub max_warmup_ms: u64,
    /// Longest a whole bench may plan to take, in milliseconds: warm-up and
    /// measured time of every protocol at every sweep step (a bench of a
    /// request count counts the longest duration).
    pub max_total_ms: u64,
    /// Whether a bench may ask for emulated network conditions.
    #[serde(default)]
    pub network: bool,
}

impl Default for BenchBounds {
    /// The command line's bounds: generous, since it runs with its user's own rights.
    fn default() -> Self {
        BenchBounds {
            max_concurrency: 10_000,
            max_connections: 10_000,
            max_duration_ms: 24 * 3600 * 1000,
            max_requests: 1_000_000_000,
            max_rate: 10_000_000,
            max_warmup_ms: 3600 * 1000,
            max_total_ms: u64::MAX,
            network: true,
        }
    }
}

/// Live progress of a probe, as the engine reports it and SSE streams it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProbeEvent {
    /// A phase boundary was just crossed.
    Phase {
        /// Protocol of the attempt.
        protocol: Protocol,
        /// Attempt number.
        attempt: u32,
        /// Redirect hop.
        hop: u32,
        /// What happened, and when within the attempt.
        event: TimedEvent,
    },
    /// An attempt (one hop) finished, successfully or not.
    Attempt {
        /// Its protocol.
        protocol: Protocol,
        /// The finished attempt.
        attempt: Box<Attempt>,
    },
    /// A protocol was not measured at all.
    Skipped {
        /// The protocol.
        protocol: Protocol,
        /// Why.
        reason: String,
    },
    /// Where HTTP/3 will be tried and what pointed there, before its first attempt starts (so a
    /// silent UDP port can be named while it is waited on).
    Discovery {
        /// The protocol (HTTP/3).
        protocol: Protocol,
        /// What discovery found.
        discovery: Box<crate::schema::H3Discovery>,
    },
    /// A protocol's later attempts will not be made (its peer is silent).
    Stopped {
        /// The protocol.
        protocol: Protocol,
        /// Why.
        reason: String,
    },
}

/// The body of every 4xx and 5xx answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiError {
    /// The error.
    pub error: ApiErrorBody,
}

/// A stable code and a readable message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiErrorBody {
    /// Stable snake_case code, e.g. `invalid_url`, `not_found`, `rate_limited`.
    pub code: String,
    /// What went wrong, in a sentence.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vantage_health_reads_as_words() {
        let info = |kind, online, last_seen_ms_ago| VantageInfo {
            vantage: crate::vantage::Vantage::named("fra1"),
            kind,
            version: None,
            online,
            last_seen_ms_ago,
        };
        assert_eq!(
            info(VantageKind::Server, true, None).health(),
            "online (this server)"
        );
        assert_eq!(
            info(VantageKind::Agent, true, Some(3_400)).health(),
            "online · last seen 3 s ago"
        );
        assert_eq!(info(VantageKind::Agent, true, None).health(), "online");
        assert_eq!(
            info(VantageKind::Agent, false, Some(119_999)).health(),
            "offline · last seen 119 s ago"
        );
        assert_eq!(
            info(VantageKind::Agent, false, Some(300_000)).health(),
            "offline · last seen 5 min ago"
        );
        assert_eq!(
            info(VantageKind::Agent, false, Some(3 * 3_600_000)).health(),
            "offline · last seen 3 h ago"
        );
        assert_eq!(
            info(VantageKind::Agent, false, Some(5 * 86_400_000)).health(),
            "offline · last seen 5 days ago"
        );
        assert_eq!(
            info(VantageKind::Agent, false, None).health(),
            "offline · never connected"
        );
    }

    #[test]
    fn a_finished_record_settles_with_its_browser_measurement_or_after_a_day() {
        let options = crate::schema::ProbeOptions::default();
        let mut record = crate::fixture::record(
            "x",
            ProbeStatus::Running,
            crate::schema::ProbeResult::empty(options, 1_000, None),
        );
        assert!(!record.settled(1_000 + 2 * BROWSER_WINDOW_MS), "running");
        record.status = ProbeStatus::Done;
        assert!(!record.settled(1_000 + BROWSER_WINDOW_MS));
        assert!(record.settled(1_001 + BROWSER_WINDOW_MS));
        record.browser = Some(crate::browser::BrowserRun {
            user_agent: String::new(),
            measured_at_unix_ms: 2_000,
            attempts: Vec::new(),
            finding: None,
        });
        assert!(record.settled(2_000));
    }

    #[test]
    fn a_list_line_carries_the_verdict_and_never_calls_a_failure_a_success() {
        use crate::fixture::{failed, fresh, result, reused, run};
        use crate::schema::{FailureKind, Phase};
        let record = |status, result: crate::schema::ProbeResult| ProbeRecord {
            created_at_unix_ms: 1,
            ..crate::fixture::record("x", status, crate::analysis::analyzed(result))
        };
        let line = |record: &ProbeRecord| {
            let (outcome, verdict) = list_line(record);
            let summary = ProbeSummary {
                id: record.id.clone(),
                url: String::new(),
                protocols: Vec::new(),
                status: record.status,
                created_at_unix_ms: 1,
                visibility: Visibility::Unlisted,
                outcome,
                verdict,
            };
            (summary.badge().0, summary.verdict)
        };
        let ok = result(vec![run(
            Protocol::H1,
            vec![fresh(1, 0, 1, 1, 1), reused(2, 1)],
        )]);
        let done = record(ProbeStatus::Done, ok.clone());
        let verdict = done
            .result
            .analysis
            .as_ref()
            .unwrap()
            .verdict
            .summary
            .clone();
        assert_eq!(line(&done), ("done", Some(verdict)));
        let mut not_found = ok.clone();
        for a in &mut not_found.runs[0].attempts {
            a.response.as_mut().unwrap().status = 404;
        }
        let (badge, verdict) = line(&record(ProbeStatus::Done, not_found));
        assert_eq!(badge, "HTTP error");
        assert!(verdict.unwrap().contains("every answer was an HTTP error"));
        let refused = failed(fresh(1, 0, 1, 1, 1), Phase::Connect, FailureKind::Refused);
        let (badge, verdict) = line(&record(
            ProbeStatus::Done,
            result(vec![run(Protocol::H2, vec![refused])]),
        ));
        assert_eq!(badge, "failed");
        assert!(
            verdict
                .unwrap()
                .starts_with("Nothing to compare: every attempt failed")
        );
        // Running: neither, whatever a partial result holds; cancelled says so.
        assert_eq!(
            line(&record(ProbeStatus::Running, ok.clone())),
            ("measuring…", None)
        );
        assert_eq!(line(&record(ProbeStatus::Cancelled, ok)).0, "cancelled");
        // Stored without an analysis (an old record): no verdict, as its page has none.
        let mut old = done.clone();
        old.result.analysis = None;
        assert_eq!(line(&old), ("done", None));
        // Bounded, in characters.
        let long = "é".repeat(VERDICT_MAX_CHARS + 5);
        let cut = bounded(&long, VERDICT_MAX_CHARS);
        assert_eq!(cut.chars().count(), VERDICT_MAX_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(bounded("short", VERDICT_MAX_CHARS), "short");
        for o in [
            ListOutcome::Done,
            ListOutcome::DoneWithErrors,
            ListOutcome::HttpError,
            ListOutcome::Failed,
        ] {
            assert_eq!(ListOutcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert_eq!(ListOutcome::parse("unknown"), None);
    }

    #[test]
    fn links_point_at_the_api_and_the_permalink() {
        let links = ProbeLinks::for_id("abc");
        assert_eq!(links.self_, "/api/v1/probes/abc");
        assert_eq!(links.permalink, "/r/abc");
        let json = serde_json::to_value(&links).unwrap();
        assert_eq!(json["self"], "/api/v1/probes/abc");
        assert_eq!(json["waterfall_svg"], "/api/v1/probes/abc/waterfall.svg");
        assert_eq!(json["preview_png"], "/api/v1/probes/abc/preview.png");
        let bench = BenchLinks::for_id("xyz");
        assert_eq!(bench.permalink, "/b/xyz");
        assert_eq!(
            serde_json::to_value(&bench).unwrap()["self"],
            "/api/v1/benches/xyz"
        );
    }

    #[test]
    fn events_are_tagged() {
        let event = ProbeEvent::Skipped {
            protocol: Protocol::H3,
            reason: "x".into(),
        };
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["type"], "skipped");
        assert_eq!(serde_json::from_value::<ProbeEvent>(json).unwrap(), event);
    }
}
