//! A verdict is a statistic, not a sample: probes with the defaults every
//! front end shares (the schema's `ProbeOptions::default()`, which the API
//! reads, the web form starts from and the CLI's flags equal) give the same
//! answer run after run, and a delay on one protocol's path alone is named
//! every time. The figures (how often, how long a probe takes) are printed.

use crate::support::SERIAL;
use h123::probe::Engine;
use h123::probe::guard::ConnectPolicy;
use h123::probe::plan::{Limits, Plan};
use h123::probe::tls::TrustSettings;
use h123::probe::trace;
use h123_shared::analysis::analyzed;
use h123_shared::chain::ConnState;
use h123_shared::verdict::{Verdict, VerdictKind};
use h123_shared::{ProbeOptions, Protocol};
use h123_target::relay::Relay;
use h123_target::{TargetConfig, TestTarget};
use std::collections::BTreeMap;
use std::time::Duration;

/// Probes in a series.
const RUNS: usize = 20;

/// How many of [`RUNS`] must agree for the test to pass. The goal is 19
/// (both series give 20 of 20 on a 2-core machine, see docs/answer.md); a
/// coin-flip verdict gave 10 to 15 before, and one at the floor 16 to 18
/// (before the floor was relative), and 17 keeps those out while one
/// runner's hiccups cannot fail CI.
const AGREE_AT_LEAST: usize = 17;

/// What a verdict concludes, without its figures: its kind and, per
/// connection state, the protocols it calls faster (none when it calls nothing).
type Answer = (VerdictKind, Vec<(ConnState, Vec<Protocol>)>);

fn answer(v: &Verdict) -> Answer {
    let leads = v
        .comparisons
        .iter()
        .map(|c| {
            let mut leaders = if c.differs() {
                c.leaders.clone()
            } else {
                Vec::new()
            };
            leaders.sort();
            (c.state, leaders)
        })
        .collect();
    (v.kind, leads)
}

/// Runs `RUNS` default probes of `url` (resolved by the target's DNS server), printing how
/// often each answer came and how long a probe took; the answers by count.
async fn series(label: &str, target: &TestTarget, url: String) -> BTreeMap<String, usize> {
    let trust = TrustSettings::from_ca_file(target.ca_file()).unwrap();
    let engine = Engine::new(trust, ConnectPolicy::allow_all());
    let options = ProbeOptions {
        url,
        dns_server: Some(target.dns_addr.to_string()),
        ..ProbeOptions::default()
    };
    let plan = Plan::new(options, &Limits::default()).unwrap();
    let mut answers: BTreeMap<String, usize> = BTreeMap::new();
    let mut took = Vec::new();
    for _ in 0..RUNS {
        let started = trace::now();
        let result = analyzed(engine.run(&plan).await);
        took.push(started.elapsed());
        let verdict = &result.analysis.as_ref().unwrap().verdict;
        *answers.entry(format!("{:?}", answer(verdict))).or_default() += 1;
        eprintln!("{label}: {}", verdict.summary);
        for c in &verdict.comparisons {
            let figures: Vec<String> = c
                .samples
                .iter()
                .map(|s| {
                    format!(
                        "{:?} n={} {}..{}..{}",
                        s.protocol,
                        s.count,
                        s.min.as_ms(),
                        s.median.as_ms(),
                        s.max.as_ms()
                    )
                })
                .collect();
            eprintln!("    {:?}: {}", c.state, figures.join(" | "));
        }
    }
    took.sort();
    eprintln!(
        "{label}: {RUNS} default probes, answers {answers:?}; a probe took {:?} (median), {:?} (slowest)",
        took[RUNS / 2],
        took[RUNS - 1]
    );
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_probes_of_one_url_give_one_answer() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let url = format!(
        "https://target.h123.test:{}/delay/20",
        target.https_addr.port()
    );
    let answers = series("same path", &target, url).await;
    let most = answers.values().max().copied().unwrap_or(0);
    assert!(
        most >= AGREE_AT_LEAST,
        "{most} of {RUNS} agree: {answers:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delay_on_http3s_path_alone_is_named_every_time() {
    let _serial = SERIAL.lock().await;
    // HTTP/3 reaches the target through a relay adding 10 ms each way (its
    // Alt-Svc names the relay); HTTP/1.1 and HTTP/2 go straight to it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let relay_ip = "127.0.0.3".parse().unwrap();
    let target = TestTarget::start(TargetConfig {
        https_port: port,
        alt_svc_authority: Some(format!("{relay_ip}:{port}")),
        ..TargetConfig::default()
    })
    .await
    .unwrap();
    let _relay = Relay::start(relay_ip, target.https_addr, Duration::from_millis(10), &[])
        .await
        .unwrap();
    let url = format!("https://target.h123.test:{port}/delay/20");
    let answers = series("h3 delayed", &target, url).await;
    let named = |answer: &str| {
        answer.starts_with("(Faster")
            && answer.contains("(New, [H1, H2])")
            && answer.contains("(Reused, [H1, H2])")
    };
    let slower: usize = answers
        .iter()
        .filter(|(a, _)| named(a))
        .map(|(_, n)| n)
        .sum();
    assert!(
        slower >= AGREE_AT_LEAST,
        "HTTP/3 named slower in {slower} of {RUNS}: {answers:?}"
    );
}
