//! What a resumed run keeps between its connections: one TLS client
//! configuration per ALPN list, each with its own session store. The store
//! counts the tickets it holds, so the run can wait (bounded) for the ticket
//! a one-ticket server sends after its answer before closing the connection
//! that earned it; and the configuration's certificate verifier counts the
//! chains it checks, since a resumed handshake checks none: that is how a
//! QUIC connection tells it resumed (quinn does not expose the handshake's
//! kind, and 0-RTT accepted is another fact).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, NamedGroup, SignatureScheme};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// TLS 1.3 tickets rustls's memory cache keeps per server (older ones make room).
const TICKETS_PER_SERVER: usize = 8;

/// TLS client configurations kept for one run of resumed attempts. rustls
/// offers a ticket only under the configuration that earned it (the same
/// verifier), so each ALPN's configuration is built once, with its own
/// session store, and reused by every connection of the run.
#[derive(Debug, Default)]
pub struct ResumableConfigs {
    built: Mutex<Vec<BuiltConfig>>,
    checks: Arc<AtomicU64>,
    /// The address whose handshake last completed: where the run's tickets
    /// come from, so where 0-RTT data can go without a race.
    answered: Mutex<Option<SocketAddr>>,
}

/// A configuration built for one ALPN list, and what its store holds.
#[derive(Debug)]
struct BuiltConfig {
    alpn: Vec<Vec<u8>>,
    config: Arc<ClientConfig>,
    held: watch::Receiver<Held>,
}

/// What a resumable configuration is built with.
#[derive(Debug)]
pub struct Keeping {
    /// Where its sessions are kept.
    pub store: Arc<dyn ClientSessionStore>,
    /// Counted once per certificate chain its verifier checks.
    pub checks: Arc<AtomicU64>,
}

impl ResumableConfigs {
    /// The configuration for `alpn`, built by `build` the first time.
    pub fn get(
        &self,
        alpn: &[&[u8]],
        build: impl FnOnce(Keeping) -> Arc<ClientConfig>,
    ) -> Arc<ClientConfig> {
        let key: Vec<Vec<u8>> = alpn.iter().map(|p| p.to_vec()).collect();
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = built.iter().find(|b| b.alpn == key) {
            return found.config.clone();
        }
        let (held, watching) = watch::channel(Held::default());
        let store = TicketStore {
            inner: ClientSessionMemoryCache::new(32),
            held,
        };
        let config = build(Keeping {
            store: Arc::new(store),
            checks: self.checks.clone(),
        });
        built.push(BuiltConfig {
            alpn: key,
            config: config.clone(),
            held: watching,
        });
        config
    }

    /// Certificate chains checked so far by this run's handshakes: one
    /// that leaves the count alone was resumed.
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::SeqCst)
    }

    /// Notes that a handshake with `addr` completed.
    pub fn answered_at(&self, addr: SocketAddr) {
        *self.answered.lock().unwrap_or_else(|e| e.into_inner()) = Some(addr);
    }

    /// The address whose handshake last completed, if one did.
    pub fn last_answered(&self) -> Option<SocketAddr> {
        *self.answered.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits up to `limit` until `alpn`'s store holds a session to resume;
    /// `false` when none came.
    pub async fn await_ticket(&self, alpn: &[&[u8]], limit: Duration) -> bool {
        let watching = {
            let built = self.built.lock().unwrap_or_else(|e| e.into_inner());
            built
                .iter()
                .find(|b| b.alpn.iter().map(Vec::as_slice).eq(alpn.iter().copied()))
                .map(|b| b.held.clone())
        };
        let Some(mut watching) = watching else {
            return false;
        };
        tokio::time::timeout(limit, watching.wait_for(Held::any))
            .await
            .is_ok_and(|held| held.is_ok())
    }
}

/// What a store holds that a next handshake can resume.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    /// TLS 1.3 tickets (each is used once), as rustls's cache bounds them.
    tickets: usize,
    /// Whether a TLS 1.2 session is kept (it can be resumed again and again).
    tls12: bool,
}

impl Held {
    fn any(&self) -> bool {
        self.tickets > 0 || self.tls12
    }
}

/// rustls's memory cache, counting what it holds.
#[derive(Debug)]
struct TicketStore {
    inner: ClientSessionMemoryCache,
    held: watch::Sender<Held>,
}

impl ClientSessionStore for TicketStore {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(server_name, group);
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(server_name)
    }

    fn set_tls12_session(&self, server_name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.inner.set_tls12_session(server_name, value);
        self.held.send_modify(|held| held.tls12 = true);
    }

    fn tls12_session(&self, server_name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(server_name)
    }

    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.inner.remove_tls12_session(server_name);
        self.held.send_modify(|held| held.tls12 = false);
    }

    fn insert_tls13_ticket(
        &self,
        server_name: ServerName<'static>,
        value: Tls13ClientSessionValue,
    ) {
        self.inner.insert_tls13_ticket(server_name, value);
        self.held
            .send_modify(|held| held.tickets = (held.tickets + 1).min(TICKETS_PER_SERVER));
    }

    fn take_tls13_ticket(
        &self,
        server_name: &ServerName<'static>,
    ) -> Option<Tls13ClientSessionValue> {
        let taken = self.inner.take_tls13_ticket(server_name);
        if taken.is_some() {
            self.held
                .send_modify(|held| held.tickets = held.tickets.saturating_sub(1));
        }
        taken
    }
}

/// A verifier that counts the chains it checks, then defers to `inner`.
#[derive(Debug)]
pub struct CountingVerifier {
    /// The verifier that decides.
    pub inner: Arc<dyn ServerCertVerifier>,
    /// Counted once per chain checked.
    pub checks: Arc<AtomicU64>,
}

impl ServerCertVerifier for CountingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.checks.fetch_add(1, Ordering::SeqCst);
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
