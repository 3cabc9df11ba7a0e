//! Certificate chain summaries: subject, issuer, names, validity, key type.

use h123_shared::CertificateSummary;
use rustls_pki_types::CertificateDer;
use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};
use x509_parser::public_key::PublicKey;

/// Summarises each certificate of a chain, leaf first; unparseable ones are
/// reported as such rather than dropped, so the chain length stays true.
pub fn summarize_chain(chain: &[CertificateDer<'_>]) -> Vec<CertificateSummary> {
    chain.iter().map(|der| summarize(der.as_ref())).collect()
}

fn summarize(der: &[u8]) -> CertificateSummary {
    let Ok((_, cert)) = X509Certificate::from_der(der) else {
        return CertificateSummary {
            subject: "(unparseable certificate)".to_owned(),
            issuer: String::new(),
            sans: Vec::new(),
            not_before: String::new(),
            not_after: String::new(),
            key_type: String::new(),
            fingerprint_sha256: Some(fingerprint(der)),
        };
    };
    let sans = match cert.subject_alternative_name() {
        Ok(Some(ext)) => ext
            .value
            .general_names
            .iter()
            .filter_map(|name| match name {
                GeneralName::DNSName(dns) => Some((*dns).to_owned()),
                GeneralName::IPAddress(bytes) => ip_from_bytes(bytes),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let validity = cert.validity();
    CertificateSummary {
        subject: cert.subject().to_string(),
        issuer: cert.issuer().to_string(),
        sans,
        not_before: rfc3339_utc(validity.not_before.timestamp()),
        not_after: rfc3339_utc(validity.not_after.timestamp()),
        key_type: key_type(&cert),
        fingerprint_sha256: Some(fingerprint(der)),
    }
}

/// SHA-256 of `der`, lowercase hex.
fn fingerprint(der: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn ip_from_bytes(bytes: &[u8]) -> Option<String> {
    match bytes.len() {
        4 => Some(std::net::Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?).to_string()),
        16 => Some(std::net::Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?).to_string()),
        _ => None,
    }
}

fn key_type(cert: &X509Certificate<'_>) -> String {
    let spki = cert.public_key();
    match spki.parsed() {
        Ok(PublicKey::RSA(rsa)) => format!("RSA {}", rsa.key_size()),
        Ok(PublicKey::EC(point)) => format!("EC P-{}", point.key_size()),
        _ => match spki.algorithm.algorithm.to_id_string().as_str() {
            "1.3.101.112" => "Ed25519".to_owned(),
            "1.3.101.113" => "Ed448".to_owned(),
            other => other.to_owned(),
        },
    }
}

/// Seconds since the Unix epoch as ISO 8601 UTC (clamped at the epoch).
fn rfc3339_utc(secs: i64) -> String {
    h123_shared::har::iso8601(secs.max(0) as u64 * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_validity_instants() {
        assert_eq!(rfc3339_utc(1_796_043_845), "2026-11-30T13:04:05.000Z");
        assert_eq!(rfc3339_utc(-1), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn garbage_is_reported_not_dropped() {
        let chain = [CertificateDer::from(vec![1, 2, 3])];
        let summary = summarize_chain(&chain);
        assert_eq!(summary.len(), 1);
        assert!(summary[0].subject.contains("unparseable"));
    }
}
