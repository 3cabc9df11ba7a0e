//! HTTP/3 over QUIC (quinn + h3): the quic phase covers the first UDP packet
//! to the completed QUIC + TLS 1.3 handshake; one request stream per attempt.
//!
//! Time to first byte is when the datagram that carried the response headers
//! arrived ([`TtfbSource::Datagram`], see [`quic_socket`]): QUIC streams are
//! decrypted and reassembled inside quinn, so the headers are known only
//! once h3 hands them over, and the tap tells when their datagram came.

use super::connection::{ConnectSettings, Connection, Opened, Target, TaskGuard};
use super::failure::{blocked, describe, failure, timed_out};
use super::http::{
    Exchange, MAX_HEADER_SECTION, RequestSpec, UriForm, build_request, response_facts,
};
use super::migration::{self, Moving};
use super::qlog;
use super::quic_socket::{ClientEndpoint, DatagramTap};
use super::resumption::ResumableConfigs;
use super::trace::{self, AttemptTrace};
use crate::probe::load::{Load, Reply};
use bytes::{Buf, Bytes};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use h123_shared::migration::Migrate;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, FailureKind, Micros, Phase, QuicInfo, TlsInfo, TtfbSource};
use quinn::crypto::rustls::{HandshakeData, QuicClientConfig};
use std::future::poll_fn;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// An HTTP/3 connection (its UDP endpoint lives as long as it does).
pub struct H3 {
    sender: h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>,
    quic: quinn::Connection,
    /// Resolves once the handshake ends, to whether the server took our 0-RTT data.
    zero_rtt_pending: Option<quinn::ZeroRttAccepted>,
    zero_rtt_accepted: Option<bool>,
    /// The name's addresses still silent when this connection's answered.
    silent_addresses: Vec<String>,
    /// The name's addresses that refused before it (nothing listens there).
    refused_addresses: Vec<String>,
    /// How long the handshake waited on those addresses before it dialled
    /// the one that answered.
    address_wait: Micros,
    /// The run's resumable configurations and their count of checked chains
    /// before this handshake (resumed mode): a resumed handshake checks none.
    checks_before: Option<(Arc<ResumableConfigs>, u64)>,
    verified: bool,
    /// The endpoint, whose tap tells when each request's datagram left (see
    /// [`super::quic_socket`]).
    endpoint: ClientEndpoint,
    /// Where the connection moves during its first response (`--migrate`).
    migrate: Option<Migrate>,
    _driver: TaskGuard,
}

/// A new HTTP/3 connection's setup: its endpoint on a fresh UDP socket and
/// its QUIC client configuration.
pub struct H3Setup {
    endpoint: ClientEndpoint,
    config: quinn::ClientConfig,
}

impl Connection for H3 {
    type Setup = H3Setup;

