//! The versioned wire schema of a probe: what was asked, and what was measured.
//!
//! Every time is a [`Micros`] offset from the start of its attempt, read from a
//! monotonic clock by the engine. A phase that did not happen is absent
//! (`None`), never zero. "Request written" means accepted by the kernel socket
//! buffer (or QUIC's stream buffer), not on the wire; time to first byte is the
//! first response byte read from the transport, and [`TtfbSource`] says how it
//! was observed.

use crate::json::ReadJson;
use serde::{Deserialize, Serialize};

/// Version of this schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// A duration or offset in microseconds.
#[derive(
    Copy,
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    ReadJson,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct Micros(pub u64);

impl Micros {
    /// This duration in (fractional) milliseconds.
    pub fn as_ms(self) -> f64 {
        self.0 as f64 / 1000.0
    }

    /// This duration in (fractional) seconds.
    pub fn as_secs(self) -> f64 {
        self.0 as f64 / 1_000_000.0
    }

    /// The difference `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_sub(self, earlier: Micros) -> Micros {
        Micros(self.0.saturating_sub(earlier.0))
    }
}

/// An HTTP protocol the probe can speak.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ReadJson,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// HTTP/1.1 over TCP (TLS for https).
    H1,
    /// HTTP/2 over TLS with ALPN `h2` (prior knowledge for http).
    H2,
    /// HTTP/3 over QUIC.
    H3,
}

impl Protocol {
    /// All protocols, in display order.
    pub const ALL: [Protocol; 3] = [Protocol::H1, Protocol::H2, Protocol::H3];

    /// The short name used in options and URLs: `h1`, `h2`, `h3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::H1 => "h1",
            Protocol::H2 => "h2",
            Protocol::H3 => "h3",
        }
    }

    /// The version string HTTP uses for it (`HTTP/1.1`, `HTTP/2`, `HTTP/3`).
    pub fn http_version(self) -> &'static str {
        match self {
            Protocol::H1 => "HTTP/1.1",
            Protocol::H2 => "HTTP/2",
            Protocol::H3 => "HTTP/3",
        }
    }

    /// The version strings of `protocols`, comma-separated (`HTTP/1.1, HTTP/2`).
    pub fn versions(protocols: &[Protocol]) -> String {
        protocols
            .iter()
            .map(|p| p.http_version())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "h1" | "http1" | "http/1.1" => Ok(Protocol::H1),
            "h2" | "http2" | "http/2" => Ok(Protocol::H2),
            "h3" | "http3" | "http/3" => Ok(Protocol::H3),
            other => Err(format!(
                "unknown protocol `{other}` (expected h1, h2 or h3)"
            )),
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The request method. A server runs only the methods its operator allows
/// (`--allow-methods`); bodies go with POST, PUT, PATCH, DELETE and OPTIONS.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// GET: the body is read (up to the size cap) and timed.
    #[default]
    Get,
    /// HEAD: no body.
    Head,
    /// POST, usually with a body.
    Post,
    /// PUT, usually with a body.
    Put,
    /// PATCH, usually with a body.
    Patch,
    /// DELETE.
    Delete,
    /// OPTIONS.
    Options,
}

impl Method {
    /// Every method, in the order help texts list them.
    pub const ALL: [Method; 7] = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
        Method::Options,
    ];

    /// The method token as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
        }
    }

    /// Whether repeating the request is harmless (RFC 9110, section 9.2.2):
    /// only these may leave as 0-RTT early data. POST and PATCH are not.
    pub fn is_idempotent(self) -> bool {
        !matches!(self, Method::Post | Method::Patch)
    }

    /// Whether a request body may go with it (GET and HEAD carry none here).
    pub fn takes_body(self) -> bool {
        !matches!(self, Method::Get | Method::Head)
    }

    /// The method of the request that follows a redirect with `status`, as
    /// curl -L and browsers do: 303 turns any method but HEAD into GET, 301
    /// and 302 turn POST into GET, 307 and 308 (and the rest) keep it. The
    /// body goes along exactly when the method is kept.
    pub fn after_redirect(self, status: u16) -> Method {
        match (status, self) {
            (303, Method::Head) => Method::Head,
            (303, _) | (301 | 302, Method::Post) => Method::Get,
            _ => self,
        }
    }
}

impl std::str::FromStr for Method {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let upper = s.trim().to_ascii_uppercase();
        Method::ALL
            .into_iter()
            .find(|m| m.as_str() == upper)
            .ok_or_else(|| {
                format!(
                    "unsupported method `{upper}` (expected GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS)"
                )
            })
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request body. Asked for as exactly one of `text` or `base64` (binary),
/// with an optional content type. A record never keeps the bytes (they may
/// hold secrets): its options keep only `size`, `sha256` and `content_type`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct RequestBody {
    /// The body as UTF-8 text. Never stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The body as standard base64 (RFC 4648, padded), for binary bodies. Never stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
    /// `Content-Type` sent with the body unless a request header sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Size of the body in bytes, filled in by the probe (ignored when asking).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// SHA-256 of the body, lowercase hex, filled in by the probe (ignored when asking).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// How attempts 2..N get their connection.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ConnectionMode {
    /// Attempt 1 opens a connection; later attempts reuse it.
    #[default]
    Warm,
    /// Every attempt opens a new connection, with a full handshake.
    Cold,
    /// Every attempt opens a new connection that resumes the previous one's
    /// TLS session (session tickets; for HTTP/3 also 0-RTT when the server allows).
    Resumed,
}

