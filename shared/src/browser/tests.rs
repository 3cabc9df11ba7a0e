use super::*;
use crate::fixture::{fresh, result, reused, run};

/// A visible entry: `dns`, `connect`, `tls` and `wait` long (ms), 1 ms of body, at page time 100.
fn marks(protocol: &str, dns: f64, connect: f64, tls: f64, wait: f64) -> Marks {
    let start = 100.0;
    let dns_end = start + dns;
    let connect_end = dns_end + connect + tls;
    let request_start = connect_end;
    Marks {
        start,
        dns_start: start,
        dns_end,
        connect_start: dns_end,
        secure_start: if tls > 0.0 { dns_end + connect } else { 0.0 },
        connect_end,
        request_start,
        response_start: request_start + wait,
        response_end: request_start + wait + 1.0,
        protocol: protocol.to_owned(),
    }
}

/// A hidden entry (no Timing-Allow-Origin): only start and end.
fn hidden(total: f64) -> Marks {
    Marks {
        start: 50.0,
        response_end: 50.0 + total,
        ..Marks::default()
    }
}

fn browser(attempts: Vec<BrowserAttempt>) -> BrowserRun {
    BrowserRun {
        user_agent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.85 Safari/537.36".into(),
        measured_at_unix_ms: 1,
        attempts,
        finding: None,
    }
}

#[test]
fn entries_become_phases_on_the_request_clock() {
    let new = BrowserAttempt::from_marks(&marks("h2", 2.0, 1.0, 3.0, 40.0));
    assert_eq!(new.protocol.as_deref(), Some("h2"));
    assert_eq!(new.http(), Some(Protocol::H2));
    assert_eq!(new.state(), Some(ConnState::New));
    assert_eq!(new.total_us, Micros(47_000));
    let phases: Vec<(Phase, u64, u64)> = new
        .phases
        .iter()
        .map(|p| (p.phase, p.start_us.0, p.end_us.0))
        .collect();
    assert_eq!(
        phases,
        [
            (Phase::Dns, 0, 2_000),
            (Phase::Connect, 2_000, 3_000),
            (Phase::Tls, 3_000, 6_000),
            (Phase::Wait, 6_000, 46_000),
            (Phase::Receive, 46_000, 47_000),
        ]
    );
    // A reused connection: every connection mark equals the start.
    let again = BrowserAttempt::from_marks(&marks("h2", 0.0, 0.0, 0.0, 40.0));
    assert_eq!(again.state(), Some(ConnState::Reused));
    assert_eq!(again.phases.len(), 2);
    // HTTP/3: the handshake is QUIC's, one phase.
    let quic = BrowserAttempt::from_marks(&marks("h3", 1.0, 0.0, 5.0, 10.0));
    assert_eq!(quic.http(), Some(Protocol::H3));
    assert_eq!(quic.phases[1].phase, Phase::Quic);
    assert_eq!(quic.phases[1].end_us, Micros(6_000));
    // A request sent before the handshake ended (0-RTT) waits from the handshake's end.
    let mut early = marks("h3", 0.0, 0.0, 5.0, 10.0);
    early.request_start -= 3.0;
    let early = BrowserAttempt::from_marks(&early);
    assert_eq!(
        (early.phases[1].phase, early.phases[1].start_us),
        (Phase::Wait, Micros(5_000))
    );
    assert!(browser(vec![new, again, quic, early]).check().is_ok());
}

#[test]
fn a_hidden_entry_keeps_only_its_total() {
    let a = BrowserAttempt::from_marks(&hidden(42.5));
    assert_eq!(a.total_us, Micros(42_500));
    assert!(!a.visible());
    assert_eq!(
        (a.protocol.as_ref(), a.state(), a.phases.len()),
        (None, None, 0)
    );
    let failed = BrowserAttempt::failed(3.0, &"x".repeat(500));
    assert_eq!(failed.error.as_ref().map(|e| e.len()), Some(MAX_ERROR));
    let run = browser(vec![a, failed]);
    assert!(run.check().is_ok());
    assert_eq!(
        run.span(),
        Micros(42_500),
        "a failure does not stretch the axis"
    );
    let rows = rows(&run, Micros(100_000));
    assert!(rows[0].hidden && !rows[0].failed);
    assert!((rows[0].width - 0.425).abs() < 1e-9);
    assert!(rows[1].failed && !rows[1].hidden);
    assert!(
        rows[1]
            .description
            .starts_with("Request 2 from the owner's browser (failed: xxx")
    );
}