    const ALPN: &'static [&'static [u8]] = &[b"h3"];

    fn prepare(settings: &ConnectSettings) -> Result<H3Setup, Failure> {
        let endpoint = ClientEndpoint::new(settings.link.clone(), settings.egress.clone())
            .map_err(|e| failure(Phase::Quic, FailureKind::Io, e.to_string()))?;
        let quic_tls = QuicClientConfig::try_from(settings.tls_config(Self::ALPN))
            .map_err(|e| failure(Phase::Quic, FailureKind::Tls, e.to_string()))?;
        let mut config = quinn::ClientConfig::new(Arc::new(quic_tls));
        let mut transport = match &settings.qlog_dir {
            Some(dir) => Some(qlog::transport(dir)?),
            None => None,
        };
        if let Some(egress) = &settings.egress {
            // The credit a target has beyond what was counted: a buffer's worth, not quinn's
            // 1.25 MB a stream and no bound on the connection.
            let window = quinn::VarInt::from_u32(super::egress::receive_buffer(egress.limit()));
            let transport = transport.get_or_insert_with(quinn::TransportConfig::default);
            transport
                .stream_receive_window(window)
                .receive_window(window);
        }
        if let Some(transport) = transport {
            config.transport_config(Arc::new(transport));
        }
        Ok(H3Setup { endpoint, config })
    }

    async fn open(
        target: &Target<'_>,
        settings: &ConnectSettings,
        setup: H3Setup,
        trace: &mut AttemptTrace,
    ) -> Result<Opened<Self>, Failure> {
        if !target.https {
            return Err(failure(
                Phase::Quic,
                FailureKind::Unsupported,
                "HTTP/3 needs an https URL (QUIC always uses TLS)",
            ));
        }
        if let Some(tunnel) = &target.tunnel {
            return Err(failure(
                Phase::Quic,
                FailureKind::Unsupported,
                format!(
                    "HTTP/3 runs over UDP and cannot go through the proxy {}",
                    tunnel.proxy.address()
                ),
            ));
        }
        let allowed: Vec<SocketAddr> = target
            .addrs
            .iter()
            .copied()
            .filter(|&addr| settings.policy.check(addr).is_ok())
            .collect();
        if allowed.is_empty() {
            let refused = target.addrs.iter().find_map(|&addr| {
                let reason = settings.policy.check(addr).err()?;
                Some(blocked(Phase::Quic, addr, &reason))
            });
            return Err(refused.unwrap_or_else(|| {
                failure(Phase::Quic, FailureKind::Io, "no address to connect to")
            }));
        }
        handshake(&allowed, target.host, settings, &setup, trace).await
    }

    async fn ready(&mut self, _limit: Duration) -> bool {
        self.quic.close_reason().is_none()
    }

    async fn exchange(
        &mut self,
        spec: &RequestSpec,
        trace: &mut AttemptTrace,
        out: &mut Exchange,
    ) -> Result<(), Failure> {
        let limit = spec.phase_limit;
        let request = build_request(spec, UriForm::Absolute)?.map(|_| ());
        trace.record_once(TraceEvent::RequestStart);
        self.endpoint.tap.arm();
        let mut stream = tokio::time::timeout(limit, self.sender.send_request(request))
            .await
            .map_err(|_| timed_out(Phase::Send, limit))?
            .map_err(|e| stream_failure(Phase::Send, &e))?;
        // A server may answer before reading the whole request and stop our sending side
        // with H3_NO_ERROR (RFC 9114, section 4.1): a failed finish only counts if no
        // response follows.
        let finished = tokio::time::timeout(
            limit,
            send_body(&mut stream, &spec.body, &self.endpoint.tap),
        )
        .await
        .map_err(|_| timed_out(Phase::Send, limit))?;
        trace.record(TraceEvent::RequestWritten);
        let response = match tokio::time::timeout(limit, stream.recv_response()).await {
            Ok(Ok(response)) => response,
            Ok(Err(e)) => {
                return Err(match finished {
                    Err(send) => stream_failure(Phase::Send, &send),
                    Ok(()) => stream_failure(Phase::Wait, &e),
                });
            }
            Err(_) => return Err(timed_out(Phase::Wait, limit)),
        };
        trace.record(TraceEvent::FirstByte);
        // The request was written when its datagram left, and the response's
        // first bytes came when the datagram carrying them arrived, as over TCP.
        let sent = self.endpoint.tap.sent_at();
        if let Some(sent) = sent {
            trace.amend(TraceEvent::RequestWritten, sent);
        }
        out.ttfb_source = Some(TtfbSource::ResponseHeaders);
        if let Some(received) = self.endpoint.tap.received_at()
            && sent.is_none_or(|sent| received > sent)
        {
            trace.amend(TraceEvent::FirstByte, received);
            out.ttfb_source = Some(TtfbSource::Datagram);
        }
        let (parts, ()) = response.into_parts();
        out.response = Some(response_facts(&parts));
        let mut moving = None;
        let read = async {
            let mut bytes = 0u64;
            while let Some(chunk) = stream
                .recv_data()
                .await
                .map_err(|e| stream_failure(Phase::Receive, &e))?
            {
                bytes += chunk.remaining() as u64;
                self.move_once(bytes, &mut moving)?;
                if bytes >= spec.max_body {
                    // Dropping the stream stops the server's sending (h3-quinn's own
                    // stop_sending can panic while a read is in flight).
                    return Ok::<_, Failure>((bytes, true));
                }
            }
            // A response without a body moves once it has ended.
            self.move_once(bytes, &mut moving)?;
            Ok((bytes, false))
        };
        let read = tokio::time::timeout(limit, read)
            .await
            .unwrap_or_else(|_| Err(timed_out(Phase::Receive, limit)));
        if read.is_ok() {
            trace.record(TraceEvent::BodyDone);
        }
        let read = match moving {
            Some(moving) => {
                let moved = moving
                    .settle(&self.endpoint, &self.quic, read.is_ok(), limit, trace)
                    .await;
                let read = read.map_err(|cause| migration::stalled(&moved, cause));
                // A connection lost to its move takes no more requests.
                out.reusable = moved.survived;
                out.migration = Some(moved);
                read
            }
            None => {
                out.reusable = true;
                read
            }
        };
        let (bytes, truncated) = read?;
        if let Some(pending) = self.zero_rtt_pending.take() {
            self.zero_rtt_accepted =
                Some(tokio::time::timeout(limit, pending).await.unwrap_or(false));
        }
        if let Some(r) = out.response.as_mut() {
            r.body_bytes = bytes;
            r.truncated = truncated;
        }
        // Streams are independent: a cut body does not spoil the connection
        // (`reusable` was set above).
        Ok(())
    }

    fn quic_facts(&self) -> Option<QuicInfo> {
        let stats = self.quic.stats();
        Some(QuicInfo {
            rtt_us: Micros(self.quic.rtt().as_micros() as u64),
            sent_packets: stats.path.sent_packets,
            lost_packets: stats.path.lost_packets,
            congestion_events: stats.path.congestion_events,
            zero_rtt_accepted: self.zero_rtt_accepted,
            cwnd_bytes: Some(stats.path.cwnd),
            current_mtu: Some(stats.path.current_mtu),
            lost_bytes: Some(stats.path.lost_bytes),
            silent_addresses: self.silent_addresses.clone(),
            refused_addresses: self.refused_addresses.clone(),
            address_wait_us: (self.address_wait.0 > 0).then_some(self.address_wait),
        })
    }

    fn tls_facts(&self) -> Option<TlsInfo> {
        Some(tls_facts(&self.quic, self.verified, self.resumed()))
    }
}

