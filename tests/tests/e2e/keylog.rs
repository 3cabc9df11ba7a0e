//! End-to-end: the TLS key log h123 writes (`--keylog`, `SSLKEYLOGFILE`)
//! decrypts a captured session in tshark, for HTTP/1.1, HTTP/2 and HTTP/3;
//! the same capture read without it shows none of the requests.
//! Captures go through [`crate::support::capture`].

use crate::support::capture::{Capture, read};
use crate::support::{SERIAL, probe_with, run};
use h123::probe::keylog::KeyLogPath;
use h123::probe::tls::TrustSettings;
use h123_shared::Protocol;
use h123_target::{TargetConfig, TestTarget};
use std::time::Duration;

/// The path every protocol asks for, found again in the decrypted capture.
const MARKED_PATH: &str = "/bytes/4242";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_log_decrypts_a_captured_session_in_tshark() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (capture_file, keys) = (dir.path().join("probe.pcapng"), dir.path().join("keys.log"));
    let port = target.https_addr.port();
    let capture = Capture::start(port, &capture_file);

    let trust = TrustSettings::from_ca_file(target.ca_file())
        .unwrap()
        .with_key_log(KeyLogPath::open(&keys).unwrap());
    let result = probe_with(&target, trust, |o| o.url = target.https_url(MARKED_PATH)).await;
    for protocol in [Protocol::H1, Protocol::H2, Protocol::H3] {
        let attempt = &run(&result, protocol).attempts[0];
        assert!(attempt.failure.is_none(), "{protocol:?}: {attempt:?}");
    }
    // Let the last packets reach the capture before stopping it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    capture.stop();

    let logged = std::fs::read_to_string(&keys).unwrap();
    let secrets = logged.lines().filter(|l| !l.starts_with('#')).count();
    assert!(
        secrets >= 3 * 5,
        "TLS 1.3 logs 5 secrets per connection, 3 connections: {logged}"
    );

    let h1 = |keys| {
        read(
            &capture_file,
            port,
            keys,
            "http.request",
            "http.request.uri",
        )
    };
    let h2 = |keys| {
        read(
            &capture_file,
            port,
            keys,
            "http2.type == 1",
            "http2.header.value",
        )
    };
    // The request's own QUIC stream (id 0) is seen only once QUIC is
    // decrypted. (Debian's tshark does not dissect QPACK headers, and its
    // HTTP/3 frame dissection misses some packets, so the stream is the check.)
    let h3 = |keys| {
        read(
            &capture_file,
            port,
            keys,
            "quic.stream.stream_id == 0",
            "quic.stream.stream_id",
        )
    };
    let with_keys = Some(keys.as_path());
    assert_eq!(h1(with_keys), vec![MARKED_PATH], "HTTP/1.1 decrypted");
    assert!(
        h2(with_keys).iter().any(|v| v.contains(MARKED_PATH)),
        "HTTP/2 request headers decrypted: {:?}",
        h2(with_keys)
    );
    assert!(!h3(with_keys).is_empty(), "QUIC stream frames decrypted");
    assert!(h1(None).is_empty() && h2(None).is_empty() && h3(None).is_empty());
}
