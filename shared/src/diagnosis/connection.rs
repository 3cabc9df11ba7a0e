//! Connection reuse rules: attempts that should have reused, and what reuse saves.

use super::*;
use crate::chain::ConnState;
use crate::format::ms;
use crate::schema::ConnectionMode;
use crate::stats::percentile;
use crate::verdict::{NOISE_FACTOR, ProtocolSample, floor};

/// Whether an attempt set up a new connection (or tried to).
fn opened_new(a: &Attempt) -> bool {
    a.connection.as_ref().is_some_and(|c| !c.reused)
        || [Phase::Dns, Phase::Connect, Phase::Tls, Phase::Quic]
            .iter()
            .any(|p| a.phases.get(*p).is_some())
}

/// Setup time of an attempt and its largest setup phase.
fn setup(a: &Attempt) -> (Micros, Option<Phase>) {
    let parts: Vec<(Phase, Micros)> = [Phase::Dns, Phase::Connect, Phase::Tls, Phase::Quic]
        .into_iter()
        .filter_map(|p| a.phases.get(p).map(|s| (p, s.duration())))
        .collect();
    let total = Micros(parts.iter().map(|(_, d)| d.0).sum());
    (total, parts.iter().max_by_key(|(_, d)| *d).map(|(p, _)| *p))
}

/// Warm mode: a round's later attempts that opened a new connection (`connection_never_reused`, `connection_not_reused`).
pub(super) fn reuse(result: &ProbeResult, run: &ProtocolRun, out: &mut Vec<Finding>) {
    if result.options.mode != ConnectionMode::Warm {
        return;
    }
    let previous_ok = |n: u32| {
        run.attempts.iter().any(|a| a.attempt == n - 1)
            && run
                .attempts
                .iter()
                .all(|a| a.attempt != n - 1 || a.failure.is_none())
    };
    // Attempts that should have reused: a round's later ones, hop 0, after a successful attempt.
    let expected: Vec<&Attempt> = run
        .attempts
        .iter()
        .filter(|a| {
            a.hop == 0 && !result.options.opens_connection(a.attempt) && previous_ok(a.attempt)
        })
        .collect();
    let missed: Vec<&Attempt> = expected.iter().copied().filter(|a| opened_new(a)).collect();
    let Some(first) = missed.first() else {
        return;
    };
    let closed_by_server = run.attempts.iter().any(|a| {
        a.response
            .as_ref()
            .and_then(|r| r.header("connection"))
            .is_some_and(|v| v.to_ascii_lowercase().contains("close"))
    });
    let close_note = if closed_by_server {
        " The server answered with `Connection: close`, which forbids reuse."
    } else {
        ""
    };
    let (cost, phase) = setup(first);
    let url = shell_quote(&first.url);
    let numbers: Vec<String> = missed.iter().map(|a| format!("#{}", a.attempt)).collect();
    if missed.len() == expected.len() {
        out.push(finding(
            "connection_never_reused",
            Severity::Warning,
            format!("{}: every attempt opened a new connection", run.protocol),
            Evidence {
                protocol: run.protocol,
                attempt: Some(first.attempt),
                phase,
                duration: Some(cost),
                detail: format!(
                    "In warm mode, attempt{} {} should have reused an earlier connection, but {} a new \
                     one, paying {} of setup on attempt {}.{close_note}",
                    if missed.len() > 1 { "s" } else { "" },
                    numbers.join(", "),
                    if missed.len() > 1 { "each opened" } else { "opened" },
                    ms(cost),
                    first.attempt
                ),
            },
            format!(
                "Enable keep-alive on the server and any proxy in front (no `Connection: close`, an idle \
                 timeout longer than the gap between requests). `curl -v {url} {url}` prints \"Re-using \
                 existing connection\" when reuse works. In your own clients, share one client per host \
                 and read every response body to the end."
            ),
        ));
    } else {
        let idle = first
            .connection
            .as_ref()
            .and_then(|c| c.idle_us)
            .or(Some(Micros(
                result.options.idle_gap_ms.saturating_mul(1000),
            )))
            .filter(|d| d.0 > 0)
            .map(|d| format!(" after {} idle", ms(d)))
            .unwrap_or_default();
        out.push(finding(
            "connection_not_reused",
            Severity::Warning,
            format!("{}: a new connection where one should have been reused", run.protocol),
            Evidence {
                protocol: run.protocol,
                attempt: Some(first.attempt),
                phase,
                duration: Some(cost),
                detail: format!(
                    "Attempt{} {} set up a new connection{idle} ({} of setup on attempt {}) although the \
                     previous request succeeded.{close_note}",
                    if missed.len() > 1 { "s" } else { "" },
                    numbers.join(", "),
                    ms(cost),
                    first.attempt
                ),
            },
            format!(
                "The server or a middlebox closed the connection between requests. Compare the gap with \
                 the server's keep-alive timeout (`curl -v {url}` shows a `Keep-Alive: timeout=` header \
                 when the server sends one) and raise it, or keep requests closer together."
            ),
        ));
    }
}

