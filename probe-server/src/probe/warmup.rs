//! An untimed run over loopback before a CLI's first attempt, so that the
//! first attempt does not pay for h123's own cold code.
//!
//! A new process runs the engine's code for the first time inside its first
//! attempt: the code's pages fault in and its caches are cold. Measured
//! against curl over plain HTTP on loopback (`/delay/10`, 20 runs of each),
//! that put h123's first byte 0.18 to 0.25 ms after curl's, while the same
//! process's later new connections were at curl's figure. The warm-up runs
//! HTTP/1.1 and HTTP/2 (prior knowledge) twice each, over a new and a reused
//! connection, against a server of its own on 127.0.0.1, through the same
//! engine code; TLS and QUIC are not warmed (that would need a certificate).

use super::Engine;
use super::guard::ConnectPolicy;
use super::plan::{Limits, Plan};
use bytes::Bytes;
use h123_shared::{ProbeOptions, ProbeResult, Protocol};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::net::Ipv4Addr;
use tokio::net::TcpListener;

impl Engine {
    /// Runs the warm-up (see the module docs) with this engine's trust, no
    /// proxy and no qlog, and returns its result (nothing when it could not
    /// be set up): callers drop it, tests read it.
    pub async fn warm_up(&self) -> Option<ProbeResult> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.ok()?;
        let addr = listener.local_addr().ok()?;
        let server = tokio::spawn(serve(listener));
        let options = ProbeOptions {
            url: format!("http://{addr}/"),
            protocols: vec![Protocol::H1, Protocol::H2],
            repeat: 2,
            rounds: 1,
            ..ProbeOptions::default()
        };
        let plain = Engine::new(self.trust.clone(), ConnectPolicy::allow_all());
        let result = match Plan::new(options, &Limits::default()) {
            Ok(plan) => Some(plain.run(&plan).await),
            Err(_) => None,
        };
        server.abort();
        result
    }
}

/// Answers every request on every connection with a short body.
async fn serve(listener: TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        tokio::spawn(async move {
            let answer = service_fn(|_request| async {
                Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(b"warm"))))
            });
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), answer)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::tls::TrustSettings;

    #[tokio::test(flavor = "current_thread")]
    async fn the_warm_up_runs_both_protocols_against_its_own_server() {
        let engine = Engine::new(TrustSettings::system(), ConnectPolicy::allow_all());
        let result = engine.warm_up().await.expect("the warm-up is set up");
        let runs: Vec<(Protocol, Vec<bool>)> = result
            .runs
            .iter()
            .map(|run| {
                let reused = run.attempts.iter().map(|a| {
                    assert!(a.failure.is_none(), "{:?}: {a:?}", run.protocol);
                    a.connection.as_ref().is_some_and(|c| c.reused)
                });
                (run.protocol, reused.collect())
            })
            .collect();
        assert_eq!(
            runs,
            vec![
                (Protocol::H1, vec![false, true]),
                (Protocol::H2, vec![false, true])
            ]
        );
    }
}
