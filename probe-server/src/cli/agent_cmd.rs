//! `h123 agent`: probes from this machine for an h123 server. It connects
//! out (no listening port, so it works behind NAT), claims jobs with its
//! token, runs each with its own engine under its own safety policy (built
//! as `serve` builds it) joined to the server's rules the job carries (an
//! address is dialled only when both allow it), streams the phase events as they happen and posts
//! the result. A server that cannot be reached is retried with capped,
//! jittered exponential backoff; a refused token (401) or version (426)
//! ends the agent with one line (exit 2).

use super::remote::{RemoteError, base_url, connect, read_all, request, trouble, within};
use super::safety_args::SafetyArgs;
use super::serve_cmd::dns_server;
use crate::probe::Engine;
use crate::probe::dns::NameResolver;
use crate::probe::guard::ConnectPolicy;
use crate::probe::plan::{Limits, Plan};
use crate::probe::tls::TrustSettings;
use crate::probe::trace::Progress;
use crate::server::agents::{MIN_TOKEN_LEN, valid_token};
use crate::server::target_guard::TargetGuard;
use bytes::Bytes;
use clap::Args;
use h123_shared::agent::{AgentClaim, AgentJob, AgentReport, VERSION_HEADER};
use h123_shared::api::{ApiError, ProbeEvent};
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use tokio::sync::mpsc;
use url::Url;

/// First wait after a failed call to the server.
pub const BACKOFF_START: Duration = Duration::from_millis(500);

/// Longest wait between calls to a server that does not answer.
pub const BACKOFF_CAP: Duration = Duration::from_secs(30);

/// Longest a claim may take (the server answers within 25 s).
const CLAIM_TIMEOUT: Duration = Duration::from_secs(45);

/// Options of `h123 agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The h123 server to work for, e.g. https://h123.example.
    #[arg(long, value_name = "URL")]
    pub server: String,
    /// This agent's token, as given to the server with `--agent NAME=TOKEN`.
    #[arg(
        long,
        env = "H123_AGENT_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: String,
    /// This agent's vantage name, as configured on the server.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// What people read for this vantage, e.g. "Frankfurt, DE".
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Tags of this vantage, comma-separated, e.g. eu,datacenter.
    #[arg(long, value_delimiter = ',', value_name = "TAGS")]
    pub tags: Vec<String>,
    /// Probes run at once.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub max_running: usize,
    /// Trust only the CA certificates in this PEM file for probes.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Trust the CA certificates in this PEM file for an https server.
    #[arg(long, value_name = "FILE")]
    pub server_cacert: Option<PathBuf>,
    /// DNS server for probes that name none: ip[:port].
    #[arg(long, value_name = "ADDR")]
    pub dns_server: Option<String>,
    /// What probes may reach.
    #[command(flatten)]
    pub safety: SafetyArgs,
}

/// What every job of this agent runs with.
struct Setup {
    server: Url,
    server_cacert: Option<PathBuf>,
    token: String,
    claim: AgentClaim,
    trust: TrustSettings,
    /// This agent's own policy (its `--allow-*` flags).
    policy: ConnectPolicy,
    dns: Option<SocketAddr>,
}

/// Why a call to the server did not give an answer to act on.
enum Trouble {
    /// The server refuses this agent for good (401, 426): the line to print.
    Fatal(String),
    /// The server is unreachable or failing: try again later.
    Passing(String),
}

