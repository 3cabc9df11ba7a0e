//! Many requests at once (`streams`): after a protocol's attempts, its
//! connections opened first (one for HTTP/2 and HTTP/3, one per request for
//! HTTP/1.1, to the address the attempts reached), then every request sent
//! together and each one's first byte and completion timed from that moment.
//! It goes through the bench's load path, across the protocol's emulated
//! link, so loss reaches its streams as it reaches the attempts'. Redirects
//! are not followed: each request is the URL's own.

use super::connection::{ConnectSettings, Target};
use super::egress;
use super::failure::{failure, timed_out};
use super::plan::Plan;
use super::run::request_spec;
use super::trace;
use crate::probe::load::Load;
use futures_util::future::{join_all, try_join_all};
use h123_shared::streams::{StreamBurst, StreamTiming};
use h123_shared::{FailureKind, Micros, Phase, ProtocolRun};
use std::net::SocketAddr;
use std::time::Duration;

/// The burst `plan` asks for after `run`, sent to the address its attempts
/// reached; none when it asks for none or no attempt reached an address.
pub async fn after<C: Load>(
    plan: &Plan,
    settings: &ConnectSettings,
    run: &ProtocolRun,
) -> Option<StreamBurst> {
    let count = plan.options.streams?;
    // The URL's own address: a redirect hop may have gone elsewhere.
    let remote: SocketAddr = run
        .attempts
        .iter()
        .rev()
        .filter(|a| a.hop == 0)
        .filter_map(|a| a.connection.as_ref()?.remote_addr.parse().ok())
        .next()?;
    if settings
        .proxy
        .as_ref()
        .and_then(|p| p.for_url(&plan.url))
        .is_some()
    {
        return Some(StreamBurst {
            failure: Some(failure(
                Phase::Connect,
                FailureKind::Unsupported,
                "requests at once are not sent through a proxy",
            )),
            ..StreamBurst::default()
        });
    }
    let host = plan.url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let target = Target {
        host,
        https: plan.url.scheme() == "https",
        addrs: &[remote],
        tunnel: None,
    };
    let spec = request_spec(plan, &plan.url, plan.options.method);
    Some(burst::<C>(&target, settings, &spec, count, plan.timeout).await)
}

/// Opens the connections `count` requests need, then sends them all at
/// once; each has `limit` to complete, as an attempt has.
async fn burst<C: Load>(
    target: &Target<'_>,
    settings: &ConnectSettings,
    spec: &super::http::RequestSpec,
    count: u32,
    limit: Duration,
) -> StreamBurst {
    let connections = if C::ONE_AT_A_TIME { count } else { 1 };
    let egress = settings.egress.as_deref();
    let spent = |phase| egress.map(|e| e.failure(phase));
    let opening = trace::now();
    let opened = tokio::time::timeout(
        limit,
        egress::within(
            egress,
            try_join_all((0..connections).map(|_| C::open_for_load(target, settings))),
        ),
    )
    .await;
    let setup_us = trace::between(opening, trace::now());
    let handles = match opened {
        Ok(Some(Ok(handles))) => handles,
        Ok(Some(Err(f))) => return not_sent(connections, setup_us, f),
        Ok(None) => {
            let f = spent(Phase::Connect).unwrap_or_else(|| timed_out(Phase::Connect, limit));
            return not_sent(connections, setup_us, f);
        }
        Err(_) => return not_sent(connections, setup_us, timed_out(Phase::Connect, limit)),
    };
    let sent = trace::now();
    let streams = join_all((0..count as usize).map(|i| {
        let mut handle = handles[i % handles.len()].clone();
        async move {
            let send = egress::within(egress, C::send(&mut handle, spec));
            let outcome = match tokio::time::timeout(limit, send).await {
                Ok(Some(Ok(reply))) => Ok(reply),
                Ok(Some(Err(f))) => Err(match egress.filter(|e| e.is_spent()) {
                    Some(e) => e.failure(f.phase),
                    None => f,
                }),
                Ok(None) => {
                    Err(spent(Phase::Receive).unwrap_or_else(|| timed_out(Phase::Receive, limit)))
                }
                Err(_) => Err(timed_out(Phase::Receive, limit)),
            };
            let done_us = trace::between(sent, trace::now());
            match outcome {
                Ok(reply) => StreamTiming {
                    first_byte_us: Some(trace::between(sent, reply.headers_at)),
                    done_us,
                    status: Some(reply.status),
                    body_bytes: reply.body_bytes,
                    failure: None,
                },
                Err(f) => StreamTiming {
                    done_us,
                    failure: Some(f),
                    ..StreamTiming::default()
                },
            }
        }
    }))
    .await;
    StreamBurst {
        connections,
        setup_us,
        streams,
        failure: None,
    }
}

/// A burst whose connections could not be opened.
fn not_sent(connections: u32, setup_us: Micros, f: h123_shared::Failure) -> StreamBurst {
    StreamBurst {
        connections,
        setup_us,
        streams: Vec::new(),
        failure: Some(f),
    }
}
