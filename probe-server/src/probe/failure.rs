//! Failures as data: constructors and the mapping from I/O errors to kinds.

use h123_shared::{Failure, FailureKind, Phase};
use std::io;
use std::time::Duration;

/// A failure in `phase` of `kind`, with a readable reason.
pub fn failure(phase: Phase, kind: FailureKind, message: impl Into<String>) -> Failure {
    Failure {
        phase,
        kind,
        message: message.into(),
    }
}

/// The failure of dialling `addr`, which the safety policy refused for `reason`.
pub fn blocked(phase: Phase, addr: std::net::SocketAddr, reason: &str) -> Failure {
    failure(
        phase,
        FailureKind::Blocked,
        format!("refusing to connect to {addr}: {reason}"),
    )
}

/// The failure of a phase that ran out of time.
pub fn timed_out(phase: Phase, limit: Duration) -> Failure {
    failure(
        phase,
        FailureKind::Timeout,
        format!(
            "{} did not complete within {} ms",
            phase.as_str(),
            limit.as_millis()
        ),
    )
}

/// Classifies an I/O error raised during `phase`.
pub fn from_io(phase: Phase, err: &io::Error) -> Failure {
    use io::ErrorKind as K;
    if let Some(refused) = tls_error(err).and_then(client_cert_refused) {
        return refused;
    }
    if tls_error(err).is_some_and(no_common_protocol) {
        return failure(
            Phase::Tls,
            FailureKind::Unsupported,
            format!("the server speaks none of the protocols offered in TLS (ALPN): {err}"),
        );
    }
    let kind = match err.kind() {
        K::ConnectionRefused => FailureKind::Refused,
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            FailureKind::Reset
        }
        K::TimedOut => FailureKind::Timeout,
        _ => match tls_error(err) {
            Some(rustls::Error::InvalidCertificate(_)) => FailureKind::Certificate,
            Some(_) => FailureKind::Tls,
            None => FailureKind::Io,
        },
    };
    failure(phase, kind, err.to_string())
}

/// The server's refusal of the client certificate, or of its absence. A TLS
/// 1.3 client finishes its handshake before the server has checked its
/// certificate, so the alert arrives with the first response read; it is the
/// handshake's failure all the same, and reported in the tls phase.
fn client_cert_refused(err: &rustls::Error) -> Option<Failure> {
    use rustls::AlertDescription as A;
    let rustls::Error::AlertReceived(alert) = err else {
        return None;
    };
    let message = match alert {
        A::CertificateRequired => {
            "the server requires a client certificate (TLS alert certificate_required): give one with --cert and --key"
        }
        A::BadCertificate
        | A::UnknownCA
        | A::CertificateUnknown
        | A::UnsupportedCertificate
        | A::CertificateExpired
        | A::CertificateRevoked
        | A::AccessDenied => "the server refused the client certificate",
        _ => return None,
    };
    Some(failure(
        Phase::Tls,
        FailureKind::Tls,
        format!("{message} ({alert:?} alert)"),
    ))
}

/// Whether the handshake ended because the server speaks none of the
/// application protocols offered (alert `no_application_protocol`, or a choice
/// the client never offered): the protocol is not offered, the TLS is fine.
fn no_common_protocol(err: &rustls::Error) -> bool {
    matches!(
        err,
        rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol)
            | rustls::Error::PeerMisbehaved(
                rustls::PeerMisbehaved::SelectedUnofferedApplicationProtocol
            )
    )
}

fn tls_error(err: &io::Error) -> Option<&rustls::Error> {
    err.get_ref()?.downcast_ref::<rustls::Error>()
}

/// Classifies a hyper error raised during `phase`.
pub fn from_hyper(phase: Phase, err: &hyper::Error) -> Failure {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            if let Some(refused) = tls_error(io).and_then(client_cert_refused) {
                return refused;
            }
            return failure(phase, from_io(phase, io).kind, describe(err));
        }
        source = e.source();
    }
    let kind = if err.is_incomplete_message() || err.is_canceled() || is_h2_reset(err) {
        FailureKind::Reset
    } else if err.is_timeout() {
        FailureKind::Timeout
    } else {
        FailureKind::Protocol
    };
    failure(phase, kind, describe(err))
}

fn is_h2_reset(err: &hyper::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if e.to_string().contains("stream error") || e.to_string().contains("reset") {
            return true;
        }
        source = e.source();
    }
    false
}

/// An error and its causes on one line.
pub fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_and_reset_are_named() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(from_io(Phase::Connect, &refused).kind, FailureKind::Refused);
        let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
        assert_eq!(from_io(Phase::Receive, &eof).kind, FailureKind::Reset);
    }

    #[test]
    fn certificate_errors_inside_io_errors_are_found() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let err = io::Error::new(io::ErrorKind::InvalidData, tls);
        let f = from_io(Phase::Tls, &err);
        assert_eq!(f.kind, FailureKind::Certificate);
        assert!(f.message.contains("UnknownIssuer"), "{}", f.message);
    }

    #[test]
    fn a_missing_client_certificate_fails_the_tls_phase() {
        let alert = rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired);
        let err = io::Error::new(io::ErrorKind::InvalidData, alert);
        let f = from_io(Phase::Wait, &err);
        assert_eq!((f.phase, f.kind), (Phase::Tls, FailureKind::Tls));
        assert!(f.message.contains("--cert"), "{}", f.message);
    }

    #[test]
    fn timeouts_say_which_phase_and_limit() {
        let f = timed_out(Phase::Wait, Duration::from_millis(1500));
        assert_eq!(f.message, "wait did not complete within 1500 ms");
    }
}
