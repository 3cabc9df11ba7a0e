//! Connection migration through the API: a public server moves an HTTP/3
//! connection to a new port and stores what became of it, refuses a move to
//! an address of the client's choosing (`migrate_address_not_allowed`), and
//! names a value that is neither in a 422.

use crate::support::*;
use axum::http::StatusCode;
use h123_shared::Protocol;
use h123_shared::migration::Migrate;
use std::net::{IpAddr, Ipv4Addr};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 10));

fn moving(url: &str, migrate: serde_json::Value) -> String {
    serde_json::json!({
        "url": url,
        "protocols": ["h2", "h3"],
        "rounds": 1,
        "timeout_ms": 10000,
        "phase_timeout_ms": 3000,
        "migrate": migrate,
    })
    .to_string()
}

#[tokio::test]
async fn a_server_moves_to_a_new_port_only_and_stores_the_move() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let url = target.https_url("/drip/100000/200");
    for (bad, status, code, says) in [
        (
            serde_json::json!("127.0.0.2"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "migrate_address_not_allowed",
            "new port only",
        ),
        (
            serde_json::json!("wifi"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_migrate",
            "neither `port` nor a local IP address",
        ),
    ] {
        let answer = call(
            &state,
            post_json("/api/v1/probes", &moving(&url, bad.clone())),
            CLIENT,
        )
        .await;
        assert_eq!(answer.status, status, "{bad}: {}", answer.text());
        assert_eq!(answer.code(), code, "{bad}: {}", answer.text());
        assert!(answer.text().contains(says), "{bad}: {}", answer.text());
    }

    let (id, record) = probe_to_the_end(&state, &moving(&url, "port".into()), CLIENT).await;
    assert_eq!(record.options.migrate, Some(Migrate::Port));
    let h3 = record
        .result
        .runs
        .iter()
        .find(|r| r.protocol == Protocol::H3)
        .unwrap();
    let moved = h3.attempts[0]
        .migration
        .as_ref()
        .expect("the move is stored");
    assert!(moved.survived, "{moved:?}");
    assert!(h3.attempts[0].failure.is_none());
    // The stored record reads back through the API as it was stored.
    let read = call(&state, get(&format!("/api/v1/probes/{id}")), CLIENT)
        .await
        .json();
    let stored = &read["result"]["runs"];
    let h3_json = stored
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["protocol"] == "h3")
        .unwrap();
    assert_eq!(h3_json["attempts"][0]["migration"]["to"], "port");
    assert_eq!(read["options"]["migrate"], "port");
    // The picture marks where the connection moved.
    let svg = call(
        &state,
        get(&format!("/api/v1/probes/{id}/waterfall.svg")),
        CLIENT,
    )
    .await;
    assert_eq!(svg.status, StatusCode::OK);
    assert_eq!(
        svg.text().matches(r#" class="moved">"#).count(),
        1,
        "{}",
        svg.text()
    );
}
