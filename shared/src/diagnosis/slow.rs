//! Slow-phase rules: DNS, TCP connect, TLS/QUIC handshake and time to first byte.

use super::*;
use crate::format::ms;
use crate::server_timing;

/// The worst completed occurrence of `phase` that `slow` accepts, and how many there were.
fn worst<'a>(
    result: &'a ProbeResult,
    phases: &[Phase],
    slow: impl Fn(&Attempt, Micros) -> bool,
) -> Option<(&'a ProtocolRun, &'a Attempt, Phase, Micros, usize)> {
    let hits: Vec<_> = all_attempts(result)
        .flat_map(|(run, a)| {
            phases
                .iter()
                .filter_map(move |&p| completed(a, p).map(|s| (run, a, p, s.duration())))
        })
        .filter(|(_, a, _, d)| slow(a, *d))
        .collect();
    let count = hits.len();
    hits.into_iter()
        .max_by_key(|(_, _, _, d)| *d)
        .map(|(run, a, p, d)| (run, a, p, d, count))
}

fn also(count: usize) -> String {
    match count {
        0 | 1 => String::new(),
        n => format!(" ({n} occurrences in this probe)"),
    }
}

/// The round trip an emulated network adds to each phase that waits on the
/// peer once (connect, the TLS or QUIC handshake, the wait): neither the
/// server's time nor the real path's, so no rule counts it.
fn emulated_round_trip(result: &ProbeResult) -> Micros {
    result
        .options
        .network
        .as_ref()
        .map_or(Micros(0), |n| Micros(u64::from(n.rtt_ms) * 1000))
}

/// `, not counting the emulated network's 300 ms round trip`, or nothing.
fn excluding(round_trip: Micros) -> String {
    if round_trip.0 == 0 {
        String::new()
    } else {
        format!(
            ", not counting the emulated network's {} round trip",
            ms(round_trip)
        )
    }
}

