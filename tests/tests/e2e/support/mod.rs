//! What the end-to-end test modules share: one lock, probing the target and finding runs.

use h123::probe::Engine;
use h123::probe::guard::ConnectPolicy;
use h123::probe::plan::{Limits, Plan};
use h123::probe::tls::TrustSettings;
use h123_shared::{ProbeOptions, ProbeResult, Protocol, ProtocolRun};
use h123_target::TestTarget;
use tokio::sync::Mutex;

pub mod capture;

/// Serialises the tests that measure or load the machine (timings, benches,
/// Chromium): on two cores, a concurrent one would disturb another's timings.
pub static SERIAL: Mutex<()> = Mutex::const_new(());

/// Probes the target with every protocol once, in one round (edit the
/// options as needed), trusting `trust`.
pub async fn probe_with(
    target: &TestTarget,
    trust: TrustSettings,
    edit: impl FnOnce(&mut ProbeOptions),
) -> ProbeResult {
    let mut options = ProbeOptions {
        url: target.https_url("/"),
        protocols: Protocol::ALL.to_vec(),
        repeat: 1,
        rounds: 1,
        timeout_ms: 5_000,
        phase_timeout_ms: 3_000,
        ..ProbeOptions::default()
    };
    edit(&mut options);
    let plan = Plan::new(options, &Limits::default()).expect("valid options");
    Engine::new(trust, ConnectPolicy::allow_all())
        .run(&plan)
        .await
}

/// Probes the target, trusting its CA.
pub async fn probe(target: &TestTarget, edit: impl FnOnce(&mut ProbeOptions)) -> ProbeResult {
    let trust = TrustSettings::from_ca_file(target.ca_file()).expect("CA file");
    probe_with(target, trust, edit).await
}

/// The run of `protocol` in `result`.
pub fn run(result: &ProbeResult, protocol: Protocol) -> &ProtocolRun {
    result
        .runs
        .iter()
        .find(|r| r.protocol == protocol)
        .expect("protocol measured")
}

/// A target that does not advertise HTTP/3 but whose DNS server answers an
/// HTTPS record for `target.h123.test` naming its port; and that port.
pub async fn https_record_target() -> (TestTarget, u16) {
    // The record names the target's port, known only once one is bound: take a free one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let target = TestTarget::start(h123_target::TargetConfig {
        advertise_h3: false,
        https_port: port,
        dns_https: vec![("target.h123.test".to_owned(), port)],
        ..h123_target::TargetConfig::default()
    })
    .await
    .unwrap();
    (target, port)
}
