//! End-to-end tests of the connection arms: cold (full handshake each time)
//! against resumed (TLS session tickets over TCP; session resumption and
//! 0-RTT over QUIC), for all three protocols.

use crate::support::{SERIAL, probe, run};
use h123_shared::network::NetworkProfile;
use h123_shared::{Attempt, ConnectionMode, Phase, Protocol};
use h123_target::{TargetConfig, TestTarget};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_connections_skip_the_full_handshake() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    // 9 attempts: a full handshake, then 8 resumptions, one per ticket of the first handshake
    // (the target sends 8; rustls's client keeps at most 8 per server). A 0-RTT connection may
    // close before its own new tickets arrive, so a tenth attempt could find none left.
    let arm = |mode| {
        move |o: &mut h123_shared::ProbeOptions| {
            o.mode = mode;
            o.repeat = 9;
        }
    };
    let cold = probe(&target, arm(ConnectionMode::Cold)).await;
    let resumed = probe(&target, arm(ConnectionMode::Resumed)).await;
    for protocol in Protocol::ALL {
        let (cold, resumed) = (run(&cold, protocol), run(&resumed, protocol));
        for a in cold.attempts.iter().chain(&resumed.attempts) {
            assert!(
                a.failure.is_none(),
                "{protocol} #{}: {:?}",
                a.attempt,
                a.failure
            );
            assert!(
                !a.connection.as_ref().unwrap().reused,
                "every arm attempt is a new connection"
            );
        }
        assert!(
            cold.attempts
                .iter()
                .all(|a| !a.tls.as_ref().unwrap().resumed)
        );
        let first = &resumed.attempts[0];
        assert!(
            !first.tls.as_ref().unwrap().resumed,
            "nothing to resume yet"
        );
        for a in &resumed.attempts[1..] {
            assert!(
                a.tls.as_ref().unwrap().resumed,
                "{protocol} #{} resumed",
                a.attempt
            );
            if protocol == Protocol::H3 {
                let quic = a.quic.as_ref().unwrap();
                assert_eq!(
                    quic.zero_rtt_accepted,
                    Some(true),
                    "{protocol} #{} 0-RTT",
                    a.attempt
                );
            }
        }
        assert_eq!(first.quic.as_ref().and_then(|q| q.zero_rtt_accepted), None);
        // No figure is compared here: over loopback a resumed TLS 1.3 handshake saves only
        // the certificate's signature and its check (tens of microseconds with P-256), less
        // than what a busy machine adds to any one handshake. What resumption saves in round
        // trips is measured where a round trip costs something (tests/e2e/netem.rs).
    }
}

/// Time from the start of the connection to the response's first byte.
fn to_first_byte_ms(attempt: &Attempt) -> f64 {
    [Phase::Quic, Phase::Send, Phase::Wait]
        .into_iter()
        .filter_map(|phase| attempt.phases.get(phase))
        .map(|span| span.duration().as_ms())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_rtt_saves_the_handshakes_round_trip() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let arm = |mode| {
        move |o: &mut h123_shared::ProbeOptions| {
            o.protocols = vec![Protocol::H3];
            o.mode = mode;
            o.repeat = 5;
            o.network = Some(NetworkProfile::parse("rtt=60ms").unwrap());
        }
    };
    let cold = probe(&target, arm(ConnectionMode::Cold)).await;
    let resumed = probe(&target, arm(ConnectionMode::Resumed)).await;
    let median = |attempts: &[Attempt]| {
        let mut values: Vec<f64> = attempts.iter().map(to_first_byte_ms).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let full = median(&run(&cold, Protocol::H3).attempts);
    let early = &run(&resumed, Protocol::H3).attempts[1..];
    assert!(
        early
            .iter()
            .all(|a| { a.quic.as_ref().and_then(|q| q.zero_rtt_accepted) == Some(true) })
    );
    let early = median(early);
    println!("first byte after {full:.1} ms cold, {early:.1} ms with 0-RTT");
    // Cold: the handshake's round trip, then the request's. 0-RTT: the request rides the
    // first flight, one round trip in all. Each is allowed a quarter of a round trip.
    assert!(
        (full - 120.0).abs() < 15.0,
        "cold: {full:.1} ms, expected 120"
    );
    assert!(
        (early - 60.0).abs() < 15.0,
        "0-RTT: {early:.1} ms, expected 60"
    );
}