impl H3 {
    /// Whether the TLS session was resumed (whether or not 0-RTT data was
    /// taken): the handshake is over and checked no certificate chain.
    fn resumed(&self) -> bool {
        let over = self.zero_rtt_pending.is_none();
        over && self
            .checks_before
            .as_ref()
            .is_some_and(|(configs, before)| configs.checks() == *before)
    }

    /// Moves the connection, if it is still to move, with `bytes` of the body read.
    fn move_once(&mut self, bytes: u64, moving: &mut Option<Moving>) -> Result<(), Failure> {
        if let Some(to) = self.migrate.take() {
            *moving = Some(Moving::start(&mut self.endpoint, &self.quic, to, bytes)?);
        }
        Ok(())
    }
}

/// Sends the request body (if any) as DATA frames and finishes the stream:
/// `send_data` returns once quinn's stream buffer took the bytes, within the
/// server's flow-control window, so a server that reads late holds it; then
/// `tap` is armed again, so `send` ends with the datagram after the body.
async fn send_body(
    stream: &mut h3::client::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>,
    body: &Bytes,
    tap: &DatagramTap,
) -> Result<(), h3::error::StreamError> {
    if !body.is_empty() {
        stream.send_data(body.clone()).await?;
        tap.arm();
    }
    stream.finish().await
}

/// One QUIC handshake, to the first of `addrs` that answers (see
/// [`connect`]), over `setup`'s endpoint, recording `QuicStart`/`QuicDone`.
async fn handshake(
    addrs: &[SocketAddr],
    host: &str,
    settings: &ConnectSettings,
    setup: &H3Setup,
    trace: &mut AttemptTrace,
) -> Result<Opened<H3>, Failure> {
    // Read before the first packet leaves, so no check of this handshake is missed.
    let checks_before = settings
        .sessions
        .as_ref()
        .map(|configs| (configs.clone(), configs.checks()));
    trace.record(TraceEvent::QuicStart);
    let Raced {
        addr,
        quic,
        zero_rtt_pending,
        silent,
        refused,
        waited,
    } = connect(addrs, host, settings, setup).await?;
    trace.record(TraceEvent::QuicDone);
    // The HTTP/3 layer's setup (control and QPACK streams, SETTINGS) is
    // the first thing sent on the new connection: the start of `send`.
    trace.record(TraceEvent::RequestStart);
    // h3's default accepts a header section of any size; ours stops at the cap.
    let (mut driver, sender) = h3::client::builder()
        .max_field_section_size(MAX_HEADER_SECTION as u64)
        .build(h3_quinn::Connection::new(quic.clone()))
        .await
        .map_err(|e| failure(Phase::Send, FailureKind::Protocol, describe(&e)))?;
    let driver = TaskGuard(tokio::spawn(async move {
        let _ = poll_fn(|cx| driver.poll_close(cx)).await;
    }));
    // The TLS facts (certificates parsed) are read after the attempt, by
    // `tls_facts`, so that work is not timed.
    Ok(Opened {
        local: setup.endpoint.local_addr().ok(),
        remote: addr,
        tls: None,
        chain: Vec::new(),
        proxy: None,
        tcp_at_connect: None,
        conn: H3 {
            sender,
            quic,
            zero_rtt_pending,
            zero_rtt_accepted: None,
            silent_addresses: silent.iter().map(SocketAddr::to_string).collect(),
            refused_addresses: refused.iter().map(SocketAddr::to_string).collect(),
            address_wait: Micros(waited.as_micros() as u64),
            checks_before,
            verified: !settings.insecure,
            endpoint: setup.endpoint.clone(),
            migrate: settings.migrate.clone(),
            _driver: driver,
        },
    })
}

