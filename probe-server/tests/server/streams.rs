//! Requests at once through the API: a server sends them after the attempts,
//! over the addresses its guard allowed, and stores each one's timing with
//! the record.

use crate::support::*;
use h123_shared::api::ProbeRecord;
use std::net::{IpAddr, Ipv4Addr};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 11));

#[tokio::test]
async fn a_server_stores_each_request_sent_at_once() {
    let target = target().await;
    let dir = tempfile::tempdir().unwrap();
    let state = state(config(&target), &dir);
    let body = serde_json::json!({
        "url": target.https_url("/bytes/3000"),
        "repeat": 1, "rounds": 1,
        "streams": 4,
    });
    let (id, done) = probe_to_the_end(&state, &body.to_string(), CLIENT).await;
    let read: ProbeRecord = serde_json::from_slice(
        &call(&state, get(&format!("/api/v1/probes/{id}")), CLIENT)
            .await
            .body,
    )
    .unwrap();
    assert_eq!(read.result.runs, done.result.runs, "stored as streamed");
    assert_eq!(read.options.streams, Some(4));
    for run in &read.result.runs {
        let burst = run.streams.as_ref().expect("a burst per protocol");
        assert_eq!(burst.streams.len(), 4, "{}", run.protocol);
        for s in &burst.streams {
            assert!(s.succeeded(), "{}: {s:?}", run.protocol);
            assert_eq!(s.body_bytes, 3000);
        }
    }
}
