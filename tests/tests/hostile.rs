//! End-to-end tests against a hostile or careless origin on loopback:
//! credentials that must not follow a redirect to another origin, header
//! blocks too big to keep, redirect loops, and the record's size cap, each
//! over HTTP/1.1, HTTP/2 and HTTP/3 for real.

mod support;

use h123_shared::{Attempt, Header, Protocol};
use h123_target::{TargetConfig, TestTarget};
use support::{SERIAL, probe, run};

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