/// How long a handshake to one address goes unanswered before the next
/// address starts its own alongside (RFC 8305's connection attempt delay).
const NEXT_ADDRESS_AFTER: Duration = Duration::from_millis(250);

/// The QUIC connection that won the race of a name's addresses.
struct Raced {
    addr: SocketAddr,
    quic: quinn::Connection,
    /// Whether the server takes the 0-RTT request, once the handshake ends.
    zero_rtt_pending: Option<quinn::ZeroRttAccepted>,
    /// The addresses started before it that had not answered.
    silent: Vec<SocketAddr>,
    /// The addresses that refused before it answered.
    refused: Vec<SocketAddr>,
    /// How long the handshake ran before this address's turn began: the
    /// wait on the name's other addresses.
    waited: Duration,
}

/// How one address's handshake in the race ended.
enum Branch {
    Answered(quinn::Connection),
    Failed(quinn::ConnectionError),
    /// The host said nothing listens on that UDP port (ICMP port unreachable).
    Refused,
}

/// A QUIC connection to the first of `addrs` to complete its handshake, and
/// where it went. Addresses race as Happy Eyeballs does: each starts when the
/// one before failed or was refused (nothing listens on its UDP port, which
/// the host says at once) or has been silent for [`NEXT_ADDRESS_AFTER`], and
/// all share one phase timeout, so a dead UDP port on one family costs a
/// quarter of a second (a refusing one a round trip) and on every family the
/// timeout once (a refusing one a round trip each). With a resumable
/// session (and a request that may be replayed) the address that issued it
/// (or a name's only address) takes the request at once, as 0-RTT data, the
/// handshake finishing alongside: early data cannot wait for a race.
async fn connect(
    addrs: &[SocketAddr],
    host: &str,
    settings: &ConnectSettings,
    setup: &H3Setup,
) -> Result<Raced, Failure> {
    let start = |addr: SocketAddr| {
        setup
            .endpoint
            .endpoint
            .connect_with(setup.config.clone(), addr, host)
            .map_err(|e| failure(Phase::Quic, FailureKind::Io, e.to_string()))
    };
    let limit = settings.quic_limit.unwrap_or(settings.phase_limit);
    let deadline = tokio::time::Instant::from_std(trace::now() + limit);
    let issuer = settings
        .sessions
        .as_ref()
        .and_then(|s| s.last_answered())
        .filter(|a| addrs.contains(a));
    let early_to = issuer.or((addrs.len() == 1).then(|| addrs[0]));
    let mut addrs = addrs.to_vec();
    if let Some(early_to) = early_to {
        addrs.retain(|a| *a != early_to);
        addrs.insert(0, early_to);
    }
    let refusals = setup.endpoint.refusals();
    refusals.forget(&addrs);
    let mut first = start(addrs[0])?;
    if settings.early_data && early_to.is_some() {
        match first.into_0rtt() {
            Ok((quic, accepted)) => {
                return Ok(Raced {
                    addr: addrs[0],
                    quic,
                    zero_rtt_pending: Some(accepted),
                    silent: Vec::new(),
                    refused: Vec::new(),
                    waited: Duration::ZERO,
                });
            }
            Err(connecting) => first = connecting,
        }
    }
    let arm = |addr: SocketAddr, connecting: quinn::Connecting| {
        let refusals = refusals.clone();
        async move {
            let ended = tokio::select! {
                biased;
                done = connecting => match done {
                    Ok(quic) => Branch::Answered(quic),
                    Err(e) => Branch::Failed(e),
                },
                () = refusals.of(addr) => Branch::Refused,
            };
            (addr, ended)
        }
    };
    let began = trace::now();
    let mut racing = FuturesUnordered::new();
    racing.push(arm(addrs[0], first));
    let mut waiting = addrs[1..].iter().copied();
    // Each address dialled, with when its turn began.
    let mut started = vec![(addrs[0], Duration::ZERO)];
    let mut answered = Vec::new();
    let mut refused = Vec::new();
    let mut failed = None;
    loop {
        let next = tokio::select! {
            Some((addr, ended)) = racing.next() => match ended {
                Branch::Answered(quic) => {
                    if let Some(sessions) = &settings.sessions {
                        sessions.answered_at(addr);
                    }
                    let silent = started
                        .iter()
                        .map(|(a, _)| *a)
                        .filter(|a| *a != addr && !answered.contains(a))
                        .collect();
                    let waited = started
                        .iter()
                        .find(|(a, _)| *a == addr)
                        .map_or(Duration::ZERO, |(_, at)| *at);
                    return Ok(Raced { addr, quic, zero_rtt_pending: None, silent, refused, waited });
                }
                ended => {
                    answered.push(addr);
                    match ended {
                        Branch::Failed(e) => failed = Some(connection_failure(&e)),
                        _ => refused.push(addr),
                    }
                    if !racing.is_empty() {
                        continue;
                    }
                    match waiting.next() {
                        Some(next) => next,
                        // A handshake that failed says more than a refusal.
                        None => return Err(failed.unwrap_or_else(|| nothing_listens(&refused))),
                    }
                }
            },
            _ = tokio::time::sleep(NEXT_ADDRESS_AFTER), if waiting.len() > 0 => {
                waiting.next().expect("an address waits")
            }
            _ = tokio::time::sleep_until(deadline) => {
                let silent: Vec<SocketAddr> = started
                    .iter()
                    .map(|(a, _)| *a)
                    .filter(|a| !answered.contains(a))
                    .collect();
                return Err(no_handshake(&silent, &refused, limit));
            }
        };
        racing.push(arm(next, start(next)?));
        started.push((next, trace::now().saturating_duration_since(began)));
    }
}

