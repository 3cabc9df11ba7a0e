//! End-to-end tests against a hostile or careless origin on loopback:
//! credentials that must not follow a redirect to another origin, header
//! blocks too big to keep or to read, redirect loops, and the record's size
//! cap, each over HTTP/1.1, HTTP/2 and HTTP/3 for real.

use crate::support::{SERIAL, probe, run};
use h123::probe::budget::MAX_RECORD_BYTES;
use h123::probe::http::{MAX_HEADER_SECTION, STORED_HEADER_BUDGET};
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::{Attempt, Header, ProbeResult, Protocol};
use h123_target::{TargetConfig, TestTarget};

const ALL: [Protocol; 3] = Protocol::ALL;

/// Percent-encodes a URL for `/redirect-to?url=`.
fn encoded(url: &str) -> String {
    url.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn header(name: &str, value: &str) -> Header {
    Header {
        name: name.into(),
        value: value.into(),
    }
}

/// The request headers `/echo-headers` saw on this attempt, lower-cased names.
fn echoed(attempt: &Attempt) -> Vec<String> {
    let response = attempt.response.as_ref().expect("a response");
    assert_eq!(response.status, 200, "{}", attempt.url);
    response
        .headers
        .iter()
        .filter_map(|h| {
            h.name
                .to_ascii_lowercase()
                .strip_prefix("x-echo-")
                .map(str::to_owned)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_follow_a_redirect_only_within_the_origin() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let port = target.https_addr.port();
    let echo = format!("https://127.0.0.1:{port}/echo-headers");
    // (first URL, protocols, whether the hop stays on the origin)
    let cases = [
        (
            target.https_url("/redirect-to?url=%2Fecho-headers"),
            &ALL[..],
            true,
        ),
        (
            format!(
                "https://target.h123.test:{port}/redirect-to?url={}",
                encoded(&echo)
            ),
            &ALL[..],
            false,
        ),
        (
            target.https_url(&format!(
                "/redirect-to?url={}",
                encoded(&target.http_url("/echo-headers"))
            )),
            &[Protocol::H1][..],
            false,
        ),
    ];
    for (url, protocols, same_origin) in cases {
        let result = probe(&target, |o| {
            o.url = url.clone();
            o.protocols = protocols.to_vec();
            o.follow_redirects = true;
            o.dns_server = Some(target.dns_addr.to_string());
            o.headers = vec![
                header("Authorization", "Bearer secret"),
                header("Cookie", "session=secret"),
                header("X-H123-Custom", "kept"),
            ];
        })
        .await;
        for &protocol in protocols {
            let run = run(&result, protocol);
            assert_eq!(
                run.attempts.len(),
                2,
                "{url} {protocol:?}: {:#?}",
                run.attempts
            );
            let seen = echoed(&run.attempts[1]);
            assert!(
                seen.contains(&"x-h123-custom".to_owned()),
                "{url}: {seen:?}"
            );
            for secret in ["authorization", "cookie"] {
                assert_eq!(
                    seen.contains(&secret.to_owned()),
                    same_origin,
                    "{url} {protocol:?}: {secret} in {seen:?}"
                );
            }
        }
    }
}

/// The record `h123 serve` would store for this result, serialised.
fn record_bytes(result: &ProbeResult) -> usize {
    let record = ProbeRecord {
        id: "AAAAAAAAAAAA".into(),
        status: ProbeStatus::Done,
        created_at_unix_ms: result.started_at_unix_ms,
        options: result.options.clone(),
        queued_ms: None,
        cancel_reason: None,
        vantages: Vec::new(),
        result: h123_shared::analysis::analyzed(result.clone()),
        browser: None,
        monitor: None,
    };
    serde_json::to_vec(&record).unwrap().len()
}

fn stored_header_bytes(attempt: &Attempt) -> usize {
    let response = attempt.response.as_ref().expect("a response");
    response
        .headers
        .iter()
        .map(|h| h.name.len() + h.value.len())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attempt_keeps_at_most_its_header_budget() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    // 40 headers of 1,000 bytes: within the header-section cap, over the stored budget.
    let result = probe(&target, |o| {
        o.url = target.https_url("/headers/40/1000");
        o.repeat = 2;
    })
    .await;
    for protocol in ALL {
        let run = run(&result, protocol);
        assert_eq!(run.attempts.len(), 2, "{protocol:?}");
        for attempt in &run.attempts {
            assert!(
                attempt.failure.is_none(),
                "{protocol:?}: {:?}",
                attempt.failure
            );
            let response = attempt.response.as_ref().unwrap();
            assert_eq!(response.status, 200);
            assert!(response.headers_truncated, "{protocol:?}");
            let bytes = stored_header_bytes(attempt);
            assert!(
                (STORED_HEADER_BUDGET - 1100..=STORED_HEADER_BUDGET).contains(&bytes),
                "{protocol:?}: {bytes} bytes kept"
            );
        }
    }
    // A small head is kept whole and not marked.
    let plain = probe(&target, |o| o.url = target.https_url("/headers/3/10")).await;
    for protocol in ALL {
        let response = run(&plain, protocol).attempts[0].response.clone().unwrap();
        assert!(!response.headers_truncated, "{protocol:?}");
        assert_eq!(
            response
                .headers
                .iter()
                .filter(|h| h.name.starts_with("x-h123-fill-"))
                .count(),
            3
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_section_over_the_cap_fails_the_attempt_over_every_protocol() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    // 97 headers of 4,000 bytes: 388 KB, six times the header-section cap.
    const { assert!(97 * 4000 > 5 * MAX_HEADER_SECTION) };
    let result = probe(&target, |o| {
        o.url = target.https_url("/headers/97/4000");
        o.repeat = 2;
        o.h3_direct = true;
    })
    .await;
    for protocol in ALL {
        let run = run(&result, protocol);
        assert!(!run.attempts.is_empty(), "{protocol:?}");
        for attempt in &run.attempts {
            let failure = attempt
                .failure
                .as_ref()
                .unwrap_or_else(|| panic!("{protocol:?}: the head was accepted"));
            assert!(attempt.response.is_none(), "{protocol:?}: nothing kept");
            println!(
                "{protocol:?}: {:?} {:?}: {}",
                failure.phase, failure.kind, failure.message
            );
        }
    }
    assert!(record_bytes(&result) < 64 * 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maximal_probe_of_a_hostile_origin_stays_under_the_record_cap() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    // The audit's probe (repeat 10, redirects followed up to 10 hops) of an origin that
    // answers every request with as many header bytes as the section cap lets through,
    // redirecting to itself.
    let result = probe(&target, |o| {
        o.url = target.https_url("/headers/14/4000?loop");
        o.repeat = 10;
        o.follow_redirects = true;
        o.max_redirects = 10;
    })
    .await;
    let bytes = record_bytes(&result);
    println!("maximal record: {bytes} bytes");
    assert!(bytes <= MAX_RECORD_BYTES, "{bytes}");
    assert!(
        bytes > MAX_RECORD_BYTES * 3 / 4,
        "the cap, not the target, ended it: {bytes}"
    );
    for protocol in ALL {
        // Each protocol had its share: every run stopped at it, and says so.
        let run = run(&result, protocol);
        let cut = run.cut_short.as_deref().unwrap_or_default();
        assert!(cut.contains("size cap"), "{protocol:?}: {cut}");
        assert!(
            run.attempts.len() > 15,
            "{protocol:?}: {}",
            run.attempts.len()
        );
        assert!(
            run.attempts
                .iter()
                .all(|a| a.response.as_ref().is_some_and(|r| r.headers_truncated)),
            "{protocol:?}"
        );
        assert_eq!(
            run.attempts[1].hop, 1,
            "{protocol:?}: redirects were followed"
        );
    }
    // The audit's own origin (97 headers of 4,000 bytes, redirecting to itself): every
    // head is over the section cap, so each attempt fails and no redirect is followed.
    let audit = probe(&target, |o| {
        o.url = target.https_url("/headers/97/4000?loop");
        o.repeat = 10;
        o.follow_redirects = true;
        o.max_redirects = 10;
    })
    .await;
    let audit_bytes = record_bytes(&audit);
    println!("the audit's probe: {audit_bytes} bytes");
    assert!(audit_bytes < 64 * 1024);
    // Without the budget's cut, the same run would have held 10 x 11 attempts per protocol.
    let per_attempt = bytes / result.runs.iter().map(|r| r.attempts.len()).sum::<usize>();
    println!(
        "per attempt: {per_attempt} bytes; uncapped: about {} bytes",
        per_attempt * 330
    );
}
