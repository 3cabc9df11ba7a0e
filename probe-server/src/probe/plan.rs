//! Validation: turns untrusted [`ProbeOptions`] into a [`Plan`] the engine
//! can run, or a clear error naming what is wrong.

use super::egress::Egress;
use super::guard::DialGate;
use bytes::Bytes;
use h123_shared::input::{FORBIDDEN_HEADER_WHY, check_header_value, is_forbidden_header};
use h123_shared::migration::Migrate;
use h123_shared::redact;
use h123_shared::{Method, ProbeOptions, Protocol, RequestBody};
use http::header::{HeaderName, HeaderValue};
use sha2::{Digest, Sha256};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Bounds on what one probe may ask for.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Most attempts per protocol (rounds × repeat; also the most of each).
    pub max_repeat: u32,
    /// Most redirect hops per attempt.
    pub max_redirects: u32,
    /// Longest total timeout per attempt, in milliseconds.
    pub max_timeout_ms: u64,
    /// Largest body cap, in bytes: a larger one asked for is lowered to it.
    pub max_body_bytes: u64,
    /// Longest idle gap between attempts, in milliseconds.
    pub max_idle_gap_ms: u64,
    /// Longest URL, in bytes.
    pub max_url_len: usize,
    /// Most extra request headers.
    pub max_headers: usize,
    /// Largest extra header (name plus value), in bytes.
    pub max_header_bytes: usize,
    /// Largest request body, in bytes.
    pub max_request_body: u64,
    /// Methods a probe may use.
    pub allowed_methods: Vec<Method>,
    /// Whether a probe may ask for emulated network conditions.
    pub allow_network: bool,
    /// Whether a probe may move its HTTP/3 connection to a local address of
    /// its choosing (`migrate`); a new port is always allowed.
    pub allow_migrate_address: bool,
    /// Most requests sent at once (`streams`), per protocol.
    pub max_streams: u32,
    /// Most bytes one probe may receive from its target over all its
    /// requests (a server's `--max-probe-bytes`); `None`: no bound (the CLI).
    pub max_probe_bytes: Option<u64>,
}

/// Largest request body the CLI sends, in bytes (100 MiB).
pub const CLI_MAX_REQUEST_BODY: u64 = 100 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_repeat: 100,
            max_redirects: 20,
            max_timeout_ms: 120_000,
            max_body_bytes: 1 << 30,
            max_idle_gap_ms: 60_000,
            max_url_len: 8192,
            max_headers: 50,
            max_header_bytes: 8192,
            max_request_body: CLI_MAX_REQUEST_BODY,
            allowed_methods: Method::ALL.to_vec(),
            allow_network: true,
            allow_migrate_address: true,
            max_streams: h123_shared::streams::MAX_STREAMS,
            max_probe_bytes: None,
        }
    }
}