/// `addrs` in words: "UDP port 443 at 192.0.2.1 or 2001:db8::1", or each
/// with its port when the ports differ.
fn udp_addresses(addrs: &[SocketAddr]) -> String {
    let port = addrs.first().map(SocketAddr::port);
    if addrs.iter().all(|a| Some(a.port()) == port) {
        let ips: Vec<String> = addrs.iter().map(|a| a.ip().to_string()).collect();
        format!(
            "UDP port {} at {}",
            port.unwrap_or_default(),
            ips.join(" or ")
        )
    } else {
        let each: Vec<String> = addrs.iter().map(SocketAddr::to_string).collect();
        format!("UDP {}", each.join(" or "))
    }
}

/// Every address refused QUIC: the host answered with ICMP port unreachable.
fn nothing_listens(refused: &[SocketAddr]) -> Failure {
    failure(
        Phase::Quic,
        FailureKind::Refused,
        format!(
            "nothing listens on {}: the host answered QUIC with ICMP port unreachable",
            udp_addresses(refused)
        ),
    )
}

/// The QUIC handshake with the `silent` addresses did not finish within
/// `limit`, and the `refused` ones had nothing listening.
fn no_handshake(silent: &[SocketAddr], refused: &[SocketAddr], limit: Duration) -> Failure {
    let silent: Vec<String> = silent.iter().map(SocketAddr::to_string).collect();
    let also = if refused.is_empty() {
        String::new()
    } else {
        format!("; nothing listens on {}", udp_addresses(refused))
    };
    failure(
        Phase::Quic,
        FailureKind::Timeout,
        format!(
            "no QUIC handshake with {} within {} ms: UDP may be blocked on the path{also}",
            silent.join(" or "),
            limit.as_millis()
        ),
    )
}

/// TLS facts of a QUIC connection; before a 0-RTT handshake completes, the
/// ALPN and certificates are not known yet.
fn tls_facts(quic: &quinn::Connection, verified: bool, resumed: bool) -> TlsInfo {
    let alpn = quic
        .handshake_data()
        .and_then(|data| data.downcast::<HandshakeData>().ok())
        .and_then(|data| data.protocol)
        .map(|p| String::from_utf8_lossy(&p).into_owned());
    let certificates = quic
        .peer_identity()
        .and_then(|id| {
            id.downcast::<Vec<rustls_pki_types::CertificateDer<'static>>>()
                .ok()
        })
        .map(|chain| super::cert::summarize_chain(&chain))
        .unwrap_or_default();
    TlsInfo {
        alpn,
        version: "TLSv1.3".to_owned(),
        cipher: "not exposed by QUIC".to_owned(),
        resumed,
        verified,
        certificates,
    }
}