impl std::str::FromStr for ConnectionMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "warm" => Ok(ConnectionMode::Warm),
            "cold" => Ok(ConnectionMode::Cold),
            "resumed" => Ok(ConnectionMode::Resumed),
            other => Err(format!(
                "unknown arm `{other}` (expected cold, warm or resumed)"
            )),
        }
    }
}

impl ConnectionMode {
    /// The arm's name: `warm`, `cold` or `resumed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionMode::Warm => "warm",
            ConnectionMode::Cold => "cold",
            ConnectionMode::Resumed => "resumed",
        }
    }
}

/// One request or response header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Header {
    /// Header name, lowercase.
    pub name: String,
    /// Header value (lossily decoded as UTF-8).
    pub value: String,
}

/// A pinned address, like curl's `--resolve host:port:addr`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResolveOverride {
    /// Host name to pin (case-insensitive).
    pub host: String,
    /// Port the pin applies to.
    pub port: u16,
    /// Address to connect to instead of resolving.
    pub addr: String,
}

/// What was asked: everything that shapes the measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(default, deny_unknown_fields)]
pub struct ProbeOptions {
    /// The target URL (http or https).
    pub url: String,
    /// Protocols to measure, in order.
    pub protocols: Vec<Protocol>,
    /// Request method.
    pub method: Method,
    /// Request body, if any (needs a method other than GET and HEAD). With a
    /// body, `send` lasts until its last byte was handed to the transport.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<RequestBody>,
    /// Attempts per round (1 or more): in warm mode the first on a new
    /// connection, the others reusing it.
    pub repeat: u32,
    /// Rounds per protocol (1 or more; 4 by default): each round makes the
    /// `repeat` attempts from a new connection, so a protocol's new
    /// connections are measured `rounds` times and a verdict on them rests on
    /// more than one sample. Attempts are numbered across rounds.
    pub rounds: u32,
    /// Whether later attempts of a round reuse its first connection.
    pub mode: ConnectionMode,
    /// Pause between attempts, in milliseconds (makes reused connections idle).
    pub idle_gap_ms: u64,
    /// Whether redirects are followed, each hop its own entry.
    pub follow_redirects: bool,
    /// Most redirect hops followed per attempt.
    pub max_redirects: u32,
    /// Extra request headers.
    pub headers: Vec<Header>,
    /// Limit on one attempt, in milliseconds.
    pub timeout_ms: u64,
    /// Limit on any single phase, in milliseconds.
    pub phase_timeout_ms: u64,
    /// Limit on a QUIC handshake, in milliseconds (at most the phase limit);
    /// none: 2 s plus 10 TCP round trips to the host, at most 3 s
    /// ([`crate::quic_budget`]), what a browser spends before falling back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic_timeout_ms: Option<u64>,
    /// Body bytes read at most; the rest is cut and `truncated` set.
    pub max_body_bytes: u64,
    /// Whether certificate verification was turned off (like curl -k).
    pub insecure: bool,
    /// Pinned addresses.
    pub resolve: Vec<ResolveOverride>,
    /// DNS server used instead of the system's, as `ip:port`.
    pub dns_server: Option<String>,
    /// Try HTTP/3 on the URL's own host and port even when nothing advertised it.
    pub h3_direct: bool,
    /// Who may find the probe in a server's list (the permalink opens it either way).
    pub visibility: Visibility,
    /// Which address family is resolved and dialled (curl's `-4` / `-6`):
    /// `any` (the default), `v4` or `v6`. A name without an address of the
    /// family fails in the dns phase.
    #[serde(skip_serializing_if = "AddressFamily::is_any")]
    pub family: AddressFamily,
    /// Whether every other resolved address (of the family, deduplicated, at
    /// most [`MAX_OTHER_ADDRESSES`] per protocol) gets its own run of the same
    /// attempts beside the main run, pinned to it, in
    /// [`ProtocolRun::other_addresses`]. The server accepts it: each address
    /// is checked against its target policy, and the record's size cap holds.
    #[serde(skip_serializing_if = "is_false")]
    pub all_addresses: bool,
    /// Where to measure from, by vantage name (`GET /api/v1/vantages` lists
    /// them): each runs the whole probe. Empty: the server's own vantage.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vantages: Vec<String>,
    /// Network conditions every connection goes through (a named profile
    /// such as `3g`, or figures such as `rtt=100ms,loss=2%,down=10mbit`);
    /// none: the real path alone. A public server takes it only when its
    /// operator allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::network::NetworkProfile>,
    /// Moves each new HTTP/3 connection to a new local port (`"port"`) or
    /// address (an IP) in the middle of its first response, to see whether
    /// it survives ([`crate::migration`]); HTTP/1.1 and HTTP/2 show what a
    /// new connection would cost instead. A public server takes `"port"` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "port"))]
    pub migrate: Option<crate::migration::Migrate>,
    /// After each protocol's attempts, send this many requests at once, as
    /// streams over one HTTP/2 or HTTP/3 connection or over as many HTTP/1.1
    /// connections, and time each one's completion ([`crate::streams`]):
    /// head-of-line blocking made visible, under loss above all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
    /// Names of credential-looking headers or query parameters to keep in the record (case-
    /// insensitive, at most [`crate::redact::MAX_KEEP_SECRET`]): by default every one whose name
    /// looks like a credential's (`api_key`, `token`, `X-Api-Key`, ...) is redacted
    /// ([`crate::redact`]). `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and
    /// URL passwords are redacted whatever this says.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keep_secret: Vec<String>,
}

