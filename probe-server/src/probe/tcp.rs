//! TCP connect, timed and guarded: each address is checked against the
//! safety policy right before it is dialled. Behind an emulated network
//! the handshake also waits the link's round trip.

use super::failure::{blocked, failure, from_io, timed_out};
use super::guard::ConnectPolicy;
use super::network::Link;
use super::trace::AttemptTrace;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, FailureKind, Phase};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;

/// Connects to the first address that is allowed and answers, recording
/// `ConnectStart`/`ConnectDone`. Nagle is turned off, as a browser does.
pub async fn connect(
    addrs: &[SocketAddr],
    policy: &ConnectPolicy,
    limit: Duration,
    link: Option<&Link>,
    trace: &mut AttemptTrace,
) -> Result<TcpStream, Failure> {
    let mut last_failure = None;
    for &addr in addrs {
        if let Err(reason) = policy.check(addr) {
            last_failure.get_or_insert_with(|| blocked(Phase::Connect, addr, &reason));
            continue;
        }
        if !trace.has(TraceEvent::ConnectStart) {
            trace.record(TraceEvent::ConnectStart);
        }
        let handshake = async {
            let stream = TcpStream::connect(addr).await?;
            if let Some(link) = link {
                super::network::link::until(link.handshake_done(super::trace::now())).await;
            }
            Ok::<_, std::io::Error>(stream)
        };
        match tokio::time::timeout(limit, handshake).await {
            Ok(Ok(stream)) => {
                trace.record(TraceEvent::ConnectDone);
                stream
                    .set_nodelay(true)
                    .map_err(|e| from_io(Phase::Connect, &e))?;
                return Ok(stream);
            }
            Ok(Err(e)) => {
                let mut f = from_io(Phase::Connect, &e);
                f.message = format!("{addr}: {}", f.message);
                last_failure = Some(f);
            }
            Err(_) => last_failure = Some(timed_out(Phase::Connect, limit)),
        }
    }
    Err(last_failure
        .unwrap_or_else(|| failure(Phase::Connect, FailureKind::Io, "no address to connect to")))
}
