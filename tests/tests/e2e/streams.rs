//! Requests at once (`streams`) against the real target, over HTTP/1.1, HTTP/2 and HTTP/3:
//! they really go together (eight requests that each wait 200 ms end within one wait, not eight),
//! over one connection for HTTP/2 and HTTP/3 and eight for HTTP/1.1; and under loss every stream
//! completes as TCP and QUIC recover, each one timed.

use crate::support::{SERIAL, probe, run};
use h123_shared::network::NetworkProfile;
use h123_shared::streams::{describe, spread};
use h123_shared::{Micros, Protocol};
use h123_target::{TargetConfig, TestTarget};

const ALL: [Protocol; 3] = [Protocol::H1, Protocol::H2, Protocol::H3];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_at_once_go_together_each_timed() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let result = probe(&target, |o| {
        o.url = target.https_url("/delay/200");
        o.repeat = 1;
        o.streams = Some(8);
    })
    .await;
    for protocol in ALL {
        let burst = run(&result, protocol).streams.as_ref().expect("a burst");
        println!("{}", describe(protocol, burst));
        let expected_connections = if protocol == Protocol::H1 { 8 } else { 1 };
        assert_eq!(burst.connections, expected_connections, "{protocol}");
        assert_eq!(burst.streams.len(), 8, "{protocol}");
        for s in &burst.streams {
            assert!(s.succeeded(), "{protocol}: {s:?}");
            assert!(s.first_byte_us.unwrap() <= s.done_us, "{protocol}: {s:?}");
        }
        let s = spread(burst).unwrap();
        assert!(s.first >= Micros(200_000), "{protocol}: each waited: {s:?}");
        // One after another they would take 1.6 s.
        assert!(
            s.last < Micros(800_000),
            "{protocol}: sent together, they end together: {s:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_loss_every_stream_completes_and_is_timed() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let size = 100_000u64;
    let result = probe(&target, |o| {
        o.url = target.https_url(&format!("/bytes/{size}"));
        o.repeat = 1;
        o.streams = Some(16);
        o.timeout_ms = 60_000;
        o.phase_timeout_ms = 60_000;
        o.network = Some(NetworkProfile::parse("rtt=20ms,loss=2%").unwrap());
    })
    .await;
    for line in h123_shared::streams::lines(&result) {
        println!("{line}");
    }
    for protocol in ALL {
        let run = run(&result, protocol);
        let burst = run.streams.as_ref().expect("a burst");
        assert_eq!(burst.streams.len(), 16, "{protocol}");
        for s in &burst.streams {
            assert!(s.succeeded(), "{protocol}: {s:?}");
            assert_eq!(s.body_bytes, size, "{protocol}: every byte arrives");
        }
        let path = run.emulated.as_ref().expect("emulated");
        assert!(path.down.lost > 0, "{protocol}: the link dropped packets");
        let s = spread(burst).unwrap();
        println!(
            "{protocol}: p25 {} median {} p75 {} last {}",
            s.p25.as_ms(),
            s.median.as_ms(),
            s.p75.as_ms(),
            s.last.as_ms()
        );
    }
    let findings: Vec<String> = h123_shared::diagnosis::diagnose(&result)
        .into_iter()
        .filter(|f| f.id.starts_with("streams_"))
        .map(|f| format!("{}: {} ({})", f.id, f.title, f.evidence.detail))
        .collect();
    println!("{findings:?}");
}