/// Most addresses besides the main run's that one protocol probes with
/// [`ProbeOptions::all_addresses`] (so at most four side by side).
pub const MAX_OTHER_ADDRESSES: usize = 3;

fn is_false(value: &bool) -> bool {
    !*value
}

/// An address family: which addresses a probe resolves and dials, or which
/// family an address belongs to.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AddressFamily {
    /// Either family, in the resolver's order.
    #[default]
    Any,
    /// IPv4 only (A records).
    V4,
    /// IPv6 only (AAAA records).
    V6,
}

impl AddressFamily {
    /// Whether this is [`AddressFamily::Any`].
    pub fn is_any(&self) -> bool {
        *self == AddressFamily::Any
    }

    /// The family of `ip`.
    pub fn of(ip: std::net::IpAddr) -> AddressFamily {
        match ip {
            std::net::IpAddr::V4(_) => AddressFamily::V4,
            std::net::IpAddr::V6(_) => AddressFamily::V6,
        }
    }

    /// Whether `ip` may be dialled under this choice.
    pub fn admits(self, ip: std::net::IpAddr) -> bool {
        self == AddressFamily::Any || AddressFamily::of(ip) == self
    }

    /// The lowercase name, as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressFamily::Any => "any",
            AddressFamily::V4 => "v4",
            AddressFamily::V6 => "v6",
        }
    }

    /// The family's name in prose: "IPv4", "IPv6" (or "any family").
    pub fn name(self) -> &'static str {
        match self {
            AddressFamily::Any => "any family",
            AddressFamily::V4 => "IPv4",
            AddressFamily::V6 => "IPv6",
        }
    }

    /// The DNS record type that carries this family's addresses.
    pub fn record(self) -> &'static str {
        match self {
            AddressFamily::Any => "A or AAAA",
            AddressFamily::V4 => "A",
            AddressFamily::V6 => "AAAA",
        }
    }
}

/// Whether a probe stored by a server shows in its public list.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Listed only for its creator (who holds the owner token); anyone with
    /// the permalink can still read it.
    #[default]
    Unlisted,
    /// Listed for everyone.
    Public,
}

impl Visibility {
    /// The lowercase name, as on the wire and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Unlisted => "unlisted",
            Visibility::Public => "public",
        }
    }
}

impl ProbeOptions {
    /// Attempts per protocol: `rounds` times `repeat`.
    pub fn attempts(&self) -> u32 {
        self.rounds.max(1).saturating_mul(self.repeat)
    }

    /// Whether `attempt` (numbered from 1 across rounds) opens its round's
    /// connection: the first of a round, or every one in cold mode. A later
    /// attempt of a warm round should reuse it.
    pub fn opens_connection(&self, attempt: u32) -> bool {
        self.mode == ConnectionMode::Cold
            || attempt.saturating_sub(1).is_multiple_of(self.repeat.max(1))
    }
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            url: String::new(),
            protocols: Protocol::ALL.to_vec(),
            method: Method::Get,
            body: None,
            repeat: 2,
            rounds: 4,
            mode: ConnectionMode::Warm,
            idle_gap_ms: 0,
            follow_redirects: false,
            max_redirects: 5,
            headers: Vec::new(),
            timeout_ms: 30_000,
            phase_timeout_ms: 10_000,
            quic_timeout_ms: None,
            max_body_bytes: 10 * 1024 * 1024,
            insecure: false,
            resolve: Vec::new(),
            dns_server: None,
            h3_direct: false,
            visibility: Visibility::Unlisted,
            family: AddressFamily::Any,
            all_addresses: false,
            vantages: Vec::new(),
            network: None,
            migrate: None,
            streams: None,
            keep_secret: Vec::new(),
        }
    }
}

/// A probe: options, and per protocol what happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProbeResult {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_at_unix_ms: u64,
    /// The options the probe ran with.
    pub options: ProbeOptions,
    /// Where it was measured from; absent in a result measured by the CLI
    /// or by the server itself before vantages existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vantage: Option<crate::vantage::Vantage>,
    /// One run per requested protocol, in the order asked.
    pub runs: Vec<ProtocolRun>,
    /// What the result means (outcome, verdict, findings), computed by
    /// [`crate::analysis::analyze`] once the probe has finished; absent while
    /// it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<crate::analysis::Analysis>,
}

impl ProbeResult {
    /// A result that has measured nothing yet (no runs, no analysis), as a
    /// probe's record holds it from its creation until its first run.
    pub fn empty(
        options: ProbeOptions,
        started_at_unix_ms: u64,
        vantage: Option<crate::vantage::Vantage>,
    ) -> Self {
        ProbeResult {
            schema_version: SCHEMA_VERSION,
            started_at_unix_ms,
            options,
            vantage,
            runs: Vec::new(),
            analysis: None,
        }
    }
}

