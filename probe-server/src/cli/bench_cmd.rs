//! `h123 bench URL`: the load comparison from a terminal, with a live
//! progress line on stderr and the final table (or JSON) on stdout.

use crate::bench::{BenchLimits, BenchLive, BenchPlan, Bencher};
use crate::probe::guard::ConnectPolicy;
use crate::probe::tls::TrustSettings;
use clap::{Args, ValueEnum};
use h123_shared::bench::{BenchOptions, BenchResult};
use h123_shared::sweep::{Sweep, SweepResult, SweepStep};
use h123_shared::{Method, Protocol};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Output formats of `h123 bench`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchOutput {
    /// The comparison table, for people.
    Text,
    /// The full result in the h123 schema.
    Json,
    /// A sweep's decay chart as an SVG picture (with --sweep only).
    Svg,
}

/// Options of `h123 bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The http or https URL to load.
    pub url: String,
    /// Protocols to compare, in turn, comma-separated: h1, h2, h3.
    #[arg(long = "proto", value_delimiter = ',', default_value = "h1,h2,h3")]
    pub protocols: Vec<Protocol>,
    /// Requests in flight at once.
    #[arg(short = 'c', long, default_value_t = 16)]
    pub concurrency: u32,
    /// How long to measure each protocol: 10s, 500ms, 2m (default 10s).
    #[arg(short = 'd', long, value_parser = parse_duration, conflicts_with = "requests")]
    pub duration: Option<Duration>,
    /// Measure this many requests per protocol instead of a duration.
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// Connections for HTTP/2 and HTTP/3, with the in-flight requests spread
    /// over them as streams (default 1). HTTP/1.1 opens one per in-flight request.
    #[arg(long)]
    pub connections: Option<u32>,
    /// Send at this fixed rate (requests per second), measuring latency from
    /// each request's intended send time.
    #[arg(long, value_name = "PER_SEC")]
    pub rate: Option<u32>,
    /// Send, but do not count, requests for this long first: 2s, 500ms.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    pub warmup: Duration,
    /// Open a new connection for every request (shows handshake cost).
    #[arg(long)]
    pub cold: bool,
    /// Request method: GET or HEAD.
    #[arg(short = 'X', long = "request", default_value = "GET")]
    pub method: Method,
    /// Extra request header, "Name: value" (repeatable).
    #[arg(short = 'H', long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Limit on each request, in seconds; a slower one counts as a timeout.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub timeout: f64,
    /// Skip certificate verification.
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Trust only the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Emulated network conditions for every protocol, both directions: a
    /// profile (3g, 4g, cable, lossy-mobile, satellite) or figures such as
    /// rtt=100ms,jitter=10ms,loss=2%,down=10mbit,up=2mbit.
    #[arg(long, value_name = "PROFILE", value_parser = h123_shared::network::NetworkProfile::parse)]
    pub network: Option<h123_shared::network::NetworkProfile>,
    /// Run the bench at each step of one network figure, every protocol at
    /// every step (a decay curve): rtt=0,25,50,100,200ms or loss=0,0.5,1,2,5%
    /// (on top of --network, if given).
    #[arg(long, value_name = "FIGURE=STEPS", value_parser = Sweep::parse)]
    pub sweep: Option<Sweep>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = BenchOutput::Text)]
    pub output: BenchOutput,
}

impl BenchArgs {
    /// The bench options these arguments ask for.
    ///
    /// # Errors
    /// A readable line when a header is malformed.
    pub fn options(&self) -> Result<BenchOptions, String> {
        let headers = self
            .headers
            .iter()
            .map(|h| super::measure_args::parse_header(h))
            .collect::<Result<Vec<_>, String>>()?;
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err(format!(
                "--timeout must be a positive number of seconds (got {})",
                self.timeout
            ));
        }
        Ok(BenchOptions {
            url: self.url.clone(),
            protocols: self.protocols.clone(),
            concurrency: self.concurrency,
            connections: self.connections,
            duration_ms: self.duration.map(|d| d.as_millis() as u64),
            requests: self.requests,
            rate: self.rate,
            warmup_ms: self.warmup.as_millis() as u64,
            cold: self.cold,
            method: self.method,
            headers,
            timeout_ms: ((self.timeout * 1000.0).round() as u64).max(1),
            insecure: self.insecure,
            network: self.network.clone(),
            sweep: self.sweep.clone(),
            visibility: h123_shared::Visibility::Unlisted,
            keep_secret: Vec::new(),
        })
    }
}