/// What reuse saved on one protocol: its attempts on new connections (full handshakes) against
/// its reused ones, called only when the difference of medians clears the verdict's floor and
/// noise ([`crate::verdict::SIGNIFICANCE_RULE`]), so a saving a busy machine's jitter could
/// have made is never reported.
struct ReuseSaving {
    protocol: Protocol,
    new: ProtocolSample,
    reused: ProtocolSample,
    saving: Micros,
}

impl ReuseSaving {
    /// The saving of one run, when its reused attempts took less than its new connections by
    /// more than the floor and the attempts' spread.
    fn of(run: &ProtocolRun) -> Option<ReuseSaving> {
        let totals = |state: ConnState| {
            let totals = run
                .attempts
                .iter()
                .filter(|a| a.hop == 0 && a.failure.is_none() && ConnState::of(a) == state)
                .map(|a| a.phases.total.duration())
                .collect();
            ProtocolSample::of(run.protocol, totals)
        };
        let (new, reused) = (totals(ConnState::New)?, totals(ConnState::Reused)?);
        let saving = new.median.saturating_sub(reused.median);
        let noise = new
            .spread()
            .max(reused.spread())
            .map(|spread| Micros(spread.0 * NOISE_FACTOR));
        let clears = saving > floor(reused.median) && noise.is_some_and(|noise| saving > noise);
        clears.then_some(ReuseSaving {
            protocol: run.protocol,
            new,
            reused,
            saving,
        })
    }

    /// The figures in a sentence, naming the protocol.
    fn sentence(&self) -> String {
        let percent = self.saving.0 as f64 * 100.0 / self.new.median.0 as f64;
        format!(
            "{}: the {} attempt(s) on a new connection took a median {}; the {} reused attempt(s) \
             a median {}: {} ({percent:.0}%) less.",
            self.protocol.http_version(),
            self.new.count,
            ms(self.new.median),
            self.reused.count,
            ms(self.reused.median),
            ms(self.saving)
        )
    }
}

