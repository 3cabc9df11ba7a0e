//! qlog of HTTP/3 connections (quinn's qlog support), one file per
//! connection in a directory the CLI's user chose, for qvis or any viewer.

use super::failure::failure;
use h123_shared::{Failure, FailureKind, Phase};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

/// Connections given a qlog file so far by this process (part of each name).
static CONNECTIONS: AtomicU32 = AtomicU32::new(0);

/// A transport configuration (quinn's defaults) whose connection streams its
/// qlog into a new `.sqlog` file (JSON text sequences) in `dir`.
///
/// # Errors
/// When the file cannot be created: the attempt fails in the quic phase,
/// saying where.
pub fn transport(dir: &Path) -> Result<quinn::TransportConfig, Failure> {
    let number = CONNECTIONS.fetch_add(1, Ordering::Relaxed) + 1;
    let name = format!(
        "h123-{}-{}-{number}.sqlog",
        super::trace::unix_ms(),
        std::process::id()
    );
    let path = dir.join(name);
    let file = File::create(&path).map_err(|e| {
        failure(
            Phase::Quic,
            FailureKind::Io,
            format!("cannot create the qlog file {}: {e}", path.display()),
        )
    })?;
    let mut qlog = quinn::QlogConfig::default();
    qlog.writer(Box::new(BufWriter::new(file)))
        .title(Some("h123 probe".to_owned()))
        .start_time(super::trace::now());
    let mut transport = quinn::TransportConfig::default();
    transport.qlog_stream(qlog.into_stream());
    Ok(transport)
}