/// Parses `10s`, `500ms`, `2m`, `1.5s` or a bare number of seconds.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 10s, 500ms or 2m"))?;
    let secs = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "`{text}`: unknown unit `{unit}` (use ms, s, m or h)"
            ));
        }
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` is out of range"))
}

/// Runs the bench (or the sweep) and prints it; exit code 0 when every
/// protocol ran, 1 when one could not run at all, 2 when the options were
/// refused.
pub async fn run(args: BenchArgs) -> ExitCode {
    if args.output == BenchOutput::Svg && args.sweep.is_none() {
        eprintln!("h123: -o svg draws a sweep's decay chart: add --sweep");
        return ExitCode::from(2);
    }
    if args.sweep.is_some() {
        return match sweep_all(&args).await {
            Ok(result) => {
                let text = match args.output {
                    BenchOutput::Json => format!(
                        "{}\n",
                        serde_json::to_string_pretty(&result).unwrap_or_default()
                    ),
                    BenchOutput::Text => super::bench_text::sweep_report(&result),
                    BenchOutput::Svg => crate::api::decay_svg::render(&result),
                };
                if let Some(code) = super::emit(&text) {
                    return code;
                }
                let failed = result.steps.iter().flat_map(|s| &s.result.runs);
                match failed.clone().any(|r| r.failure.is_some()) {
                    true => ExitCode::FAILURE,
                    false => ExitCode::SUCCESS,
                }
            }
            Err(message) => {
                eprintln!("h123: {message}");
                ExitCode::from(2)
            }
        };
    }
    match bench(&args).await {
        Ok(result) => {
            let text = match args.output {
                BenchOutput::Json => format!(
                    "{}\n",
                    serde_json::to_string_pretty(&result).unwrap_or_default()
                ),
                // A picture without a sweep was refused before the bench ran.
                BenchOutput::Text | BenchOutput::Svg => super::bench_text::report(&result),
            };
            if let Some(code) = super::emit(&text) {
                return code;
            }
            if result.runs.iter().any(|r| r.failure.is_some()) {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(message) => {
            eprintln!("h123: {message}");
            ExitCode::from(2)
        }
    }
}

/// Validates the arguments and runs the bench, with a progress line on a
/// terminal.
///
/// # Errors
/// One readable line when the options are refused or the CA file is bad.
pub async fn bench(args: &BenchArgs) -> Result<BenchResult, String> {
    let plan =
        BenchPlan::new(args.options()?, &BenchLimits::default()).map_err(|e| e.to_string())?;
    Ok(measure(&bencher(args)?, &plan, "").await)
}

/// Runs the bench at each step of its `--sweep`, every protocol at every step.
///
/// # Errors
/// One readable line when the options are refused or the CA file is bad.
pub async fn sweep_all(args: &BenchArgs) -> Result<SweepResult, String> {
    let bencher = bencher(args)?;
    let plan =
        BenchPlan::new(args.options()?, &BenchLimits::default()).map_err(|e| e.to_string())?;
    let options = plan.options().clone();
    let sweep = options.sweep.clone().ok_or("no --sweep was given")?;
    let mut steps = Vec::new();
    for (i, (value, step)) in plan.steps.iter().enumerate() {
        let prefix = format!(
            "step {}/{} ({}) ",
            i + 1,
            plan.steps.len(),
            sweep.label(*value)
        );
        let result = measure(&bencher, step, &prefix).await;
        steps.push(SweepStep {
            value: *value,
            result,
        });
    }
    Ok(SweepResult {
        options,
        sweep,
        steps,
    })
}

/// The bench engine with the arguments' trust. The CLI runs with its user's
/// own rights: any target is allowed.
fn bencher(args: &BenchArgs) -> Result<Bencher, String> {
    let trust = match &args.cacert {
        Some(path) => TrustSettings::from_ca_file(path)?,
        None => TrustSettings::system(),
    };
    Ok(Bencher::new(trust, ConnectPolicy::allow_all()))
}

/// Runs `plan`, with a progress line (after `prefix`) on a terminal.
async fn measure(bencher: &Bencher, plan: &BenchPlan, prefix: &str) -> BenchResult {
    let live = BenchLive::default();
    let show = std::io::stderr().is_terminal();
    let mut bench = std::pin::pin!(bencher.run(plan, &live));
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let result = loop {
        tokio::select! {
            result = &mut bench => break result,
            _ = tick.tick(), if show => {
                eprint!("\r\x1b[2K{prefix}{}", super::bench_text::progress_line(plan, &live.snapshot()));
                let _ = std::io::stderr().flush();
            }
        }
    };
    if show {
        eprint!("\r\x1b[2K");
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(line: &[&str]) -> BenchArgs {
        let mut argv = vec!["h123", "bench"];
        argv.extend_from_slice(line);
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Bench(a) => a,
            other => panic!("not `h123 bench`: {other:?}"),
        }
    }

    #[test]
    fn flags_map_to_options() {
        let o = args(&[
            "https://e.test/",
            "--proto",
            "h2,h3",
            "-c",
            "64",
            "-d",
            "1.5s",
            "--connections",
            "4",
            "--rate",
            "1000",
            "--warmup",
            "500ms",
            "-H",
            "X-A: b",
            "--timeout",
            "2",
        ])
        .options()
        .unwrap();
        assert_eq!(o.protocols, vec![Protocol::H2, Protocol::H3]);
        assert_eq!((o.concurrency, o.connections), (64, Some(4)));
        assert_eq!((o.duration_ms, o.requests), (Some(1500), None));
        assert_eq!((o.rate, o.warmup_ms, o.timeout_ms), (Some(1000), 500, 2000));
        assert_eq!(o.headers[0].name, "x-a");
    }

    #[test]
    fn a_sweep_is_read_and_a_bad_one_refused() {
        let a = args(&[
            "https://e.test/",
            "--sweep",
            "loss=0,1,5%",
            "--network",
            "rtt=20ms",
        ]);
        let sweep = a.sweep.unwrap();
        assert_eq!(sweep.steps, vec![0, 100, 500]);
        let bad = crate::cli::Cli::try_parse_from([
            "h123",
            "bench",
            "https://e.test/",
            "--sweep",
            "rtt=9,1ms",
        ]);
        assert!(bad.unwrap_err().to_string().contains("must grow"));
    }

    #[test]
    fn durations_read_like_other_load_tools() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("10 parsecs").is_err());
        assert!(parse_duration("s").is_err());
    }
}
