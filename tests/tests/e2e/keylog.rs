//! End-to-end: the TLS key log h123 writes (`--keylog`, `SSLKEYLOGFILE`)
//! decrypts a captured session in tshark, for HTTP/1.1, HTTP/2 and HTTP/3;
//! the same capture read without it shows none of the requests.
//! tshark is installed by `scripts/test`; without it this test fails, saying
//! so. Capturing on loopback needs root or CAP_NET_RAW, as CI has.

use crate::support::{SERIAL, probe_with, run};
use h123::probe::keylog::KeyLogPath;
use h123::probe::tls::TrustSettings;
use h123_shared::Protocol;
use h123_target::{TargetConfig, TestTarget};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The path every protocol asks for, found again in the decrypted capture.
const MARKED_PATH: &str = "/bytes/4242";

/// A running tshark capture, stopped (and its file completed) when dropped.
struct Capture(Child);

impl Capture {
    /// Captures loopback traffic on `port` (TCP and UDP) into `file`, once
    /// tshark says it is capturing.
    fn start(port: u16, file: &Path) -> Capture {
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
    fn stop(mut self) {
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
fn read(capture: &Path, port: u16, keys: Option<&Path>, filter: &str, field: &str) -> Vec<String> {
    let mut command = Command::new(tshark());
    command.args(["-n", "-r"]).arg(capture);
    command.args(["-d", &format!("tcp.port=={port},tls")]);
    command.args(["-d", &format!("udp.port=={port},quic")]);
    if let Some(keys) = keys {
        command
            .arg("-o")
            .arg(format!("tls.keylog_file:{}", keys.display()));
    }
    let output = command
        .args(["-Y", filter, "-T", "fields", "-e", field])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tshark -Y {filter}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_log_decrypts_a_captured_session_in_tshark() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (capture_file, keys) = (dir.path().join("probe.pcapng"), dir.path().join("keys.log"));
    let port = target.https_addr.port();
    let capture = Capture::start(port, &capture_file);

    let trust = TrustSettings::from_ca_file(target.ca_file())
        .unwrap()
        .with_key_log(KeyLogPath::open(&keys).unwrap());
    let result = probe_with(&target, trust, |o| o.url = target.https_url(MARKED_PATH)).await;
    for protocol in [Protocol::H1, Protocol::H2, Protocol::H3] {
        let attempt = &run(&result, protocol).attempts[0];
        assert!(attempt.failure.is_none(), "{protocol:?}: {attempt:?}");
    }
    // Let the last packets reach the capture before stopping it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    capture.stop();

    let logged = std::fs::read_to_string(&keys).unwrap();
    let secrets = logged.lines().filter(|l| !l.starts_with('#')).count();
    assert!(
        secrets >= 3 * 5,
        "TLS 1.3 logs 5 secrets per connection, 3 connections: {logged}"
    );

    let h1 = |keys| {
        read(
            &capture_file,
            port,
            keys,
            "http.request",
            "http.request.uri",
        )
    };
    let h2 = |keys| {
        read(
            &capture_file,
            port,
            keys,
            "http2.type == 1",
            "http2.header.value",
        )
    };
    // Debian's tshark dissects HTTP/3 frames but not their QPACK headers: an
    // HTTP/3 HEADERS frame (type 1) is seen only once QUIC is decrypted.
    let h3 = |keys| {
        read(
            &capture_file,
            port,
            keys,
            "http3.frame_type == 1",
            "http3.frame_type",
        )
    };
    let with_keys = Some(keys.as_path());
    assert_eq!(h1(with_keys), vec![MARKED_PATH], "HTTP/1.1 decrypted");
    assert!(
        h2(with_keys).iter().any(|v| v.contains(MARKED_PATH)),
        "HTTP/2 request headers decrypted: {:?}",
        h2(with_keys)
    );
    assert!(!h3(with_keys).is_empty(), "QUIC stream frames decrypted");
    assert!(h1(None).is_empty() && h2(None).is_empty() && h3(None).is_empty());
}
