//! `h123 probe URL`: options, running the engine, and choosing the output.

use super::exit::Exit;
use super::measure_args::{self, MeasureArgs};
use super::remote::{self, RemoteError};
use clap::{Args, ValueEnum};
use h123_shared::api::ProbeStatus;
use h123_shared::slo::{self, Gate, SloReport};
use h123_shared::{ConnectionMode, ProbeOptions, ProbeResult, Protocol};
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `h123 probe`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// Waterfalls, a comparison table, facts and findings, for people.
    Text,
    /// The full result in the h123 schema.
    Json,
    /// HAR 1.2, for browser dev tools and HAR viewers.
    Har,
    /// curl's `-w` timing variables, per attempt.
    Curl,
    /// JUnit XML: a testsuite per protocol, a testcase per attempt and SLO gate.
    Junit,
}

/// Options of `h123 probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// What to measure, and this machine's side of it.
    #[command(flatten)]
    pub measure: MeasureArgs,
    /// Compare connection arms: one probe per arm (cold, warm, resumed), then a
    /// table of what setup costs per protocol and arm (text or json output).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["cold", "resumed"])]
    pub arms: Vec<ConnectionMode>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// SLO gates, [PROTO:]METRIC[.STAT]=DURATION, comma-separated or repeated,
    /// e.g. total=300ms,h2:ttfb.p95=150ms; a breach exits 3 (see Exit codes).
    ///
    /// METRIC: dns, connect, tls, quic, send, wait, receive, ttfb, total. STAT:
    /// median (default), p95 or max, by nearest rank over each protocol's
    /// attempts (a redirect chain is one attempt; a setup phase is judged over
    /// the attempts that opened a connection). DURATION: a number with us, ms
    /// or s. A gate is met when the statistic is at most the threshold; an
    /// attempt that failed or answered 4xx/5xx never meets a gate; a gate
    /// without PROTO applies to every protocol measured.
    #[arg(long, value_name = "GATES", conflicts_with = "arms")]
    pub slo: Vec<String>,
    /// Also write the result as JUnit XML to FILE (with any --output).
    #[arg(long, value_name = "FILE", conflicts_with = "arms")]
    pub junit: Option<PathBuf>,
    /// Run the probe on this h123 server (its REST API) instead of here, and
    /// print what it measured, with the permalink on standard error. The
    /// server's own limits and safety policy apply; options about this
    /// machine's side (proxy, client certificate, key log, qlog, CA file)
    /// do not travel.
    #[arg(
        long,
        value_name = "URL",
        env = "H123_SERVER",
        conflicts_with_all = ["arms", "proxy", "proxy_env", "cert", "keylog", "qlog", "cacert"]
    )]
    pub server: Option<String>,
    /// Trust only the CA certificates in this PEM file for an https --server.
    #[arg(long, value_name = "FILE", requires = "server")]
    pub server_cacert: Option<PathBuf>,
    /// Measure from these vantages of --server (its own, `server` by default,
    /// and its agents': `h123 serve` lists them at /api/v1/vantages), each
    /// printed as a group, then where the answer differs between them (-o
    /// har: the server's HAR, a page per vantage and protocol; JUnit: a
    /// testsuite per vantage and protocol).
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        requires = "server",
        conflicts_with = "slo"
    )]
    pub from: Vec<String>,
}

