//! Test certificate authority: a CA, a server and a client certificate it signs, and an unrelated "wrong" CA.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Names (DNS names and IP literals) the leaf certificate is valid for.
pub const LEAF_NAMES: &[&str] = &[
    "localhost",
    "target.h123.test",
    "*.h123.test",
    "127.0.0.1",
    "::1",
];

/// A freshly generated certificate authority with one server certificate, plus an
/// unrelated CA for verification-failure tests.
///
/// The PEM files live in a temporary directory owned by this value and removed when it is dropped.
pub struct TestCa {
    /// PEM of the CA certificate that signed the server certificate (what `--cacert` wants).
    pub ca_pem: String,
    /// PEM of an unrelated CA: trusting only this one must make verification fail.
    pub wrong_ca_pem: String,
    /// DER of the CA certificate.
    pub ca_der: CertificateDer<'static>,
    /// DER of the wrong CA certificate.
    pub wrong_ca_der: CertificateDer<'static>,
    /// Server certificate chain presented by the target (the leaf only; the CA is the trust anchor).
    pub cert_chain: Vec<CertificateDer<'static>>,
    /// The server certificate's SubjectPublicKeyInfo (DER): its SHA-256 in base64 is what
    /// Chromium's `--ignore-certificate-errors-spki-list` takes to trust the target.
    pub leaf_spki_der: Vec<u8>,
    key_der: Vec<u8>,
    ca_path: PathBuf,
    wrong_ca_path: PathBuf,
    client_cert_path: PathBuf,
    client_key_path: PathBuf,
    client_combined_path: PathBuf,
    _dir: tempfile::TempDir,
}

impl TestCa {
    /// Generates the CA, the leaf certificate for [`LEAF_NAMES`] and the wrong CA, and writes
    /// both CA PEMs into a fresh temporary directory.
    pub fn generate() -> anyhow::Result<TestCa> {
        let (ca_params, ca_key) = new_ca("h123 test CA")?;
        let ca_cert = ca_params
            .self_signed(&ca_key)
            .context("self-signing the test CA")?;
        let issuer = Issuer::new(ca_params, ca_key);

        let leaf_names: Vec<String> = LEAF_NAMES.iter().map(|s| (*s).to_owned()).collect();
        let mut leaf_params =
            CertificateParams::new(leaf_names).context("leaf certificate names")?;
        leaf_params
            .distinguished_name
            .push(DnType::CommonName, "target.h123.test");
        leaf_params.use_authority_key_identifier_extension = true;
        let leaf_key = KeyPair::generate().context("generating the leaf key")?;
        let leaf_cert = leaf_params
            .signed_by(&leaf_key, &issuer)
            .context("signing the leaf certificate")?;

        let mut client_params =
            CertificateParams::new(Vec::<String>::new()).context("client certificate")?;
        client_params
            .distinguished_name
            .push(DnType::CommonName, "h123 test client");
        client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        client_params.use_authority_key_identifier_extension = true;
        let client_key = KeyPair::generate().context("generating the client key")?;
        let client_cert = client_params
            .signed_by(&client_key, &issuer)
            .context("signing the client certificate")?;

        let (wrong_params, wrong_key) = new_ca("h123 wrong CA")?;
        let wrong_cert = wrong_params
            .self_signed(&wrong_key)
            .context("self-signing the wrong CA")?;

        let dir = tempfile::Builder::new()
            .prefix("h123-target-ca-")
            .tempdir()
            .context("creating a temporary directory for the CA files")?;
        let ca_path = dir.path().join("ca.pem");
        let wrong_ca_path = dir.path().join("wrong-ca.pem");
        std::fs::write(&ca_path, ca_cert.pem()).context("writing ca.pem")?;
        std::fs::write(&wrong_ca_path, wrong_cert.pem()).context("writing wrong-ca.pem")?;
        let client_cert_path = dir.path().join("client.pem");
        let client_key_path = dir.path().join("client-key.pem");
        let client_combined_path = dir.path().join("client-combined.pem");
        std::fs::write(&client_cert_path, client_cert.pem()).context("writing client.pem")?;
        std::fs::write(&client_key_path, client_key.serialize_pem())
            .context("writing client-key.pem")?;
        std::fs::write(
            &client_combined_path,
            format!("{}{}", client_cert.pem(), client_key.serialize_pem()),
        )
        .context("writing client-combined.pem")?;

        Ok(TestCa {
            ca_pem: ca_cert.pem(),
            wrong_ca_pem: wrong_cert.pem(),
            ca_der: ca_cert.der().clone(),
            wrong_ca_der: wrong_cert.der().clone(),
            cert_chain: vec![leaf_cert.der().clone()],
            leaf_spki_der: rcgen::PublicKeyData::subject_public_key_info(&leaf_key),
            key_der: leaf_key.serialize_der(),
            ca_path,
            wrong_ca_path,
            client_cert_path,
            client_key_path,
            client_combined_path,
            _dir: dir,
        })
    }

