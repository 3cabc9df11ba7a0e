//! `h123 monitor create|list|show|series|pause|resume|delete --server URL`: a server's
//! monitors through its REST API (`/api/v1/monitors`), in words or as its JSON.

use super::monitor_text;
use super::remote::{self, RemoteError};
use clap::{Args, Subcommand, ValueEnum};
use h123_shared::Protocol;
use h123_shared::monitor::{Monitor, MonitorCreated, MonitorList, Series};
use http::Method;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// `h123 monitor`: the server, how to print, and what to do.
#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// The h123 server whose monitors these are.
    #[arg(long, value_name = "URL", global = true)]
    pub server: Option<String>,
    /// Trust only the CA certificates in this PEM file for an https server.
    #[arg(long, value_name = "FILE", global = true)]
    pub server_cacert: Option<PathBuf>,
    /// The owner token to act and list under (a monitor's pause, resume and delete need its
    /// own); from H123_OWNER_TOKEN when not given, which keeps it out of `ps`.
    #[arg(
        long,
        value_name = "TOKEN",
        global = true,
        env = "H123_OWNER_TOKEN",
        hide_env_values = true
    )]
    pub owner_token: Option<String>,
    /// Output: words, or the API's JSON.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = MonitorOutput::Text, global = true)]
    pub output: MonitorOutput,
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// How `h123 monitor` prints.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum MonitorOutput {
    /// Words and tables.
    Text,
    /// The API's JSON.
    Json,
}

/// What `h123 monitor` does.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Create a monitor: URL probed every INTERVAL, judged on its thresholds.
    Create {
        /// The URL to probe.
        url: String,
        /// How often: 30s, 5m, 1h (the server says its shortest).
        #[arg(long, default_value = "5m", value_name = "INTERVAL")]
        every: String,
        /// Protocols to measure.
        #[arg(long = "proto", value_delimiter = ',', default_value = "h1,h2,h3")]
        protocols: Vec<Protocol>,
        /// A threshold, as `--slo` writes a gate: total=300ms, h3:ttfb.p95=150ms (repeatable).
        #[arg(long = "threshold", value_name = "GATE")]
        thresholds: Vec<String>,
        /// List the monitor (and its runs) for everyone.
        #[arg(long)]
        public: bool,
    },
    /// List the server's public monitors and your own.
    List,
    /// Show one monitor.
    Show {
        /// The monitor's id.
        id: String,
    },
    /// A metric of a monitor's runs over a window, per protocol.
    Series {
        /// The monitor's id.
        id: String,
        /// total, ttfb, dns, connect, tls or reused_total.
        #[arg(long, default_value = "total")]
        metric: String,
        /// Only this protocol.
        #[arg(long = "proto")]
        protocol: Option<Protocol>,
        /// The window, back from now: 1h, 24h, 30d is `720h`.
        #[arg(long, default_value = "24h", value_name = "INTERVAL")]
        since: String,
    },
    /// Hold a monitor's runs.
    Pause {
        /// The monitor's id.
        id: String,
    },
    /// Run a paused monitor again.
    Resume {
        /// The monitor's id.
        id: String,
    },
    /// Delete a monitor and its history.
    Delete {
        /// The monitor's id.
        id: String,
    },
}

/// Runs `h123 monitor`: 0 when done, 2 when refused (one line on stderr), 1 on trouble.
pub async fn run(args: MonitorArgs) -> ExitCode {
    match act(&args).await {
        Ok(text) => super::emit(&text).unwrap_or(ExitCode::SUCCESS),
        Err(RemoteError::Refused(line)) => {
            eprintln!("h123: {line}");
            ExitCode::from(2)
        }
        Err(RemoteError::Trouble(line)) => {
            eprintln!("h123: {line}");
            ExitCode::FAILURE
        }
    }
}