/// Why options were refused. Each variant has a stable [`PlanError::code`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlanError {
    /// The URL does not parse or has no host.
    #[error("invalid URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given (shortened).
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The URL's scheme is not http or https.
    #[error("unsupported scheme `{0}`: only http and https URLs can be probed")]
    UnsupportedScheme(String),
    /// No protocol was asked for.
    #[error("no protocol selected: pick at least one of h1, h2, h3")]
    NoProtocols,
    /// A number is out of its allowed range.
    #[error("{field} must be between {min} and {max} (got {got})")]
    OutOfRange {
        /// The option's name.
        field: &'static str,
        /// Smallest allowed value.
        min: u64,
        /// Largest allowed value.
        max: u64,
        /// The value given.
        got: u64,
    },
    /// A request header is malformed or too large.
    #[error("invalid header: {0}")]
    InvalidHeader(String),
    /// A request header the probe sets itself (framing, hop-by-hop, a
    /// pseudo-header): sending the user's would desynchronise or smuggle.
    #[error("header `{0}` cannot be set: {FORBIDDEN_HEADER_WHY}")]
    ForbiddenHeader(String),
    /// The DNS server is not `ip:port` or `ip`.
    #[error("invalid DNS server `{0}`: expected ip or ip:port, e.g. 127.0.0.1:5353")]
    InvalidDnsServer(String),
    /// The method is not among those this probe may use.
    #[error("method {method} is not allowed here (allowed: {allowed})")]
    MethodNotAllowed {
        /// The method asked for.
        method: Method,
        /// The allowed methods, comma-separated.
        allowed: String,
    },
    /// The request body is larger than the cap.
    #[error("the request body is {size} bytes, over the cap of {max} bytes")]
    BodyTooLarge {
        /// Its size, in bytes.
        size: u64,
        /// The cap, in bytes.
        max: u64,
    },
    /// The request body is malformed or goes with a method that takes none.
    #[error("invalid request body: {0}")]
    InvalidBody(String),
    /// Two options contradict each other.
    #[error("conflicting options: {0}")]
    Conflict(&'static str),
    /// Network conditions were asked of a server whose operator did not
    /// allow them.
    #[error(
        "network conditions are off on this server (its operator enables them with --allow-network)"
    )]
    NetworkNotAllowed,
    /// The network profile's figures are out of range.
    #[error("invalid network profile: {0}")]
    InvalidNetwork(String),
    /// A move to a chosen local address was asked of a server, which
    /// moves connections to a new port only.
    #[error(
        "this server moves connections to a new port only (\"migrate\": \"port\"), not to an address of its own"
    )]
    MigrateAddressNotAllowed,
    /// The connection cannot move where asked.
    #[error("invalid migrate: {0}")]
    InvalidMigrate(String),
    /// A bench would hold the server's bench slot for longer than allowed.
    #[error(
        "this bench plans {} s of warm-up and measuring (every protocol, every step), over the limit of {} s",
        planned_ms / 1000,
        max_ms / 1000
    )]
    TooLong {
        /// Its planned time, in milliseconds.
        planned_ms: u64,
        /// The limit, in milliseconds.
        max_ms: u64,
    },
    /// A pinned address is not an IP address.
    #[error("invalid resolve entry for {host}:{port}: `{addr}` is not an IP address")]
    InvalidResolve {
        /// Host name pinned.
        host: String,
        /// Port pinned.
        port: u16,
        /// The bad address.
        addr: String,
    },
}

impl PlanError {
    /// A stable machine-readable code for API clients.
    pub fn code(&self) -> &'static str {
        match self {
            PlanError::InvalidUrl { .. } => "invalid_url",
            PlanError::UnsupportedScheme(_) => "unsupported_scheme",
            PlanError::NoProtocols => "no_protocols",
            PlanError::OutOfRange { .. } | PlanError::TooLong { .. } => "out_of_range",
            PlanError::InvalidHeader(_) => "invalid_header",
            PlanError::ForbiddenHeader(_) => "forbidden_header",
            PlanError::InvalidDnsServer(_) => "invalid_dns_server",
            PlanError::InvalidResolve { .. } => "invalid_resolve",
            PlanError::Conflict(_) => "conflicting_options",
            PlanError::MethodNotAllowed { .. } => "method_not_allowed",
            PlanError::BodyTooLarge { .. } => "body_too_large",
            PlanError::InvalidBody(_) => "invalid_request_body",
            PlanError::NetworkNotAllowed => "network_not_allowed",
            PlanError::InvalidNetwork(_) => "invalid_network",
            PlanError::MigrateAddressNotAllowed => "migrate_address_not_allowed",
            PlanError::InvalidMigrate(_) => "invalid_migrate",
        }
    }
}

/// Validated options, ready to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The options, normalised (protocols deduplicated).
    pub options: ProbeOptions,
    /// The parsed target URL.
    pub url: Url,
    /// Extra request headers, parsed.
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The request body's bytes (the options keep only its size and hash).
    pub body: Option<Bytes>,
    /// DNS server to ask instead of the system's.
    pub dns_server: Option<SocketAddr>,
    /// Limit on one attempt.
    pub timeout: Duration,
    /// Limit on one phase.
    pub phase_limit: Duration,
    /// Pause between attempts.
    pub idle_gap: Duration,
    /// The probe's byte budget from its target, when its limits set one
    /// (shared by every copy of the plan: one budget per probe).
    pub egress: Option<Arc<Egress>>,
    /// The probe's own gate on the addresses it dials (a monitor's run's per-site cap), asked
    /// after the engine's policy.
    pub gate: Option<Arc<dyn DialGate>>,
}