/// Runs the probe, prints it, writes the `--junit` file, and exits by the
/// table in [`super::exit`].
pub async fn run(args: ProbeArgs) -> ExitCode {
    let outcome = match slo_gates(&args.slo, &args.measure.protocols) {
        Err(message) => Err(message),
        Ok(_) if !args.from.is_empty() => match vantages_probe(&args).await {
            Ok((text, results)) => Ok((text, results, None)),
            Err(RemoteError::Refused(message)) => Err(message),
            Err(RemoteError::Trouble(message)) => {
                eprintln!("h123: {message}");
                return Exit::Trouble.into();
            }
        },
        Ok(gates) if args.server.is_some() => match remote_probe(&args).await {
            Ok(result) => {
                let slo = gates.map(|g| slo::evaluate(&result, &g));
                let text = render(&result, args.output, slo.as_ref());
                Ok((text, vec![result], slo))
            }
            Err(RemoteError::Refused(message)) => Err(message),
            Err(RemoteError::Trouble(message)) => {
                eprintln!("h123: {message}");
                return Exit::Trouble.into();
            }
        },
        Ok(gates) if args.arms.is_empty() => probe(&args).await.map(|result| {
            let slo = gates.map(|g| slo::evaluate(&result, &g));
            let text = render(&result, args.output, slo.as_ref());
            (text, vec![result], slo)
        }),
        Ok(_) => compare_arms(&args)
            .await
            .map(|(text, results)| (text, results, None)),
    };
    match outcome {
        Ok((text, results, slo)) => {
            if let Some(code) = super::emit(&text) {
                return code;
            }
            // With --from, `vantages_probe` wrote the JUnit file of every vantage.
            if let (Some(path), [result], true) = (&args.junit, &results[..], args.from.is_empty())
            {
                let xml = super::junit::report(result, slo.as_ref());
                if let Err(e) = std::fs::write(path, xml) {
                    eprintln!("h123: cannot write the JUnit file {}: {e}", path.display());
                    return Exit::Trouble.into();
                }
            }
            Exit::of(&results, slo.as_ref()).into()
        }
        Err(message) => {
            eprintln!("h123: {message}");
            Exit::Usage.into()
        }
    }
}

/// The `--slo` gates, checked against `--proto`; `None` without `--slo`.
///
/// # Errors
/// One readable line naming the gate that does not parse or names a protocol not measured.
pub(super) fn slo_gates(
    slo: &[String],
    protocols: &[Protocol],
) -> Result<Option<Vec<Gate>>, String> {
    if slo.is_empty() {
        return Ok(None);
    }
    let gates = slo::parse_gates(slo)?;
    slo::check_protocols(&gates, protocols)?;
    Ok(Some(gates))
}

/// Runs the probe on `--server` and returns the result it measured, saying
/// where to see it. A probe the server did not finish is trouble, not a result.
async fn remote_probe(args: &ProbeArgs) -> Result<ProbeResult, RemoteError> {
    Ok(remote_record(args).await?.result)
}

/// Runs the probe on `--server` from the `--from` vantages and renders each
/// vantage's result as a group (`-o json`: the runs as an array), then the
/// cross-vantage findings; `-o har` is the server's own HAR of the record,
/// `-o junit` and `--junit` a testsuite per vantage and protocol. A vantage
/// without a result is trouble, once all are printed.
async fn vantages_probe(args: &ProbeArgs) -> Result<(String, Vec<ProbeResult>), RemoteError> {
    if args.output == Output::Curl {
        return Err(RemoteError::Refused(
            "--from prints text, json, har or junit: a curl command runs from one place, not from a vantage"
                .into(),
        ));
    }
    let record = remote_record(args).await?;
    let har = match args.output {
        Output::Har => {
            let server = args.server.as_deref().unwrap_or_default();
            let path = h123_shared::api::ProbeLinks::for_id(&record.id).har;
            let body = remote::get(server, args.server_cacert.as_deref(), &path).await?;
            Some(String::from_utf8_lossy(&body).into_owned())
        }
        _ => None,
    };
    let url = record.options.url.clone();
    let runs = if record.vantages.is_empty() {
        // A server that ran it alone (only its own vantage was named).
        vec![h123_shared::vantage::VantageRun {
            vantage: record
                .result
                .vantage
                .clone()
                .unwrap_or_else(|| h123_shared::vantage::Vantage::named("server")),
            result: Some(record.result),
            problem: None,
        }]
    } else {
        record.vantages
    };
    let results: Vec<ProbeResult> = runs.iter().filter_map(|r| r.result.clone()).collect();
    let text = match (args.output, har) {
        (_, Some(har)) => format!("{}\n", har.trim_end()),
        (Output::Json, _) => format!(
            "{}\n",
            serde_json::to_string_pretty(&runs).unwrap_or_default()
        ),
        (Output::Junit, _) => super::junit::vantages_report(&url, &runs),
        _ => super::text::vantages_report(&runs, super::text::use_color()),
    };
    if let Some(path) = &args.junit {
        std::fs::write(path, super::junit::vantages_report(&url, &runs)).map_err(|e| {
            RemoteError::Trouble(format!(
                "cannot write the JUnit file {}: {e}",
                path.display()
            ))
        })?;
    }
    if let Some(missing) = runs.iter().find(|r| r.result.is_none()) {
        // Printed through `emit` (a closed stdout is no panic); the exit code
        // says a vantage is missing either way.
        let _ = super::emit(&text);
        return Err(RemoteError::Trouble(format!(
            "no result from {}: {}",
            missing.vantage.shown(),
            missing
                .problem
                .as_deref()
                .unwrap_or("it did not run the probe")
        )));
    }
    Ok((text, results))
}

