//! Rich values of every type the web UI reads: every `Option` `Some`, every collection and
//! string non-empty, every defaulted field unlike its default, so that a misspelt or unread
//! field cannot pass a round trip (`richness::gaps` checks the first two).

use crate::alt_svc::AltSvc;
use crate::analysis::{Analysis, AttemptCounts, Outcome};
use crate::api::*;
use crate::bench::*;
use crate::browser::{BrowserAttempt, BrowserFinding, BrowserPhase, BrowserRun};
use crate::chain::ConnState;
use crate::compare::{Comparison, ComparisonKind, MetricDiff, ProtocolDiff, Side, SideFigures};
use crate::diagnosis::{Evidence, Finding, Severity};
use crate::migration::{Migrate, Migration};
use crate::network::{EmulatedPath, Emulation, LinkCounts, NetworkProfile};
use crate::schema::*;
use crate::stats::Metric;
use crate::streams::{StreamBurst, StreamTiming};
use crate::sweep::{Sweep, SweepAxis, SweepStep};
use crate::timeline::{TimedEvent, TraceEvent};
use crate::vantage::{Vantage, VantageRun};
use crate::verdict::{ProtocolSample, StateComparison, Verdict, VerdictKind};
use std::collections::BTreeMap;

fn span(start: u64, end: u64) -> Option<Span> {
    Some(Span {
        start_us: Micros(start),
        end_us: Micros(end),
    })
}

fn tcp_info(base: u32) -> Option<TcpInfo> {
    Some(TcpInfo {
        rtt_us: Some(Micros(u64::from(base) + 1)),
        rttvar_us: Some(Micros(u64::from(base) + 2)),
        min_rtt_us: Some(Micros(u64::from(base) + 3)),
        snd_cwnd: Some(base + 4),
        snd_mss: Some(base + 5),
        total_retrans: Some(base + 6),
        lost: Some(base + 7),
        delivery_rate: Some(u64::from(base) + 8),
        bytes_sent: Some(u64::from(base) + 9),
        bytes_received: Some(u64::from(base) + 10),
        segs_out: Some(base + 11),
        segs_in: Some(base + 12),
    })
}

fn failure(message: &str) -> Failure {
    Failure {
        phase: Phase::Receive,
        kind: FailureKind::ProxyRefused,
        message: message.into(),
    }
}

