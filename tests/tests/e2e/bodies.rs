//! End-to-end tests of request bodies against the real test target: a body
//! arrives whole over h1, h2 and h3, a server that reads it late holds the
//! `send` phase, redirects keep or drop it as curl -L does, and a POST never
//! leaves as HTTP/3 0-RTT early data.

use crate::support::{SERIAL, probe, run};
use h123_shared::{Attempt, ConnectionMode, Method, ProbeOptions, Protocol, RequestBody};
use h123_target::upload::{BYTES_HEADER, HELD_HEADER, SHA256_HEADER};
use h123_target::{TargetConfig, TestTarget};
use sha2::{Digest, Sha256};

/// One megabyte (10^6 bytes) of a fixed, non-repeating-looking pattern, as base64.
fn megabyte() -> (Vec<u8>, String) {
    let bytes: Vec<u8> = (0..1_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let hash = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    (bytes, hash)
}

fn binary(bytes: &[u8]) -> RequestBody {
    RequestBody {
        base64: Some(h123_shared::base64::encode(bytes)),
        content_type: Some("application/octet-stream".into()),
        ..RequestBody::default()
    }
}

fn header<'a>(attempt: &'a Attempt, name: &str) -> Option<&'a str> {
    attempt.response.as_ref()?.header(name)
}

fn send_ms(attempt: &Attempt) -> f64 {
    attempt
        .phases
        .send
        .expect("a send phase")
        .duration()
        .as_ms()
}

