//! Guard tests: hostile targets are refused with a clear code and reason, by
//! the API before a probe starts and by the engine at connect time (redirect
//! hops), on a server that allows public addresses plus the test target only;
//! and `--allow-private`, which lets everything through, `localhost` included.
//!
//! No test here sends a packet anywhere but loopback: the API refuses before
//! any connect, and the redirect hops point at loopback ports.

use crate::support::*;
use axum::http::StatusCode;
use h123::probe::guard::ConnectPolicy;
use h123_shared::FailureKind;
use h123_shared::api::ProbeRecord;

fn hostile(target: &h123_target::TestTarget) -> Vec<(String, serde_json::Value)> {
    let url =
        |u: &str| serde_json::json!({ "url": u, "protocols": ["h1"], "repeat": 1, "rounds": 1 });
    let mut cases: Vec<(String, serde_json::Value)> = [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0x7f.0.0.1/",
        "http://0x7f000001/",
        "http://127.1/",
        "http://017700000001/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]:8080/",
        "http://[::127.0.0.1]/",
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://0/",
        "http://[::]/",
        "http://localhost/",
        "http://localhost./",
        "http://LOCALHOST:8080/",
        "http://app.localhost/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://10.0.0.5/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://192.0.2.1/",
        "http://224.0.0.1/",
        "http://255.255.255.255/",
        "http://[fc00::1]/",
        "http://[fd00:ec2::254]/",
        "http://[fe80::1]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[::ffff:0:a00:5]/",
        "http://[::ffff:0:7f00:1]/",
        "http://[2001::1]/",
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
        "http://[2001:2::1]/",
        "http://192.88.99.1/",
        "http://[2002:c0a8:101::1]/",
        "http://[64:ff9b:1::a00:1]/",
        "http://198.18.0.1/",
        "http://240.0.0.1/",
        "https://target.h123.test/",
        "http://evil.h123.test/",
        "http://v6.h123.test/",
        "http://meta.h123.test/latest/meta-data/",
        "http://rebind.h123.test/",
    ]
    .iter()
    .map(|u| ((*u).to_owned(), url(u)))
    .collect();
    // The allowed address on another port.
    let other_port = format!("https://127.0.0.1:{}/", target.http_addr.port());
    cases.push((other_port.clone(), url(&other_port)));
    // An allowed URL, but a DNS server in private space.
    let allowed = target.https_url("/");
    cases.push((
        "dns_server 10.0.0.53".to_owned(),
        serde_json::json!({ "url": allowed, "dns_server": "10.0.0.53:53" }),
    ));
    // A public-looking name pinned to loopback.
    cases.push((
        "resolve pin to 127.0.0.1".to_owned(),
        serde_json::json!({
            "url": "https://pinned.example/",
            "resolve": [{ "host": "pinned.example", "port": 443, "addr": "127.0.0.1" }]
        }),
    ));
    cases
}

#[tokio::test]
async fn hostile_targets_are_refused_before_any_connect() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.guard.policy = ConnectPolicy::public_only(allowed(&target));
    let state = state(config, &dir);
    let cases = hostile(&target);
    assert!(cases.len() >= 25);
    for (what, body) in &cases {
        let answer = call(
            &state,
            post_json("/api/v1/probes", &body.to_string()),
            CLIENT,
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::FORBIDDEN,
            "{what}: {}",
            answer.text()
        );
        assert_eq!(answer.code(), "blocked_target", "{what}");
        let message = answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            [
                "loopback",
                "private",
                "link-local",
                "unspecified",
                "unique-local",
                "multicast",
                "reserved",
                "documentation",
                "carrier-grade",
                "NAT64",
                "broadcast",
                "non-public",
                "Teredo",
                "benchmarking",
                "6to4",
                "SIIT",
            ]
            .iter()
            .any(|w| message.contains(w)),
            "{what}: the reason names the kind of address: {message}"
        );
        if what.contains(".h123.test") || what.contains("pinned.example") {
            // A name's addresses are never named: that would map the server's DNS.
            assert!(
                message.contains("resolves to a non-public address")
                    && !["127.0.0.1", "10.0.0.5", "::1", "169.254"]
                        .iter()
                        .any(|a| message.contains(a)),
                "{what}: {message}"
            );
        }
        println!("refused {what:45} {message}");
    }
    let rebind = call(
        &state,
        post_json("/api/v1/probes", r#"{"url":"http://rebind.h123.test/"}"#),
        CLIENT,
    )
    .await;
    let message = rebind.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        message,
        "blocked target: rebind.h123.test resolves to a non-public address, which this server does not probe"
    );
    // Schemes other than http and https are refused as such.
    for url in [
        "file:///etc/passwd",
        "gopher://127.0.0.1:70/",
        "ftp://example.com/",
        "javascript:alert(1)",
    ] {
        let body = serde_json::json!({ "url": url }).to_string();
        let answer = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
        assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY, "{url}");
        assert!(
            ["unsupported_scheme", "invalid_url"].contains(&answer.code().as_str()),
            "{url}: {}",
            answer.code()
        );
    }
    // Nothing was started.
    assert!(state.registry.is_empty());
}

async fn run_to_end(state: &h123::server::AppState, body: &str) -> ProbeRecord {
    let answer = call(state, post_json("/api/v1/probes", body), CLIENT).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.text());
    let id = answer.json()["id"].as_str().unwrap().to_owned();
    let stream = call(state, get(&format!("/api/v1/probes/{id}/events")), CLIENT).await;
    let events = parse_sse(&stream.text());
    serde_json::from_value(events.last().unwrap().data.clone()).unwrap()
}