#[test]
fn what_a_client_may_not_send_is_named() {
    let good = BrowserAttempt::from_marks(&marks("h2", 2.0, 1.0, 3.0, 40.0));
    let refused = |change: fn(&mut BrowserRun)| {
        let mut run = browser(vec![good.clone()]);
        change(&mut run);
        run.check().unwrap_err()
    };
    assert!(refused(|r| r.attempts.clear()).contains("1 to 10"));
    assert!(refused(|r| r.attempts = vec![r.attempts[0].clone(); 11]).contains("got 11"));
    assert!(refused(|r| r.attempts[0].total_us = Micros(200_000_000)).contains("total_us"));
    assert!(refused(|r| r.attempts[0].protocol = Some("<script>".into())).contains("protocol"));
    assert!(refused(|r| r.attempts[0].phases[0].phase = Phase::Send).contains("no send phase"));
    assert!(refused(|r| r.attempts[0].phases.swap(0, 1)).contains("timeline order"));
    assert!(
        refused(|r| r.attempts[0].phases[4].end_us = Micros(48_000)).contains("within the total")
    );
    assert!(refused(|r| r.attempts[0].reused = None).contains("phases come with reused"));
    assert!(refused(|r| r.attempts[0].error = Some("x".into())).contains("failed request"));
}

#[test]
fn rows_sit_on_the_given_axis() {
    let run = browser(vec![BrowserAttempt::from_marks(&marks(
        "h2", 2.0, 1.0, 3.0, 40.0,
    ))]);
    let row = &rows(&run, Micros(100_000))[0];
    assert_eq!(row.label, "#1");
    assert!(
        row.description
            .contains("(h2, new connection): total 47.0 ms"),
        "{}",
        row.description
    );
    assert_eq!(row.bars.len(), 5);
    assert!((row.bars[3].x - 0.06).abs() < 1e-9 && (row.bars[3].width - 0.4).abs() < 1e-9);
    assert_eq!(run.browser_name(), "Headless Chrome 131");
}

/// The server's result: four new HTTP/2 connections then four reused, waits in µs.
fn server(new_wait: u64, reused_wait: u64) -> ProbeResult {
    let mut attempts: Vec<_> = (1..=4)
        .map(|n| fresh(n, 1_000, 1_000, 3_000, new_wait + u64::from(n) * 100))
        .collect();
    attempts.extend((5..=8).map(|n| reused(n, reused_wait + u64::from(n) * 100)));
    result(vec![run(Protocol::H2, attempts)])
}

#[test]
fn like_is_compared_with_like_and_called_beyond_the_spread() {
    // Server (4 of each): new 15.75 ms, reused 11.15 ms (medians). Browser: one new at 47 ms,
    // four reused at 41.0 to 41.3 ms. Only the reused ones are enough to call a difference.
    let s = server(10_000, 10_000);
    let mut attempts = vec![BrowserAttempt::from_marks(&marks(
        "h2", 2.0, 1.0, 3.0, 40.0,
    ))];
    attempts.extend((0..4).map(|i| {
        BrowserAttempt::from_marks(&marks("h2", 0.0, 0.0, 0.0, 40.0 + f64::from(i) * 0.1))
    }));
    let f = compare(&browser(attempts), &s);
    assert!(
        f.summary.starts_with(
            "The probe owner's browser (over HTTP/2) is slower than the server's HTTP/2: "
        ),
        "{}",
        f.summary
    );
    let line = &f.lines[0];
    assert!(
        line.contains("on a new connection the owner's browser's median is 47.0 ms (n=1)"),
        "{line}"
    );
    assert!(
        line.contains("on a reused connection the owner's browser's median is 41.1 ms (n=4)"),
        "{line}"
    );
    assert!(line.contains("slower by"), "{line}");
    let (new, reused) = line.split_once("; ").unwrap();
    assert!(
        !new.contains("owner's browser is"),
        "one new attempt calls nothing: {line}"
    );
    assert!(
        reused.contains("(n=4): the owner's browser is slower by"),
        "{line}"
    );

    // The same figures as the server's: nothing called.
    let same: Vec<_> = [15.6, 15.8, 15.9, 16.0]
        .iter()
        .map(|w| BrowserAttempt::from_marks(&marks("h2", 1.0, 1.0, 3.0, *w - 6.0)))
        .collect();
    let f = compare(&browser(same), &s);
    assert!(
        f.summary
            .starts_with("The probe owner's browser's totals are within the noise"),
        "{}",
        f.summary
    );
    assert!(
        f.lines[0].contains("no difference beyond the noise"),
        "{}",
        f.lines[0]
    );
}