/// Runs the probe on `--server` (from `--from`'s vantages, if any) and
/// returns its finished record, saying where to see it.
async fn remote_record(args: &ProbeArgs) -> Result<h123_shared::api::ProbeRecord, RemoteError> {
    let server = args.server.as_deref().unwrap_or_default();
    let mut options = args.measure.options().map_err(RemoteError::Refused)?;
    options.vantages.clone_from(&args.from);
    let finished = remote::probe(server, args.server_cacert.as_deref(), &options).await?;
    eprintln!("h123: measured by {server}: {}", finished.permalink);
    match finished.record.status {
        ProbeStatus::Done => Ok(finished.record),
        status => Err(RemoteError::Trouble(format!(
            "the server ended the probe as {} before it finished",
            status.as_str()
        ))),
    }
}

/// Validates the arguments and runs the probe. The CLI runs with its user's
/// own rights, so it may probe any address.
///
/// # Errors
/// One readable line when the options are refused or the CA file is bad.
pub async fn probe(args: &ProbeArgs) -> Result<ProbeResult, String> {
    let options = args.measure.options()?;
    run_plan(&args.measure, options).await
}

async fn run_plan(args: &MeasureArgs, options: ProbeOptions) -> Result<ProbeResult, String> {
    let plan = measure_args::plan(options)?;
    let engine = args.ready_engine().await?;
    let result = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        super::live_line::run(&engine, &plan).await
    } else {
        engine.run(&plan).await
    };
    Ok(h123_shared::analysis::analyzed(result))
}

/// One probe per arm, one after another, and the comparison in the chosen output.
async fn compare_arms(args: &ProbeArgs) -> Result<(String, Vec<ProbeResult>), String> {
    if !matches!(args.output, Output::Text | Output::Json) {
        return Err("--arms writes text or json output only".to_owned());
    }
    let mut results = Vec::new();
    let asked = args.measure.options()?;
    for &arm in &args.arms {
        let mut options = asked.clone();
        options.mode = arm;
        results.push(run_plan(&args.measure, options).await?);
    }
    let rows = h123_shared::arms::arm_table(&results);
    let text = match args.output {
        Output::Json => {
            let both = serde_json::json!({ "arms": rows, "results": results });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&both).unwrap_or_default()
            )
        }
        _ => super::text::arms_report(&rows),
    };
    Ok((text, results))
}

/// The result in the chosen output format, with the judgement of its SLO
/// gates when given (text: a closing section; json: an `slo` field; junit:
/// testcases).
pub fn render(result: &ProbeResult, output: Output, slo: Option<&SloReport>) -> String {
    match output {
        Output::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&WithSlo { result, slo }).unwrap_or_default()
        ),
        Output::Har => format!(
            "{}\n",
            serde_json::to_string_pretty(&h123_shared::har::to_har(result)).unwrap_or_default()
        ),
        Output::Curl => super::text::curl_report(result),
        Output::Junit => super::junit::report(result, slo),
        Output::Text => {
            let report = super::text::report(result, super::text::use_color());
            match slo {
                Some(slo) => report + &super::slo_text::section(slo),
                None => report,
            }
        }
    }
}

/// `-o json`: the result, with an `slo` field after its own when gates were given.
#[derive(serde::Serialize)]
pub(super) struct WithSlo<'a> {
    /// The result.
    #[serde(flatten)]
    pub(super) result: &'a ProbeResult,
    /// Its gates' judgement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) slo: Option<&'a SloReport>,
}
