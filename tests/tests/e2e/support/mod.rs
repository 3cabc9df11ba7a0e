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

/// Probes the target with every protocol once (edit the options as needed),
/// trusting `trust`.
pub async fn probe_with(
    target: &TestTarget,
    trust: TrustSettings,
    edit: impl FnOnce(&mut ProbeOptions),
) -> ProbeResult {
    let mut options = ProbeOptions {
        url: target.https_url("/"),
        protocols: Protocol::ALL.to_vec(),
        repeat: 1,
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
