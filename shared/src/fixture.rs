//! Test builders for attempts, results and records (compiled for tests only: this crate's, and
//! with the `fixture` feature, the tests of the crates that draw or store them).

use crate::api::{ProbeRecord, ProbeStatus};
use crate::schema::*;

/// A span from `start` to `end` microseconds.
pub fn span(start: u64, end: u64) -> Option<Span> {
    Some(Span {
        start_us: Micros(start),
        end_us: Micros(end),
    })
}

/// A successful attempt whose phases follow one another from 0 with the given
/// durations (µs), on connection 1, with a 200 response of 1000 bytes.
pub fn attempt(n: u32, durations: &[(Phase, u64)], reused: bool) -> Attempt {
    let mut phases = Phases::default();
    let mut at = 0;
    for &(phase, d) in durations {
        let s = span(at, at + d);
        match phase {
            Phase::Dns => phases.dns = s,
            Phase::Connect => phases.connect = s,
            Phase::Proxy => phases.proxy = s,
            Phase::Tls => phases.tls = s,
            Phase::Quic => phases.quic = s,
            Phase::Send => phases.send = s,
            Phase::Wait => phases.wait = s,
            Phase::Receive => phases.receive = s,
        }
        at += d;
    }
    phases.total = span(0, at).unwrap();
    Attempt {
        attempt: n,
        hop: 0,
        url: "https://example.com/path?q=1".into(),
        started_at_unix_ms: 1_700_000_000_000 + u64::from(n) * 1000,
        chain_start_us: None,
        phases,
        ttfb_source: TtfbSource::TransportRead,
        dns: None,
        connection: Some(ConnectionInfo {
            id: 1,
            reused,
            was_idle: false,
            idle_us: None,
            request_index: n,
            local_addr: None,
            remote_addr: "192.0.2.1:443".into(),
            proxy: None,
        }),
        tls: None,
        response: Some(ResponseInfo {
            status: 200,
            http_version: "HTTP/2".into(),
            headers: vec![Header {
                name: "content-type".into(),
                value: "text/html".into(),
            }],
            headers_truncated: false,
            body_bytes: 1000,
            truncated: false,
        }),
        quic: None,
        failure: None,
        tcp_info: None,
        migration: None,
    }
}

/// A new HTTPS connection over TCP with the given phase durations (µs).
pub fn fresh(n: u32, dns: u64, connect: u64, tls: u64, wait: u64) -> Attempt {
    attempt(
        n,
        &[
            (Phase::Dns, dns),
            (Phase::Connect, connect),
            (Phase::Tls, tls),
            (Phase::Send, 50),
            (Phase::Wait, wait),
            (Phase::Receive, 500),
        ],
        false,
    )
}

/// A request on a reused connection with the given wait (µs).
pub fn reused(n: u32, wait: u64) -> Attempt {
    attempt(
        n,
        &[
            (Phase::Send, 50),
            (Phase::Wait, wait),
            (Phase::Receive, 500),
        ],
        true,
    )
}

/// Marks an attempt failed.
pub fn failed(mut a: Attempt, phase: Phase, kind: FailureKind) -> Attempt {
    a.failure = Some(Failure {
        phase,
        kind,
        message: format!("{kind:?} in {}", phase.as_str()),
    });
    a
}

/// A protocol run.
pub fn run(protocol: Protocol, attempts: Vec<Attempt>) -> ProtocolRun {
    ProtocolRun {
        attempts,
        ..ProtocolRun::empty(protocol)
    }
}

/// Four rounds of one new connection and one reused attempt on it (attempts 1 to 8): `new_tls`
/// is each new connection's handshake, `waits` the reused attempts' waits (µs). A result of such
/// runs wants [`in_rounds`] of 4.
pub fn warm_rounds(protocol: Protocol, new_tls: [u64; 4], waits: [u64; 4]) -> ProtocolRun {
    let attempts = (0..4u32)
        .flat_map(|round| {
            let mut new = fresh(2 * round + 1, 0, 1_000, new_tls[round as usize], 1_000);
            new.connection.as_mut().expect("a connection").id = round;
            let mut again = reused(2 * round + 2, waits[round as usize]);
            again.connection.as_mut().expect("a connection").id = round;
            [new, again]
        })
        .collect();
    run(protocol, attempts)
}

/// The result made in `rounds` rounds of equal size (each from a new connection).
pub fn in_rounds(mut result: ProbeResult, rounds: u32) -> ProbeResult {
    result.options.repeat /= rounds;
    result.options.rounds = rounds;
    result
}

/// A result for `https://example.com/path?q=1` with these runs, made in one
/// round (attempt 1 opens the connection, later ones reuse it in warm mode).
pub fn result(runs: Vec<ProtocolRun>) -> ProbeResult {
    let attempts = runs
        .iter()
        .flat_map(|r| r.attempts.iter().map(|a| a.attempt))
        .max()
        .unwrap_or(1);
    ProbeResult {
        vantage: None,
        schema_version: SCHEMA_VERSION,
        started_at_unix_ms: 1_700_000_000_000,
        options: ProbeOptions {
            url: "https://example.com/path?q=1".into(),
            repeat: attempts,
            rounds: 1,
            ..ProbeOptions::default()
        },
        runs,
        analysis: None,
    }
}

/// Record `id` of `result` in `status`: made when the result started, with its options, and
/// nothing else (no vantages, no browser run, no monitor); a test sets what it needs beside.
pub fn record(id: &str, status: ProbeStatus, result: ProbeResult) -> ProbeRecord {
    ProbeRecord {
        id: id.into(),
        status,
        created_at_unix_ms: result.started_at_unix_ms,
        options: result.options.clone(),
        result,
        queued_ms: None,
        cancel_reason: None,
        vantages: Vec::new(),
        browser: None,
        monitor: None,
    }
}
