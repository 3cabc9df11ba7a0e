//! TLS secrets in the NSS key log format, appended to a file the CLI user
//! names (`--keylog`, `SSLKEYLOGFILE`), so Wireshark can decrypt a capture
//! of h1, h2 and h3 traffic. `h123 serve` never makes one.

use rustls::KeyLog;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A key log file opened for appending (created `0600` when new).
#[derive(Debug)]
pub struct KeyLogPath {
    path: PathBuf,
    file: Mutex<File>,
}

impl KeyLogPath {
    /// Opens `path` for appending.
    ///
    /// # Errors
    /// One readable line when the file cannot be opened or created.
    pub fn open(path: &Path) -> Result<Self, String> {
        let mut options = OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options
            .open(path)
            .map_err(|e| format!("cannot open key log file {}: {e}", path.display()))?;
        Ok(KeyLogPath {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl KeyLog for KeyLogPath {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let line = format!("{label} {} {}\n", hex(client_random), hex(secret));
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // A key log is a debugging aid: a failed write must not fail the probe.
        let _ = file.write_all(line.as_bytes());
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_in_the_nss_format_and_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.log");
        std::fs::write(&path, "# earlier\n").unwrap();
        let log = KeyLogPath::open(&path).unwrap();
        log.log("CLIENT_TRAFFIC_SECRET_0", &[0x01, 0xab], &[0xff]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# earlier\nCLIENT_TRAFFIC_SECRET_0 01ab ff\n"
        );
        let err = KeyLogPath::open(&dir.path().join("no/such/dir")).unwrap_err();
        assert!(err.starts_with("cannot open key log file"), "{err}");
    }
}
