//! The `h123` binary: parses the command line and hands over to the library.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = h123::cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("h123: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(h123::cli::run(cli))
}
