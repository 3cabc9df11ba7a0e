use super::*;
use crate::diagnosis::diagnose;
use crate::network::NetworkProfile;
use crate::schema::{FailureKind, Phase};

fn stream(first_byte_ms: u64, done_ms: u64) -> StreamTiming {
    StreamTiming {
        first_byte_us: Some(Micros(first_byte_ms * 1000)),
        done_us: Micros(done_ms * 1000),
        status: Some(200),
        body_bytes: 100,
        failure: None,
    }
}

fn burst(connections: u32, done_ms: &[u64]) -> StreamBurst {
    StreamBurst {
        connections,
        setup_us: Micros(1000),
        streams: done_ms.iter().map(|&d| stream(d / 2, d)).collect(),
        failure: None,
    }
}

fn result(h2: StreamBurst, h3: StreamBurst, loss: &str) -> ProbeResult {
    let mut result = ProbeResult::empty(
        crate::ProbeOptions {
            protocols: vec![Protocol::H2, Protocol::H3],
            network: Some(NetworkProfile::parse(loss).unwrap()),
            streams: Some(4),
            ..crate::ProbeOptions::default()
        },
        0,
        None,
    );
    for (protocol, burst) in [(Protocol::H2, h2), (Protocol::H3, h3)] {
        result.runs.push(ProtocolRun {
            streams: Some(burst),
            ..ProtocolRun::empty(protocol)
        });
    }
    result
}

#[test]
fn the_spread_counts_only_streams_that_succeeded() {
    let mut b = burst(1, &[40, 10, 30, 20, 50]);
    b.streams[4].status = Some(502);
    b.streams.push(StreamTiming {
        done_us: Micros(5_000),
        failure: Some(crate::schema::Failure {
            phase: Phase::Receive,
            kind: FailureKind::Reset,
            message: "stream reset".into(),
        }),
        ..StreamTiming::default()
    });
    let s = spread(&b).unwrap();
    assert_eq!((s.done, s.sent), (4, 6));
    assert_eq!((s.first, s.last), (Micros(10_000), Micros(40_000)));
    assert_eq!(s.median, Micros(30_000));
    assert_eq!(
        describe(Protocol::H2, &b),
        "HTTP/2: 6 requests at once over 1 connection finished between 10.0 ms and 40.0 ms (median 30.0 ms); 2 failed"
    );
    assert!(spread(&StreamBurst::default()).is_none());
    let mut moved = burst(1, &[10, 20]);
    moved.streams[0].status = Some(301);
    assert!(
        describe(Protocol::H3, &moved).ends_with("; answered 301, not followed"),
        "a redirect is not read as the resource"
    );
}

#[test]
fn a_burst_that_could_not_start_or_succeed_says_why() {
    let not_sent = StreamBurst {
        connections: 4,
        failure: Some(crate::schema::Failure {
            phase: Phase::Connect,
            kind: FailureKind::Refused,
            message: "connection refused".into(),
        }),
        ..StreamBurst::default()
    };
    assert_eq!(
        describe(Protocol::H1, &not_sent),
        "HTTP/1.1: requests at once not sent: connection refused"
    );
    let mut errors = burst(1, &[10, 20]);
    for s in &mut errors.streams {
        s.status = Some(503);
    }
    assert_eq!(
        describe(Protocol::H3, &errors),
        "HTTP/3: none of 2 requests at once over 1 connection succeeded: HTTP 503"
    );
}

#[test]
fn the_chart_puts_every_burst_on_one_axis() {
    let r = result(burst(1, &[100, 200]), burst(1, &[50, 400]), "loss=1%");
    let (end, groups) = layout(&r);
    assert_eq!(end, Micros(400_000));
    assert_eq!(groups.len(), 2);
    let h2 = &groups[0].1;
    assert_eq!(h2[1].done, 0.5);
    assert_eq!(h2[1].first_byte, Some(0.25));
    assert!(h2[1].ok);
    assert_eq!(h2[1].label, "request 2: first byte 100 ms · done 200 ms");
}

#[test]
fn http3_finishing_clearly_sooner_under_loss_is_head_of_line_blocking() {
    let r = result(
        burst(1, &[240, 245, 250, 250]),
        burst(1, &[40, 45, 50, 180]),
        "rtt=20ms,loss=2%",
    );
    let found = diagnose(&r);
    let f = found
        .iter()
        .find(|f| f.id == "streams_h3_sooner")
        .expect("the finding");
    assert!(
        f.next_step.contains("head-of-line blocking"),
        "{}",
        f.next_step
    );
    assert!(
        f.evidence
            .detail
            .starts_with("Of 4 requests sent at once, HTTP/3's finished by 180 ms")
    );
    assert_eq!(f.evidence.protocol, Protocol::H3);
}

#[test]
fn overlapping_streams_are_not_called_and_no_loss_is_not_blamed() {
    let overlapping = result(
        burst(1, &[40, 60, 80, 100]),
        burst(1, &[50, 70, 90, 110]),
        "loss=2%",
    );
    assert!(
        diagnose(&overlapping)
            .iter()
            .all(|f| !f.id.starts_with("streams_"))
    );
    let clean = result(
        burst(1, &[10, 11, 12, 13]),
        burst(1, &[20, 21, 22, 23]),
        "rtt=5ms",
    );
    let found = diagnose(&clean);
    let f = found.iter().find(|f| f.id == "streams_h2_sooner").unwrap();
    assert!(
        f.next_step.contains("not head-of-line blocking"),
        "{}",
        f.next_step
    );
}