/// An attempt with every fact there is (a u64 past 2^53 among them).
pub(super) fn attempt(n: u32) -> Attempt {
    Attempt {
        attempt: n,
        hop: 2,
        url: "https://example.com/é?q=\"1\"&r=\\n".into(),
        started_at_unix_ms: 1_700_000_000_123,
        chain_start_us: Some(Micros(12)),
        phases: Phases {
            dns: span(0, 10),
            connect: span(10, 20),
            proxy: span(20, 30),
            tls: span(30, 40),
            quic: span(40, 50),
            send: span(50, 60),
            wait: span(60, 70),
            receive: span(70, 80),
            total: span(0, 9_007_199_254_740_993).unwrap(),
        },
        ttfb_source: TtfbSource::Http2HeadersFrame,
        dns: Some(DnsInfo {
            source: "system".into(),
            addresses: vec!["192.0.2.1".into(), "2001:db8::1".into()],
        }),
        connection: Some(ConnectionInfo {
            id: 7,
            reused: true,
            was_idle: true,
            idle_us: Some(Micros(500)),
            request_index: 3,
            local_addr: Some("192.0.2.9:50000".into()),
            remote_addr: "192.0.2.1:443".into(),
            proxy: Some(ProxyInfo {
                kind: ProxyKind::Socks5h,
                address: "127.0.0.1:1080".into(),
                authenticated: true,
                reply: "succeeded".into(),
            }),
        }),
        tls: Some(TlsInfo {
            alpn: Some("h2".into()),
            version: "TLSv1_3".into(),
            cipher: "TLS13_AES_128_GCM_SHA256".into(),
            resumed: true,
            verified: true,
            certificates: vec![CertificateSummary {
                subject: "CN=example.com".into(),
                issuer: "CN=Example CA".into(),
                sans: vec!["example.com".into()],
                not_before: "2024-01-01".into(),
                not_after: "2025-01-01".into(),
                key_type: "ECDSA P-256".into(),
                fingerprint_sha256: Some("ab".repeat(32)),
            }],
        }),
        response: Some(ResponseInfo {
            status: 503,
            http_version: "HTTP/2".into(),
            headers: vec![Header {
                name: "alt-svc".into(),
                value: "h3=\":443\"; ma=86400".into(),
            }],
            headers_truncated: true,
            body_bytes: u64::MAX,
            truncated: true,
        }),
        quic: Some(QuicInfo {
            rtt_us: Micros(900),
            sent_packets: 10,
            lost_packets: 1,
            congestion_events: 2,
            zero_rtt_accepted: Some(true),
            cwnd_bytes: Some(12_000),
            current_mtu: Some(1_452),
            lost_bytes: Some(1_200),
            silent_addresses: vec!["[::1]:443".into()],
            refused_addresses: vec!["192.0.2.1:443".into()],
            address_wait_us: Some(Micros(250_000)),
        }),
        failure: Some(failure("reset by the proxy 日本")),
        tcp_info: Some(TcpInfoSnapshots {
            at_connect: tcp_info(100),
            at_first_byte: tcp_info(200),
            at_end: tcp_info(300),
        }),
        migration: Some(Migration {
            to: Migrate::Address("192.0.2.77".into()),
            from_addr: "192.0.2.9:50000".into(),
            to_addr: "192.0.2.77:50001".into(),
            after_bytes: 65_536,
            at_us: Micros(75),
            answered_after_us: Some(Micros(30)),
            path_challenges: 1,
            path_responses: 1,
            survived: true,
        }),
    }
}

/// Options unlike [`ProbeOptions::default`] in every field.
pub(super) fn options() -> ProbeOptions {
    ProbeOptions {
        url: "https://example.com/path?q=1".into(),
        protocols: vec![Protocol::H3, Protocol::H1],
        method: Method::Patch,
        body: Some(RequestBody {
            text: Some("{\"a\": 1}".into()),
            base64: Some("eyJhIjogMX0=".into()),
            content_type: Some("application/json".into()),
            size: Some(8),
            sha256: Some("ab12".into()),
        }),
        repeat: 4,
        rounds: 3,
        mode: ConnectionMode::Resumed,
        idle_gap_ms: 250,
        follow_redirects: true,
        max_redirects: 2,
        headers: vec![Header {
            name: "x-test".into(),
            value: "1".into(),
        }],
        timeout_ms: 5_000,
        phase_timeout_ms: 2_000,
        quic_timeout_ms: Some(1_500),
        max_body_bytes: 1_024,
        insecure: true,
        resolve: vec![ResolveOverride {
            host: "example.com".into(),
            port: 8443,
            addr: "192.0.2.1".into(),
        }],
        dns_server: Some("192.0.2.53:53".into()),
        h3_direct: true,
        visibility: Visibility::Public,
        family: AddressFamily::V6,
        all_addresses: true,
        vantages: vec!["fra1".into()],
        network: NetworkProfile::named("lossy-mobile"),
        migrate: Some(Migrate::Port),
        streams: Some(6),
        keep_secret: vec!["X-Api-Key".into()],
    }
}

fn emulated() -> Option<EmulatedPath> {
    let counts = |base: u64| LinkCounts {
        delivered: base + 1,
        lost: base + 2,
        queue_drops: base + 3,
        bytes: base + 4,
    };
    Some(EmulatedPath {
        emulation: Emulation::Packets,
        up: counts(10),
        down: counts(20),
    })
}