    /// Path of a PEM file holding the CA certificate (pass it as `--cacert`).
    pub fn ca_file(&self) -> &Path {
        &self.ca_path
    }

    /// Path of a PEM file holding the unrelated CA certificate.
    pub fn wrong_ca_file(&self) -> &Path {
        &self.wrong_ca_path
    }

    /// Path of the client certificate's PEM (signed by the CA, for `--cert`).
    pub fn client_cert_file(&self) -> &Path {
        &self.client_cert_path
    }

    /// Path of the client certificate's private key PEM (for `--key`).
    pub fn client_key_file(&self) -> &Path {
        &self.client_key_path
    }

    /// Path of one PEM holding the client certificate and its key.
    pub fn client_combined_file(&self) -> &Path {
        &self.client_combined_path
    }

    /// The server certificate's private key (PKCS#8).
    pub fn key(&self) -> PrivateKeyDer<'static> {
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key_der.clone()))
    }

    /// A rustls server configuration presenting the leaf certificate, offering `alpn`
    /// (in preference order), TLS 1.2 and 1.3, with session resumption enabled:
    /// stateless tickets (ring `Ticketer`) and a stateful session cache.
    ///
    /// A QUIC listener can reuse it with `alpn = [b"h3"]` (QUIC needs TLS 1.3 only, which
    /// `quinn` enforces itself).
    pub fn server_config(&self, alpn: &[&[u8]]) -> anyhow::Result<rustls::ServerConfig> {
        self.server_config_with(alpn, false)
    }

    /// [`TestCa::server_config`], requiring a client certificate signed by
    /// this CA when `require_client_cert` (mutual TLS).
    pub fn server_config_with(
        &self,
        alpn: &[&[u8]],
        require_client_cert: bool,
    ) -> anyhow::Result<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?;
        let builder = if require_client_cert {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(self.ca_der.clone()).context("client CA")?;
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .context("client certificate verifier")?;
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let mut config = builder
            .with_single_cert(self.cert_chain.clone(), self.key())
            .context("server certificate")?;
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        config.ticketer = rustls::crypto::ring::Ticketer::new().context("TLS ticketer")?;
        config.session_storage = rustls::server::ServerSessionMemoryCache::new(1024);
        Ok(config)
    }

    /// A rustls client configuration trusting only this CA, offering `alpn`.
    /// Reuse the same `Arc` across connections to get session resumption.
    pub fn client_config(&self, alpn: &[&[u8]]) -> anyhow::Result<rustls::ClientConfig> {
        client_config_trusting(&self.ca_der, alpn)
    }

    /// A rustls client configuration trusting only the wrong CA: handshakes with the target fail.
    pub fn wrong_client_config(&self, alpn: &[&[u8]]) -> anyhow::Result<rustls::ClientConfig> {
        client_config_trusting(&self.wrong_ca_der, alpn)
    }
}

/// Parameters and key of a self-signed CA named `name`.
fn new_ca(name: &str) -> anyhow::Result<(CertificateParams, KeyPair)> {
    let mut params = CertificateParams::new(Vec::<String>::new()).context("CA parameters")?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params
        .distinguished_name
        .push(DnType::OrganizationName, "h123 tests");
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().context("generating a CA key")?;
    Ok((params, key))
}

/// A ring-backed client configuration whose only trust anchor is `ca`.
fn client_config_trusting(
    ca: &CertificateDer<'static>,
    alpn: &[&[u8]],
) -> anyhow::Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(ca.clone())
        .context("adding the CA to the root store")?;
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("TLS protocol versions")?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_distinct_cas_and_files() {
        let ca = TestCa::generate().unwrap();
        assert!(ca.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_ne!(ca.ca_pem, ca.wrong_ca_pem);
        assert_eq!(std::fs::read_to_string(ca.ca_file()).unwrap(), ca.ca_pem);
        assert_eq!(
            std::fs::read_to_string(ca.wrong_ca_file()).unwrap(),
            ca.wrong_ca_pem
        );
        ca.server_config(&[b"h2"]).unwrap();
        ca.client_config(&[b"h2"]).unwrap();
        ca.wrong_client_config(&[b"h2"]).unwrap();
    }
}