/// `Ok` when `keep_secret` lists at most [`redact::MAX_KEEP_SECRET`] names, each a plain
/// header or parameter name of at most 128 bytes.
///
/// # Errors
/// [`PlanError::OutOfRange`] for too many names, [`PlanError::InvalidHeader`] for a bad one.
pub fn keep_secret_checked(keep: &[String]) -> Result<(), PlanError> {
    range(
        "keep_secret",
        keep.len() as u64,
        0,
        redact::MAX_KEEP_SECRET as u64,
    )?;
    match keep.iter().find(|name| {
        name.is_empty() || name.len() > 128 || name.bytes().any(|b| !b.is_ascii_graphic())
    }) {
        Some(name) => Err(PlanError::InvalidHeader(format!(
            "keep_secret: `{}` is not a header or parameter name",
            shorten(name)
        ))),
        None => Ok(()),
    }
}

/// `Ok` when `got` is within `min..=max`, else an [`PlanError::OutOfRange`] naming `field`.
pub(crate) fn range(field: &'static str, got: u64, min: u64, max: u64) -> Result<(), PlanError> {
    if (min..=max).contains(&got) {
        Ok(())
    } else {
        Err(PlanError::OutOfRange {
            field,
            min,
            max,
            got,
        })
    }
}

fn shorten(text: &str) -> String {
    text.chars().take(200).collect()
}

