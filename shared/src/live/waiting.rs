//! What a running phase waits on, in plain words, and how long it may wait: the same sentence on
//! the result page and in the CLI's live line, so a long phase reads as alive, not hung.

use crate::format::ms;
use crate::schema::{H3Discovery, H3Via, Micros, Phase, ProbeOptions, Protocol};

/// A running attempt's open phase: when it started and how long it may last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The phase in progress.
    pub phase: Phase,
    /// When it started, from the attempt's start.
    pub since: Micros,
    /// Its limit: the probe's phase timeout, or the attempt's when that is
    /// shorter; a QUIC handshake's budget when the discovery says it.
    pub limit_ms: u64,
    /// What it waits on and its limit, e.g. "waiting for the server's first byte; giving up
    /// after 10 s".
    pub sentence: String,
}

impl Waiting {
    /// The open `phase` of an attempt of `protocol` under `options`, started at `since`; an
    /// HTTP/3 attempt's peer is the endpoint its `discovery` chose, once known.
    pub fn new(
        options: &ProbeOptions,
        protocol: Protocol,
        discovery: Option<&H3Discovery>,
        phase: Phase,
        since: Micros,
    ) -> Waiting {
        let chosen = discovery.filter(|_| protocol == Protocol::H3);
        // A QUIC handshake has its own budget, said by the discovery.
        let limit_ms = chosen
            .and_then(|d| d.quic_budget_ms)
            .filter(|_| phase == Phase::Quic)
            .unwrap_or_else(|| limit_ms(options));
        let peer = Peer {
            host: chosen
                .and_then(|d| d.endpoint.as_deref())
                .unwrap_or_else(|| host(&options.url)),
            via: chosen.and_then(|d| d.via),
        };
        Waiting {
            phase,
            since,
            limit_ms,
            sentence: sentence(phase, protocol, &peer, limit_ms),
        }
    }

    /// How long the phase has run when the attempt has run `now` (never below zero).
    pub fn elapsed(&self, now: Micros) -> Micros {
        Micros(now.0.saturating_sub(self.since.0))
    }

    /// The running phase as the page's total and the CLI's line say it: `quic 1.20 s…`.
    pub fn progress(&self, now: Micros) -> String {
        format!("{} {}…", self.phase.as_str(), ms(self.elapsed(now)))
    }
}

/// The limit any one phase of a probe with `options` runs under, in milliseconds: the engine's
/// phase limit (`phase_timeout_ms`, at most `timeout_ms`).
pub fn limit_ms(options: &ProbeOptions) -> u64 {
    options.phase_timeout_ms.min(options.timeout_ms)
}

/// A limit as said to people: whole seconds as `10 s`, anything else as [`ms`] says it.
pub fn limit_words(limit_ms: u64) -> String {
    if limit_ms >= 1_000 && limit_ms.is_multiple_of(1_000) {
        format!("{} s", limit_ms / 1_000)
    } else {
        ms(Micros(limit_ms.saturating_mul(1_000)))
    }
}

/// Whom an attempt waits on: its host and port, and for HTTP/3 what pointed there.
#[derive(Copy, Clone, Debug)]
pub struct Peer<'a> {
    /// The host and port dialled.
    pub host: &'a str,
    /// What named that endpoint (HTTP/3 only).
    pub via: Option<H3Via>,
}

/// What `phase` of a `protocol` attempt to `peer` waits on, and when it gives up.
pub fn sentence(phase: Phase, protocol: Protocol, peer: &Peer<'_>, limit_ms: u64) -> String {
    let host = peer.host;
    let what = match phase {
        Phase::Dns => format!("waiting for the name lookup of {host}"),
        Phase::Connect => format!("waiting for a TCP connection to {host}"),
        Phase::Proxy => "waiting for the proxy to open a tunnel".to_owned(),
        Phase::Tls => format!("waiting for the TLS handshake with {host}"),
        Phase::Quic => format!(
            "waiting for a QUIC answer over UDP from {host}{}",
            match peer.via {
                Some(H3Via::AltSvc) => " (advertised by Alt-Svc)",
                Some(H3Via::HttpsRecord) => " (listed in its HTTPS DNS record)",
                Some(H3Via::Direct) => " (tried directly: nothing advertised it)",
                None => "",
            }
        ),
        Phase::Send => "sending the request".to_owned(),
        Phase::Wait => format!(
            "waiting for the server's first byte over {}",
            protocol.http_version()
        ),
        Phase::Receive => "waiting for the rest of the response body".to_owned(),
    };
    format!("{what}; giving up after {}", limit_words(limit_ms))
}

