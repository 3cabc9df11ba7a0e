//! End-to-end: h1 and h2 through real proxies on loopback (tinyproxy for HTTP
//! CONNECT with Basic credentials, dante for SOCKS5), the proxy phase against
//! an injected delay, HTTP/3 skipped, credentials out of the record; and
//! mutual TLS over h1, h2 and h3 with and without a client certificate.
//! tinyproxy and danted are installed by `scripts/test`; without them these
//! tests fail, saying what is missing.

use crate::support::{self, SERIAL, run};
use h123::probe::Engine;
use h123::probe::guard::ConnectPolicy;
use h123::probe::plan::{Limits, Plan};
use h123::probe::proxy::{Proxy, ProxySettings};
use h123::probe::tls::TrustSettings;
use h123_shared::{FailureKind, Phase, ProbeOptions, ProbeResult, Protocol, ProxyKind};
use h123_target::{TargetConfig, TestTarget};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A proxy process, killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn need(tool: &str) -> String {
    for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"] {
        let path = format!("{dir}/{tool}");
        if Path::new(&path).exists() {
            return path;
        }
    }
    panic!(
        "{tool} is not installed: scripts/test installs it (apt-get install tinyproxy dante-server)"
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_listening(port: u16) {
    for _ in 0..100 {
        if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the proxy did not listen on port {port}");
}

/// tinyproxy on a free port, asking for `user:secret`.
async fn tinyproxy(dir: &Path) -> (Running, u16) {
    let bin = need("tinyproxy");
    let port = free_port();
    let conf = dir.join("tinyproxy.conf");
    std::fs::write(
        &conf,
        format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nMaxClients 20\nLogLevel Error\nAllow 127.0.0.1\nBasicAuth user secret\nLogfile \"{}\"\n",
            dir.join("tinyproxy.log").display()
        ),
    )
    .unwrap();
    let child = Command::new(bin)
        .args(["-d", "-c"])
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port).await;
    (Running(child), port)
}

/// dante's danted as a SOCKS5 proxy on a free port, without authentication.
async fn danted(dir: &Path) -> (Running, u16) {
    let bin = need("danted");
    let port = free_port();
    let conf = dir.join("danted.conf");
    std::fs::write(
        &conf,
        format!(
            "logoutput: {}\ninternal: 127.0.0.1 port = {port}\nexternal: 127.0.0.1\nsocksmethod: none\nclientmethod: none\nuser.privileged: root\nuser.unprivileged: nobody\nclient pass {{ from: 127.0.0.0/8 to: 0.0.0.0/0 }}\nsocks pass {{ from: 127.0.0.0/8 to: 0.0.0.0/0 }}\n",
            dir.join("danted.log").display()
        ),
    )
    .unwrap();
    let child = Command::new(bin)
        .arg("-f")
        .arg(&conf)
        .arg("-p")
        .arg(dir.join("danted.pid"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(port).await;
    (Running(child), port)
}

/// A TCP relay to `upstream` that holds the upstream's first answer for
/// `delay`: in front of a proxy, it delays exactly the tunnel's set-up.
async fn delaying_relay(upstream: SocketAddr, delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                tokio::spawn(async move { tokio::io::copy(&mut cr, &mut sw).await });
                let mut first = vec![0u8; 4096];
                let Ok(n) = sr.read(&mut first).await else {
                    return;
                };
                tokio::time::sleep(delay).await;
                if cw.write_all(&first[..n]).await.is_ok() {
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                }
            });
        }
    });
    addr
}

async fn probe_through(
    target: &TestTarget,
    proxy: &str,
    trust: TrustSettings,
    protocols: &[Protocol],
) -> ProbeResult {
    let options = ProbeOptions {
        url: target.https_url("/"),
        protocols: protocols.to_vec(),
        repeat: 2,
        rounds: 1,
        timeout_ms: 5_000,
        phase_timeout_ms: 3_000,
        ..ProbeOptions::default()
    };
    let plan = Plan::new(options, &Limits::default()).expect("valid options");
    Engine::new(trust, ConnectPolicy::allow_all())
        .with_proxy(ProxySettings::always(Proxy::parse(proxy).unwrap()))
        .run(&plan)
        .await
}