/// All attempts of one protocol.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProtocolRun {
    /// The protocol measured.
    pub protocol: Protocol,
    /// Why the protocol was not measured at all, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// When the server does not speak this protocol (HTTP/1.1 or HTTP/2):
    /// what its TLS handshake (ALPN) said. The run is then `skipped`, calmly,
    /// as HTTP/3's `not_advertised` is: a fact about the server, not a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_offered: Option<NotOffered>,
    /// Why the later attempts were not made, when the run stopped early (e.g.
    /// attempt 1 timed out setting up, so the peer is silent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Why the run stopped before its planned attempts, when it did: the
    /// record's size cap was reached (the attempts before it are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
    /// Attempts in order; with redirects followed, each hop is its own entry.
    pub attempts: Vec<Attempt>,
    /// How HTTP/3 was discovered and whether it was reachable (h3 runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<H3Discovery>,
    /// With [`ProbeOptions::all_addresses`]: the same attempts against each
    /// other resolved address, one run per address, pinned to it (the main
    /// run above dialled the first address, as without the option).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_addresses: Vec<AddressRun>,
    /// With [`ProbeOptions::network`]: how this protocol's packets went
    /// through the emulated network, and what the link did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<crate::network::EmulatedPath>,
    /// The requests sent at once after the attempts, when `streams` asked for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<crate::streams::StreamBurst>,
}

impl ProtocolRun {
    /// A run of `protocol` with nothing in it yet.
    pub fn empty(protocol: Protocol) -> Self {
        ProtocolRun {
            protocol,
            skipped: None,
            not_offered: None,
            stopped: None,
            cut_short: None,
            discovery: None,
            other_addresses: Vec::new(),
            attempts: Vec::new(),
            emulated: None,
            streams: None,
        }
    }
}

/// Whether some HTTP/1.1 or HTTP/2 attempt among `runs` got an answer: an `Alt-Svc` header can
/// only come in one. With no HTTP/1.1 or HTTP/2 run at all, nothing was missed: `true`.
pub fn answered_over_tcp(runs: &[ProtocolRun]) -> bool {
    let mut tcp = runs
        .iter()
        .filter(|run| run.protocol != Protocol::H3)
        .peekable();
    tcp.peek().is_none()
        || tcp
            .flat_map(|run| &run.attempts)
            .any(|a| a.response.is_some())
}

/// A server that does not speak the protocol asked for, as its TLS handshake
/// showed: it chose another application protocol (ALPN), or refused every
/// one offered (alert `no_application_protocol`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotOffered {
    /// The ALPN protocols h123 offered, e.g. `["h2", "http/1.1"]`.
    pub offered: Vec<String>,
    /// The protocol the server chose instead (e.g. `http/1.1`); absent when
    /// it chose none or refused them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    /// Whether the handshake completed agreeing on none, and the server then
    /// closed the connection without answering the request (an HTTP/2-only
    /// server asked for HTTP/1.1).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed: bool,
}

impl NotOffered {
    /// The sentence a run's `skipped` carries, e.g. "this server does not
    /// offer HTTP/2: offered h2 and http/1.1 in TLS (ALPN), it chose http/1.1".
    pub fn reason(&self, protocol: Protocol) -> String {
        let offered = crate::verdict::list(&self.offered);
        let answer = match &self.chosen {
            Some(chosen) => format!("it chose {chosen}"),
            None if self.closed => {
                "it agreed to none of them and closed the connection without answering".to_string()
            }
            None => "it agreed to none of them".to_string(),
        };
        format!(
            "this server does not offer {}: offered {offered} in TLS (ALPN), {answer}",
            protocol.http_version()
        )
    }
}

/// One protocol's attempts against one address of the host (see
/// [`ProtocolRun::other_addresses`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AddressRun {
    /// The address every new connection of this run dialled, e.g. `::1`.
    pub address: String,
    /// Its family (`v4` or `v6`).
    pub family: AddressFamily,
    /// Why the later attempts were not made, when the run stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Why the run stopped at the record's size cap, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
    /// Attempts in order, as in [`ProtocolRun::attempts`].
    pub attempts: Vec<Attempt>,
}

/// How HTTP/3 was found, where it was tried, and what came of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct H3Discovery {
    /// HTTP/3 entries of the `Alt-Svc` headers seen on this probe's h1/h2 responses.
    pub alt_svc: Vec<crate::alt_svc::AltSvc>,
    /// The HTTPS DNS record of the host, when one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https_record: Option<HttpsRecord>,
    /// Why there is no HTTPS record when it was not looked up (`Alt-Svc`
    /// already named the endpoint, the name is pinned) or not answered in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https_lookup: Option<String>,
    /// What led to the endpoint tried, if one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<H3Via>,
    /// The `host:port` QUIC was tried on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// What came of it.
    pub outcome: H3Outcome,
    /// The outcome in a sentence.
    pub detail: String,
    /// How long each QUIC handshake was given, in milliseconds, once an
    /// endpoint was to be tried ([`crate::quic_budget`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic_budget_ms: Option<u64>,
}

