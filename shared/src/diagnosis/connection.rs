//! Connection reuse rules: attempts that should have reused, and what reuse saves.

use super::*;
use crate::chain::ConnState;
use crate::format::ms;
use crate::schema::ConnectionMode;
use crate::verdict::{MIN_SAMPLES, ProtocolSample, saving};

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

/// The totals of a run's successful first hops in one connection state, as a sample.
fn totals(run: &ProtocolRun, state: ConnState) -> Option<ProtocolSample> {
    sample_of(run, state, |a| a.phases.total.duration())
}

/// One figure of a run's successful first hops in one connection state, as a sample.
fn sample_of(
    run: &ProtocolRun,
    state: ConnState,
    figure: impl Fn(&Attempt) -> Micros,
) -> Option<ProtocolSample> {
    let values = run
        .attempts
        .iter()
        .filter(|a| a.hop == 0 && a.failure.is_none() && ConnState::of(a) == state)
        .map(figure)
        .collect();
    ProtocolSample::of(run.protocol, values)
}

/// What reuse saved on one protocol: its attempts on new connections (full handshakes) against
/// its reused ones, called only under the verdict's rule ([`crate::verdict::SIGNIFICANCE_RULE`]:
/// enough of each, the floor and the spread), so neither one slow first connection nor a busy
/// machine's jitter is ever reported as a saving.
struct ReuseSaving {
    protocol: Protocol,
    new: ProtocolSample,
    reused: ProtocolSample,
    saving: Micros,
}