/// The host and port of `url` (its authority), or the whole text when it has none.
fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    authority.rsplit_once('@').map_or(authority, |(_, h)| h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_quic_port_is_named_with_its_limit() {
        let options = ProbeOptions {
            url: "https://127.0.0.1:4433/slow?x=1".into(),
            ..ProbeOptions::default()
        };
        let w = Waiting::new(&options, Protocol::H3, None, Phase::Quic, Micros(2_000));
        assert_eq!(
            w.sentence,
            "waiting for a QUIC answer over UDP from 127.0.0.1:4433; giving up after 10 s"
        );
        assert_eq!(w.limit_ms, 10_000);
        assert_eq!(w.progress(Micros(1_502_000)), "quic 1.50 s…");
        assert_eq!(w.elapsed(Micros(1_000)), Micros(0));
    }

    #[test]
    fn the_attempt_s_limit_applies_when_shorter() {
        let options = ProbeOptions {
            url: "https://example.com/".into(),
            timeout_ms: 2_500,
            ..ProbeOptions::default()
        };
        let w = Waiting::new(&options, Protocol::H2, None, Phase::Wait, Micros(0));
        assert_eq!(w.limit_ms, 2_500);
        assert_eq!(
            w.sentence,
            "waiting for the server's first byte over HTTP/2; giving up after 2.50 s"
        );
    }

    #[test]
    fn every_phase_says_what_it_waits_on() {
        for phase in Phase::ALL {
            let peer = Peer {
                host: "a.test",
                via: None,
            };
            let s = sentence(phase, Protocol::H1, &peer, 10_000);
            assert!(s.ends_with("; giving up after 10 s"), "{s}");
        }
        assert_eq!(host("https://u:p@a.test:8443"), "a.test:8443");
        assert_eq!(limit_words(500), "500 ms");
    }

    #[test]
    fn http3_waits_on_the_endpoint_its_discovery_chose() {
        let options = ProbeOptions {
            url: "https://a.test/".into(),
            ..ProbeOptions::default()
        };
        let discovery = H3Discovery {
            alt_svc: Vec::new(),
            https_record: None,
            https_lookup: None,
            via: Some(H3Via::AltSvc),
            endpoint: Some("a.test:8443".into()),
            outcome: crate::schema::H3Outcome::NotAdvertised,
            detail: String::new(),
            quic_budget_ms: None,
        };
        let w = Waiting::new(
            &options,
            Protocol::H3,
            Some(&discovery),
            Phase::Quic,
            Micros(0),
        );
        assert_eq!(
            w.sentence,
            "waiting for a QUIC answer over UDP from a.test:8443 (advertised by Alt-Svc); giving up after 10 s"
        );
        // With its budget said, the handshake gives up after it; the request's phases do not.
        let budgeted = H3Discovery {
            quic_budget_ms: Some(2_010),
            ..discovery.clone()
        };
        let quic = Waiting::new(
            &options,
            Protocol::H3,
            Some(&budgeted),
            Phase::Quic,
            Micros(0),
        );
        assert!(
            quic.sentence.ends_with("giving up after 2.01 s"),
            "{}",
            quic.sentence
        );
        let wait = Waiting::new(
            &options,
            Protocol::H3,
            Some(&budgeted),
            Phase::Wait,
            Micros(0),
        );
        assert!(
            wait.sentence.ends_with("giving up after 10 s"),
            "{}",
            wait.sentence
        );
        // Another protocol's attempt is not pointed elsewhere by HTTP/3's discovery.
        let w = Waiting::new(
            &options,
            Protocol::H2,
            Some(&discovery),
            Phase::Tls,
            Micros(0),
        );
        assert!(w.sentence.contains("with a.test;"), "{}", w.sentence);
    }
}