/// The server's refusal of the client certificate (or its absence), which
/// QUIC carries as a CRYPTO_ERROR with the TLS alert's number and which can
/// arrive after the client's side of the handshake is done. Our own
/// refusal of the server's certificate carries the same alert numbers, with
/// rustls's "invalid peer certificate": that one is not the server's doing.
fn client_cert_refused(message: &str) -> Option<Failure> {
    let why = if message.contains("invalid peer certificate") {
        return None;
    } else if message.contains("error 116") {
        "the server requires a client certificate (TLS alert 116 certificate_required): give one with --cert and --key"
    } else if ["error 42:", "error 43:", "error 48:", "error 49:"]
        .iter()
        .any(|code| message.contains(code))
    {
        "the server refused the client certificate"
    } else {
        return None;
    };
    Some(failure(
        Phase::Quic,
        FailureKind::Tls,
        format!("{why} ({message})"),
    ))
}

fn connection_failure(err: &quinn::ConnectionError) -> Failure {
    use quinn::ConnectionError as E;
    let kind = match err {
        E::TimedOut => FailureKind::Timeout,
        E::TransportError(_) | E::ConnectionClosed(_) => FailureKind::Tls,
        E::VersionMismatch => FailureKind::Unsupported,
        E::Reset => FailureKind::Reset,
        _ => FailureKind::Io,
    };
    let message = describe(err);
    if let Some(refused) = client_cert_refused(&message) {
        return refused;
    }
    let kind = if message.contains("certificate") || message.contains("UnknownIssuer") {
        FailureKind::Certificate
    } else {
        kind
    };
    failure(Phase::Quic, kind, message)
}

fn stream_failure(phase: Phase, err: &h3::error::StreamError) -> Failure {
    let message = describe(err);
    if let Some(refused) = client_cert_refused(&message) {
        return refused;
    }
    let lower = message.to_ascii_lowercase();
    let kind = if lower.contains("reset") || lower.contains("cancel") || lower.contains("closed") {
        FailureKind::Reset
    } else if lower.contains("timeout") || lower.contains("timed out") {
        FailureKind::Timeout
    } else {
        FailureKind::Protocol
    };
    failure(phase, kind, message)
}

/// A bench worker's share of an HTTP/3 connection: its own sender clone, so
/// workers open request streams side by side.
#[derive(Clone)]
pub struct H3Handle {
    sender: h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>,
    quic: quinn::Connection,
    _owner: Arc<H3>,
}

impl Load for H3 {
    const ONE_AT_A_TIME: bool = false;

    type Handle = H3Handle;

    async fn open_for_load(
        target: &Target<'_>,
        settings: &ConnectSettings,
    ) -> Result<H3Handle, Failure> {
        let mut scratch = AttemptTrace::start();
        let setup = H3::prepare(settings)?;
        let conn = H3::open(target, settings, setup, &mut scratch).await?.conn;
        Ok(H3Handle {
            sender: conn.sender.clone(),
            quic: conn.quic.clone(),
            _owner: Arc::new(conn),
        })
    }

    async fn send(handle: &mut H3Handle, spec: &RequestSpec) -> Result<Reply, Failure> {
        let request = build_request(spec, UriForm::Absolute)?.map(|_| ());
        let mut stream = handle
            .sender
            .send_request(request)
            .await
            .map_err(|e| stream_failure(Phase::Send, &e))?;
        let finished = stream.finish().await;
        let response = match stream.recv_response().await {
            Ok(response) => response,
            Err(e) => {
                return Err(match finished {
                    Err(send) => stream_failure(Phase::Send, &send),
                    Ok(()) => stream_failure(Phase::Wait, &e),
                });
            }
        };
        let headers_at = trace::now();
        let mut body_bytes = 0u64;
        while body_bytes < spec.max_body
            && let Some(chunk) = stream
                .recv_data()
                .await
                .map_err(|e| stream_failure(Phase::Receive, &e))?
        {
            body_bytes += chunk.remaining() as u64;
        }
        Ok(Reply {
            status: response.status().as_u16(),
            headers_at,
            body_bytes,
        })
    }

    fn is_closed(handle: &H3Handle) -> bool {
        handle.quic.close_reason().is_some()
    }
}
