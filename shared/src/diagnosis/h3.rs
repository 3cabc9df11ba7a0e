//! The HTTP/3 discovery verdict, explained: one finding per outcome that
//! needs attention, with what was advertised where and what to check next.

use super::*;
use crate::schema::{H3Discovery, H3Outcome, H3Via};

/// A finding for an h3 run's discovery verdict (`h3_not_advertised`,
/// `h3_udp_silent`, `h3_udp_refused`, `h3_name_unresolved`, `h3_handshake_failed`, `h3_version_mismatch`, `h3_blocked`); nothing when
/// HTTP/3 answered.
pub(super) fn verdict(result: &ProbeResult, run: &ProtocolRun, d: &H3Discovery) -> Option<Finding> {
    let url = shell_quote(&result.options.url);
    let host = target(&result.options.url).host;
    let endpoint = d.endpoint.clone().unwrap_or_default();
    let advertised = match d.via {
        Some(H3Via::AltSvc) => format!(" It was advertised by `Alt-Svc` (h3 on {endpoint})."),
        Some(H3Via::HttpsRecord) => {
            format!(" It was advertised by an HTTPS DNS record (h3 on {endpoint}).")
        }
        Some(H3Via::Direct) => {
            format!(" It was tried directly on {endpoint} without an advertisement.")
        }
        None => String::new(),
    };
    // Words that say "advertised" only when something advertised it.
    let was_advertised = matches!(d.via, Some(H3Via::AltSvc | H3Via::HttpsRecord));
    let (id, severity, title, next_step) = match d.outcome {
        H3Outcome::Ok => return None,
        H3Outcome::NotAdvertised => (
            "h3_not_advertised",
            Severity::Info,
            "HTTP/3 not advertised".to_owned(),
            format!(
                "To offer HTTP/3, serve it over QUIC on UDP and advertise it: an `Alt-Svc: h3=\":443\"` \
                 response header and/or an HTTPS DNS record with `alpn=h3`. Check what is published \
                 with `curl -sI {url} | grep -i alt-svc` and `dig +short HTTPS {host}`; to try QUIC anyway, \
                 tick \"Try HTTP/3 directly\" in the form or run `h123 probe --h3-direct`."
            ),
        ),
        H3Outcome::UdpSilent if was_advertised => (
            "h3_udp_silent",
            Severity::Warning,
            "HTTP/3 advertised but unreachable: UDP is silent".to_owned(),
            format!(
                "QUIC packets to {endpoint} got no answer, so clients wait, then fall back to TCP. \
                 Open UDP on that port in the server's and the network's firewalls (check with \
                 `curl --http3-only -v {url}` from outside), or stop advertising h3 until it answers."
            ),
        ),
        H3Outcome::UdpSilent => (
            "h3_udp_silent",
            Severity::Warning,
            "HTTP/3 unreachable: UDP is silent".to_owned(),
            format!(
                "QUIC packets to {endpoint} got no answer: UDP to that port is dropped on the way \
                 or at the server, whether or not an HTTP/3 server listens behind it. If the server \
                 should speak HTTP/3, open UDP on that port in the server's and the network's \
                 firewalls and check with `curl --http3-only -v {url}` from outside."
            ),
        ),
        H3Outcome::UdpRefused if was_advertised => (
            "h3_udp_refused",
            Severity::Warning,
            "HTTP/3 advertised but nothing listens on UDP".to_owned(),
            format!(
                "The host answered QUIC on {endpoint} with ICMP port unreachable: no HTTP/3 \
                 server listens on that UDP port, so clients fall back to TCP. Start the HTTP/3 \
                 server or make it listen on that port (on the server, `ss -ulpn` lists what \
                 listens on UDP), or stop advertising h3 until it answers; check with \
                 `curl --http3-only -v {url}`."
            ),
        ),
        H3Outcome::UdpRefused => (
            "h3_udp_refused",
            Severity::Info,
            "No HTTP/3 on this port: nothing listens on UDP".to_owned(),
            format!(
                "The host answered QUIC on {endpoint} with ICMP port unreachable: it serves no \
                 HTTP/3 there, and nothing is blocked. If it should, start its HTTP/3 server on \
                 that UDP port (on the server, `ss -ulpn` lists what listens on UDP) and advertise \
                 it with an `Alt-Svc: h3=\":443\"` header."
            ),
        ),
        H3Outcome::NameUnresolved => {
            let name = d
                .endpoint
                .as_deref()
                .map(|e| target(&format!("https://{e}/")).host)
                .unwrap_or_default();
            (
                "h3_name_unresolved",
                Severity::Warning,
                "HTTP/3 endpoint's name does not resolve".to_owned(),
                format!(
                    "Clients that follow the advertisement look up {name} and find nothing, then fall \
                     back to TCP. Check the name with `dig +short A {name}` and `dig +short AAAA {name}`, \
                     and fix the `Alt-Svc` header or the HTTPS record to name a host that resolves (or \
                     leave the host out: `h3=\":443\"` means this same host)."
                ),
            )
        }
        H3Outcome::HandshakeFailed => (
            "h3_handshake_failed",
            Severity::Warning,
            "HTTP/3 handshake failed".to_owned(),
            format!(
                "The QUIC endpoint {endpoint} answered but the QUIC/TLS handshake failed. Check that \
                 it serves the same certificate as TCP (`openssl s_client -connect {} -servername {host}` \
                 for the TCP side) and compare with `curl --http3-only -v {url}`.",
                target(&result.options.url).host_port
            ),
        ),
        H3Outcome::Blocked => (
            "h3_blocked",
            Severity::Info,
            "HTTP/3 endpoint refused by the safety policy".to_owned(),
            format!(
                "The advertised HTTP/3 endpoint {endpoint} is an address this server does not \
                 probe (private, loopback or otherwise non-public), so HTTP/3 was not measured. \
                 If that is intended, run the CLI from inside that network: `h123 probe {url}`."
            ),
        ),
        H3Outcome::VersionMismatch => (
            "h3_version_mismatch",
            Severity::Warning,
            "HTTP/3 offered with no common QUIC version or ALPN".to_owned(),
            format!(
                "{endpoint} answered QUIC but not with QUIC v1 and ALPN `h3` (draft versions such as \
                 h3-29 are obsolete). Upgrade the server's QUIC stack and advertise plain `h3`; \
                 verify with `curl --http3-only -v {url}`."
            ),
        ),
    };
    let first = run.attempts.first();
    let phase = first.and_then(|a| a.failure.as_ref()).map(|f| f.phase);
    Some(finding(
        id,
        severity,
        title,
        Evidence {
            protocol: Protocol::H3,
            attempt: first.map(|a| a.attempt),
            phase,
            duration: first
                .and_then(|a| phase.and_then(|p| a.phases.get(p)))
                .map(|s| s.duration()),
            detail: format!("{}.{advertised}", d.detail),
        },
        next_step,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn discovery(outcome: H3Outcome, via: Option<H3Via>) -> H3Discovery {
        H3Discovery {
            alt_svc: Vec::new(),
            https_record: None,
            https_lookup: None,
            via,
            endpoint: via.map(|_| "example.com:443".to_owned()),
            outcome,
            detail: "what happened".to_owned(),
            quic_budget_ms: None,
        }
    }

    fn with_h3(d: H3Discovery) -> ProbeResult {
        let mut result = fixture::result(vec![]);
        result.runs.push(ProtocolRun {
            discovery: Some(d),
            ..ProtocolRun::empty(Protocol::H3)
        });
        result
    }

    fn id_of(outcome: H3Outcome, via: Option<H3Via>) -> Option<String> {
        let result = with_h3(discovery(outcome, via));
        let run = &result.runs[0];
        verdict(&result, run, run.discovery.as_ref().unwrap()).map(|f| f.id)
    }

    #[test]
    fn each_outcome_has_its_finding() {
        assert_eq!(id_of(H3Outcome::Ok, Some(H3Via::AltSvc)), None);
        assert_eq!(
            id_of(H3Outcome::NotAdvertised, None).as_deref(),
            Some("h3_not_advertised")
        );
        assert_eq!(
            id_of(H3Outcome::UdpSilent, Some(H3Via::AltSvc)).as_deref(),
            Some("h3_udp_silent")
        );
        assert_eq!(
            id_of(H3Outcome::UdpRefused, Some(H3Via::AltSvc)).as_deref(),
            Some("h3_udp_refused")
        );
        assert_eq!(
            id_of(H3Outcome::NameUnresolved, Some(H3Via::AltSvc)).as_deref(),
            Some("h3_name_unresolved")
        );
        assert_eq!(
            id_of(H3Outcome::HandshakeFailed, Some(H3Via::Direct)).as_deref(),
            Some("h3_handshake_failed")
        );
        assert_eq!(
            id_of(H3Outcome::VersionMismatch, Some(H3Via::HttpsRecord)).as_deref(),
            Some("h3_version_mismatch")
        );
    }

    #[test]
    fn the_detail_says_how_it_was_advertised() {
        let result = with_h3(discovery(H3Outcome::UdpSilent, Some(H3Via::AltSvc)));
        let run = &result.runs[0];
        let f = verdict(&result, run, run.discovery.as_ref().unwrap()).unwrap();
        assert!(
            f.evidence.detail.contains("Alt-Svc"),
            "{}",
            f.evidence.detail
        );
        assert!(f.next_step.contains("curl --http3-only"));
        assert_eq!(f.severity, Severity::Warning);
    }

    #[test]
    fn only_an_advertised_endpoint_is_called_advertised() {
        for outcome in [H3Outcome::UdpSilent, H3Outcome::UdpRefused] {
            let result = with_h3(discovery(outcome, Some(H3Via::Direct)));
            let run = &result.runs[0];
            let f = verdict(&result, run, run.discovery.as_ref().unwrap()).unwrap();
            let words = format!("{} {} {}", f.title, f.evidence.detail, f.next_step);
            assert!(!words.contains("advertised"), "{words}");
            assert!(!words.contains("stop advertising"), "{words}");
            let result = with_h3(discovery(outcome, Some(H3Via::AltSvc)));
            let run = &result.runs[0];
            let f = verdict(&result, run, run.discovery.as_ref().unwrap()).unwrap();
            assert!(f.title.contains("advertised"), "{}", f.title);
        }
    }

    #[test]
    fn a_refusal_is_not_a_firewall() {
        let result = with_h3(discovery(H3Outcome::UdpRefused, Some(H3Via::Direct)));
        let run = &result.runs[0];
        let f = verdict(&result, run, run.discovery.as_ref().unwrap()).unwrap();
        assert_eq!(f.severity, Severity::Info);
        assert!(!f.next_step.contains("firewall"), "{}", f.next_step);
        assert!(
            f.next_step.contains("nothing is blocked"),
            "{}",
            f.next_step
        );
    }

    #[test]
    fn an_unresolved_endpoint_names_its_host_for_dig() {
        let result = with_h3(discovery(H3Outcome::NameUnresolved, Some(H3Via::AltSvc)));
        let run = &result.runs[0];
        let f = verdict(&result, run, run.discovery.as_ref().unwrap()).unwrap();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.next_step.contains("`dig +short A example.com`"),
            "{}",
            f.next_step
        );
    }
}