/// The time reuse saves, one finding for every protocol that shows a saving, its figures per
/// protocol (`reuse_saving`); the evidence's protocol and duration are the first protocol's.
pub(super) fn reuse_saving(result: &ProbeResult, out: &mut Vec<Finding>) {
    let savings: Vec<ReuseSaving> = result.runs.iter().filter_map(ReuseSaving::of).collect();
    let Some(first) = savings.first() else {
        return;
    };
    let amounts: Vec<String> = savings
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let per = if i == 0 { " per request" } else { "" };
            format!("{}{per} on {}", ms(s.saving), s.protocol.http_version())
        })
        .collect();
    let sentences: Vec<String> = savings.iter().map(ReuseSaving::sentence).collect();
    out.push(finding(
        "reuse_saving",
        Severity::Info,
        format!("Connection reuse saves {}", join_and(&amounts)),
        Evidence {
            protocol: first.protocol,
            attempt: Some(1),
            phase: None,
            duration: Some(first.saving),
            detail: sentences.join(" "),
        },
        "Keep connections alive in your clients: one client (connection pool) per host, and read every \
         response body to the end so the connection can be reused."
            .into(),
    ));
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Resumed mode: what resuming the TLS session (and 0-RTT) saved on setup (`resumption_saving`).
pub(super) fn resumption_saving(run: &ProtocolRun, out: &mut Vec<Finding>) {
    use crate::chain::ConnState;
    let ok = |a: &&Attempt| a.hop == 0 && a.failure.is_none();
    let Some(first) = run
        .attempts
        .iter()
        .filter(ok)
        .find(|a| ConnState::of(a) == ConnState::New)
    else {
        return;
    };
    let resumed: Vec<&Attempt> = run
        .attempts
        .iter()
        .filter(ok)
        .filter(|a| ConnState::of(a) == ConnState::Resumed)
        .collect();
    if resumed.is_empty() {
        return;
    }
    let mut setups: Vec<Micros> = resumed.iter().map(|a| setup(a).0).collect();
    setups.sort_unstable();
    let median = percentile(&setups, 50);
    let full = setup(first).0;
    let saving = full.saturating_sub(median);
    let zero_rtt = resumed
        .iter()
        .filter(|a| a.quic.as_ref().and_then(|q| q.zero_rtt_accepted) == Some(true))
        .count();
    let zero_rtt_note = if zero_rtt > 0 {
        format!(
            " {zero_rtt} of them sent the request in 0-RTT data, before the handshake finished."
        )
    } else {
        String::new()
    };
    out.push(finding(
        "resumption_saving",
        Severity::Info,
        format!(
            "{}: session resumption saves {} of connection setup",
            run.protocol,
            ms(saving)
        ),
        Evidence {
            protocol: run.protocol,
            attempt: Some(first.attempt),
            phase: None,
            duration: Some(saving),
            detail: format!(
                "The full handshake of attempt {} took {} of setup; the {} resumed connection(s) a median {}.{zero_rtt_note}",
                first.attempt,
                ms(full),
                resumed.len(),
                ms(median)
            ),
        },
        "Resumption needs the server to issue session tickets and the client to keep them: \
         check with `openssl s_client -sess_out s.pem` then `-sess_in s.pem` (look for \"Reused\"). \
         Reuse of one connection saves more still."
            .into(),
    ));
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::fixture::{failed, fresh, result, reused, run};
    use crate::schema::FailureKind;

    #[test]
    fn warm_mode_without_any_reuse() {
        let mut first = fresh(1, 1_000, 1_000, 1_000, 1_000);
        header(&mut first, "connection", "close");
        let r = result(vec![run(
            Protocol::H1,
            vec![
                first,
                fresh(2, 1_000, 2_000, 3_000, 1_000),
                fresh(3, 1_000, 1_000, 1_000, 1_000),
            ],
        )]);
        let f = diagnose(&r);
        assert!(!ids(&f).contains(&"reuse_saving"));
        let never = find(&f, "connection_never_reused");
        assert_eq!(never.evidence.attempt, Some(2));
        assert_eq!(
            (never.evidence.phase, never.evidence.duration),
            (Some(Phase::Tls), Some(Micros(6_000)))
        );
        assert!(never.evidence.detail.contains("Connection: close"));
        assert!(never.next_step.contains("Re-using"));

        let mut cold = r.clone();
        cold.options.mode = ConnectionMode::Cold;
        assert!(diagnose(&cold).is_empty());
    }

    #[test]
    fn one_missed_reuse_among_reused_attempts() {
        let mut third = fresh(3, 0, 1_000, 1_000, 1_000);
        third.connection.as_mut().unwrap().id = 2;
        let mut r = result(vec![run(
            Protocol::H2,
            vec![fresh(1, 0, 1_000, 1_000, 1_000), reused(2, 1_000), third],
        )]);
        r.options.idle_gap_ms = 5_000;
        let f = diagnose(&r);
        let missed = find(&f, "connection_not_reused");
        assert_eq!(missed.evidence.attempt, Some(3));
        assert!(
            missed.evidence.detail.contains("after 5.00 s idle"),
            "{}",
            missed.evidence.detail
        );
        assert!(!ids(&f).contains(&"connection_never_reused"));

        // A new connection after a failed attempt is expected.
        let r = result(vec![run(
            Protocol::H2,
            vec![
                failed(
                    fresh(1, 0, 1_000, 1_000, 1_000),
                    Phase::Receive,
                    FailureKind::Reset,
                ),
                fresh(2, 0, 1_000, 1_000, 1_000),
            ],
        )]);
        let f = diagnose(&r);
        assert!(
            !ids(&f).iter().any(|id| id.starts_with("connection_")),
            "{:?}",
            ids(&f)
        );
    }

    #[test]
    fn one_reuse_saving_for_every_protocol_that_shows_one() {
        let r = result(vec![
            run(
                Protocol::H1,
                vec![
                    fresh(1, 0, 1_000, 1_000, 1_000),
                    reused(2, 1_000),
                    reused(3, 1_200),
                ],
            ),
            // Attempt 1 failed: nothing to compare with.
            run(
                Protocol::H2,
                vec![
                    failed(
                        fresh(1, 0, 1_000, 1_000, 1_000),
                        Phase::Receive,
                        FailureKind::Reset,
                    ),
                    fresh(2, 0, 1_000, 1_000, 1_000),
                ],
            ),
            run(
                Protocol::H3,
                vec![
                    fresh(1, 0, 3_000, 1_000, 1_000),
                    reused(2, 1_000),
                    reused(3, 1_200),
                ],
            ),
        ]);
        let f = diagnose(&r);
        let savings: Vec<&Finding> = f.iter().filter(|f| f.id == "reuse_saving").collect();
        assert_eq!(savings.len(), 1, "{:?}", ids(&f));
        let saving = savings[0];
        assert_eq!(
            saving.title,
            "Connection reuse saves 2.00 ms per request on HTTP/1.1 and 4.00 ms on HTTP/3"
        );
        assert_eq!(saving.evidence.protocol, Protocol::H1);
        assert_eq!(saving.evidence.duration, Some(Micros(2_000)));
        assert!(saving.evidence.detail.starts_with("HTTP/1.1: "));
        assert!(saving.evidence.detail.contains(" HTTP/3: "));
        assert!(!saving.evidence.detail.contains("HTTP/2"));
    }

    #[test]
    fn no_reuse_saving_inside_the_floor_the_spread_or_without_one() {
        // Each new connection costs 2 ms more than the reused median (3.55 against 1.55 ms).
        let probe = |reused_waits: &[u64]| {
            let mut attempts = vec![fresh(1, 0, 1_000, 1_000, 1_000)];
            attempts.extend((2..).zip(reused_waits).map(|(n, wait)| reused(n, *wait)));
            let f = diagnose(&result(vec![run(Protocol::H1, attempts)]));
            ids(&f).contains(&"reuse_saving")
        };
        assert!(probe(&[1_000, 1_200]), "2 ms clears a spread of 0.2 ms");
        assert!(!probe(&[1_000]), "one reused attempt has no spread");
        assert!(
            !probe(&[1_000, 2_100]),
            "2 ms is inside twice a spread of 1.1 ms"
        );
        assert!(!probe(&[2_600, 2_700]), "0.45 ms is under the 0.5 ms floor");
    }

    #[test]
    fn join_and_reads_as_a_sentence() {
        let items = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(join_and(&items(0)), "");
        assert_eq!(join_and(&items(1)), "1");
        assert_eq!(join_and(&items(2)), "1 and 2");
        assert_eq!(join_and(&items(3)), "1, 2 and 3");
    }

    #[test]
    fn resumption_saving_counts_zero_rtt() {
        let mut resumed = fresh(2, 0, 0, 0, 1_000);
        resumed.phases.quic = crate::fixture::span(0, 300);
        resumed.quic = Some(crate::schema::QuicInfo {
            zero_rtt_accepted: Some(true),
            ..crate::schema::QuicInfo::default()
        });
        let mut r = result(vec![run(
            Protocol::H3,
            vec![fresh(1, 0, 1_000, 2_000, 1_000), resumed],
        )]);
        r.options.mode = crate::schema::ConnectionMode::Resumed;
        let f = diagnose(&r);
        let saving = find(&f, "resumption_saving");
        assert_eq!(saving.evidence.duration, Some(Micros(2_700)));
        assert!(
            saving
                .evidence
                .detail
                .contains("1 of them sent the request in 0-RTT")
        );
    }
}