impl Plan {
    /// Checks `options` against `limits`.
    ///
    /// # Errors
    /// The first problem found, as a [`PlanError`].
    pub fn new(mut options: ProbeOptions, limits: &Limits) -> Result<Plan, PlanError> {
        let raw = options.url.trim().to_owned();
        if raw.len() > limits.max_url_len {
            return Err(PlanError::InvalidUrl {
                url: shorten(&raw),
                reason: format!("longer than {} bytes", limits.max_url_len),
            });
        }
        let url = Url::parse(&raw).map_err(|e| PlanError::InvalidUrl {
            url: shorten(&raw),
            reason: e.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(PlanError::UnsupportedScheme(shorten(url.scheme())));
        }
        if url.host().is_none() {
            return Err(PlanError::InvalidUrl {
                url: shorten(&raw),
                reason: "no host".to_owned(),
            });
        }
        options.url = url.to_string();
        let mut protocols: Vec<Protocol> = Vec::new();
        for p in &options.protocols {
            if !protocols.contains(p) {
                protocols.push(*p);
            }
        }
        if protocols.is_empty() {
            return Err(PlanError::NoProtocols);
        }
        options.protocols = protocols;
        if !limits.allowed_methods.contains(&options.method) {
            return Err(PlanError::MethodNotAllowed {
                method: options.method,
                allowed: limits
                    .allowed_methods
                    .iter()
                    .map(|m| m.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let body = options
            .body
            .as_mut()
            .map(|body| take_body(body, options.method, limits.max_request_body))
            .transpose()?;
        range("repeat", options.repeat.into(), 1, limits.max_repeat.into())?;
        range("rounds", options.rounds.into(), 1, limits.max_repeat.into())?;
        range(
            "rounds × repeat",
            options.attempts().into(),
            1,
            limits.max_repeat.into(),
        )?;
        if let Some(n) = options.streams {
            range("streams", n.into(), 2, limits.max_streams.into())?;
        }
        range(
            "max_redirects",
            options.max_redirects.into(),
            0,
            limits.max_redirects.into(),
        )?;
        range("timeout_ms", options.timeout_ms, 1, limits.max_timeout_ms)?;
        range(
            "phase_timeout_ms",
            options.phase_timeout_ms,
            1,
            limits.max_timeout_ms,
        )?;
        if let Some(quic) = options.quic_timeout_ms {
            range("quic_timeout_ms", quic, 1, limits.max_timeout_ms)?;
        }
        // A cap over the limit is lowered to it (the options' default, 10 MiB,
        // is over a server's): the record's options say the cap that applied.
        options.max_body_bytes = options.max_body_bytes.min(limits.max_body_bytes);
        range(
            "max_body_bytes",
            options.max_body_bytes,
            1,
            limits.max_body_bytes,
        )?;
        range(
            "idle_gap_ms",
            options.idle_gap_ms,
            0,
            limits.max_idle_gap_ms,
        )?;
        keep_secret_checked(&options.keep_secret)?;
        if options.headers.len() > limits.max_headers {
            return Err(PlanError::InvalidHeader(format!(
                "{} headers given, at most {} allowed",
                options.headers.len(),
                limits.max_headers
            )));
        }
        let headers = options
            .headers
            .iter()
            .map(|h| {
                if h.name.len() + h.value.len() > limits.max_header_bytes {
                    return Err(PlanError::InvalidHeader(format!(
                        "`{}` is longer than {} bytes",
                        shorten(&h.name),
                        limits.max_header_bytes
                    )));
                }
                if is_forbidden_header(h.name.trim()) {
                    return Err(PlanError::ForbiddenHeader(shorten(h.name.trim())));
                }
                let name = HeaderName::from_bytes(h.name.trim().as_bytes()).map_err(|_| {
                    PlanError::InvalidHeader(format!(
                        "`{}` is not a valid header name",
                        shorten(&h.name)
                    ))
                })?;
                check_header_value(name.as_str(), h.value.trim())
                    .map_err(PlanError::InvalidHeader)?;
                let value = HeaderValue::from_str(h.value.trim()).map_err(|_| {
                    PlanError::InvalidHeader(format!(
                        "the value of `{name}` has invalid characters"
                    ))
                })?;
                Ok((name, value))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let dns_server = options
            .dns_server
            .as_deref()
            .map(parse_dns_server)
            .transpose()?;
        for pin in &options.resolve {
            let bare = pin.addr.trim_start_matches('[').trim_end_matches(']');
            if bare.parse::<IpAddr>().is_err() {
                return Err(PlanError::InvalidResolve {
                    host: shorten(&pin.host),
                    port: pin.port,
                    addr: shorten(&pin.addr),
                });
            }
        }
        if let Some(network) = &options.network {
            if !limits.allow_network {
                return Err(PlanError::NetworkNotAllowed);
            }
            network.check().map_err(PlanError::InvalidNetwork)?;
        }
        if let Some(to) = &options.migrate {
            check_migrate(to, &options, limits)?;
        }
        Ok(Plan {
            timeout: Duration::from_millis(options.timeout_ms),
            phase_limit: Duration::from_millis(options.phase_timeout_ms.min(options.timeout_ms)),
            idle_gap: Duration::from_millis(options.idle_gap_ms),
            egress: limits.max_probe_bytes.map(Egress::new),
            gate: None,
            options,
            url,
            headers,
            body,
            dns_server,
        })
    }
}

/// Decodes a body's bytes out of its options, checks them against the cap
/// and leaves only its size and SHA-256 (and content type) behind.
fn take_body(body: &mut RequestBody, method: Method, max: u64) -> Result<Bytes, PlanError> {
    if !method.takes_body() {
        return Err(PlanError::InvalidBody(format!(
            "{method} takes no body: use POST, PUT, PATCH, DELETE or OPTIONS"
        )));
    }
    let bytes = match (body.text.take(), body.base64.take()) {
        (Some(text), None) => Bytes::from(text),
        (None, Some(coded)) => {
            // Base64 is 4/3 of the bytes: a text far over the cap is refused unread.
            let estimate = (coded.len() as u64) / 4 * 3;
            if estimate > max.saturating_add(3) {
                return Err(PlanError::BodyTooLarge {
                    size: estimate,
                    max,
                });
            }
            Bytes::from(h123_shared::base64::decode(&coded).map_err(PlanError::InvalidBody)?)
        }
        (Some(_), Some(_)) => {
            return Err(PlanError::InvalidBody(
                "give either text or base64, not both".to_owned(),
            ));
        }
        (None, None) => {
            return Err(PlanError::InvalidBody(
                "give its bytes as text or base64".to_owned(),
            ));
        }
    };
    let size = bytes.len() as u64;
    if size > max {
        return Err(PlanError::BodyTooLarge { size, max });
    }
    if let Some(content_type) = &body.content_type
        && HeaderValue::from_str(content_type.trim()).is_err()
    {
        return Err(PlanError::InvalidBody(
            "its content type has invalid characters".to_owned(),
        ));
    }
    body.size = Some(size);
    body.sha256 = Some(hex(&Sha256::digest(&bytes)));
    Ok(bytes)
}

/// Lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_dns_server(text: &str) -> Result<SocketAddr, PlanError> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bare = text.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>()
        .map(|ip| SocketAddr::new(ip, 53))
        .map_err(|_| PlanError::InvalidDnsServer(shorten(text)))
}

/// Refuses a move that cannot happen: without HTTP/3, to text that is not an
/// IP address, to an address a server does not let probes choose, or to one
/// that is not this machine's (binding a socket to it is how that is known).
fn check_migrate(to: &Migrate, options: &ProbeOptions, limits: &Limits) -> Result<(), PlanError> {
    if !options.protocols.contains(&Protocol::H3) {
        return Err(PlanError::InvalidMigrate(
            "only an HTTP/3 connection can move: add h3 to the protocols".into(),
        ));
    }
    let Some(ip) = to.local_ip().map_err(PlanError::InvalidMigrate)? else {
        return Ok(());
    };
    if !limits.allow_migrate_address {
        return Err(PlanError::MigrateAddressNotAllowed);
    }
    std::net::UdpSocket::bind((ip, 0))
        .map(drop)
        .map_err(|e| PlanError::InvalidMigrate(format!("cannot send from {ip}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::Header;

    fn plan(edit: impl FnOnce(&mut ProbeOptions)) -> Result<Plan, PlanError> {
        let mut options = ProbeOptions {
            url: "https://example.com/".into(),
            ..ProbeOptions::default()
        };
        edit(&mut options);
        Plan::new(options, &Limits::default())
    }

    #[test]
    fn defaults_are_valid() {
        let p = plan(|_| {}).unwrap();
        assert_eq!(p.options.protocols, Protocol::ALL.to_vec());
        assert_eq!(p.url.host_str(), Some("example.com"));
    }

    #[test]
    fn bad_urls_and_schemes_are_named() {
        let e = plan(|o| o.url = "not a url".into()).unwrap_err();
        assert_eq!(e.code(), "invalid_url");
        let e = plan(|o| o.url = "ftp://example.com/".into()).unwrap_err();
        assert_eq!(e, PlanError::UnsupportedScheme("ftp".into()));
        assert!(e.to_string().contains("only http and https"));
        let e = plan(|o| o.url = format!("https://e.com/{}", "a".repeat(9000))).unwrap_err();
        assert_eq!(e.code(), "invalid_url");
    }

    #[test]
    fn ranges_are_enforced() {
        let e = plan(|o| o.repeat = 0).unwrap_err();
        assert_eq!(e.to_string(), "repeat must be between 1 and 100 (got 0)");
        assert!(plan(|o| o.repeat = 101).is_err());
        let e = plan(|o| o.rounds = 0).unwrap_err();
        assert_eq!(e.to_string(), "rounds must be between 1 and 100 (got 0)");
        let e = plan(|o| {
            o.rounds = 20;
            o.repeat = 6;
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "rounds × repeat must be between 1 and 100 (got 120)"
        );
        assert!(plan(|o| o.timeout_ms = 0).is_err());
        assert!(plan(|o| o.protocols.clear()).is_err());
    }

    #[test]
    fn framing_hop_by_hop_and_pseudo_headers_are_refused() {
        for name in [
            "Host",
            "content-length",
            "Transfer-Encoding",
            "CONNECTION",
            "upgrade",
            "TE",
            "keep-alive",
            "Proxy-Authorization",
            "proxy-connection",
            ":authority",
            ":path",
            " host ",
        ] {
            let header = Header {
                name: name.into(),
                value: "x".into(),
            };
            let e = plan(|o| o.headers = vec![header]).unwrap_err();
            assert_eq!(e.code(), "forbidden_header", "{name}");
            assert!(e.to_string().contains("set by the probe itself"), "{e}");
        }
        for name in ["Authorization", "Cookie", "Accept", "X-Host", "Hostname"] {
            let header = Header {
                name: name.into(),
                value: "x".into(),
            };
            assert!(plan(|o| o.headers = vec![header]).is_ok(), "{name}");
        }
    }

    #[test]
    fn headers_dns_and_pins_are_checked() {
        let bad = Header {
            name: "bad name".into(),
            value: "x".into(),
        };
        assert_eq!(
            plan(|o| o.headers = vec![bad]).unwrap_err().code(),
            "invalid_header"
        );
        assert_eq!(
            plan(|o| o.dns_server = Some("127.0.0.1".into()))
                .unwrap()
                .dns_server,
            Some("127.0.0.1:53".parse().unwrap())
        );
        assert!(plan(|o| o.dns_server = Some("dns.example".into())).is_err());
        let pin = h123_shared::ResolveOverride {
            host: "a".into(),
            port: 1,
            addr: "nope".into(),
        };
        assert_eq!(
            plan(|o| o.resolve = vec![pin]).unwrap_err().code(),
            "invalid_resolve"
        );
    }

    #[test]
    fn bodies_are_decoded_capped_and_kept_as_size_and_hash() {
        let body = |text: Option<&str>, base64: Option<&str>| RequestBody {
            text: text.map(Into::into),
            base64: base64.map(Into::into),
            content_type: Some("text/plain".into()),
            ..RequestBody::default()
        };
        let p = plan(|o| {
            o.method = Method::Post;
            o.body = Some(body(Some("abc"), None));
        })
        .unwrap();
        assert_eq!(p.body.as_deref(), Some(&b"abc"[..]));
        let kept = p.options.body.unwrap();
        assert_eq!((kept.text, kept.size), (None, Some(3)));
        assert_eq!(
            kept.sha256.as_deref(),
            Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        let p = plan(|o| {
            o.method = Method::Put;
            o.body = Some(body(None, Some("AAEC")));
        })
        .unwrap();
        assert_eq!(p.body.as_deref(), Some(&[0u8, 1, 2][..]));
        for (method, body, code) in [
            (Method::Get, body(Some("a"), None), "invalid_request_body"),
            (Method::Post, body(None, None), "invalid_request_body"),
            (
                Method::Post,
                body(Some("a"), Some("YQ==")),
                "invalid_request_body",
            ),
            (Method::Post, body(None, Some("!!")), "invalid_request_body"),
        ] {
            let e = plan(|o| {
                o.method = method;
                o.body = Some(body);
            })
            .unwrap_err();
            assert_eq!(e.code(), code, "{e}");
        }
        let limits = Limits {
            max_request_body: 2,
            allowed_methods: vec![Method::Get, Method::Post],
            ..Limits::default()
        };
        let options = |method, text: &str| ProbeOptions {
            url: "https://example.com/".into(),
            method,
            body: Some(body(Some(text), None)),
            ..ProbeOptions::default()
        };
        let e = Plan::new(options(Method::Post, "abc"), &limits).unwrap_err();
        assert_eq!(e.code(), "body_too_large");
        let e = Plan::new(options(Method::Put, "a"), &limits).unwrap_err();
        assert_eq!(e.code(), "method_not_allowed");
        assert_eq!(
            e.to_string(),
            "method PUT is not allowed here (allowed: GET, POST)"
        );
    }

    #[test]
    fn a_move_needs_http3_and_on_a_server_a_new_port() {
        let moved = |to: &str, protocols: Vec<Protocol>, limits: &Limits| {
            let options = ProbeOptions {
                url: "https://example.com/".into(),
                protocols,
                migrate: Some(to.parse().unwrap()),
                ..ProbeOptions::default()
            };
            Plan::new(options, limits).map(|p| p.options.migrate)
        };
        let cli = Limits::default();
        let server = crate::server::server_limits();
        let all = Protocol::ALL.to_vec();
        assert!(moved("port", all.clone(), &server).is_ok());
        assert!(moved("127.0.0.2", all.clone(), &cli).is_ok());
        let refused = moved("127.0.0.2", all.clone(), &server).unwrap_err();
        assert_eq!(refused.code(), "migrate_address_not_allowed");
        assert!(refused.to_string().contains("new port only"), "{refused}");
        let not_mine = moved("192.0.2.1", all, &cli).unwrap_err();
        assert_eq!(not_mine.code(), "invalid_migrate");
        assert!(
            not_mine.to_string().contains("cannot send from 192.0.2.1"),
            "{not_mine}"
        );
        let not_an_address = moved("wifi", Protocol::ALL.to_vec(), &cli).unwrap_err();
        assert_eq!(not_an_address.code(), "invalid_migrate");
        assert!(
            not_an_address.to_string().contains("`wifi` is neither"),
            "{not_an_address}"
        );
        let tcp_only = moved("port", vec![Protocol::H2], &cli).unwrap_err();
        assert!(
            tcp_only.to_string().contains("add h3 to the protocols"),
            "{tcp_only}"
        );
    }

    #[test]
    fn protocols_are_deduplicated_in_order() {
        let p = plan(|o| o.protocols = vec![Protocol::H2, Protocol::H1, Protocol::H2]).unwrap();
        assert_eq!(p.options.protocols, vec![Protocol::H2, Protocol::H1]);
    }
}