fn trust(target: &TestTarget) -> TrustSettings {
    TrustSettings::from_ca_file(target.ca_file()).unwrap()
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Checks h1 and h2 went through `kind` and h3 was skipped; the proxy phase of each new connection.
fn proxied(result: &ProbeResult, kind: ProxyKind) -> Vec<u64> {
    let mut proxy_us = Vec::new();
    for protocol in [Protocol::H1, Protocol::H2] {
        let r = run(result, protocol);
        for a in &r.attempts {
            assert!(a.failure.is_none(), "{protocol:?}: {:?}", a.failure);
            let c = a.connection.as_ref().unwrap();
            assert_eq!(c.proxy.as_ref().unwrap().kind, kind);
            if c.reused {
                assert!(
                    a.phases.proxy.is_none(),
                    "a reused tunnel has no proxy phase"
                );
            } else {
                proxy_us.push(a.phases.proxy.expect("proxy phase").duration().0);
                assert!(a.phases.connect.is_some() && a.phases.tls.is_some());
            }
        }
    }
    let h3 = run(result, Protocol::H3);
    let reason = h3.skipped.as_deref().expect("h3 skipped");
    assert!(reason.contains("cannot go through"), "{reason}");
    assert!(h3.discovery.is_none() && h3.attempts.is_empty());
    proxy_us
}

#[tokio::test]
async fn h1_and_h2_tunnel_through_http_connect_and_socks5() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_tiny, tiny_port) = tinyproxy(dir.path()).await;
    let (_dante, dante_port) = danted(dir.path()).await;
    let all = Protocol::ALL;
    let delay = Duration::from_millis(150);

    let http = format!("http://user:secret@127.0.0.1:{tiny_port}");
    let result = probe_through(&target, &http, trust(&target), &all).await;
    let json = serde_json::to_string(&result).unwrap();
    assert!(!json.contains("secret"), "credentials reached the record");
    let plain = proxied(&result, ProxyKind::Http);
    let info = run(&result, Protocol::H1).attempts[0]
        .connection
        .clone()
        .unwrap();
    let proxy = info.proxy.unwrap();
    assert!(
        proxy.authenticated && proxy.reply.contains(" 200 "),
        "{proxy:?}"
    );
    assert_eq!(info.remote_addr, format!("127.0.0.1:{tiny_port}"));

    let wrong = format!("http://user:wrong@127.0.0.1:{tiny_port}");
    let refused = probe_through(&target, &wrong, trust(&target), &[Protocol::H1]).await;
    let f = run(&refused, Protocol::H1).attempts[0]
        .failure
        .clone()
        .unwrap();
    assert_eq!(
        (f.phase, f.kind),
        (Phase::Proxy, FailureKind::ProxyRefused),
        "{f:?}"
    );

    let relay = delaying_relay(([127, 0, 0, 1], tiny_port).into(), delay).await;
    let slow = format!("http://user:secret@{relay}");
    let delayed = proxied(
        &probe_through(&target, &slow, trust(&target), &all).await,
        ProxyKind::Http,
    );
    check_delay("http CONNECT", &plain, &delayed, delay);

    for kind in [ProxyKind::Socks5, ProxyKind::Socks5h] {
        let url = format!("{}://127.0.0.1:{dante_port}", kind.as_str());
        let plain = proxied(
            &probe_through(&target, &url, trust(&target), &all).await,
            kind,
        );
        let relay = delaying_relay(([127, 0, 0, 1], dante_port).into(), delay).await;
        let url = format!("{}://{relay}", kind.as_str());
        let delayed = proxied(
            &probe_through(&target, &url, trust(&target), &all).await,
            kind,
        );
        check_delay(kind.as_str(), &plain, &delayed, delay);
    }
}