/// What pointed h123 at an HTTP/3 endpoint.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum H3Via {
    /// An `Alt-Svc` header on an HTTP/1.1 or HTTP/2 response.
    AltSvc,
    /// An HTTPS (SVCB) DNS record listing `h3`.
    HttpsRecord,
    /// Nothing: tried on the URL's own host and port because asked to.
    Direct,
}

/// The typed result of HTTP/3 discovery.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum H3Outcome {
    /// QUIC handshake completed and HTTP/3 answered.
    Ok,
    /// Nothing advertised HTTP/3 and no direct attempt was asked for.
    NotAdvertised,
    /// Datagrams went out and nothing came back within the bounded wait.
    UdpSilent,
    /// Nothing listens on the endpoint's UDP port: the host answered the
    /// datagrams with ICMP port unreachable, at once.
    UdpRefused,
    /// The endpoint's name (an `Alt-Svc` or HTTPS-record target) did not
    /// resolve: no datagram was sent.
    NameUnresolved,
    /// The QUIC or TLS handshake failed (the reason is in `detail`).
    HandshakeFailed,
    /// The server speaks no QUIC version or ALPN h123 offers.
    VersionMismatch,
    /// The endpoint is an address the safety policy forbids (e.g. an `Alt-Svc`
    /// pointing into a private network); nothing was sent to it.
    Blocked,
}

/// The parts of an HTTPS (SVCB, RFC 9460) DNS record that matter for HTTP/3.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HttpsRecord {
    /// SvcPriority (0 is alias mode).
    pub priority: u16,
    /// TargetName (`.` means the owner name itself).
    pub target: String,
    /// ALPN ids offered.
    pub alpn: Vec<String>,
    /// Port, when it differs from the URL's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// ipv4hint addresses.
    pub ipv4_hints: Vec<String>,
    /// ipv6hint addresses.
    pub ipv6_hints: Vec<String>,
}

/// How time to first byte was observed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TtfbSource {
    /// The first read of response bytes from the (TLS-decrypted) transport,
    /// timed by the kernel's arrival stamp of their segment where it has one.
    TransportRead,
    /// The first HTTP/2 HEADERS frame on the request's stream.
    Http2HeadersFrame,
    /// The response headers as delivered by the HTTP stack.
    ResponseHeaders,
    /// The UDP datagram that carried the HTTP/3 response headers, received
    /// (the kernel's arrival stamp of the last datagram read before QUIC
    /// handed the headers over).
    Datagram,
}

/// One request: its phases and the facts around it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attempt {
    /// 1-based attempt number within its protocol run.
    pub attempt: u32,
    /// Redirect hop: 0 for the requested URL, 1 for the first redirect, ...
    pub hop: u32,
    /// The URL requested in this entry.
    pub url: String,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_at_unix_ms: u64,
    /// Redirect hops only: where this hop started, as an offset from the start
    /// of hop 0 of the same attempt, so a chain is drawn and totalled as one
    /// request. Absent on hop 0 (and in records written before it existed,
    /// where [`crate::chain`] places each hop right after the previous one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_start_us: Option<Micros>,
    /// Phase spans, offsets from the attempt's start.
    pub phases: Phases,
    /// How time to first byte was observed.
    pub ttfb_source: TtfbSource,
    /// DNS facts, when a lookup or pin happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<DnsInfo>,
    /// Connection facts, once a connection was had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<ConnectionInfo>,
    /// TLS facts, for https.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsInfo>,
    /// Response facts, once headers arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseInfo>,
    /// QUIC transport facts, for HTTP/3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicInfo>,
    /// What went wrong, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// The kernel's TCP facts of the connection (`TCP_INFO`, Linux only;
    /// h1 and h2), at connect, first byte and end; through a proxy they
    /// describe the hop to the proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_info: Option<TcpInfoSnapshots>,
    /// What became of the connection when it moved mid-response
    /// (`migrate`, HTTP/3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration: Option<crate::migration::Migration>,
}

impl Attempt {
    /// Attempt `attempt`, hop `hop`, of `url`, with nothing measured yet: no phases, facts or
    /// failure (a running attempt's start, or a test's blank).
    pub fn started(attempt: u32, hop: u32, url: String) -> Attempt {
        Attempt {
            attempt,
            hop,
            url,
            started_at_unix_ms: 0,
            chain_start_us: None,
            phases: Phases::default(),
            ttfb_source: TtfbSource::TransportRead,
            dns: None,
            connection: None,
            tls: None,
            response: None,
            quic: None,
            failure: None,
            tcp_info: None,
            migration: None,
        }
    }
}

/// An attempt's `TCP_INFO` snapshots; each is absent where it was not taken
/// (no connect on a reused connection, no first byte after a failure).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TcpInfoSnapshots {
    /// Right after the TCP connect completed (new connections only), before
    /// the proxy or TLS phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_connect: Option<TcpInfo>,
    /// Once the first response byte was seen (in the receive phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_first_byte: Option<TcpInfo>,
    /// At the end of the attempt: after the last body byte, or after its failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_end: Option<TcpInfo>,
}

