//! TLS over TCP with rustls: client configuration (roots, CA file, insecure,
//! ALPN) and the timed handshake that yields the connection's TLS facts.

use super::connection::Io;
use super::failure::{failure, from_io, timed_out};
use super::keylog::KeyLogPath;
use super::resumption::{CountingVerifier, Keeping};
use super::trace::AttemptTrace;
use h123_shared::timeline::TraceEvent;
use h123_shared::{Failure, FailureKind, Phase, TlsInfo};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, HandshakeKind, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// The crypto provider h123 uses everywhere (ring).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// How server certificates are checked, and what the client shows and
/// logs of its own side (CLI only: a client certificate, a key log).
#[derive(Clone, Debug)]
pub struct TrustSettings {
    roots: Arc<RootCertStore>,
    identity: Option<Arc<ClientIdentity>>,
    key_log: Option<Arc<KeyLogPath>>,
}

/// A client certificate chain and its private key (never printed).
struct ClientIdentity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl std::fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("certificates", &self.chain.len())
            .finish_non_exhaustive()
    }
}

impl TrustSettings {
    /// The system's trust store.
    pub fn system() -> Self {
        let mut roots = RootCertStore::empty();
        let loaded = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(loaded.certs);
        TrustSettings {
            roots: Arc::new(roots),
            identity: None,
            key_log: None,
        }
    }

    /// Only the CA certificates in a PEM file (like curl's `--cacert`).
    ///
    /// # Errors
    /// When the file cannot be read or holds no certificate.
    pub fn from_ca_file(path: &Path) -> Result<Self, String> {
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("cannot read CA file {}: {e}", path.display()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("bad PEM in CA file {}: {e}", path.display()))?;
        let mut roots = RootCertStore::empty();
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(format!(
                "no usable certificate in CA file {}",
                path.display()
            ));
        }
        Ok(TrustSettings {
            roots: Arc::new(roots),
            identity: None,
            key_log: None,
        })
    }

    /// The same trust, presenting the client certificate chain in the PEM
    /// file `cert` with the private key in `key` (or in `cert` itself when
    /// `key` is `None`), over TCP and QUIC alike (like curl's `--cert`/`--key`).
    ///
    /// # Errors
    /// One readable line when a file cannot be read, holds no certificate or
    /// no key, or the key does not belong to the certificate.
    pub fn with_client_cert(mut self, cert: &Path, key: Option<&Path>) -> Result<Self, String> {
        let chain = CertificateDer::pem_file_iter(cert)
            .map_err(|e| format!("cannot read client certificate {}: {e}", cert.display()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("bad PEM in client certificate {}: {e}", cert.display()))?;
        if chain.is_empty() {
            return Err(format!("no certificate in {}", cert.display()));
        }
        let key_path = key.unwrap_or(cert);
        let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| match e {
            rustls_pki_types::pem::Error::NoItemsFound => format!(
                "no private key in {}{}",
                key_path.display(),
                if key.is_none() {
                    " (give it with --key)"
                } else {
                    ""
                }
            ),
            e => format!("cannot read private key {}: {e}", key_path.display()),
        })?;
        CertifiedKey::from_der(chain.clone(), key.clone_key(), &provider()).map_err(|e| {
            format!(
                "the key in {} does not fit the certificate in {}: {e}",
                key_path.display(),
                cert.display()
            )
        })?;
        self.identity = Some(Arc::new(ClientIdentity { chain, key }));
        Ok(self)
    }

    /// The same trust, appending every connection's TLS secrets to `log`.
    pub fn with_key_log(mut self, log: KeyLogPath) -> Self {
        self.key_log = Some(Arc::new(log));
        self
    }

    /// A client configuration offering `alpn`; `insecure` skips chain and
    /// name verification (signatures are still checked). With `keeping`,
    /// tickets are kept in its store and offered again (resumption, and
    /// early data where QUIC allows it), and every chain checked is counted;
    /// without, every handshake is a full one.
    pub fn client_config(
        &self,
        alpn: &[&[u8]],
        insecure: bool,
        keeping: Option<Keeping>,
    ) -> Arc<ClientConfig> {
        let verifier = self.verifier(insecure);
        let (verifier, store) = match keeping {
            Some(Keeping { store, checks }) => (
                Arc::new(CountingVerifier {
                    inner: verifier,
                    checks,
                }) as Arc<dyn ServerCertVerifier>,
                Some(store),
            ),
            None => (verifier, None),
        };
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let mut config = match &self.identity {
            Some(id) => builder
                .with_client_auth_cert(id.chain.clone(), id.key.clone_key())
                .expect("the key was checked against the certificate when loaded"),
            None => builder.with_no_client_auth(),
        };
        if let Some(log) = &self.key_log {
            config.key_log = log.clone();
        }
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        config.resumption = match store {
            Some(store) => Resumption::store(store),
            None => Resumption::disabled(),
        };
        config.enable_early_data = true;
        Arc::new(config)
    }

    /// What checks a server's chain: the trusted roots, or with `insecure`
    /// only the handshake's signatures.
    fn verifier(&self, insecure: bool) -> Arc<dyn ServerCertVerifier> {
        let algorithms = provider().signature_verification_algorithms;
        if insecure {
            return Arc::new(SignaturesOnly {
                algorithms,
                refuse: None,
            });
        }
        match WebPkiServerVerifier::builder_with_provider(self.roots.clone(), provider()).build() {
            Ok(verifier) => verifier,
            // No root at all: every chain is refused, as the roots would.
            Err(_) => Arc::new(SignaturesOnly {
                algorithms,
                refuse: Some(rustls::CertificateError::UnknownIssuer),
            }),
        }
    }
}