/// Runs the agent until the server refuses it (exit 2) or bad options (exit 2).
pub async fn run(args: AgentArgs) -> ExitCode {
    let setup = match setup(&args) {
        Ok(setup) => std::sync::Arc::new(setup),
        Err(e) => {
            eprintln!("h123 agent: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "h123 agent: {} working for {} ({} at once)",
        setup.claim.name,
        setup.server,
        args.max_running.max(1)
    );
    let (fatal_tx, mut fatal_rx) = mpsc::unbounded_channel::<String>();
    for _ in 0..args.max_running.max(1) {
        let setup = setup.clone();
        let fatal = fatal_tx.clone();
        tokio::spawn(async move {
            let line = worker(&setup).await;
            let _ = fatal.send(line);
        });
    }
    drop(fatal_tx);
    match fatal_rx.recv().await {
        Some(line) => {
            eprintln!("h123 agent: {line}");
            ExitCode::from(2)
        }
        None => ExitCode::FAILURE,
    }
}

fn setup(args: &AgentArgs) -> Result<Setup, String> {
    if !h123_shared::vantage::valid_name(&args.name) {
        return Err(format!(
            "--name `{}` must be 1 to 32 letters, digits, `-` or `_`",
            args.name
        ));
    }
    let token = args.token.trim();
    if !valid_token(token) {
        return Err(format!(
            "--token must be at least {MIN_TOKEN_LEN} printable ASCII characters, as the server requires (this one has {})",
            token.chars().count()
        ));
    }
    let server = base_url(&args.server).map_err(|e| match e {
        RemoteError::Refused(s) | RemoteError::Trouble(s) => s,
    })?;
    let trust = match &args.cacert {
        Some(path) => TrustSettings::from_ca_file(path)?,
        None => TrustSettings::system(),
    };
    let policy = args.safety.policy();
    let dns = args.dns_server.as_deref().map(dns_server).transpose()?;
    Ok(Setup {
        server,
        server_cacert: args.server_cacert.clone(),
        token: token.to_owned(),
        claim: AgentClaim {
            name: args.name.clone(),
            label: args.label.clone(),
            tags: args.tags.clone(),
        },
        trust,
        policy,
        dns,
    })
}

/// Claims and runs jobs one after another; returns only the line of a fatal refusal.
async fn worker(setup: &Setup) -> String {
    let mut client = Client::new(setup);
    let mut backoff = Backoff::default();
    let claim = serde_json::to_vec(&setup.claim).unwrap_or_default();
    loop {
        match client
            .post("api/v1/agent/claim", &claim, CLAIM_TIMEOUT)
            .await
        {
            Ok((StatusCode::OK, body)) => {
                backoff.reset();
                match serde_json::from_slice::<AgentJob>(&body) {
                    Ok(job) => run_job(setup, &mut client, job).await,
                    Err(e) => eprintln!("h123 agent: the server's job is unreadable: {e}"),
                }
            }
            Ok((StatusCode::NO_CONTENT, _)) => backoff.reset(),
            Ok((status, body)) => match classify(status, &body) {
                Trouble::Fatal(line) => return line,
                Trouble::Passing(line) => backoff.wait(&line).await,
            },
            Err(Trouble::Fatal(line)) => return line,
            Err(Trouble::Passing(line)) => backoff.wait(&line).await,
        }
    }
}

/// Runs one job: checks it against this agent's limits, its policy and the
/// server's rules, runs
/// it while streaming its events, and reports how it ended.
async fn run_job(setup: &Setup, client: &mut Client<'_>, job: AgentJob) {
    let lease = Duration::from_millis(job.lease_ms.max(100));
    let events_path = format!("api/v1/agent/jobs/{}/events", job.job_id);
    let result_path = format!("api/v1/agent/jobs/{}/result", job.job_id);
    // The stricter of the two: an address passes only when this agent's
    // policy and the server's rules both allow it.
    let policy = setup
        .policy
        .clone()
        .and(ConnectPolicy::from_rules(&job.rules));
    let guard = TargetGuard {
        policy: policy.clone(),
    };
    let report = match Plan::new(job.options, &Limits::default()) {
        Err(e) => AgentReport {
            result: None,
            problem: Some(format!("its limits refuse the options: {e}")),
        },
        Ok(mut plan) => match guard
            .check(&plan, &NameResolver::new(setup.dns, Vec::new()))
            .await
        {
            Err(reason) => AgentReport {
                result: None,
                problem: Some(format!(
                    "its safety policy or the server's rules refuse the target: {reason}"
                )),
            },
            Ok(()) => {
                if plan.dns_server.is_none() {
                    plan.dns_server = setup.dns;
                }
                let (sender, receiver) = mpsc::unbounded_channel::<ProbeEvent>();
                let engine = Engine::new(setup.trust.clone(), policy);
                let probe = engine.run_observed(&plan, Progress::to(sender));
                let forward = forward(client, &events_path, receiver, lease / 3);
                let (result, ()) = tokio::join!(probe, forward);
                AgentReport {
                    result: Some(result),
                    problem: None,
                }
            }
        },
    };
    let body = serde_json::to_vec(&report).unwrap_or_default();
    // The server keeps the job for a lease after the last word: retry within it.
    let until = crate::probe::trace::now() + lease;
    let mut backoff = Backoff::default();
    loop {
        match client.post(&result_path, &body, CLAIM_TIMEOUT).await {
            Ok((status, _)) if status.is_success() => return,
            Ok((status, body)) => {
                let line = match classify(status, &body) {
                    Trouble::Fatal(line) | Trouble::Passing(line) => line,
                };
                eprintln!(
                    "h123 agent: the result of job {} was refused: {line}",
                    job.job_id
                );
                return;
            }
            Err(Trouble::Fatal(line) | Trouble::Passing(line)) => {
                if crate::probe::trace::now() >= until {
                    eprintln!(
                        "h123 agent: gave up on the result of job {}: {line}",
                        job.job_id
                    );
                    return;
                }
                backoff.wait(&line).await;
            }
        }
    }
}

/// Posts the engine's events as they come, batched while a post is in
/// flight, and an empty batch every `heartbeat` of silence to keep the lease.
async fn forward(
    client: &mut Client<'_>,
    path: &str,
    mut events: mpsc::UnboundedReceiver<ProbeEvent>,
    heartbeat: Duration,
) {
    let mut lost = false;
    loop {
        let mut batch = Vec::new();
        match tokio::time::timeout(heartbeat, events.recv()).await {
            Ok(Some(event)) => batch.push(event),
            Ok(None) => return,
            Err(_) => {}
        }
        while let Ok(event) = events.try_recv() {
            batch.push(event);
        }
        if lost {
            continue;
        }
        let body = serde_json::to_vec(&batch).unwrap_or_default();
        match client
            .post(path, &body, heartbeat.max(Duration::from_secs(5)))
            .await
        {
            Ok((status, _)) if status.is_success() => {}
            Ok((StatusCode::NOT_FOUND, _)) => {
                eprintln!(
                    "h123 agent: the server no longer holds this job for us; finishing it unreported"
                );
                lost = true;
            }
            Ok((status, body)) => {
                let line = match classify(status, &body) {
                    Trouble::Fatal(line) | Trouble::Passing(line) => line,
                };
                eprintln!("h123 agent: events refused: {line}");
            }
            Err(Trouble::Fatal(line) | Trouble::Passing(line)) => {
                eprintln!("h123 agent: events not delivered: {line}");
            }
        }
    }
}

/// A non-success answer: a refusal of this agent for good, or passing trouble.
fn classify(status: StatusCode, body: &[u8]) -> Trouble {
    let said = serde_json::from_slice::<ApiError>(body)
        .map(|e| format!("{} ({})", e.error.message, e.error.code))
        .unwrap_or_else(|_| format!("HTTP {status}"));
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::UPGRADE_REQUIRED => {
            Trouble::Fatal(format!("the server refused this agent: {said}"))
        }
        _ => Trouble::Passing(format!("the server answered {said}")),
    }
}

/// One HTTP/1.1 connection to the server, opened again when it breaks.
struct Client<'s> {
    setup: &'s Setup,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl<'s> Client<'s> {
    fn new(setup: &'s Setup) -> Self {
        Client {
            setup,
            sender: None,
        }
    }

    /// POSTs `body` (JSON) to `path` with the agent's token and version;
    /// the answer's status and body. A broken kept-alive connection is
    /// replaced once.
    async fn post(
        &mut self,
        path: &str,
        body: &[u8],
        wait: Duration,
    ) -> Result<(StatusCode, Vec<u8>), Trouble> {
        let base = &self.setup.server;
        let passing = |e: RemoteError| match e {
            RemoteError::Refused(s) | RemoteError::Trouble(s) => Trouble::Passing(s),
        };
        for fresh in [false, true] {
            let mut sender = match self.sender.take() {
                Some(sender) if !fresh && !sender.is_closed() => sender,
                _ => connect(base, self.setup.server_cacert.as_deref())
                    .await
                    .map_err(passing)?,
            };
            if sender.ready().await.is_err() {
                continue;
            }
            let mut post =
                request(base, Method::POST, path, Bytes::copy_from_slice(body)).map_err(passing)?;
            let headers = post.headers_mut();
            let bearer = HeaderValue::from_str(&format!("Bearer {}", self.setup.token))
                .map_err(|_| Trouble::Fatal("the token is not a valid header value".into()))?;
            headers.insert(header::AUTHORIZATION, bearer);
            headers.insert(
                VERSION_HEADER,
                HeaderValue::from_static(env!("CARGO_PKG_VERSION")),
            );
            let answer = match within(wait, "an answer", sender.send_request(post))
                .await
                .map_err(passing)?
            {
                Ok(answer) => answer,
                Err(e) if !fresh => {
                    let _ = trouble(base, e);
                    continue;
                }
                Err(e) => return Err(passing(trouble(base, e))),
            };
            let status = answer.status();
            let body = read_all(answer.into_body()).await.map_err(passing)?;
            self.sender = Some(sender);
            return Ok((status, body));
        }
        Err(Trouble::Passing(format!("cannot talk to {base}")))
    }
}