/// What the kernel knows of a TCP connection (Linux `struct tcp_info`);
/// a field the kernel did not fill is absent. Counts are the connection's
/// since it opened, not the attempt's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TcpInfo {
    /// Smoothed round-trip time (`tcpi_rtt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<Micros>,
    /// Round-trip time variation (`tcpi_rttvar`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rttvar_us: Option<Micros>,
    /// Smallest round-trip time seen (`tcpi_min_rtt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rtt_us: Option<Micros>,
    /// Congestion window, in segments (`tcpi_snd_cwnd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_cwnd: Option<u32>,
    /// Sender's maximum segment size, in bytes (`tcpi_snd_mss`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_mss: Option<u32>,
    /// Segments retransmitted so far (`tcpi_total_retrans`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_retrans: Option<u32>,
    /// Segments currently considered lost (`tcpi_lost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u32>,
    /// Recent delivery rate, bytes per second (`tcpi_delivery_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_rate: Option<u64>,
    /// Bytes sent, retransmissions included (`tcpi_bytes_sent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_sent: Option<u64>,
    /// Bytes received and acknowledged (`tcpi_bytes_received`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_received: Option<u64>,
    /// Segments sent (`tcpi_segs_out`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segs_out: Option<u32>,
    /// Segments received (`tcpi_segs_in`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segs_in: Option<u32>,
}

/// A span of time within an attempt.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Span {
    /// Offset where the span starts.
    pub start_us: Micros,
    /// Offset where the span ends (not before `start_us`).
    pub end_us: Micros,
}

impl Span {
    /// Length of the span.
    pub fn duration(&self) -> Micros {
        self.end_us.saturating_sub(self.start_us)
    }
}

/// The phases of DESIGN.md section 2; `None` where a phase did not happen.
/// On a finished attempt they follow each other without gaps beyond a few
/// microseconds of the tool's own bookkeeping, so they add up to `total`;
/// [`Phase::meaning`] says what each covers per protocol.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Phases {
    /// Name lookup (absent for IP literals, pinned addresses and reused connections).
    pub dns: Option<Span>,
    /// TCP connect (h1/h2 on new connections): to the proxy when one is used.
    pub connect: Option<Span>,
    /// Proxy tunnel set-up (HTTP `CONNECT` until its `200`, or the SOCKS5
    /// greeting, authentication and connect reply), after `connect`, before `tls`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<Span>,
    /// TLS handshake (https over TCP on new connections).
    pub tls: Option<Span>,
    /// QUIC + TLS 1.3 handshake (h3 on new connections).
    pub quic: Option<Span>,
    /// Writing the request: on a new connection from the end of the
    /// handshake (the HTTP layer's own setup included), else from the
    /// request's start; until its last byte was taken by the kernel (TCP) or
    /// left in a datagram (QUIC). With a body that is its last byte: for h1
    /// the last write of head or body the kernel's socket buffer accepted (a
    /// body that fits the buffers counts as sent before the server reads it);
    /// for h2 the DATA frame ending the request's stream (held back by the
    /// server's flow-control window); for h3 the stream's last data (held back
    /// by the stream's flow-control window).
    pub send: Option<Span>,
    /// Request sent until first response byte (TTFB; see [`Phase::meaning`]
    /// for what the first byte is per protocol).
    pub wait: Option<Span>,
    /// First response byte until last body byte.
    pub receive: Option<Span>,
    /// The attempt's first network step (lookup, connect, handshake, or the
    /// request on a reused connection) until its last body byte, or until
    /// it failed. Preparation before it (configuration, a UDP socket, a
    /// pooled connection's check) and what is read after it (certificate
    /// summaries, QUIC statistics) are not timed.
    pub total: Span,
}

/// A named phase, for failures, findings and layout.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ReadJson,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Name lookup.
    Dns,
    /// TCP connect.
    Connect,
    /// Proxy tunnel set-up.
    Proxy,
    /// TLS handshake.
    Tls,
    /// QUIC handshake.
    Quic,
    /// Writing the request.
    Send,
    /// Waiting for the first byte.
    Wait,
    /// Reading the body.
    Receive,
}

impl Phase {
    /// All phases in timeline order.
    pub const ALL: [Phase; 8] = [
        Phase::Dns,
        Phase::Connect,
        Phase::Proxy,
        Phase::Tls,
        Phase::Quic,
        Phase::Send,
        Phase::Wait,
        Phase::Receive,
    ];

