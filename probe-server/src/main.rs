//! The `h123` binary: parses the command line and hands over to the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match h123::cli::usage_error::parse::<h123::cli::Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    // A probe (and a watch, probing again and again) runs its requests one
    // after another: on one thread, every phase end is seen by the task that
    // waits for it, with no cross-thread wake-up in the measured path. The
    // bench and the server want every core.
    let mut builder = match cli.command {
        h123::cli::Command::Probe(_) | h123::cli::Command::Watch(_) => {
            tokio::runtime::Builder::new_current_thread()
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("h123: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(h123::cli::run(cli))
}
