//! The `h123` command line: argument parsing and dispatch to the engine.

pub mod address_text;
pub mod agent_cmd;
pub mod bench_cmd;
pub mod bench_text;
pub mod compare_cmd;
pub mod compare_text;
pub mod exit;
pub mod junit;
pub mod live_line;
pub mod measure_args;
pub mod monitor_cmd;
pub mod monitor_text;
pub mod probe_cmd;
pub mod remote;
pub mod request_body;
pub mod safety_args;
pub mod serve_cmd;
pub mod slo_text;
pub mod text;
pub mod usage_error;
pub mod watch_cmd;

use clap::{Parser, Subcommand};

/// Where does an HTTP request spend its time, over HTTP/1.1, HTTP/2 and HTTP/3?
#[derive(Debug, Parser)]
#[command(name = "h123", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure every phase of requests to URL, per protocol.
    #[command(after_help = exit::HELP)]
    Probe(probe_cmd::ProbeArgs),
    /// Probe URL again and again on a fixed schedule: a line per run, a summary at the end.
    #[command(after_help = watch_cmd::HELP)]
    Watch(watch_cmd::WatchArgs),
    /// Compare throughput and latency under load, per protocol.
    Bench(bench_cmd::BenchArgs),
    /// Compare two probe results: what is faster in B than in A, beyond the noise.
    #[command(after_help = compare_cmd::HELP)]
    Compare(compare_cmd::CompareArgs),
    /// Serve the REST API (and the web UI) that runs probes for others.
    Serve(serve_cmd::ServeArgs),
    /// Run probes for an h123 server from this machine (a vantage point).
    Agent(agent_cmd::AgentArgs),
    /// A server's monitors: probes on a schedule, their history and thresholds.
    Monitor(monitor_cmd::MonitorArgs),
}

/// Runs the parsed command line and returns the process exit code.
pub async fn run(cli: Cli) -> std::process::ExitCode {
    match cli.command {
        Command::Probe(args) => probe_cmd::run(args).await,
        Command::Watch(args) => watch_cmd::run(args).await,
        Command::Bench(args) => bench_cmd::run(args).await,
        Command::Compare(args) => compare_cmd::run(args).await,
        Command::Serve(args) => serve_cmd::run(args).await,
        Command::Agent(args) => agent_cmd::run(args).await,
        Command::Monitor(args) => monitor_cmd::run(args).await,
    }
}

/// Writes a command's output to standard output. `None` when it was
/// written; else the exit code to end with: success when the reader has
/// gone (a closed pipe, as in `h123 probe URL -o json | head -1`: the output
/// simply ends there, as Unix tools do), failure on any other write error.
pub(crate) fn emit(text: &str) -> Option<std::process::ExitCode> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => None,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Some(std::process::ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("h123: cannot write the output: {e}");
            Some(std::process::ExitCode::FAILURE)
        }
    }
}