    /// What the phase covers, exactly, per protocol (for legends and docs).
    pub fn meaning(self) -> &'static str {
        match self {
            Phase::Dns => {
                "name lookup: absent for IP literals, --resolve pins and reused connections"
            }
            Phase::Connect => {
                "TCP connect (HTTP/1.1, HTTP/2): SYN sent until the connection is established \
                 (to the proxy, through one)"
            }
            Phase::Proxy => {
                "proxy tunnel set-up (-x only): HTTP CONNECT sent until its 2xx, or the SOCKS5 \
                 greeting, authentication and connect reply"
            }
            Phase::Tls => {
                "TLS handshake over TCP: ClientHello sent until the handshake is complete"
            }
            Phase::Quic => {
                "QUIC handshake, TLS 1.3 inside (HTTP/3): first Initial packet until the handshake \
                 is complete; with 0-RTT the request leaves before it ends"
            }
            Phase::Send => {
                "writing the request: on a new connection from the end of the handshake, with the \
                 HTTP layer's own setup (HTTP/2 preface and SETTINGS, HTTP/3 control streams); \
                 ends when the kernel took its last byte (TCP) or the datagram carrying it left (QUIC)"
            }
            Phase::Wait => {
                "request sent until the first response byte: HTTP/1.1 the first byte read from the \
                 socket; HTTP/2 the response's HEADERS frame read from the socket; HTTP/3 the \
                 datagram carrying the response headers read from the socket (QUIC's decryption \
                 and reassembly of them fall in receive, as HTTP/2's framing does)"
            }
            Phase::Receive => "first response byte until the last body byte",
        }
    }

    /// Lowercase name, as in the schema.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Dns => "dns",
            Phase::Connect => "connect",
            Phase::Proxy => "proxy",
            Phase::Tls => "tls",
            Phase::Quic => "quic",
            Phase::Send => "send",
            Phase::Wait => "wait",
            Phase::Receive => "receive",
        }
    }
}

impl Phases {
    /// The span of one phase, if it happened.
    pub fn get(&self, phase: Phase) -> Option<Span> {
        match phase {
            Phase::Dns => self.dns,
            Phase::Connect => self.connect,
            Phase::Proxy => self.proxy,
            Phase::Tls => self.tls,
            Phase::Quic => self.quic,
            Phase::Send => self.send,
            Phase::Wait => self.wait,
            Phase::Receive => self.receive,
        }
    }

    /// Phases that happened, in timeline order.
    pub fn present(&self) -> impl Iterator<Item = (Phase, Span)> + '_ {
        Phase::ALL
            .into_iter()
            .filter_map(|phase| self.get(phase).map(|span| (phase, span)))
    }
}

/// Name lookup facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DnsInfo {
    /// Who answered: `system`, a server `ip:port`, `pinned` or `literal`.
    pub source: String,
    /// Addresses returned, in the order given.
    pub addresses: Vec<String>,
}

/// Connection facts, like Go's GotConnInfo.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConnectionInfo {
    /// 1-based connection number within the protocol run.
    pub id: u32,
    /// Whether the connection was opened for an earlier attempt.
    pub reused: bool,
    /// Whether it sat idle before this request.
    pub was_idle: bool,
    /// How long it sat idle, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_us: Option<Micros>,
    /// 1-based index of this request on the connection.
    pub request_index: u32,
    /// Local socket address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_addr: Option<String>,
    /// Remote address actually connected to (the proxy's, through a proxy).
    pub remote_addr: String,
    /// The proxy the connection was tunnelled through, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyInfo>,
}

/// How a connection reached its target through a proxy (never its credentials).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProxyInfo {
    /// The kind of tunnel.
    pub kind: ProxyKind,
    /// The proxy as given, `host:port`, without credentials.
    pub address: String,
    /// Whether credentials were offered to the proxy.
    pub authenticated: bool,
    /// The proxy's reply that opened the tunnel (`HTTP/1.1 200 Connection
    /// established`, `SOCKS5 succeeded`).
    pub reply: String,
}

/// Proxy protocols h123 tunnels through.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ProxyKind {
    /// HTTP `CONNECT` tunnel; the proxy resolves the target's name.
    Http,
    /// SOCKS5 with the target's name resolved locally.
    Socks5,
    /// SOCKS5 with the target's name resolved by the proxy.
    Socks5h,
}

impl ProxyKind {
    /// The URL scheme naming this kind (`http`, `socks5`, `socks5h`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyKind::Http => "http",
            ProxyKind::Socks5 => "socks5",
            ProxyKind::Socks5h => "socks5h",
        }
    }
}

/// TLS facts of the connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TlsInfo {
    /// Negotiated ALPN protocol id, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpn: Option<String>,
    /// Protocol version, e.g. `TLSv1.3`.
    pub version: String,
    /// Cipher suite, e.g. `TLS13_AES_128_GCM_SHA256`.
    pub cipher: String,
    /// Whether the session was resumed.
    pub resumed: bool,
    /// Whether the chain was verified (false when insecure).
    pub verified: bool,
    /// The server's chain, leaf first.
    pub certificates: Vec<CertificateSummary>,
}

/// What a certificate says, in brief.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CertificateSummary {
    /// Subject distinguished name.
    pub subject: String,
    /// Issuer distinguished name.
    pub issuer: String,
    /// Subject alternative names (DNS names and IP addresses).
    pub sans: Vec<String>,
    /// Validity start, RFC 3339.
    pub not_before: String,
    /// Validity end, RFC 3339.
    pub not_after: String,
    /// Public key type and size, e.g. `ECDSA P-256` or `RSA 2048`.
    pub key_type: String,
    /// SHA-256 of the certificate's DER, lowercase hex (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint_sha256: Option<String>,
}

impl CertificateSummary {
    /// Whom the certificate names: its subject, or, when that is empty (a certificate may name
    /// its holder by its alternative names alone), those names.
    pub fn holder(&self) -> String {
        match (self.subject.is_empty(), self.sans.as_slice()) {
            (false, _) => self.subject.clone(),
            (true, []) => "(no subject, no names)".to_owned(),
            (true, names) => format!("(no subject) {}", names.join(", ")),
        }
    }
}