fn vantage(name: &str) -> Vantage {
    Vantage {
        name: name.into(),
        label: Some(format!("{name}, labelled")),
        tags: vec!["eu".into(), "cloud".into()],
    }
}

fn analysis() -> Analysis {
    Analysis {
        outcome: Outcome::DoneWithErrors,
        counts: AttemptCounts {
            attempts: 6,
            succeeded: 4,
            http_errors: 1,
            failed: 1,
        },
        headline: "done with errors · 4 of 6 HTTP/2 attempt(s) succeeded".into(),
        verdict: Verdict {
            kind: VerdictKind::Faster,
            summary: "HTTP/3 is faster".into(),
            comparisons: vec![StateComparison {
                state: ConnState::Resumed,
                samples: vec![ProtocolSample {
                    protocol: Protocol::H3,
                    count: 3,
                    median: Micros(100),
                    min: Micros(90),
                    max: Micros(120),
                    next_to_max: Micros(110),
                }],
                noise: Some(Micros(5)),
                leaders: vec![Protocol::H3],
                margin: Some(Micros(40)),
            }],
            rule: "over 0.5 ms and over the spread".into(),
        },
        findings: vec![Finding {
            id: "h3_unavailable".into(),
            severity: Severity::Warning,
            title: "HTTP/3 did not answer".into(),
            evidence: Evidence {
                protocol: Protocol::H3,
                attempt: Some(1),
                phase: Some(Phase::Quic),
                duration: Some(Micros(3_000)),
                detail: "silent".into(),
            },
            next_step: "h123 probe --h3-direct".into(),
        }],
    }
}

/// A result with one run holding everything a run can hold.
pub(super) fn result(vantage_name: &str) -> ProbeResult {
    ProbeResult {
        schema_version: SCHEMA_VERSION,
        started_at_unix_ms: 1_700_000_000_000,
        options: options(),
        vantage: Some(vantage(vantage_name)),
        runs: vec![ProtocolRun {
            protocol: Protocol::H3,
            skipped: Some("not skipped, but said".into()),
            not_offered: Some(crate::schema::NotOffered {
                offered: vec!["h2".into(), "http/1.1".into()],
                chosen: Some("http/1.1".into()),
                closed: true,
            }),
            stopped: Some("stopped early".into()),
            cut_short: Some("record cap".into()),
            attempts: vec![attempt(1)],
            discovery: Some(H3Discovery {
                alt_svc: vec![AltSvc {
                    protocol: "h3".into(),
                    host: Some("alt.example.com".into()),
                    port: 8443,
                    max_age_s: 86_400,
                }],
                https_record: Some(HttpsRecord {
                    priority: 1,
                    target: ".".into(),
                    alpn: vec!["h3".into(), "h2".into()],
                    port: Some(443),
                    ipv4_hints: vec!["192.0.2.1".into()],
                    ipv6_hints: vec!["2001:db8::1".into()],
                }),
                https_lookup: Some("answered".into()),
                via: Some(H3Via::HttpsRecord),
                endpoint: Some("example.com:443".into()),
                outcome: H3Outcome::VersionMismatch,
                detail: "no common version".into(),
                quic_budget_ms: Some(2_010),
            }),
            other_addresses: vec![AddressRun {
                address: "::1".into(),
                family: AddressFamily::V6,
                stopped: Some("silent".into()),
                cut_short: Some("cap".into()),
                attempts: vec![attempt(2)],
            }],
            emulated: emulated(),
            streams: Some(StreamBurst {
                connections: 1,
                setup_us: Micros(700),
                streams: vec![StreamTiming {
                    first_byte_us: Some(Micros(800)),
                    done_us: Micros(900),
                    status: Some(200),
                    body_bytes: 4_096,
                    failure: Some(failure("stream reset")),
                }],
                failure: Some(failure("burst failed")),
            }),
        }],
        analysis: Some(analysis()),
    }
}

