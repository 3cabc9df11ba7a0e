//! Packet captures on loopback with tshark, and reading them back (decrypted
//! with a TLS key log when one is given). tshark is installed by
//! `scripts/test`; without it a test that captures fails, saying so.
//! Capturing on loopback needs root or CAP_NET_RAW, as CI has.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running tshark capture, stopped (and its file completed) when dropped.
pub struct Capture(Child);

impl Capture {
    /// Captures loopback traffic on `port` (TCP and UDP) into `file`, once
    /// tshark says it is capturing.
    pub fn start(port: u16, file: &Path) -> Capture {
        let mut child = Command::new(tshark())
            .args(["-n", "-i", "lo", "-f", &format!("port {port}"), "-w"])
            .arg(file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tshark starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("Capture started") => break,
                Some(Ok(_)) => continue,
                other => panic!("tshark stopped before capturing: {other:?}"),
            }
        }
        // Keep draining its stderr so the pipe never fills.
        std::thread::spawn(move || lines.for_each(drop));
        Capture(child)
    }

    /// Stops the capture the way Ctrl-C does, so the file is complete.
    pub fn stop(mut self) {
        let pid = self.0.id().to_string();
        let status = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(status.success(), "kill -INT tshark");
        self.0.wait().unwrap();
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tshark() -> &'static str {
    let path = "/usr/bin/tshark";
    assert!(
        Path::new(path).exists(),
        "tshark is not installed: scripts/test installs it (apt-get install tshark)"
    );
    path
}

/// The values of `field` in the packets matching `filter`, reading `capture`
/// (traffic on `port`, decoded as TLS over TCP and QUIC over UDP) with the
/// key log when one is given.
pub fn read(
    capture: &Path,
    port: u16,
    keys: Option<&Path>,
    filter: &str,
    field: &str,
) -> Vec<String> {
    read_rows(capture, port, keys, filter, &[field])
        .into_iter()
        .map(|mut row| row.swap_remove(0))
        .collect()
}

/// Like [`read`], with several fields: one row per packet, a value per field
/// (empty where the packet has none).
pub fn read_rows(
    capture: &Path,
    port: u16,
    keys: Option<&Path>,
    filter: &str,
    fields: &[&str],
) -> Vec<Vec<String>> {
    let mut command = Command::new(tshark());
    command.args(["-n", "-r"]).arg(capture);
    command.args(["-d", &format!("tcp.port=={port},tls")]);
    command.args(["-d", &format!("udp.port=={port},quic")]);
    if let Some(keys) = keys {
        command
            .arg("-o")
            .arg(format!("tls.keylog_file:{}", keys.display()));
    }
    command.args(["-Y", filter, "-T", "fields"]);
    for field in fields {
        command.args(["-e", field]);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "tshark -Y {filter}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| line.split('\t').map(str::to_owned).collect())
        .collect()
}