/// What the action prints.
async fn act(args: &MonitorArgs) -> Result<String, RemoteError> {
    let server = args.server.as_deref().ok_or_else(|| {
        RemoteError::Refused("--server URL is needed: monitors live on an h123 server".into())
    })?;
    let call = |method: Method, path: String, body: Vec<u8>| async move {
        remote::call(
            server,
            args.server_cacert.as_deref(),
            method,
            &path,
            args.owner_token.as_deref(),
            body,
        )
        .await
    };
    let json = args.output == MonitorOutput::Json;
    match &args.action {
        Action::Create {
            url,
            every,
            protocols,
            thresholds,
            public,
        } => {
            let thresholds = thresholds
                .iter()
                .map(|gate| {
                    gate.split_once('=')
                        .map(|(metric, limit)| (metric.to_owned(), limit.to_owned()))
                        .ok_or_else(|| {
                            RemoteError::Refused(format!(
                                "--threshold `{gate}` must read METRIC=DURATION, e.g. total=300ms"
                            ))
                        })
                })
                .collect::<Result<BTreeMap<_, _>, _>>()?;
            let body = serde_json::json!({
                "url": url,
                "protocols": protocols,
                "every": every,
                "thresholds": thresholds,
                "visibility": if *public { "public" } else { "unlisted" },
            });
            let answer = call(
                Method::POST,
                "/api/v1/monitors".into(),
                body.to_string().into_bytes(),
            )
            .await?;
            let created: MonitorCreated = parsed(&answer)?;
            if args.owner_token.is_none() {
                eprintln!(
                    "h123: keep this monitor's owner token (it pauses, resumes and deletes it): H123_OWNER_TOKEN={}",
                    created.owner_token
                );
            }
            Ok(shown(json, &answer, || {
                monitor_text::monitor(&created.monitor)
            }))
        }
        Action::List => {
            let answer = call(Method::GET, "/api/v1/monitors?limit=100".into(), Vec::new()).await?;
            let list: MonitorList = parsed(&answer)?;
            Ok(shown(json, &answer, || monitor_text::list(&list.items)))
        }
        Action::Show { id } => {
            let answer = call(
                Method::GET,
                format!("/api/v1/monitors/{}", checked(id)?),
                Vec::new(),
            )
            .await?;
            let monitor: Monitor = parsed(&answer)?;
            Ok(shown(json, &answer, || monitor_text::monitor(&monitor)))
        }
        Action::Series {
            id,
            metric,
            protocol,
            since,
        } => {
            let window = h123_shared::monitor::parse_every(since).map_err(|_| {
                RemoteError::Refused(format!(
                    "--since `{since}` is not an interval; write 1h or 24h"
                ))
            })?;
            let to = crate::probe::trace::unix_ms();
            let mut path = format!(
                "/api/v1/monitors/{}/series?metric={}&from={}&to={to}",
                checked(id)?,
                url::form_urlencoded::byte_serialize(metric.as_bytes()).collect::<String>(),
                to.saturating_sub(window)
            );
            if let Some(protocol) = protocol {
                path.push_str(&format!("&protocol={protocol}"));
            }
            let answer = call(Method::GET, path, Vec::new()).await?;
            let series: Series = parsed(&answer)?;
            Ok(shown(json, &answer, || monitor_text::series(&series)))
        }
        Action::Pause { id } | Action::Resume { id } => {
            let verb = if matches!(args.action, Action::Pause { .. }) {
                "pause"
            } else {
                "resume"
            };
            let answer = call(
                Method::POST,
                format!("/api/v1/monitors/{}/{verb}", checked(id)?),
                Vec::new(),
            )
            .await?;
            let monitor: Monitor = parsed(&answer)?;
            Ok(shown(json, &answer, || monitor_text::monitor(&monitor)))
        }
        Action::Delete { id } => {
            call(
                Method::DELETE,
                format!("/api/v1/monitors/{}", checked(id)?),
                Vec::new(),
            )
            .await?;
            Ok(if json {
                "{}\n".into()
            } else {
                format!("monitor {id} deleted\n")
            })
        }
    }
}

/// An id as a path segment: the API's ids are 12 URL-safe characters.
fn checked(id: &str) -> Result<&str, RemoteError> {
    if !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        Ok(id)
    } else {
        Err(RemoteError::Refused(format!("`{id}` is not a monitor id")))
    }
}

/// The server's JSON answer as `T`.
fn parsed<T: DeserializeOwned>(body: &[u8]) -> Result<T, RemoteError> {
    serde_json::from_slice(body).map_err(|e| {
        RemoteError::Trouble(format!("the server's answer is not what h123 sends: {e}"))
    })
}

/// The answer as JSON (as the server sent it) or in words.
fn shown(json: bool, body: &[u8], words: impl FnOnce() -> String) -> String {
    if json {
        format!("{}\n", String::from_utf8_lossy(body).trim_end())
    } else {
        words()
    }
}
