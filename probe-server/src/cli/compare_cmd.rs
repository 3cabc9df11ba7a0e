//! `h123 compare A B`: two results compared by the verdict's significance rule, from files
//! (what `h123 probe -o json` writes, or a record the API served) or from h123 servers
//! (permalinks, or ids with `--server`). The comparison is computed here, by the same code as
//! the server's `/api/v1/compare`, so results from two servers compare as well as from one.

use super::remote::{self, RemoteError};
use clap::{Args, ValueEnum};
use h123_shared::ProbeResult;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::compare::{Comparison, Side, compare, probe_id_in};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Output formats of `h123 compare`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareOutput {
    /// The summary, caveats and a table, for people.
    Text,
    /// The comparison in the API's schema.
    Json,
}

/// Exit codes of `h123 compare`, for its `--help`.
pub const HELP: &str = "\
A and B are each a JSON file (`h123 probe -o json` output, or a record from the API),
a permalink (https://host/r/ID), or, with --server, a probe id.

Exit codes:
  0  compared (whatever the answer)
  1  a server could not be reached or failed
  2  bad arguments, an unreadable file, an unknown or unfinished probe (one line on stderr)
  3  with --fail-if-slower: B is slower than A beyond the noise somewhere";

/// Options of `h123 compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first result (the "before").
    pub a: String,
    /// The second result (the "after").
    pub b: String,
    /// The h123 server that bare ids are read from.
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
    /// Trust only the CA certificates in this PEM file for https servers.
    #[arg(long, value_name = "FILE")]
    pub server_cacert: Option<PathBuf>,
    /// Exit with 3 when B is slower than A beyond the noise (a regression gate for CI).
    #[arg(long)]
    pub fail_if_slower: bool,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = CompareOutput::Text)]
    pub output: CompareOutput,
}

/// Runs `h123 compare` and returns its exit code.
pub async fn run(args: CompareArgs) -> ExitCode {
    let sides = match (side(&args, &args.a).await, side(&args, &args.b).await) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            let (line, code) = match e {
                RemoteError::Refused(line) => (line, 2),
                RemoteError::Trouble(line) => (line, 1),
            };
            eprintln!("h123: {line}");
            return ExitCode::from(code);
        }
    };
    let c = compare(&sides.0, &sides.1);
    let text = match args.output {
        CompareOutput::Json => {
            format!("{}\n", serde_json::to_string_pretty(&c).unwrap_or_default())
        }
        CompareOutput::Text => super::compare_text::report(&c),
    };
    if let Some(code) = super::emit(&text) {
        return code;
    }
    if args.fail_if_slower && b_is_slower(&c) {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// One side's result: from a file, a permalink's server, or `--server`.
async fn side(args: &CompareArgs, given: &str) -> Result<ProbeResult, RemoteError> {
    let refused = RemoteError::Refused;
    if let Some((server, id)) = permalink(given) {
        return fetched(&server, args.server_cacert.as_deref(), id).await;
    }
    let path = Path::new(given);
    if path.exists() {
        return from_file(path);
    }
    match (&args.server, probe_id_in(given)) {
        (Some(server), Some(id)) => fetched(server, args.server_cacert.as_deref(), id).await,
        (None, Some(_)) => Err(refused(format!(
            "`{given}` looks like a probe id: say which server holds it with --server URL"
        ))),
        (_, None) => Err(refused(format!(
            "`{given}` is neither a file, a permalink (https://host/r/ID) nor a probe id"
        ))),
    }
}

/// The server and id of a permalink (`http(s)://host/r/ID`).
fn permalink(given: &str) -> Option<(String, &str)> {
    let url = url::Url::parse(given).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let id = probe_id_in(given)?;
    Some((url.origin().ascii_serialization(), id))
}

/// A finished probe's result, read from the h123 server at `server`.
async fn fetched(
    server: &str,
    cacert: Option<&Path>,
    id: &str,
) -> Result<ProbeResult, RemoteError> {
    let body = remote::get(server, cacert, &format!("/api/v1/probes/{id}")).await?;
    let record: ProbeRecord = serde_json::from_slice(&body).map_err(|e| {
        RemoteError::Trouble(format!(
            "{server} answered probe {id} with something else than a record: {e}"
        ))
    })?;
    if record.status == ProbeStatus::Running {
        return Err(RemoteError::Refused(format!(
            "probe {id} is still running: compare it once it has finished"
        )));
    }
    Ok(record.result)
}

/// A result from a JSON file: a record (its `result`) or a result.
fn from_file(path: &Path) -> Result<ProbeResult, RemoteError> {
    let shown = path.display();
    let bytes = std::fs::read(path)
        .map_err(|e| RemoteError::Refused(format!("cannot read {shown}: {e}")))?;
    if let Ok(record) = serde_json::from_slice::<ProbeRecord>(&bytes) {
        if record.status == ProbeStatus::Running {
            return Err(RemoteError::Refused(format!(
                "{shown} holds probe {} while it was still running: save it once it has finished",
                record.id
            )));
        }
        return Ok(record.result);
    }
    serde_json::from_slice::<ProbeResult>(&bytes).map_err(|e| {
        RemoteError::Refused(format!(
            "{shown} is not an h123 result or record (as `h123 probe -o json` writes): {e}"
        ))
    })
}

/// Whether this comparison found B slower than A beyond the noise.
pub fn b_is_slower(c: &Comparison) -> bool {
    c.groups
        .iter()
        .filter_map(|g| g.total())
        .any(|t| t.faster == Some(Side::A))
}
