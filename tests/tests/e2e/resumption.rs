//! End-to-end tests of the connection arms: cold (full handshake each time)
//! against resumed (TLS session tickets over TCP; session resumption and
//! 0-RTT over QUIC), for all three protocols.

use crate::support::{SERIAL, probe, run};
use h123_shared::{Attempt, ConnectionMode, Phase, Protocol};
use h123_target::{TargetConfig, TestTarget};

fn handshake_ms(attempt: &Attempt, protocol: Protocol) -> f64 {
    let phase = if protocol == Protocol::H3 {
        Phase::Quic
    } else {
        Phase::Tls
    };
    attempt
        .phases
        .get(phase)
        .expect("a new connection")
        .duration()
        .as_ms()
}

/// The fastest of `values`: the handshake least disturbed by whatever else
/// the two cores were doing (the median of sub-millisecond handshakes moves
/// with the machine's load).
fn fastest(values: Vec<f64>) -> f64 {
    values.into_iter().fold(f64::INFINITY, f64::min)
}

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
        let full = fastest(
            cold.attempts
                .iter()
                .map(|a| handshake_ms(a, protocol))
                .collect(),
        );
        let short = fastest(
            resumed.attempts[1..]
                .iter()
                .map(|a| handshake_ms(a, protocol))
                .collect(),
        );
        println!("{protocol}: fastest handshake cold {full:.3} ms, resumed {short:.3} ms");
        assert!(
            short < full,
            "{protocol}: resumed {short:.3} ms is not shorter than cold {full:.3} ms"
        );
    }
}