#[test]
fn hidden_totals_are_placed_between_the_servers_new_and_reused() {
    let s = server(10_000, 10_000); // new 15.75 ms, reused 11.15 ms (medians)
    let between = browser(
        (0..4)
            .map(|i| BrowserAttempt::from_marks(&hidden(12.0 + f64::from(i))))
            .collect(),
    );
    let f = compare(&between, &s);
    assert!(
        f.lines[0].contains("within what the server measured"),
        "{}",
        f.lines[0]
    );
    assert!(
        f.summary.contains("sends no Timing-Allow-Origin"),
        "{}",
        f.summary
    );
    let slow = |n: u32| {
        browser(
            (0..n)
                .map(|i| BrowserAttempt::from_marks(&hidden(90.0 + f64::from(i))))
                .collect(),
        )
    };
    let f = compare(&slow(4), &s);
    assert!(
        f.lines[0].contains("slower even than the server's new connections"),
        "{}",
        f.lines[0]
    );
    // Three hidden totals are too few to call the same gap.
    let f = compare(&slow(3), &s);
    assert!(!f.lines[0].contains("owner's browser is"), "{}", f.lines[0]);
    assert!(!f.summary.contains("is slower than"), "{}", f.summary);
    let failed = browser(vec![BrowserAttempt::failed(
        1.0,
        "TypeError: Failed to fetch",
    )]);
    assert!(
        compare(&failed, &s)
            .summary
            .contains("completed no request")
    );
}

#[test]
fn a_stored_run_reads_back() {
    let mut run = browser(vec![
        BrowserAttempt::from_marks(&marks("h3", 1.0, 0.0, 5.0, 10.0)),
        BrowserAttempt::from_marks(&hidden(3.0)),
    ]);
    run.finding = Some(compare(&run, &server(1_000, 1_000)));
    let json = serde_json::to_string(&run).unwrap();
    assert_eq!(serde_json::from_str::<BrowserRun>(&json).unwrap(), run);
    assert!(!json.contains("\"reused\":null"), "{json}");
}

#[test]
fn the_origins_a_measurement_may_reach() {
    let mut hop = fresh(1, 1, 1, 1, 1);
    hop.url = "http://Example.com/a".into();
    let mut second = fresh(1, 1, 1, 1, 1);
    second.url = "https://[::1]:8443/b".into();
    let mut odd = fresh(1, 1, 1, 1, 1);
    odd.url = "ftp://x/".into();
    let mut record = crate::api::ProbeRecord {
        created_at_unix_ms: 0,
        options: crate::schema::ProbeOptions {
            url: "https://127.0.0.1:4433/start".into(),
            ..crate::schema::ProbeOptions::default()
        },
        ..crate::fixture::record(
            "x",
            crate::api::ProbeStatus::Done,
            result(vec![run(Protocol::H2, vec![hop, second, odd])]),
        )
    };
    assert_eq!(
        origins(&record),
        [
            "https://127.0.0.1:4433",
            "http://example.com:80",
            "https://[::1]:8443"
        ]
    );
    record.options.url = "https://a b/".into();
    assert!(!origins(&record).iter().any(|o| o.contains(' ')));
}

#[test]
fn the_measuring_page_is_asked_for_by_its_query() {
    assert!(asks_to_measure("?measure=browser"));
    assert!(asks_to_measure("a=1&measure=browser"));
    assert!(!asks_to_measure("?measure=browsers"));
    assert!(!asks_to_measure(""));
}

#[test]
fn an_implausible_measurement_is_not_drawn_as_a_finding() {
    use crate::browser::plausible::implausible;
    // The server's HTTP/1.1-only finding of a 300 ms target: HTTP/3 measured and not available.
    let mut result = result(vec![
        run(Protocol::H1, vec![fresh(1, 1_000, 1_000, 3_000, 300_000)]),
        run(Protocol::H3, Vec::new()),
    ]);
    result.runs[1].skipped = Some("HTTP/3 not advertised".into());
    let fake = |protocol: &str, wait_ms: f64| {
        browser(
            (0..5)
                .map(|_| BrowserAttempt::from_marks(&marks(protocol, 0.1, 0.1, 0.1, wait_ms)))
                .collect(),
        )
    };
    let h3_fast = fake("h3", 0.5);
    let why = implausible(&h3_fast, &result).expect("implausible");
    assert!(
        why.contains("HTTP/3, which the probe found unavailable"),
        "{why}"
    );
    let finding = compare(&h3_fast, &result);
    assert!(finding.implausible && finding.lines.is_empty());
    assert!(
        finding.summary.starts_with("Not compared:"),
        "{}",
        finding.summary
    );
    let h1_fast = fake("http/1.1", 0.5);
    let why = implausible(&h1_fast, &result).expect("implausible");
    assert!(why.contains("over 10 times faster"), "{why}");
    // A browser a few times faster (closer to the target) is plausible.
    let h1_near = fake("http/1.1", 100.0);
    assert_eq!(implausible(&h1_near, &result), None);
    assert!(!compare(&h1_near, &result).implausible);
}