/// QUIC transport facts of an HTTP/3 connection, read after the attempt.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QuicInfo {
    /// Smoothed round-trip time estimate.
    pub rtt_us: Micros,
    /// Packets sent on the connection so far.
    pub sent_packets: u64,
    /// Packets declared lost so far.
    pub lost_packets: u64,
    /// Congestion events so far.
    pub congestion_events: u64,
    /// Whether 0-RTT data was sent and the server accepted it (`None`: not tried).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_rtt_accepted: Option<bool>,
    /// Congestion window, in bytes (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_bytes: Option<u64>,
    /// The path's current maximum datagram size, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_mtu: Option<u16>,
    /// Bytes declared lost so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_bytes: Option<u64>,
    /// The name's other addresses that had not answered the QUIC handshake
    /// when this connection's did (each had 250 ms before the next started).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub silent_addresses: Vec<String>,
    /// The name's other addresses that refused the QUIC handshake before
    /// this connection's answered: nothing listens on their UDP port (ICMP
    /// port unreachable), which ends their turn at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_addresses: Vec<String>,
    /// How long the handshake waited on those addresses (silent or
    /// refused) before it dialled the one that answered: the client's
    /// address order, left out of the protocol verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_wait_us: Option<Micros>,
}

/// Response facts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResponseInfo {
    /// Status code.
    pub status: u16,
    /// HTTP version of the response, e.g. `HTTP/2`.
    pub http_version: String,
    /// Response headers (capped in count and size: 16 KiB of names and values in all).
    pub headers: Vec<Header>,
    /// Whether some response headers were cut or left out to fit the budget.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headers_truncated: bool,
    /// Body bytes read.
    pub body_bytes: u64,
    /// Whether the body was cut at the size cap.
    pub truncated: bool,
}

impl ResponseInfo {
    /// The first header with this (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str())
    }
}

/// What kind of thing went wrong.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A phase or the whole attempt ran out of time.
    Timeout,
    /// The name does not exist (NXDOMAIN) or has no addresses.
    NameNotFound,
    /// Name resolution failed otherwise.
    Dns,
    /// The peer refused the connection.
    Refused,
    /// The peer reset or closed the connection early.
    Reset,
    /// The certificate could not be verified.
    Certificate,
    /// The TLS handshake failed otherwise.
    Tls,
    /// The peer broke the HTTP protocol.
    Protocol,
    /// The target is not allowed by the safety policy.
    Blocked,
    /// The protocol is not available for this target or build.
    Unsupported,
    /// The proxy refused to open the tunnel (an HTTP status other than 200,
    /// a SOCKS5 error reply or rejected credentials).
    ProxyRefused,
    /// Any other I/O error.
    Io,
    /// The probe's byte budget from the target (a server's
    /// `--max-probe-bytes`) was spent: the server stopped reading.
    Budget,
}

impl FailureKind {
    /// The kind's name, as serialised (`timeout`, `name_not_found`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::NameNotFound => "name_not_found",
            FailureKind::Dns => "dns",
            FailureKind::Refused => "refused",
            FailureKind::Reset => "reset",
            FailureKind::Certificate => "certificate",
            FailureKind::Tls => "tls",
            FailureKind::Protocol => "protocol",
            FailureKind::Blocked => "blocked",
            FailureKind::Unsupported => "unsupported",
            FailureKind::ProxyRefused => "proxy_refused",
            FailureKind::Io => "io",
            FailureKind::Budget => "budget",
        }
    }
}

/// A failure as data: which phase, what kind, and the reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Failure {
    /// The phase that was running when it failed.
    pub phase: Phase,
    /// What kind of failure.
    pub kind: FailureKind,
    /// A readable reason.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_without_a_subject_is_named_by_its_alternative_names() {
        let mut leaf: CertificateSummary = serde_json::from_value(serde_json::json!({
            "subject": "", "issuer": "CN=ca", "sans": ["e.test", "127.0.0.1"],
            "not_before": "2026-01-01T00:00:00Z", "not_after": "2027-01-01T00:00:00Z",
            "key_type": "ECDSA P-256"
        }))
        .unwrap();
        assert_eq!(leaf.holder(), "(no subject) e.test, 127.0.0.1");
        leaf.subject = "CN=e.test".into();
        assert_eq!(leaf.holder(), "CN=e.test");
    }

    #[test]
    fn redirects_change_methods_as_curl_does() {
        use Method::*;
        for (status, from, to) in [
            (301, Post, Get),
            (302, Post, Get),
            (303, Post, Get),
            (303, Put, Get),
            (303, Head, Head),
            (301, Put, Put),
            (307, Post, Post),
            (308, Patch, Patch),
            (302, Get, Get),
        ] {
            assert_eq!(from.after_redirect(status), to, "{status} {from}");
        }
        assert!(!Post.is_idempotent() && !Patch.is_idempotent());
        assert!(Put.is_idempotent() && Get.is_idempotent());
        assert_eq!("patch".parse::<Method>(), Ok(Patch));
        assert!("TRACE".parse::<Method>().unwrap_err().contains("TRACE"));
    }
}
