//! The proxy phase: an HTTP `CONNECT` tunnel (RFC 9110 section 9.3.6) or a
//! SOCKS5 one (RFC 1928, username/password by RFC 1929), timed from the
//! first byte written to the proxy until its success reply is read.

use super::Proxy;
use crate::probe::connection::Io;
use crate::probe::failure::{failure, from_io, timed_out};
use crate::probe::trace::AttemptTrace;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, FailureKind, Phase, ProxyInfo, ProxyKind};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Where the tunnel leads: a name the proxy resolves, or an address resolved here.
#[derive(Clone, Copy, Debug)]
pub enum Destination<'a> {
    /// Host name (or literal) and port, sent to the proxy as they are.
    Name(&'a str, u16),
    /// An address looked up locally (plain `socks5`).
    Addr(SocketAddr),
}

/// The most of a `CONNECT` answer's head h123 reads.
const MAX_CONNECT_HEAD: usize = 16 * 1024;

/// Opens a tunnel to `to` through `proxy` on `stream` (already connected to
/// the proxy), recording `ProxyStart`/`ProxyDone`, within `limit`.
///
/// # Errors
/// A [`Failure`] in the proxy phase: the proxy's refusal in words (a status
/// other than 2xx, a SOCKS5 reply code, rejected credentials), a timeout,
/// or the connection's own error.
pub async fn open(
    stream: &mut impl Io,
    proxy: &Proxy,
    to: Destination<'_>,
    limit: Duration,
    trace: &mut AttemptTrace,
) -> Result<ProxyInfo, Failure> {
    trace.record(TraceEvent::ProxyStart);
    let handshake = async {
        match proxy.kind {
            ProxyKind::Http => connect(stream, proxy, to).await,
            ProxyKind::Socks5 | ProxyKind::Socks5h => socks5(stream, proxy, to).await,
        }
    };
    let reply = tokio::time::timeout(limit, handshake)
        .await
        .map_err(|_| timed_out(Phase::Proxy, limit))??;
    trace.record(TraceEvent::ProxyDone);
    Ok(proxy.info(reply))
}

fn refused(message: String) -> Failure {
    failure(Phase::Proxy, FailureKind::ProxyRefused, message)
}

fn io(err: std::io::Error) -> Failure {
    if err.kind() == std::io::ErrorKind::UnexpectedEof {
        return failure(
            Phase::Proxy,
            FailureKind::Reset,
            "the proxy closed the connection before it answered",
        );
    }
    from_io(Phase::Proxy, &err)
}

/// `host:port` as a request target (IPv6 in brackets).
fn authority(to: Destination<'_>) -> String {
    match to {
        Destination::Name(host, port) if host.contains(':') => format!("[{host}]:{port}"),
        Destination::Name(host, port) => format!("{host}:{port}"),
        Destination::Addr(addr) => addr.to_string(),
    }
}