#[tokio::test]
async fn redirect_hops_into_private_space_fail_as_blocked() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.guard.policy = ConnectPolicy::public_only(allowed(&target));
    let state = state(config, &dir);
    let port = target.http_addr.port();
    for next in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://evil.h123.test:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
    ] {
        let encoded: String = next
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' => (b as char).to_string(),
                other => format!("%{other:02X}"),
            })
            .collect();
        let body = serde_json::json!({
            "url": target.https_url(&format!("/redirect-to?url={encoded}")),
            "protocols": ["h1", "h2"],
            "repeat": 1, "rounds": 1,
            "follow_redirects": true,
        })
        .to_string();
        let record = run_to_end(&state, &body).await;
        for run in &record.result.runs {
            assert_eq!(run.attempts.len(), 2, "{next}: {:#?}", run.attempts);
            assert!(
                run.attempts[0].failure.is_none(),
                "the allowed first hop works"
            );
            let failure = run.attempts[1].failure.as_ref().expect("the hop fails");
            assert_eq!(failure.kind, FailureKind::Blocked, "{next}: {failure:?}");
            if next.contains("evil.h123.test") {
                // A name's addresses stay out of the record, as out of a 403.
                assert!(
                    failure.message.contains(
                        "evil.h123.test: it resolves to an address this server does not probe"
                    ) && !failure.message.contains("127.0.0.1"),
                    "{}",
                    failure.message
                );
                let dns = run.attempts[1]
                    .dns
                    .as_ref()
                    .expect("the lookup is recorded");
                assert!(dns.addresses.is_empty(), "{:?}", dns.addresses);
            } else {
                assert!(failure.message.contains("loopback"), "{}", failure.message);
            }
            assert!(
                run.attempts[1].connection.is_none(),
                "no connection was made"
            );
        }
    }
}

#[tokio::test]
async fn the_port_list_holds_on_every_redirect_hop() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    // The target's address on any port, but only its HTTPS port on the port list.
    config.guard.policy = ConnectPolicy::public_only(vec![h123::probe::guard::AllowedTarget {
        ip: target.https_addr.ip(),
        port: None,
    }])
    .with_ports(vec![target.https_addr.port()]);
    let state = state(config, &dir);
    let port = target.http_addr.port();
    let body = serde_json::json!({
        "url": target.https_url(&format!("/redirect-to?url=http%3A%2F%2F127.0.0.1%3A{port}%2F")),
        "protocols": ["h1"],
        "repeat": 1, "rounds": 1,
        "follow_redirects": true,
    })
    .to_string();
    let record = run_to_end(&state, &body).await;
    let attempts = &record.result.runs[0].attempts;
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert!(
        attempts[0].failure.is_none(),
        "the first hop is on the list"
    );
    let failure = attempts[1].failure.as_ref().expect("the hop fails");
    assert_eq!(failure.kind, FailureKind::Blocked, "{failure:?}");
    assert!(
        failure
            .message
            .contains(&format!("port {port} is not allowed")),
        "{}",
        failure.message
    );
    // The API's early check refuses the same port on the first URL.
    let answer = call(
        &state,
        post_json(
            "/api/v1/probes",
            &serde_json::json!({ "url": target.http_url("/") }).to_string(),
        ),
        CLIENT,
    )
    .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text());
}

#[tokio::test]
async fn allow_private_probes_localhost() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    // `h123 serve --allow-private`, with the system resolver (its hosts file names localhost).
    config.guard.policy = ConnectPolicy::allow_all();
    config.dns_server = None;
    let state = state(config, &dir);
    let body = serde_json::json!({
        "url": format!("https://localhost:{}/", target.https_addr.port()),
        "protocols": ["h1"],
        "repeat": 1, "rounds": 1,
    })
    .to_string();
    let record = run_to_end(&state, &body).await;
    let attempt = &record.result.runs[0].attempts[0];
    assert!(attempt.failure.is_none(), "{:?}", attempt.failure);
    assert_eq!(attempt.response.as_ref().unwrap().status, 200);
}

#[tokio::test]
async fn all_addresses_cannot_reach_a_private_second_address() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&target);
    config.guard.policy = ConnectPolicy::public_only(allowed(&target));
    let state = state(config, &dir);
    let port = target.https_addr.port();
    // dual.h123.test: A 127.0.0.1 (allowed here) and AAAA ::1 (not).
    for family in ["any", "v6"] {
        let body = serde_json::json!({
            "url": format!("https://dual.h123.test:{port}/"),
            "protocols": ["h1", "h2"],
            "repeat": 1, "rounds": 1,
            "all_addresses": true,
            "family": family,
        })
        .to_string();
        let answer = call(&state, post_json("/api/v1/probes", &body), CLIENT).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text());
        assert_eq!(answer.code(), "blocked_target");
        let message = answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            message.contains("dual.h123.test resolves to a non-public address")
                && !message.contains("::1"),
            "{message}"
        );
    }
    // The options themselves are accepted: an allowed name runs with them,
    // and its one address gives no side runs.
    let body = serde_json::json!({
        "url": format!("https://target.h123.test:{port}/"),
        "protocols": ["h2"],
        "repeat": 1, "rounds": 1,
        "all_addresses": true,
        "family": "v4",
    })
    .to_string();
    let record = run_to_end(&state, &body).await;
    assert!(record.result.options.all_addresses);
    let run = &record.result.runs[0];
    assert!(
        run.attempts[0].failure.is_none(),
        "{:?}",
        run.attempts[0].failure
    );
    assert!(run.other_addresses.is_empty());
}