/// `dns_slow`, `connect_slow`, `tls_slow` and `ttfb_slow`.
pub(super) fn slow_phases(result: &ProbeResult, out: &mut Vec<Finding>) {
    let round_trip = emulated_round_trip(result);
    let own = |d: Micros| d.saturating_sub(round_trip);
    if let Some((run, a, phase, d, n)) = worst(result, &[Phase::Dns], |_, d| own(d) > DNS_SLOW) {
        let host = target(&a.url).host;
        out.push(finding(
            "dns_slow",
            Severity::Warning,
            format!("Slow DNS lookup: {}", ms(d)),
            Evidence {
                protocol: run.protocol,
                attempt: Some(a.attempt),
                phase: Some(phase),
                duration: Some(d),
                detail: format!(
                    "The name lookup on {} took {}, above {}{}{}.",
                    label(run.protocol, a),
                    ms(d),
                    ms(DNS_SLOW),
                    excluding(round_trip),
                    also(n)
                ),
            },
            format!(
                "Time the resolver directly with `dig +stats {host}` (see \"Query time\") and compare \
                 another resolver with `dig +stats {host} @1.1.1.1`. Slow only the first time points to \
                 a cold resolver cache: use a closer resolver or longer TTLs."
            ),
        ));
    }

    let fastest_connect = all_attempts(result)
        .filter_map(|(_, a)| completed(a, Phase::Connect))
        .map(|s| own(s.duration()))
        .min();
    if let Some(fastest) = fastest_connect {
        let slow = |_: &Attempt, d: Micros| {
            let d = own(d);
            d > CONNECT_SLOW
                || (d.0 > fastest.0.saturating_mul(CONNECT_SLOW_FACTOR) && d > CONNECT_SLOW_FLOOR)
        };
        if let Some((run, a, phase, d, n)) = worst(result, &[Phase::Connect], slow) {
            let host = target(&a.url).host;
            out.push(finding(
                "connect_slow",
                Severity::Warning,
                format!("Slow TCP connect: {}", ms(d)),
                Evidence {
                    protocol: run.protocol,
                    attempt: Some(a.attempt),
                    phase: Some(phase),
                    duration: Some(d),
                    detail: format!(
                        "The TCP connect on {} took {}; the fastest connect in this probe took {}{}{}.",
                        label(run.protocol, a),
                        ms(d),
                        ms(fastest),
                        excluding(round_trip),
                        also(n)
                    ),
                },
                format!(
                    "A TCP connect costs about one round trip: compare with `ping -c 5 {host}`. If ping is \
                     fast, the server's accept backlog or a dropped SYN (retried after 1 s) is to blame; \
                     `mtr {host}` shows where the path loses time."
                ),
            ));
        }
    }

    let new_connection = |a: &Attempt, d: Micros| !is_reused(a) && own(d) > TLS_SLOW;
    if let Some((run, a, phase, d, n)) = worst(result, &[Phase::Tls, Phase::Quic], new_connection) {
        let Target {
            host, host_port, ..
        } = target(&a.url);
        let facts = a
            .tls
            .as_ref()
            .map(|t| {
                format!(
                    " ({}, {} certificate(s), session {})",
                    t.version,
                    t.certificates.len(),
                    if t.resumed { "resumed" } else { "not resumed" }
                )
            })
            .unwrap_or_default();
        let what = if phase == Phase::Quic { "QUIC" } else { "TLS" };
        out.push(finding(
            "tls_slow",
            Severity::Warning,
            format!("Slow {what} handshake: {}", ms(d)),
            Evidence {
                protocol: run.protocol,
                attempt: Some(a.attempt),
                phase: Some(phase),
                duration: Some(d),
                detail: format!(
                    "The {what} handshake on a new connection ({}) took {}{facts}, above {}{}{}.",
                    label(run.protocol, a),
                    ms(d),
                    ms(TLS_SLOW),
                    excluding(round_trip),
                    also(n)
                ),
            },
            format!(
                "Inspect the handshake with `openssl s_client -connect {host_port} -servername {host} \
                 -showcerts`: check the chain length, OCSP stapling, and that TLS 1.3 and session \
                 resumption are enabled. Several round trips here point to TLS 1.2 or a slow \
                 certificate signature on the server."
            ),
        ));
    }

    if let Some((run, a, phase, d, n)) = worst(result, &[Phase::Wait], |_, d| own(d) > TTFB_SLOW) {
        let mut metrics: Vec<_> = a
            .response
            .as_ref()
            .map(server_timing::from_response)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|m| m.duration_ms.map(|d| (m.name, d)))
            .collect();
        metrics.sort_by(|x, y| y.1.total_cmp(&x.1));
        let hint = match metrics.first() {
            Some((name, dur)) => format!(
                " Its Server-Timing header says `{name}` took {dur} ms: start there.",
                dur = (dur * 10.0).round() / 10.0
            ),
            None => {
                " Adding a `Server-Timing` header to the response lets h123 show where the server \
                     spends the time."
                    .to_string()
            }
        };
        let server_timing = if metrics.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = metrics
                .iter()
                .take(3)
                .map(|(n, d)| format!("{n} {d} ms"))
                .collect();
            format!(" Server-Timing: {}.", list.join(", "))
        };
        out.push(finding(
            "ttfb_slow",
            Severity::Warning,
            format!("Slow server response: {} to first byte", ms(d)),
            Evidence {
                protocol: run.protocol,
                attempt: Some(a.attempt),
                phase: Some(phase),
                duration: Some(d),
                detail: format!(
                    "Waiting for the first byte on {} took {}, above {}{}{}.{server_timing}",
                    label(run.protocol, a),
                    ms(d),
                    ms(TTFB_SLOW),
                    excluding(round_trip),
                    also(n)
                ),
            },
            format!(
                "The time is spent in the server, not the network: profile the request server-side \
                 (application logs, APM traces, slow-query log).{hint} Confirm with \
                 `curl -o /dev/null -s -w 'ttfb: %{{time_starttransfer}}s\\n' {}`.",
                shell_quote(&a.url)
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, run};
    use crate::schema::FailureKind;

    #[test]
    fn slow_dns_reports_the_worst_lookup_above_the_threshold() {
        let r = result(vec![
            run(Protocol::H1, vec![fresh(1, 100_000, 1_000, 1_000, 1_000)]),
            run(Protocol::H2, vec![fresh(1, 150_000, 1_000, 1_000, 1_000)]),
            run(Protocol::H3, vec![fresh(1, 120_000, 1_000, 1_000, 1_000)]),
        ]);
        let f = find(&diagnose(&r), "dns_slow").clone();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            (f.evidence.protocol, f.evidence.attempt),
            (Protocol::H2, Some(1))
        );
        assert_eq!(
            (f.evidence.phase, f.evidence.duration),
            (Some(Phase::Dns), Some(Micros(150_000)))
        );
        assert!(f.evidence.detail.contains("2 occurrences"));
        assert!(f.next_step.contains("dig +stats example.com"));
        // Exactly at the threshold is fine.
        let r = result(vec![run(
            Protocol::H1,
            vec![fresh(1, 100_000, 1_000, 1_000, 1_000)],
        )]);
        assert!(!ids(&diagnose(&r)).contains(&"dns_slow"));
    }

    #[test]
    fn slow_connect_is_relative_to_the_fastest_or_absolute() {
        let relative = result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 1_000, 1_000, 1_000)]),
            run(Protocol::H2, vec![fresh(1, 0, 60_000, 1_000, 1_000)]),
        ]);
        let f = find(&diagnose(&relative), "connect_slow").clone();
        assert_eq!(f.evidence.protocol, Protocol::H2);
        assert!(
            f.evidence.detail.contains("1.00 ms"),
            "{}",
            f.evidence.detail
        );
        assert!(f.next_step.contains("ping -c 5 example.com"));

        let similar = result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 40_000, 1_000, 1_000)]),
            run(Protocol::H2, vec![fresh(1, 0, 45_000, 1_000, 1_000)]),
        ]);
        assert!(!ids(&diagnose(&similar)).contains(&"connect_slow"));
        let under_floor = result(vec![
            run(Protocol::H1, vec![fresh(1, 0, 1_000, 1_000, 1_000)]),
            run(Protocol::H2, vec![fresh(1, 0, 40_000, 1_000, 1_000)]),
        ]);
        assert!(!ids(&diagnose(&under_floor)).contains(&"connect_slow"));
        let absolute = result(vec![run(
            Protocol::H1,
            vec![fresh(1, 0, 250_000, 1_000, 1_000)],
        )]);
        assert!(ids(&diagnose(&absolute)).contains(&"connect_slow"));
    }

    #[test]
    fn a_phase_cut_short_by_a_failure_is_not_a_slow_phase() {
        let timeout = failed(
            attempt(1, &[(Phase::Connect, 10_000_000)], false),
            Phase::Connect,
            FailureKind::Timeout,
        );
        let f = diagnose(&result(vec![run(Protocol::H1, vec![timeout])]));
        assert_eq!(ids(&f), vec!["failure_timeout"]);
        assert_eq!(f[0].severity, Severity::Critical);
        assert_eq!(f[0].evidence.duration, Some(Micros(10_000_000)));
        assert!(
            f[0].next_step.contains("nc -vz -w 5 example.com 443"),
            "{}",
            f[0].next_step
        );
    }

    #[test]
    fn slow_handshakes_on_new_connections() {
        let mut tls = fresh(1, 0, 1_000, 600_000, 1_000);
        tls.tls = Some(crate::schema::TlsInfo {
            alpn: Some("h2".into()),
            version: "TLSv1.2".into(),
            cipher: "x".into(),
            resumed: false,
            verified: true,
            certificates: Vec::new(),
        });
        let f = find(
            &diagnose(&result(vec![run(Protocol::H2, vec![tls])])),
            "tls_slow",
        )
        .clone();
        assert_eq!(f.title, "Slow TLS handshake: 600 ms");
        assert!(f.evidence.detail.contains("TLSv1.2"));
        assert!(
            f.next_step
                .contains("openssl s_client -connect example.com:443 -servername example.com")
        );

        let quic = attempt(
            1,
            &[
                (Phase::Quic, 700_000),
                (Phase::Send, 1),
                (Phase::Wait, 1),
                (Phase::Receive, 1),
            ],
            false,
        );
        let f = find(
            &diagnose(&result(vec![run(Protocol::H3, vec![quic])])),
            "tls_slow",
        )
        .clone();
        assert_eq!(f.evidence.phase, Some(Phase::Quic));
        assert!(f.title.starts_with("Slow QUIC handshake"));

        // A reused connection carrying a tls span is not a new-connection handshake.
        let mut odd = fresh(1, 0, 1_000, 600_000, 1_000);
        odd.connection.as_mut().unwrap().reused = true;
        assert!(!ids(&diagnose(&result(vec![run(Protocol::H2, vec![odd])]))).contains(&"tls_slow"));
    }

    #[test]
    fn an_emulated_round_trip_is_not_counted_against_the_server_or_the_path() {
        let network = crate::network::NetworkProfile::parse("rtt=300ms").ok();
        let mut within = result(vec![run(
            Protocol::H2,
            vec![fresh(1, 379_000, 310_000, 320_000, 330_000)],
        )]);
        within.options.network = network.clone();
        let findings = diagnose(&within);
        let found = ids(&findings);
        for id in ["dns_slow", "connect_slow", "tls_slow", "ttfb_slow"] {
            assert!(!found.contains(&id), "{id} in {found:?}");
        }
        let mut slow = result(vec![run(
            Protocol::H2,
            vec![fresh(1, 0, 310_000, 320_000, 600_000)],
        )]);
        slow.options.network = network;
        let f = find(&diagnose(&slow), "ttfb_slow").clone();
        assert!(
            f.evidence
                .detail
                .contains("not counting the emulated network's 300 ms round trip"),
            "{}",
            f.evidence.detail
        );
    }

    #[test]
    fn slow_ttfb_points_at_the_server_and_its_server_timing() {
        let mut a = fresh(1, 0, 1_000, 1_000, 300_000);
        header(
            &mut a,
            "server-timing",
            "cache;dur=5, db;dur=180.25;desc=\"query\"",
        );
        let f = find(
            &diagnose(&result(vec![run(Protocol::H1, vec![a])])),
            "ttfb_slow",
        )
        .clone();
        assert_eq!(f.evidence.duration, Some(Micros(300_000)));
        assert!(
            f.evidence
                .detail
                .contains("Server-Timing: db 180.25 ms, cache 5 ms"),
            "{}",
            f.evidence.detail
        );
        assert!(
            f.next_step.contains("`db` took 180.3 ms"),
            "{}",
            f.next_step
        );
        assert!(f.next_step.contains("%{time_starttransfer}"));

        let plain = fresh(1, 0, 1_000, 1_000, 300_000);
        let f = find(
            &diagnose(&result(vec![run(Protocol::H1, vec![plain])])),
            "ttfb_slow",
        )
        .clone();
        assert!(f.next_step.contains("Adding a `Server-Timing` header"));
    }
}
