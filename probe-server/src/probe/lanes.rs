//! A probe's protocols side by side: each protocol's lane (its emulated
//! link, the resolver behind it, its share of the record) and its runner.
//! The engine interleaves the rounds across lanes (HTTP/1.1, HTTP/2, HTTP/3,
//! then the next round), so drift on the machine or the path falls on every
//! protocol alike instead of on whichever ran last.

use super::budget::RecordBudget;
use super::connection::{ConnectSettings, Connection};
use super::dns::NameResolver;
use super::plan::Plan;
use super::run::ProtocolRunner;
use super::trace::Progress;
use super::{addresses, burst, discover, h1, h2, h3};
use h123_shared::api::ProbeEvent;
use h123_shared::quic_budget;
use h123_shared::{Attempt, H3Discovery, Protocol, ProtocolRun};
use std::time::Duration;

/// What one protocol's run goes through.
pub struct Lane {
    /// The protocol.
    pub protocol: Protocol,
    /// Its connection settings, across its own emulated link when a network profile is set.
    pub settings: ConnectSettings,
    /// Its resolver, behind that link.
    pub resolver: NameResolver,
    /// Its share of the record's size cap.
    pub budget: RecordBudget,
}

impl Lane {
    /// The lane of `protocol` in `plan`'s probe.
    pub fn new(
        protocol: Protocol,
        plan: &Plan,
        settings: &ConnectSettings,
        resolver: &NameResolver,
    ) -> Lane {
        let settings = settings.across(plan.options.network.as_ref());
        let resolver = resolver.behind(settings.link.clone());
        Lane {
            protocol,
            resolver,
            settings,
            budget: RecordBudget::share(&plan.options),
        }
    }

    /// A runner of this lane's protocol over `C`, spending its share of the record.
    fn runner<'a, C: Connection>(
        &'a self,
        plan: &'a Plan,
        progress: &Progress,
    ) -> ProtocolRunner<'a, C> {
        ProtocolRunner::new(
            self.protocol,
            plan,
            &self.resolver,
            &self.settings,
            progress.clone(),
        )
        .budget(&self.budget)
    }
}