/// The relay holds the proxy's first reply: the proxy phase grows by the
/// delay (within the proxy's own spread plus 15 ms), connect and tls do not.
fn check_delay(what: &str, plain: &[u64], delayed: &[u64], delay: Duration) {
    let injected = delay.as_micros() as u64;
    let slowest_plain = plain.iter().max().copied().unwrap_or(0);
    for &d in delayed {
        println!(
            "{what}: proxy phase {:.2} ms with {} ms injected (without: {:?} ms)",
            ms(d),
            delay.as_millis(),
            plain.iter().map(|&p| ms(p)).collect::<Vec<_>>()
        );
        assert!(
            d >= injected,
            "{what}: proxy phase {d} us < injected {injected} us"
        );
        assert!(
            d <= injected + slowest_plain + 15_000,
            "{what}: proxy phase {d} us, injected {injected} us, without it at most {slowest_plain} us"
        );
    }
}

#[tokio::test]
async fn socks5_resolves_the_target_here_and_socks5h_leaves_it_to_the_proxy() {
    let _serial = SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_dante, port) = danted(dir.path()).await;
    let url = format!("https://target.h123.test:{}/", target.https_addr.port());
    for (kind, looked_up) in [(ProxyKind::Socks5, true), (ProxyKind::Socks5h, false)] {
        let options = ProbeOptions {
            url: url.clone(),
            protocols: vec![Protocol::H1],
            repeat: 1,
            rounds: 1,
            dns_server: Some(target.dns_addr.to_string()),
            timeout_ms: 5_000,
            phase_timeout_ms: 2_000,
            ..ProbeOptions::default()
        };
        let plan = Plan::new(options, &Limits::default()).unwrap();
        let proxy = Proxy::parse(&format!("{}://127.0.0.1:{port}", kind.as_str())).unwrap();
        let result = Engine::new(trust(&target), ConnectPolicy::allow_all())
            .with_proxy(ProxySettings::always(proxy))
            .run(&plan)
            .await;
        let a = &run(&result, Protocol::H1).attempts[0];
        assert_eq!(a.phases.dns.is_some(), looked_up, "{kind:?}: {a:?}");
        if looked_up {
            assert!(a.failure.is_none(), "{:?}", a.failure);
            assert_eq!(a.dns.as_ref().unwrap().addresses, vec!["127.0.0.1"]);
        } else {
            // The name went to the proxy, whose resolver (not the test's DNS
            // server) does not know it: the tunnel fails, no lookup happened here.
            let f = a.failure.as_ref().unwrap();
            assert_eq!(f.phase, Phase::Proxy, "{f:?}");
        }
    }
}

#[tokio::test]
async fn mutual_tls_over_h1_h2_and_h3_with_and_without_a_certificate() {
    let _serial = SERIAL.lock().await;
    let config = TargetConfig {
        require_client_cert: true,
        ..TargetConfig::default()
    };
    let target = TestTarget::start(config).await.unwrap();
    let options = |o: &mut ProbeOptions| o.h3_direct = true;
    for identity in [
        (
            target.ca.client_cert_file(),
            Some(target.ca.client_key_file()),
        ),
        (target.ca.client_combined_file(), None),
    ] {
        let with = trust(&target)
            .with_client_cert(identity.0, identity.1)
            .unwrap();
        let result = support::probe_with(&target, with, options).await;
        for protocol in Protocol::ALL {
            let a = &run(&result, protocol).attempts[0];
            assert!(
                a.failure.is_none(),
                "{protocol:?} with a certificate: {:?}",
                a.failure
            );
        }
    }
    let result = support::probe(&target, options).await;
    for (protocol, phase) in [(Protocol::H1, Phase::Tls), (Protocol::H3, Phase::Quic)] {
        let f = run(&result, protocol).attempts[0].failure.clone().unwrap();
        assert_eq!(f.phase, phase, "{protocol:?}: {f:?}");
        assert!(
            f.message.contains("requires a client certificate"),
            "{}",
            f.message
        );
    }
    // HTTP/2 writes its preface before reading the server's alert and sees a broken pipe.
    assert!(run(&result, Protocol::H2).attempts[0].failure.is_some());

    let wrong_key = trust(&target).with_client_cert(
        target.ca.client_cert_file(),
        Some(target.ca.client_key_file()),
    );
    assert!(wrong_key.is_ok());
    let err = trust(&target)
        .with_client_cert(target.ca.client_cert_file(), Some(target.ca_file()))
        .unwrap_err();
    assert!(err.starts_with("no private key in"), "{err}");
}
