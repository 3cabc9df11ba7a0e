//! HTTP/3 discovery: where to try QUIC (an `Alt-Svc` header, an HTTPS DNS
//! record, or the URL itself when asked), and a typed verdict on the result.

use super::dns::NameResolver;
use super::plan::Plan;
use h123_shared::alt_svc::{self, AltSvc};
use h123_shared::{FailureKind, H3Discovery, H3Outcome, H3Via, Phase, Protocol, ProtocolRun};
use url::Host;

/// Most distinct `Alt-Svc` h3 entries kept (a target could vary them on every answer).
const MAX_ALT_SVC: usize = 8;
/// Longest wait for an HTTPS record: a resolver answers it like an address
/// query, or (some middleboxes) never.
const HTTPS_RECORD_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Finds where HTTP/3 is offered for the plan's URL, from what the h1/h2
/// runs already saw and from DNS. The verdict is filled in by [`conclude`].
pub async fn discover(
    plan: &Plan,
    earlier: &[ProtocolRun],
    resolver: &NameResolver,
) -> H3Discovery {
    let origin = plan.url.origin();
    let mut alt_svc: Vec<AltSvc> = Vec::new();
    let headers = earlier
        .iter()
        .flat_map(|run| &run.attempts)
        .filter(|a| url::Url::parse(&a.url).is_ok_and(|u| u.origin() == origin))
        .filter_map(|a| a.response.as_ref()?.header("alt-svc"));
    for entry in headers.flat_map(alt_svc::h3_entries) {
        if alt_svc.len() == MAX_ALT_SVC {
            break;
        }
        if !alt_svc.contains(&entry) {
            alt_svc.push(entry);
        }
    }
    // The record could only name an endpoint Alt-Svc would override, and a
    // pinned name is not looked up at all (as curl's --resolve): asking
    // anyway would let a DNS server that ignores HTTPS queries stall the run.
    let (https_record, https_lookup) = match plan.url.host() {
        Some(Host::Domain(_)) if !alt_svc.is_empty() => (
            None,
            Some("not looked up: Alt-Svc already names the endpoint".to_owned()),
        ),
        Some(Host::Domain(name)) if resolver.is_pinned(name) => (
            None,
            Some("not looked up: the name is pinned (--resolve)".to_owned()),
        ),
        Some(Host::Domain(name)) => {
            // An emulated network's round trip is on top of the resolver's own time.
            let emulated = plan
                .options
                .network
                .as_ref()
                .map_or(0, |n| u64::from(n.rtt_ms + n.jitter_ms));
            let wait = plan
                .phase_limit
                .min(HTTPS_RECORD_WAIT + std::time::Duration::from_millis(emulated));
            match resolver.https_record(name, wait).await {
                Ok(record) => (record, None),
                Err(_) => (
                    None,
                    Some(format!("no answer within {} ms", wait.as_millis())),
                ),
            }
        }
        _ => (None, None),
    };
    // Bare, so that an IPv6 host is bracketed once in the endpoint.
    let host = plan
        .url
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = plan.url.port_or_known_default().unwrap_or(443);
    let record_h3 = https_record
        .as_ref()
        .filter(|r| r.alpn.iter().any(|a| a == "h3"));
    let only_h3 = plan.options.protocols == [Protocol::H3];
    let (via, endpoint) = if let Some(alt) = alt_svc.first() {
        (
            Some(H3Via::AltSvc),
            Some((alt.host.clone().unwrap_or(host), alt.port)),
        )
    } else if let Some(record) = record_h3 {
        let target = record.target.trim_end_matches('.');
        let target = if target.is_empty() {
            host
        } else {
            target.to_owned()
        };
        (
            Some(H3Via::HttpsRecord),
            Some((target, record.port.unwrap_or(port))),
        )
    } else if plan.options.h3_direct || only_h3 {
        (Some(H3Via::Direct), Some((host, port)))
    } else {
        (None, None)
    };
    let detail = match via {
        None if !h123_shared::schema::answered_over_tcp(earlier) => "HTTP/3 was not tried: no HTTP/1.1 or HTTP/2 answer came \
             to read an Alt-Svc header from, and no HTTPS DNS record lists h3 (ask for HTTP/3 \
             directly to try anyway: a server may speak only HTTP/3)"
            .to_owned(),
        None => "HTTP/3 is not advertised: no Alt-Svc header on the HTTP/1.1 or HTTP/2 \
                 responses and no HTTPS DNS record listing h3 (ask for HTTP/3 directly to try anyway)"
            .to_owned(),
        Some(_) => "not tried yet".to_owned(),
    };
    H3Discovery {
        alt_svc,
        https_record,
        https_lookup,
        via,
        endpoint: endpoint.map(|(h, p)| join_host_port(&h, p)),
        outcome: H3Outcome::NotAdvertised,
        detail,
        quic_budget_ms: None,
    }
}

/// The endpoint discovery chose, as a host and port to connect to.
pub fn endpoint(discovery: &H3Discovery) -> Option<(String, u16)> {
    let text = discovery.endpoint.as_deref()?;
    let (host, port) = text.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_owned(), port.parse().ok()?))
}

fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Sets the verdict from the h3 run's first attempt.
pub fn conclude(discovery: &mut H3Discovery, run: &ProtocolRun) {
    let Some(first) = run.attempts.first() else {
        return;
    };
    let endpoint = discovery.endpoint.clone().unwrap_or_default();
    // The handshake completed only if the attempt got past it: a failure
    // before QUIC (the endpoint's DNS lookup) is not a successful handshake.
    let past_quic = |phase: Phase| {
        matches!(phase, Phase::Send | Phase::Wait | Phase::Receive) && first.phases.quic.is_some()
    };
    let (outcome, detail) = match &first.failure {
        None => (H3Outcome::Ok, format!("HTTP/3 answered on {endpoint}")),
        Some(f) if f.kind == FailureKind::Blocked => {
            (H3Outcome::Blocked, format!("not tried: {}", f.message))
        }
        Some(f) if f.phase == Phase::Dns => (
            H3Outcome::NameUnresolved,
            format!(
                "the name of the HTTP/3 endpoint {endpoint} did not resolve, so nothing was sent: {}",
                f.message
            ),
        ),
        Some(f) if f.phase != Phase::Quic && !past_quic(f.phase) => (
            H3Outcome::HandshakeFailed,
            format!(
                "QUIC was never tried with {endpoint}: {} failed: {}",
                f.phase.as_str(),
                f.message
            ),
        ),
        Some(f) if f.phase != Phase::Quic => (
            H3Outcome::Ok,
            format!(
                "the QUIC handshake with {endpoint} succeeded; the request then failed in {}",
                f.phase.as_str()
            ),
        ),
        Some(f) if f.kind == FailureKind::Refused => (H3Outcome::UdpRefused, f.message.clone()),
        Some(f) if f.kind == FailureKind::Timeout => (
            H3Outcome::UdpSilent,
            format!("no answer to QUIC on UDP {endpoint}: {}", f.message),
        ),
        Some(f) if f.kind == FailureKind::Unsupported || mentions_version(&f.message) => (
            H3Outcome::VersionMismatch,
            format!(
                "no common QUIC version or ALPN with {endpoint}: {}",
                f.message
            ),
        ),
        Some(f) => (
            H3Outcome::HandshakeFailed,
            format!("the QUIC handshake with {endpoint} failed: {}", f.message),
        ),
    };
    discovery.outcome = outcome;
    discovery.detail = detail;
}

fn mentions_version(message: &str) -> bool {
    let lower = message.to_ascii_lowercase().replace('_', " ");
    lower.contains("version") || lower.contains("application protocol") || lower.contains("alpn")
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::{Attempt, Failure, Micros, Phases, Span, TtfbSource};

    fn discovery() -> H3Discovery {
        H3Discovery {
            alt_svc: Vec::new(),
            https_record: None,
            https_lookup: None,
            via: Some(H3Via::AltSvc),
            endpoint: Some("[::1]:8443".into()),
            outcome: H3Outcome::NotAdvertised,
            detail: String::new(),
            quic_budget_ms: None,
        }
    }

    fn run_failing(failure: Option<Failure>) -> ProtocolRun {
        ProtocolRun {
            emulated: None,
            streams: None,
            protocol: Protocol::H3,
            skipped: None,
            not_offered: None,
            stopped: None,
            cut_short: None,
            discovery: None,
            other_addresses: Vec::new(),
            attempts: vec![Attempt {
                attempt: 1,
                hop: 0,
                url: "https://x.test/".into(),
                started_at_unix_ms: 0,
                chain_start_us: None,
                phases: Phases {
                    total: Span {
                        start_us: Micros(0),
                        end_us: Micros(5),
                    },
                    ..Phases::default()
                },
                ttfb_source: TtfbSource::ResponseHeaders,
                dns: None,
                connection: None,
                tls: None,
                response: None,
                quic: None,
                failure,
                tcp_info: None,
                migration: None,
            }],
        }
    }

    fn verdict(failure: Option<(Phase, FailureKind, &str)>) -> H3Outcome {
        let mut d = discovery();
        let after_quic = failure.is_none_or(|(phase, ..)| phase > Phase::Quic);
        let failure = failure.map(|(phase, kind, message)| Failure {
            phase,
            kind,
            message: message.into(),
        });
        let mut run = run_failing(failure);
        if after_quic {
            run.attempts[0].phases.quic = Some(Span {
                start_us: Micros(0),
                end_us: Micros(2),
            });
        }
        conclude(&mut d, &run);
        d.outcome
    }

    #[test]
    fn verdicts_follow_the_first_attempt() {
        assert_eq!(verdict(None), H3Outcome::Ok);
        assert_eq!(
            verdict(Some((Phase::Wait, FailureKind::Timeout, "slow"))),
            H3Outcome::Ok
        );
        assert_eq!(
            verdict(Some((
                Phase::Dns,
                FailureKind::Dns,
                "URL has no host or port"
            ))),
            H3Outcome::NameUnresolved,
            "a lookup that failed before QUIC is a DNS outcome, no handshake"
        );
        assert_eq!(
            verdict(Some((Phase::Quic, FailureKind::Timeout, "no handshake"))),
            H3Outcome::UdpSilent
        );
        assert_eq!(
            verdict(Some((
                Phase::Quic,
                FailureKind::Refused,
                "nothing listens on UDP port 443 at ::1"
            ))),
            H3Outcome::UdpRefused,
            "an ICMP refusal is not silence"
        );
        assert_eq!(
            verdict(Some((
                Phase::Quic,
                FailureKind::Certificate,
                "UnknownIssuer"
            ))),
            H3Outcome::HandshakeFailed
        );
        assert_eq!(
            verdict(Some((
                Phase::Quic,
                FailureKind::Tls,
                "peer sent no_application_protocol"
            ))),
            H3Outcome::VersionMismatch
        );
        assert_eq!(
            verdict(Some((
                Phase::Quic,
                FailureKind::Blocked,
                "10.0.0.5 is private"
            ))),
            H3Outcome::Blocked
        );
    }

    #[test]
    fn endpoints_round_trip_with_ipv6() {
        assert_eq!(endpoint(&discovery()), Some(("::1".to_owned(), 8443)));
        assert_eq!(join_host_port("a.test", 1), "a.test:1");
        assert_eq!(join_host_port("::1", 443), "[::1]:443");
    }
}