/// How long the target held the body unread, by its own clock.
fn held_ms(attempt: &Attempt) -> f64 {
    let us: f64 = header(attempt, HELD_HEADER.as_str())
        .and_then(|v| v.parse().ok())
        .expect("the target reports its hold");
    us / 1000.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The `/upload` URL for `protocol`: h1 goes to the narrow listener (on
/// loopback, default socket buffers take a whole megabyte before the server
/// reads a byte), h2 and h3 to the main one (their flow-control windows hold
/// the sender).
fn upload_url(target: &TestTarget, protocol: Protocol, delay_ms: u64) -> String {
    let path = format!("/upload?read_delay_ms={delay_ms}");
    match protocol {
        Protocol::H1 => target.narrow_url(&path),
        _ => target.https_url(&path),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_reader_holds_send_and_the_body_arrives_whole() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let (bytes, hash) = megabyte();
    const DELAY_MS: u64 = 50;
    for protocol in Protocol::ALL {
        let mut sends = Vec::new();
        let mut offs = Vec::new();
        for delay_ms in [0, DELAY_MS] {
            let result = probe(&target, |o| {
                o.url = upload_url(&target, protocol, delay_ms);
                o.protocols = vec![protocol];
                o.h3_direct = true;
                o.method = Method::Post;
                o.body = Some(binary(&bytes));
                o.repeat = 5;
                // A fresh connection each time: on a reused h1 connection Linux has
                // grown the send buffer past the body.
                o.mode = ConnectionMode::Cold;
            })
            .await;
            let stored = result.options.body.as_ref().unwrap();
            assert_eq!(stored.size, Some(1_000_000));
            assert_eq!(stored.sha256.as_deref(), Some(hash.as_str()));
            assert!(stored.base64.is_none() && stored.text.is_none());
            let run = run(&result, protocol);
            for a in &run.attempts {
                assert!(a.failure.is_none(), "{protocol}: {:?}", a.failure);
                assert_eq!(header(a, BYTES_HEADER.as_str()), Some("1000000"));
                assert_eq!(header(a, SHA256_HEADER.as_str()), Some(hash.as_str()));
            }
            sends.push(median(run.attempts.iter().map(send_ms).collect()));
            let off: Vec<f64> = run
                .attempts
                .iter()
                .map(|a| send_ms(a) - held_ms(a))
                .collect();
            let closest = off.iter().copied().fold(f64::INFINITY, f64::min);
            offs.push((median(off), closest));
        }
        let (quick, held) = (sends[0], sends[1]);
        let (off, closest) = offs[1];
        println!(
            "{protocol}: send {held:.3} ms with the server holding the body {DELAY_MS} ms unread (send - its measured hold: {off:+.3} ms, closest {closest:+.3} ms), {quick:.3} ms without"
        );
        // The hold lands in send: send lasts the hold the server measured, plus
        // the head's way there and the body's tail after it; a hold that did not
        // land in send would leave send 50 ms short of it. The tail is the part
        // over the flow-control window: what the whole send costs unheld, plus
        // the window updates that restart it one round trip at a time, within
        // 5 ms on the attempt a busy machine disturbed least (its load only ever
        // lengthens a tail: QUIC's user-space window updates most).
        assert!(
            off >= 0.0 && closest <= quick + 5.0,
            "{protocol}: send is {off:+.3} ms off the server's hold (median), the closest attempt {closest:+.3} ms, over {quick:.3} + 5 ms"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_keep_or_drop_the_body_as_curl_does() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let body = b"name=h123&x=1";
    for (status, method, kept) in [
        (307, Method::Post, true),
        (308, Method::Put, true),
        (303, Method::Post, false),
        (303, Method::Put, false),
        (302, Method::Post, false),
        (301, Method::Put, true),
    ] {
        let result = probe(&target, |o| {
            o.url = target.https_url(&format!("/redirect-with/{status}"));
            o.method = method;
            o.body = Some(RequestBody {
                text: Some(String::from_utf8_lossy(body).into_owned()),
                ..RequestBody::default()
            });
            o.follow_redirects = true;
            o.h3_direct = true;
        })
        .await;
        for protocol in Protocol::ALL {
            let run = run(&result, protocol);
            assert_eq!(run.attempts.len(), 2, "{protocol} {status}: two hops");
            let hop = &run.attempts[1];
            assert!(hop.failure.is_none(), "{protocol}: {:?}", hop.failure);
            let expected = if kept { body.len() } else { 0 };
            assert_eq!(
                header(hop, BYTES_HEADER.as_str()),
                Some(expected.to_string().as_str()),
                "{protocol}: {method} then {status}"
            );
        }
        let har = h123_shared::har::to_har(&result);
        let hop = &har["log"]["entries"][1]["request"];
        let after = if kept { method } else { Method::Get };
        assert_eq!(hop["method"], after.as_str(), "{status}");
        assert_eq!(hop["postData"].is_object(), kept, "{status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_never_leaves_as_early_data() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let url = target.https_url("/upload");
    let resumed = |method: Method| {
        let url = url.clone();
        move |o: &mut ProbeOptions| {
            o.url = url;
            o.protocols = vec![Protocol::H3];
            o.h3_direct = true;
            o.mode = ConnectionMode::Resumed;
            o.repeat = 3;
            o.method = method;
            o.body = method.takes_body().then(|| RequestBody {
                text: Some("pay=1".into()),
                ..RequestBody::default()
            });
        }
    };
    let early = |result: &h123_shared::ProbeResult| -> Vec<Option<bool>> {
        run(result, Protocol::H3)
            .attempts
            .iter()
            .map(|a| {
                assert!(a.failure.is_none(), "{:?}", a.failure);
                a.quic.as_ref().and_then(|q| q.zero_rtt_accepted)
            })
            .collect()
    };
    let get = probe(&target, resumed(Method::Get)).await;
    assert_eq!(
        early(&get),
        [None, Some(true), Some(true)],
        "GET goes as 0-RTT"
    );
    for method in [Method::Post, Method::Patch] {
        let result = probe(&target, resumed(method)).await;
        assert_eq!(early(&result), [None, None, None], "{method} waits");
        for a in &run(&result, Protocol::H3).attempts {
            assert_eq!(header(a, BYTES_HEADER.as_str()), Some("5"));
        }
    }
}