/// A lane's runner, by protocol.
pub enum Runner<'a> {
    /// HTTP/1.1.
    H1(ProtocolRunner<'a, h1::H1>),
    /// HTTP/2.
    H2(ProtocolRunner<'a, h2::H2>),
    /// HTTP/3 to the endpoint its discovery found.
    H3 {
        /// The runner, connecting to `endpoint`.
        runner: ProtocolRunner<'a, h3::H3>,
        /// How it was found.
        discovery: H3Discovery,
        /// Where it is reached.
        endpoint: (String, u16),
    },
    /// A run that makes no attempt (HTTP/3 behind a proxy, or not found); it says why.
    Idle(ProtocolRun),
}

impl<'a> Runner<'a> {
    /// The runner of `lane`; HTTP/3's discovers its endpoint first, from
    /// what the `earlier` lanes' attempts advertised.
    pub async fn start(
        lane: &'a Lane,
        plan: &'a Plan,
        earlier: &[Runner<'a>],
        progress: &Progress,
    ) -> Runner<'a> {
        match lane.protocol {
            Protocol::H1 => Runner::H1(lane.runner(plan, progress)),
            Protocol::H2 => Runner::H2(lane.runner(plan, progress)),
            Protocol::H3 => {
                if let Some(proxy) = lane
                    .settings
                    .proxy
                    .as_ref()
                    .and_then(|p| p.for_url(&plan.url))
                {
                    let reason = format!(
                        "HTTP/3 runs over UDP and cannot go through the {} proxy {}; not attempted (no discovery either, so nothing is dialled around the proxy)",
                        proxy.kind.as_str(),
                        proxy.address()
                    );
                    return Runner::idle(progress, reason, None);
                }
                let earlier: Vec<ProtocolRun> = earlier
                    .iter()
                    .map(|r| ProtocolRun {
                        attempts: r.attempts().to_vec(),
                        ..ProtocolRun::empty(r.protocol())
                    })
                    .collect();
                let mut discovery = discover::discover(plan, &earlier, &lane.resolver).await;
                match discover::endpoint(&discovery) {
                    Some(endpoint) => {
                        let round_trip =
                            quic_budget::tcp_round_trip(earlier.iter().flat_map(|r| &r.attempts));
                        let budget = quic_budget::budget_ms(&plan.options, round_trip);
                        discovery.quic_budget_ms = Some(budget);
                        progress.send(ProbeEvent::Discovery {
                            protocol: Protocol::H3,
                            discovery: Box::new(discovery.clone()),
                        });
                        Runner::H3 {
                            runner: lane
                                .runner(plan, progress)
                                .connect_to(Some(endpoint.clone()))
                                .quic_limit(Duration::from_millis(budget)),
                            discovery,
                            endpoint,
                        }
                    }
                    None => Runner::idle(progress, discovery.detail.clone(), Some(discovery)),
                }
            }
        }
    }

    /// An HTTP/3 run skipped for `reason`, reported at once.
    fn idle(progress: &Progress, reason: String, discovery: Option<H3Discovery>) -> Runner<'a> {
        progress.send(ProbeEvent::Skipped {
            protocol: Protocol::H3,
            reason: reason.clone(),
        });
        Runner::Idle(ProtocolRun {
            skipped: Some(reason),
            discovery,
            ..ProtocolRun::empty(Protocol::H3)
        })
    }

    /// The protocol this runner measures.
    pub fn protocol(&self) -> Protocol {
        match self {
            Runner::H1(_) => Protocol::H1,
            Runner::H2(_) => Protocol::H2,
            Runner::H3 { .. } => Protocol::H3,
            Runner::Idle(run) => run.protocol,
        }
    }

    /// The attempts made so far.
    pub fn attempts(&self) -> &[Attempt] {
        match self {
            Runner::H1(r) => r.attempts(),
            Runner::H2(r) => r.attempts(),
            Runner::H3 { runner, .. } => runner.attempts(),
            Runner::Idle(run) => &run.attempts,
        }
    }

    /// Makes round `round`'s attempts.
    pub async fn round(&mut self, round: u32) {
        match self {
            Runner::H1(r) => r.round(round).await,
            Runner::H2(r) => r.round(round).await,
            Runner::H3 { runner, .. } => runner.round(round).await,
            Runner::Idle(_) => {}
        }
    }

    /// The run, once every round is made: then the requests at once
    /// (`streams`), the side runs to other addresses (`--all-addresses`),
    /// HTTP/3's discovery verdict and the emulated link's account.
    pub async fn finish(self, lane: &Lane, plan: &Plan) -> ProtocolRun {
        let settings = &lane.settings;
        let port = plan.url.port_or_known_default().unwrap_or(443);
        let mut run = match self {
            Runner::H1(r) => tcp_run::<h1::H1>(r.finish(), lane, plan, port).await,
            Runner::H2(r) => tcp_run::<h2::H2>(r.finish(), lane, plan, port).await,
            Runner::H3 {
                runner,
                mut discovery,
                endpoint,
            } => {
                let mut run = runner.finish();
                // The streams and the side runs shake hands within the run's budget too.
                let settings = &ConnectSettings {
                    quic_limit: discovery.quic_budget_ms.map(Duration::from_millis),
                    ..settings.clone()
                };
                run.streams = burst::after::<h3::H3>(plan, settings, &run).await;
                discover::conclude(&mut discovery, &run);
                let ips = addresses::others(plan, &run, settings, endpoint.1);
                run.other_addresses = addresses::side_runs::<h3::H3>(
                    Protocol::H3,
                    plan,
                    &lane.resolver,
                    settings,
                    &lane.budget,
                    Some(endpoint),
                    ips,
                )
                .await;
                run.discovery = Some(discovery);
                run
            }
            Runner::Idle(run) => run,
        };
        if let Some(link) = settings.link.as_ref().filter(|_| run.skipped.is_none()) {
            run.emulated = Some(link.path(run.protocol));
        }
        run
    }
}

/// A TCP protocol's finished run (HTTP/1.1 or HTTP/2), with its requests at
/// once and its side runs to the host's other addresses.
async fn tcp_run<C: Connection + crate::probe::load::Load>(
    mut run: ProtocolRun,
    lane: &Lane,
    plan: &Plan,
    port: u16,
) -> ProtocolRun {
    run.streams = burst::after::<C>(plan, &lane.settings, &run).await;
    let ips = addresses::others(plan, &run, &lane.settings, port);
    run.other_addresses = addresses::side_runs::<C>(
        lane.protocol,
        plan,
        &lane.resolver,
        &lane.settings,
        &lane.budget,
        None,
        ips,
    )
    .await;
    run
}