impl ReuseSaving {
    /// The saving of one run, when its reused attempts took less than its new connections under
    /// the verdict's rule ([`saving`]: enough of each, the floor and the spread).
    fn of(run: &ProtocolRun) -> Option<ReuseSaving> {
        let (new, reused) = (
            totals(run, ConnState::New)?,
            totals(run, ConnState::Reused)?,
        );
        let saving = saving(&new, &reused)?;
        Some(ReuseSaving {
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

/// Resumed connections: what resuming the TLS session (and 0-RTT) saved on setup
/// (`resumption_saving`), its full handshakes' setups against its resumed ones under the
/// verdict's rule; where the rule cannot call one (`--resumed` keeps one session across rounds,
/// so a probe has a single full handshake), what was resumed without a figure (`resumption_seen`)
/// and what would measure the saving.
pub(super) fn resumption_saving(result: &ProbeResult, run: &ProtocolRun, out: &mut Vec<Finding>) {
    let setups = |state| sample_of(run, state, |a| setup(a).0);
    let Some(resumed) = setups(ConnState::Resumed) else {
        return;
    };
    let zero_rtt = run
        .attempts
        .iter()
        .filter(|a| a.hop == 0 && a.failure.is_none() && ConnState::of(a) == ConnState::Resumed)
        .filter(|a| a.quic.as_ref().and_then(|q| q.zero_rtt_accepted) == Some(true))
        .count();
    let zero_rtt_note = if zero_rtt > 0 {
        format!(
            " {zero_rtt} of them sent the request in 0-RTT data, before the handshake finished."
        )
    } else {
        String::new()
    };
    let full = setups(ConnState::New);
    let figures = format!(
        "{} full handshake(s) took a median {} of setup; the {} resumed connection(s) a median {}.{zero_rtt_note}",
        full.as_ref().map_or(0, |f| f.count),
        full.as_ref()
            .map_or_else(|| "nothing".into(), |f| ms(f.median)),
        resumed.count,
        ms(resumed.median)
    );
    let evidence = |duration| Evidence {
        protocol: run.protocol,
        attempt: run
            .attempts
            .iter()
            .find(|a| a.hop == 0 && ConnState::of(a) == ConnState::Resumed)
            .map(|a| a.attempt),
        phase: None,
        duration,
        detail: String::new(),
    };
    if let Some(saved) = full.as_ref().and_then(|full| saving(full, &resumed)) {
        out.push(finding(
            "resumption_saving",
            Severity::Info,
            format!(
                "{}: session resumption saves {} of connection setup",
                run.protocol,
                ms(saved)
            ),
            Evidence {
                detail: format!("The {figures}"),
                ..evidence(Some(saved))
            },
            "Resumption needs the server to issue session tickets and the client to keep them: \
             check with `openssl s_client -sess_out s.pem` then `-sess_in s.pem` (look for \"Reused\"). \
             Reuse of one connection saves more still."
                .into(),
        ));
        return;
    }
    let full_count = full.as_ref().map_or(0, |f| f.count);
    let why = if full_count < MIN_SAMPLES {
        format!(
            "Too few full handshakes to say what resumption saves (a saving is stated with {MIN_SAMPLES} of each, \
             beyond the floor and the spread): the "
        )
    } else {
        "No saving beyond the floor and the spread of the handshakes: the ".to_string()
    };
    let next_step = if full_count < MIN_SAMPLES && result.options.mode == ConnectionMode::Resumed {
        format!(
            "`--resumed` keeps one session across rounds, so more rounds still make one full handshake. \
             Measure full handshakes and resumed ones side by side with \
             `h123 probe --arms cold,resumed --rounds {MIN_SAMPLES} {}`.",
            shell_quote(&result.options.url)
        )
    } else if full_count < MIN_SAMPLES {
        "Measure more rounds: each round opens a connection with a full handshake.".to_string()
    } else {
        "Resumption saves little here: the full handshake is already fast. Reuse of one connection \
         saves its whole setup."
            .to_string()
    };
    out.push(finding(
        "resumption_seen",
        Severity::Info,
        format!(
            "{}: {} connection(s) resumed the TLS session{}",
            run.protocol,
            resumed.count,
            if zero_rtt > 0 { ", with 0-RTT" } else { "" }
        ),
        Evidence {
            detail: format!("{why}{figures}"),
            ..evidence(None)
        },
        next_step,
    ));
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::fixture::{failed, fresh, result, reused, run, warm_rounds};
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
        let steady = [1_000, 1_100, 1_000, 1_050];
        let r = result(vec![
            warm_rounds(Protocol::H1, [1_000, 1_100, 1_000, 1_050], steady),
            // One round: one new connection is no sample, however slow.
            run(
                Protocol::H2,
                vec![fresh(1, 0, 1_000, 9_000, 1_000), reused(2, 1_000)],
            ),
            warm_rounds(Protocol::H3, [3_000, 3_100, 3_000, 3_050], steady),
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
    fn no_reuse_saving_inside_the_floor_the_spread_or_without_enough() {
        // Each new connection costs about 2 ms more than a reused attempt.
        let probe = |waits: [u64; 4]| {
            let r = result(vec![warm_rounds(
                Protocol::H1,
                [1_000, 1_000, 1_000, 1_000],
                waits,
            )]);
            ids(&diagnose(&r)).contains(&"reuse_saving")
        };
        assert!(
            probe([1_000, 1_200, 1_100, 1_000]),
            "2 ms clears a spread of 0.2 ms"
        );
        assert!(
            !probe([1_000, 2_100, 1_000, 2_100]),
            "2 ms is inside twice a spread of 1.1 ms"
        );
        assert!(
            !probe([2_600, 2_700, 2_600, 2_700]),
            "0.45 ms is under the 0.5 ms floor"
        );
        // One new connection, however slow against three reused attempts, is not a sample.
        let one_new = result(vec![run(
            Protocol::H1,
            vec![
                fresh(1, 0, 1_000, 4_000, 1_000),
                reused(2, 1_000),
                reused(3, 1_100),
                reused(4, 1_000),
                reused(5, 1_050),
            ],
        )]);
        assert!(!ids(&diagnose(&one_new)).contains(&"reuse_saving"));
    }

    #[test]
    fn join_and_reads_as_a_sentence() {
        let items = |n: usize| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>();
        assert_eq!(join_and(&items(0)), "");
        assert_eq!(join_and(&items(1)), "1");
        assert_eq!(join_and(&items(2)), "1 and 2");
        assert_eq!(join_and(&items(3)), "1, 2 and 3");
    }

    /// A QUIC connection that resumed with 0-RTT accepted and took `quic` of setup.
    fn zero_rtt(n: u32, quic: u64) -> Attempt {
        let mut resumed = fresh(n, 0, 0, 0, 1_000);
        resumed.phases.quic = crate::fixture::span(0, quic);
        resumed.quic = Some(crate::schema::QuicInfo {
            zero_rtt_accepted: Some(true),
            ..crate::schema::QuicInfo::default()
        });
        resumed
    }

    #[test]
    fn one_full_handshake_is_no_resumption_saving() {
        // --resumed: one full handshake (3 ms of setup), then resumed connections at 0.3 ms.
        let mut r = result(vec![run(
            Protocol::H3,
            vec![
                fresh(1, 0, 1_000, 2_000, 1_000),
                zero_rtt(2, 300),
                zero_rtt(3, 310),
                zero_rtt(4, 290),
                zero_rtt(5, 300),
            ],
        )]);
        r.options.mode = ConnectionMode::Resumed;
        let f = diagnose(&r);
        assert!(!ids(&f).contains(&"resumption_saving"), "{:?}", ids(&f));
        let seen = find(&f, "resumption_seen");
        assert_eq!(
            seen.title,
            "h3: 4 connection(s) resumed the TLS session, with 0-RTT"
        );
        assert_eq!(seen.evidence.duration, None, "no figure is a saving");
        let detail = &seen.evidence.detail;
        assert!(detail.starts_with("Too few full handshakes"), "{detail}");
        assert!(
            detail.contains("1 full handshake(s) took a median 3.00 ms"),
            "{detail}"
        );
        assert!(
            detail.contains("4 of them sent the request in 0-RTT"),
            "{detail}"
        );
        assert!(
            seen.next_step.contains("--arms cold,resumed")
                && !seen.next_step.contains("more rounds:"),
            "advice that can help under --resumed: {}",
            seen.next_step
        );
    }

    #[test]
    fn resumption_saving_over_enough_full_handshakes() {
        // Four full handshakes of about 3 ms against resumed ones of about 0.3 ms.
        let mut attempts: Vec<Attempt> = [2_000, 2_100, 1_900, 2_000]
            .into_iter()
            .zip(1..)
            .map(|(tls, n)| fresh(n, 0, 1_000, tls, 1_000))
            .collect();
        attempts.extend(
            [300, 310, 290, 305]
                .into_iter()
                .zip(5..)
                .map(|(q, n)| zero_rtt(n, q)),
        );
        let r = result(vec![run(Protocol::H3, attempts)]);
        let f = diagnose(&r);
        let saving = find(&f, "resumption_saving");
        assert_eq!(saving.evidence.duration, Some(Micros(2_700)));
        assert!(saving.evidence.detail.contains("4 full handshake(s)"));
        assert!(
            saving
                .evidence
                .detail
                .contains("4 of them sent the request in 0-RTT")
        );

        // The same handshakes with a spread larger than half the difference: seen, no figure.
        let mut noisy = r.clone();
        noisy.runs[0].attempts[1] = fresh(2, 0, 1_000, 600, 1_000);
        noisy.runs[0].attempts[2] = fresh(3, 0, 1_000, 4_000, 1_000);
        let f = diagnose(&noisy);
        assert!(!ids(&f).contains(&"resumption_saving"), "{:?}", ids(&f));
        assert!(
            find(&f, "resumption_seen")
                .evidence
                .detail
                .starts_with("No saving beyond the floor and the spread")
        );
    }
}