/// A finished record measured from two vantages, with the browser's own measurement.
pub(super) fn record(id: &str) -> ProbeRecord {
    ProbeRecord {
        id: id.into(),
        status: ProbeStatus::Cancelled,
        created_at_unix_ms: 1_700_000_000_000,
        options: options(),
        result: result("server"),
        queued_ms: Some(15),
        cancel_reason: Some("instance gone".into()),
        vantages: vec![
            VantageRun {
                vantage: vantage("server"),
                result: Some(result("server")),
                problem: Some("partly answered".into()),
            },
            VantageRun {
                vantage: vantage("fra1"),
                result: Some(result("fra1")),
                problem: Some("agent slow".into()),
            },
        ],
        browser: Some(BrowserRun {
            user_agent: "Mozilla/5.0".into(),
            measured_at_unix_ms: 1_700_000_100_000,
            attempts: vec![BrowserAttempt {
                protocol: Some("h3".into()),
                total_us: Micros(4_000),
                reused: Some(false),
                phases: vec![BrowserPhase {
                    phase: Phase::Tls,
                    start_us: Micros(10),
                    end_us: Micros(20),
                }],
                error: Some("none really".into()),
            }],
            finding: Some(BrowserFinding {
                summary: "your browser agrees".into(),
                lines: vec!["h3 in both".into()],
                implausible: true,
            }),
        }),
        monitor: Some(MonitorLink {
            id: "m1".into(),
            slot_unix_ms: 1_700_000_060_000,
        }),
    }
}

/// Two records and what differs between them.
pub(super) fn comparison() -> ProbeComparison {
    let figures = |median| {
        Some(SideFigures {
            count: 3,
            median: Micros(median),
            min: Micros(median - 5),
            max: Micros(median + 5),
        })
    };
    ProbeComparison {
        a: record("aaa"),
        b: record("bbb"),
        comparison: Comparison {
            kind: ComparisonKind::Differs,
            summary: "B is faster".into(),
            caveats: vec!["A was measured from 2 vantages".into()],
            groups: vec![ProtocolDiff {
                protocol: Protocol::H2,
                state: ConnState::Reused,
                metrics: vec![MetricDiff {
                    metric: Metric::Ttfb,
                    a: figures(100),
                    b: figures(50),
                    noise: Some(Micros(3)),
                    floor: Some(Micros(500)),
                    faster: Some(Side::B),
                    gap: Some(Micros(50)),
                }],
            }],
            rule: "the verdict's".into(),
        },
        permalink: "/compare/aaa/bbb".into(),
    }
}

/// Bench options unlike [`BenchOptions::default`] in every field.
fn bench_options() -> BenchOptions {
    BenchOptions {
        url: "https://example.com/bench".into(),
        protocols: vec![Protocol::H2],
        concurrency: 4,
        connections: Some(2),
        duration_ms: Some(3_000),
        requests: Some(1_000),
        rate: Some(50),
        warmup_ms: 200,
        cold: true,
        method: Method::Head,
        headers: vec![Header {
            name: "x-bench".into(),
            value: "yes".into(),
        }],
        timeout_ms: 2_500,
        insecure: true,
        network: NetworkProfile::named("satellite"),
        sweep: Some(Sweep::new(SweepAxis::Rtt, vec![0, 25, 50]).unwrap()),
        visibility: Visibility::Public,
        keep_secret: vec!["api_key".into()],
    }
}