/// `CONNECT host:port` and its answer's status line, when 2xx.
async fn connect(
    stream: &mut impl Io,
    proxy: &Proxy,
    to: Destination<'_>,
) -> Result<String, Failure> {
    let target = authority(to);
    let mut request = format!(
        "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nUser-Agent: h123/{}\r\n",
        env!("CARGO_PKG_VERSION")
    );
    if let Some((user, pass)) = proxy.credentials() {
        let token = crate::store::base64(format!("{user}:{pass}").as_bytes());
        request.push_str(&format!("Proxy-Authorization: Basic {token}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.map_err(io)?;
    // The tunnel's first bytes are the client's (TLS ClientHello, an HTTP
    // request), so nothing follows the head until h123 speaks.
    let mut head = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_CONNECT_HEAD {
            return Err(failure(
                Phase::Proxy,
                FailureKind::Protocol,
                format!(
                    "the proxy's answer to CONNECT has no end of head within {MAX_CONNECT_HEAD} bytes"
                ),
            ));
        }
        let n = stream.read(&mut chunk).await.map_err(io)?;
        if n == 0 {
            return Err(io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        head.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let status_line = text.lines().next().unwrap_or_default().trim().to_owned();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|_| status_line.starts_with("HTTP/1."))
        .ok_or_else(|| {
            failure(
                Phase::Proxy,
                FailureKind::Protocol,
                format!(
                    "the proxy answered CONNECT with something other than HTTP/1.x: `{status_line}`"
                ),
            )
        })?;
    match status {
        200..=299 => Ok(status_line),
        407 if proxy.credentials().is_some() => Err(refused(format!(
            "the proxy rejected the credentials: `{status_line}`"
        ))),
        407 => Err(refused(format!(
            "the proxy requires credentials (-x scheme://user:pass@host:port): `{status_line}`"
        ))),
        _ => Err(refused(format!(
            "the proxy refused CONNECT {target}: `{status_line}`"
        ))),
    }
}

/// The SOCKS5 greeting, authentication and CONNECT; the reply in words.
async fn socks5(
    stream: &mut impl Io,
    proxy: &Proxy,
    to: Destination<'_>,
) -> Result<String, Failure> {
    const NO_AUTH: u8 = 0x00;
    const USER_PASS: u8 = 0x02;
    let greeting: &[u8] = match proxy.credentials() {
        Some(_) => &[5, 2, NO_AUTH, USER_PASS],
        None => &[5, 1, NO_AUTH],
    };
    stream.write_all(greeting).await.map_err(io)?;
    let mut choice = [0u8; 2];
    stream.read_exact(&mut choice).await.map_err(io)?;
    if choice[0] != 5 {
        return Err(not_socks5(choice[0]));
    }
    match (choice[1], proxy.credentials()) {
        (NO_AUTH, _) => {}
        (USER_PASS, Some((user, pass))) => {
            let (user, pass) = (user.as_bytes(), pass.as_bytes());
            if user.len() > 255 || pass.len() > 255 {
                return Err(refused(
                    "SOCKS5 user names and passwords are at most 255 bytes".into(),
                ));
            }
            let mut auth = vec![1, user.len() as u8];
            auth.extend_from_slice(user);
            auth.push(pass.len() as u8);
            auth.extend_from_slice(pass);
            stream.write_all(&auth).await.map_err(io)?;
            let mut status = [0u8; 2];
            stream.read_exact(&mut status).await.map_err(io)?;
            if status[1] != 0 {
                return Err(refused(
                    "the SOCKS5 proxy rejected the user name and password".into(),
                ));
            }
        }
        (0xFF, _) | (USER_PASS, None) => {
            return Err(refused(match proxy.credentials() {
                Some(_) => "the SOCKS5 proxy accepts none of the offered methods (no authentication, user name and password)".into(),
                None => "the SOCKS5 proxy requires authentication (-x socks5://user:pass@host:port)".into(),
            }));
        }
        (other, _) => {
            return Err(failure(
                Phase::Proxy,
                FailureKind::Protocol,
                format!("the SOCKS5 proxy chose method {other:#04x}, which was not offered"),
            ));
        }
    }
    let mut request = vec![5, 1, 0];
    let port = match to {
        Destination::Addr(addr) => {
            match addr.ip() {
                IpAddr::V4(ip) => {
                    request.push(1);
                    request.extend_from_slice(&ip.octets());
                }
                IpAddr::V6(ip) => {
                    request.push(4);
                    request.extend_from_slice(&ip.octets());
                }
            }
            addr.port()
        }
        Destination::Name(host, port) => {
            match host.parse::<IpAddr>() {
                Ok(IpAddr::V4(ip)) => {
                    request.push(1);
                    request.extend_from_slice(&ip.octets());
                }
                Ok(IpAddr::V6(ip)) => {
                    request.push(4);
                    request.extend_from_slice(&ip.octets());
                }
                Err(_) if host.len() <= 255 => {
                    request.push(3);
                    request.push(host.len() as u8);
                    request.extend_from_slice(host.as_bytes());
                }
                Err(_) => {
                    return Err(failure(
                        Phase::Proxy,
                        FailureKind::Protocol,
                        "a SOCKS5 host name is at most 255 bytes",
                    ));
                }
            }
            port
        }
    };
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).await.map_err(io)?;
    let mut reply = [0u8; 4];
    stream.read_exact(&mut reply).await.map_err(io)?;
    if reply[0] != 5 {
        return Err(not_socks5(reply[0]));
    }
    let bound_len = match reply[3] {
        1 => 4,
        4 => 16,
        3 => {
            let mut len = [0u8; 1];
            stream.read_exact(&mut len).await.map_err(io)?;
            usize::from(len[0])
        }
        other => {
            return Err(failure(
                Phase::Proxy,
                FailureKind::Protocol,
                format!("the SOCKS5 reply has an unknown address type {other}"),
            ));
        }
    };
    let mut bound = vec![0u8; bound_len + 2];
    stream.read_exact(&mut bound).await.map_err(io)?;
    if reply[1] != 0 {
        let kind = match reply[1] {
            5 => FailureKind::Refused,
            6 => FailureKind::Timeout,
            _ => FailureKind::ProxyRefused,
        };
        return Err(failure(
            Phase::Proxy,
            kind,
            format!(
                "the SOCKS5 proxy could not connect to {}: {} (reply {})",
                authority(to),
                socks5_reply(reply[1]),
                reply[1]
            ),
        ));
    }
    Ok("SOCKS5 succeeded".to_owned())
}

fn not_socks5(version: u8) -> Failure {
    failure(
        Phase::Proxy,
        FailureKind::Protocol,
        format!("the proxy does not speak SOCKS5 (it answered version {version})"),
    )
}

/// RFC 1928's reply codes, in words.
fn socks5_reply(code: u8) -> &'static str {
    match code {
        0 => "succeeded",
        1 => "general SOCKS server failure",
        2 => "connection not allowed by ruleset",
        3 => "network unreachable",
        4 => "host unreachable",
        5 => "connection refused",
        6 => "TTL expired",
        7 => "command not supported",
        8 => "address type not supported",
        _ => "unassigned reply code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_codes_read_as_words_and_authorities_bracket_ipv6() {
        assert_eq!(socks5_reply(2), "connection not allowed by ruleset");
        assert_eq!(socks5_reply(42), "unassigned reply code");
        assert_eq!(authority(Destination::Name("::1", 443)), "[::1]:443");
        assert_eq!(
            authority(Destination::Name("a.example", 80)),
            "a.example:80"
        );
    }
}