/// Runs the TLS handshake on `tcp`, recording `TlsStart`/`TlsDone`;
/// `verified` says whether `config` verifies the chain (not insecure).
/// Returns the facts without certificate summaries, and the peer's chain
/// to summarise once timing is over.
pub async fn handshake<S: Io>(
    tcp: S,
    host: &str,
    config: Arc<ClientConfig>,
    verified: bool,
    limit: Duration,
    trace: &mut AttemptTrace,
) -> Result<(TlsStream<S>, TlsInfo, Vec<CertificateDer<'static>>), Failure> {
    let name = ServerName::try_from(
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
    )
    .map_err(|e| {
        failure(
            Phase::Tls,
            FailureKind::Tls,
            format!("bad server name {host}: {e}"),
        )
    })?;
    trace.record(TraceEvent::TlsStart);
    let stream = tokio::time::timeout(limit, TlsConnector::from(config).connect(name, tcp))
        .await
        .map_err(|_| timed_out(Phase::Tls, limit))?
        .map_err(|e| from_io(Phase::Tls, &e))?;
    trace.record(TraceEvent::TlsDone);
    let (_, conn) = stream.get_ref();
    let info = TlsInfo {
        alpn: conn
            .alpn_protocol()
            .map(|p| String::from_utf8_lossy(p).into_owned()),
        version: conn
            .protocol_version()
            .map(|v| version_name(v).to_owned())
            .unwrap_or_default(),
        cipher: conn
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite()))
            .unwrap_or_default(),
        resumed: conn.handshake_kind() == Some(HandshakeKind::Resumed),
        verified,
        certificates: Vec::new(),
    };
    let chain = conn
        .peer_certificates()
        .map(|chain| chain.iter().map(|c| c.clone().into_owned()).collect())
        .unwrap_or_default();
    Ok((stream, info, chain))
}

fn version_name(version: rustls::ProtocolVersion) -> &'static str {
    match version {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3",
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2",
        _ => "unknown",
    }
}

/// Checks the handshake's signatures, so the handshake itself is real, and
/// judges every chain alike: accepts any chain and name, like curl `-k`, or
/// refuses each with `refuse`.
#[derive(Debug)]
struct SignaturesOnly {
    algorithms: WebPkiSupportedAlgorithms,
    refuse: Option<rustls::CertificateError>,
}

impl ServerCertVerifier for SignaturesOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match &self.refuse {
            Some(refused) => Err(rustls::Error::InvalidCertificate(refused.clone())),
            None => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
