//! Network conditions through the API: off unless the operator allows them
//! (`network_not_allowed`), bad figures named in a 422, and when allowed a
//! probe over all three protocols stores its profile and, per protocol, how
//! the conditions were applied and what the emulated link did.

use crate::support::*;
use axum::http::StatusCode;
use h123_shared::network::Emulation;
use h123_shared::{Phase, Protocol};
use std::net::{IpAddr, Ipv4Addr};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 9));

fn with_network(url: &str, network: serde_json::Value) -> String {
    serde_json::json!({
        "url": url,
        "protocols": ["h1", "h2", "h3"],
        "repeat": 2, "rounds": 1,
        "timeout_ms": 10000,
        "phase_timeout_ms": 5000,
        "network": network,
    })
    .to_string()
}

#[tokio::test]
async fn a_public_server_refuses_network_conditions_unless_allowed() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let closed = state(config(&target), &dir);
    let info = call(&closed, get("/api/v1/config"), CLIENT).await.json();
    assert_eq!(info["network_enabled"], false);
    let url = target.https_url("/");
    let refused = call(
        &closed,
        post_json("/api/v1/probes", &with_network(&url, "3g".into())),
        CLIENT,
    )
    .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.code(), "network_not_allowed");
    assert!(
        refused.text().contains("--allow-network"),
        "{}",
        refused.text()
    );

    let mut open = config(&target);
    open.limits.allow_network = true;
    let open = state(open, &dir);
    assert_eq!(
        call(&open, get("/api/v1/config"), CLIENT).await.json()["network_enabled"],
        true
    );
    for (bad, says) in [
        (serde_json::json!("rtt=fast"), "is not a duration"),
        (serde_json::json!("dialup"), "unknown network profile"),
        (serde_json::json!({"rtt_ms": 60000}), "rtt must be at most"),
        (
            serde_json::json!({"loss_basis_points": 8000}),
            "loss must be between",
        ),
    ] {
        let answer = call(
            &open,
            post_json("/api/v1/probes", &with_network(&url, bad.clone())),
            CLIENT,
        )
        .await;
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{bad}: {}",
            answer.text()
        );
        assert_eq!(answer.code(), "invalid_body");
        assert!(answer.text().contains(says), "{bad}: {}", answer.text());
    }
}

#[tokio::test]
async fn an_allowed_profile_is_stored_with_each_protocols_emulation() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let mut open = config(&target);
    open.limits.allow_network = true;
    let state = state(open, &dir);
    let (_, record) = probe_to_the_end(
        &state,
        &with_network(&target.https_url("/"), "rtt=40ms,down=20mbit".into()),
        CLIENT,
    )
    .await;
    let network = record
        .options
        .network
        .as_ref()
        .expect("the profile is stored");
    assert_eq!((network.rtt_ms, network.down_kbit), (40, Some(20_000)));
    for run in &record.result.runs {
        let path = run
            .emulated
            .as_ref()
            .expect("each run says how it was emulated");
        let expected = match run.protocol {
            Protocol::H3 => Emulation::Datagrams,
            // scripts/test runs as root: the TUN device is there.
            _ => Emulation::Packets,
        };
        assert_eq!(path.emulation, expected);
        assert!(path.up.delivered > 0 && path.down.delivered > 0, "{path:?}");
        for attempt in &run.attempts {
            assert!(attempt.failure.is_none(), "{:?}", attempt.failure);
            // Not a timing check (the end-to-end tests measure accuracy): the
            // round trip cannot have been skipped.
            let wait = attempt
                .phases
                .get(Phase::Wait)
                .expect("wait")
                .duration()
                .as_ms();
            assert!(wait >= 40.0, "{} wait {wait} ms", run.protocol);
        }
    }
}