fn bench_result() -> BenchResult {
    let latency = |base| LatencySummary {
        count: base,
        min: Micros(base + 1),
        mean: Micros(base + 2),
        stdev: Micros(base + 3),
        p50: Micros(base + 4),
        p90: Micros(base + 5),
        p99: Micros(base + 6),
        p999: Micros(base + 7),
        max: Micros(base + 8),
    };
    BenchResult {
        schema_version: SCHEMA_VERSION,
        started_at_unix_ms: 1_700_000_000_000,
        options: bench_options(),
        runs: vec![BenchRun {
            protocol: Protocol::H2,
            failure: Some(failure("bench failure")),
            elapsed_us: Micros(3_000_000),
            requests: 1_000,
            successes: 990,
            errors: 10,
            errors_by_kind: BTreeMap::from([("timeout".into(), 7), ("reset".into(), 3)]),
            statuses: BTreeMap::from([(200, 985), (503, 5)]),
            body_bytes: 1_000_000,
            connections_opened: 2,
            send_rate: 333.33333333333337,
            latency: latency(100),
            ttfb: latency(50),
            latency_percentiles: vec![PercentilePoint {
                percentile: 99.9,
                value: Micros(420),
            }],
            latency_histogram: vec![HistogramBucket {
                upper: Micros(500),
                count: 12,
            }],
            emulated: emulated(),
        }],
        addresses: vec!["192.0.2.1".into()],
    }
}

/// A running sweep's record with a progress, a result and a finished step.
pub(super) fn bench_record() -> BenchRecord {
    BenchRecord {
        id: "bench1".into(),
        status: ProbeStatus::Running,
        created_at_unix_ms: 1_700_000_000_000,
        finished_at_unix_ms: Some(1_700_000_009_000),
        options: bench_options(),
        progress: Some(BenchProgress {
            protocol: Some(Protocol::H3),
            protocols_done: 1,
            warming_up: true,
            requests: 500,
            errors: 2,
            elapsed_ms: 1_500,
        }),
        result: Some(bench_result()),
        steps: vec![SweepStep {
            value: 25,
            result: bench_result(),
        }],
        cancel_reason: Some("not yet".into()),
    }
}

pub(super) fn server_info() -> ServerInfo {
    ServerInfo {
        version: "0.1.0".into(),
        bench_enabled: true,
        bench_limits: Some(BenchBounds {
            network: true,
            ..BenchBounds::default()
        }),
        allowed_methods: vec![Method::Get, Method::Delete],
        max_request_body: 1_048_576,
        network_enabled: true,
        public_targets_only: true,
        bench_targets: vec!["127.0.0.1:8443".into()],
    }
}

pub(super) fn vantage_list() -> VantageList {
    VantageList {
        items: vec![VantageInfo {
            vantage: vantage("fra1"),
            kind: VantageKind::Agent,
            version: Some("0.4.2".into()),
            online: true,
            last_seen_ms_ago: Some(1_200),
        }],
    }
}

pub(super) fn probe_list() -> ProbeList {
    ProbeList {
        items: vec![ProbeSummary {
            id: "abc".into(),
            url: "https://example.com/".into(),
            protocols: vec![Protocol::H1, Protocol::H3],
            status: ProbeStatus::Done,
            created_at_unix_ms: 1_700_000_000_000,
            visibility: Visibility::Public,
            outcome: Some(crate::api::ListOutcome::HttpError),
            verdict: Some(
                "Nothing to compare: every answer was an HTTP error (404 Not Found).".into(),
            ),
        }],
        next_before: Some("abb".into()),
    }
}

/// Every event the stream sends, tagged with a vantage.
pub(super) fn events() -> Vec<crate::agent::VantageEvent> {
    let events = [
        ProbeEvent::Phase {
            protocol: Protocol::H2,
            attempt: 2,
            hop: 1,
            event: TimedEvent {
                event: TraceEvent::FirstByte,
                at: Micros(1_234),
            },
        },
        ProbeEvent::Attempt {
            protocol: Protocol::H3,
            attempt: Box::new(attempt(3)),
        },
        ProbeEvent::Skipped {
            protocol: Protocol::H1,
            reason: "not asked".into(),
        },
        ProbeEvent::Stopped {
            protocol: Protocol::H3,
            reason: "silent peer".into(),
        },
    ];
    events
        .into_iter()
        .map(|event| crate::agent::VantageEvent {
            vantage: Some("fra1".into()),
            event,
        })
        .collect()
}