/// Exponential backoff with jitter, capped at [`BACKOFF_CAP`].
#[derive(Default)]
struct Backoff {
    next: Option<Duration>,
    said: Option<String>,
}

impl Backoff {
    /// Waits before the next try, saying why once per new reason.
    async fn wait(&mut self, why: &str) {
        let step = self.step();
        if self.said.as_deref() != Some(why) {
            eprintln!("h123 agent: {why}; trying again with backoff");
            self.said = Some(why.to_owned());
        }
        tokio::time::sleep(jittered(step)).await;
    }

    /// This step's length; the next one is twice as long, up to the cap.
    fn step(&mut self) -> Duration {
        let step = self.next.unwrap_or(BACKOFF_START);
        self.next = Some((step * 2).min(BACKOFF_CAP));
        step
    }

    /// Back to the first step after a success.
    fn reset(&mut self) {
        if self.said.take().is_some() {
            eprintln!("h123 agent: the server answers again");
        }
        self.next = None;
    }
}

/// A random duration between half of `step` and `step`, so agents that lost
/// the server together do not come back together.
fn jittered(step: Duration) -> Duration {
    let mut byte = [0u8; 1];
    let fraction = match getrandom::fill(&mut byte) {
        Ok(()) => 0.5 + f64::from(byte[0]) / 510.0,
        Err(_) => 0.75,
    };
    step.mul_f64(fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_with_jitter_inside_each_step() {
        for _ in 0..50 {
            let j = jittered(Duration::from_secs(2));
            assert!(
                j >= Duration::from_secs(1) && j <= Duration::from_secs(2),
                "{j:?}"
            );
        }
        let mut backoff = Backoff::default();
        let steps: Vec<Duration> = (0..10).map(|_| backoff.step()).collect();
        assert_eq!(steps[0], BACKOFF_START);
        assert_eq!(steps[1], BACKOFF_START * 2);
        assert_eq!(steps[9], BACKOFF_CAP);
        backoff.reset();
        assert_eq!(backoff.step(), BACKOFF_START);
    }

    #[test]
    fn refusals_of_the_agent_are_fatal_and_the_rest_passing() {
        let body = br#"{"error":{"code":"unauthorized","message":"no"}}"#;
        assert!(matches!(
            classify(StatusCode::UNAUTHORIZED, body),
            Trouble::Fatal(line) if line.contains("(unauthorized)")
        ));
        assert!(matches!(
            classify(StatusCode::UPGRADE_REQUIRED, b""),
            Trouble::Fatal(_)
        ));
        assert!(matches!(
            classify(StatusCode::SERVICE_UNAVAILABLE, b"x"),
            Trouble::Passing(_)
        ));
    }
}
