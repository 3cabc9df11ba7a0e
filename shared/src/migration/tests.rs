use super::*;
use crate::fixture::{fresh, reused, run};
use crate::schema::Protocol;

fn moved(survived: bool, answered: Option<u64>) -> Migration {
    Migration {
        to: Migrate::Port,
        from_addr: "127.0.0.1:40000".into(),
        to_addr: "127.0.0.1:40001".into(),
        after_bytes: 12_288,
        at_us: Micros(3_000),
        answered_after_us: answered.map(Micros),
        path_challenges: 1,
        path_responses: 1,
        survived,
    }
}

fn result_with(migration: Migration) -> ProbeResult {
    let mut first_h3 = fresh(1, 0, 0, 0, 900);
    first_h3.phases.connect = None;
    first_h3.phases.tls = None;
    first_h3.migration = Some(migration);
    let mut result = crate::fixture::result(vec![
        run(
            Protocol::H2,
            vec![fresh(1, 100, 1_000, 2_000, 900), reused(2, 900)],
        ),
        run(Protocol::H3, vec![first_h3, reused(2, 900)]),
    ]);
    result.options.migrate = Some(Migrate::Port);
    result
}

#[test]
fn the_text_form_is_port_or_an_address() {
    assert_eq!("port".parse(), Ok(Migrate::Port));
    assert_eq!(" Port ".parse(), Ok(Migrate::Port));
    let v4: Migrate = "127.0.0.2".parse().unwrap();
    assert_eq!(v4.local_ip(), Ok(Some([127, 0, 0, 2].into())));
    let v6: Migrate = "[::1]".parse().unwrap();
    assert_eq!(v6.to_string(), "::1");
    assert_eq!(
        v6.local_ip(),
        Ok(Some(std::net::Ipv6Addr::LOCALHOST.into()))
    );
    assert_eq!(Migrate::Port.local_ip(), Ok(None));
    let refused = "wifi".parse::<Migrate>().unwrap().local_ip().unwrap_err();
    assert!(
        refused.contains("`wifi` is neither `port` nor a local IP address"),
        "{refused}"
    );
    assert!("[]".parse::<Migrate>().is_err());
    assert_eq!(serde_json::to_string(&v4).unwrap(), "\"127.0.0.2\"");
    assert_eq!(
        serde_json::from_str::<Migrate>("\"port\"").unwrap(),
        Migrate::Port
    );
    assert!(serde_json::from_str::<Migrate>("\"\"").is_err());
}

#[test]
fn a_move_that_survived_reads_as_one() {
    let text = moved(true, Some(420)).describe();
    assert_eq!(
        text,
        "moved from 127.0.0.1:40000 to 127.0.0.1:40001 after 12,288 body bytes; the server \
         answered on the new path after 0.42 ms and checked it (1 PATH_CHALLENGE received, \
         1 PATH_RESPONSE sent); \
         the connection survived"
    );
    let lost = moved(false, None).describe();
    assert!(lost.contains("nothing came back on the new path"), "{lost}");
    assert!(lost.contains("did not survive"), "{lost}");
    assert!(!lost.contains("survived;"), "{lost}");
}

#[test]
fn tcp_protocols_show_what_a_new_connection_costs() {
    let result = result_with(moved(true, Some(420)));
    let h2 = &result.runs[0];
    // connect 1 ms + TLS 2 ms + send 0.05 ms + wait 0.9 ms; DNS is not paid again.
    assert_eq!(reconnect_cost(h2), Some(Micros(3_950)));
    let lines = lines(&result);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[0].starts_with(
            "Connection migration: each new HTTP/3 connection moves to a new UDP port"
        )
    );
    assert!(
        lines[1].starts_with("HTTP/2 cannot move a connection"),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains("3.95 ms here"), "{}", lines[1]);
    assert!(
        lines[2].starts_with("HTTP/3 attempt 1: moved from"),
        "{}",
        lines[2]
    );
    let mut plain = result.clone();
    plain.options.migrate = None;
    assert!(super::lines(&plain).is_empty());
}

#[test]
fn findings_tell_a_survived_move_from_a_lost_one() {
    let survived = crate::diagnosis::diagnose(&result_with(moved(true, Some(420))));
    let found = survived
        .iter()
        .find(|f| f.id == "h3_migration_survived")
        .expect("a survived move is explained");
    assert_eq!(
        found.title,
        "HTTP/3 kept its connection through a move after a pause of 0.42 ms"
    );
    assert!(
        found.next_step.contains("3.95 ms on HTTP/2"),
        "{}",
        found.next_step
    );
    assert!(survived.iter().all(|f| f.id != "h3_migration_failed"));

    let mut lost = result_with(moved(false, None));
    lost.runs[1].attempts[0].failure = Some(crate::Failure {
        phase: crate::Phase::Receive,
        kind: crate::FailureKind::Timeout,
        message: "nothing came back".into(),
    });
    let findings = crate::diagnosis::diagnose(&lost);
    let found = findings
        .iter()
        .find(|f| f.id == "h3_migration_failed")
        .expect("a lost connection is a warning");
    assert_eq!(found.severity, crate::diagnosis::Severity::Warning);
    assert!(found.evidence.detail.contains("did not survive"));
    assert!(findings.iter().all(|f| f.id != "h3_migration_survived"));
}

#[test]
fn the_waterfall_marks_where_the_connection_moved() {
    let result = result_with(moved(true, Some(420)));
    let layout = crate::waterfall::layout(&result);
    let h3_first = layout
        .rows
        .iter()
        .find(|r| r.protocol == Protocol::H3 && r.attempt == 1)
        .unwrap();
    let x = h3_first.moved.expect("the move is marked");
    let expected = 3_000.0 / layout.axis_us.0 as f64;
    assert!((x - expected).abs() < 1e-9, "{x} vs {expected}");
    assert!(
        layout
            .rows
            .iter()
            .filter(|r| !(r.protocol == Protocol::H3 && r.attempt == 1))
            .all(|r| r.moved.is_none())
    );
}
