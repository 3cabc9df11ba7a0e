//! A name's address that never answers QUIC while another does
//! (`h3_address_silent`): every new HTTP/3 connection waits on it, as a
//! browser's would, before the race moves on to the next address. One
//! where nothing listens on UDP (`h3_address_refused`) says so at once and
//! costs a round trip: a fact about the path, not the protocol's time.

use super::*;

/// What a run's new HTTP/3 connections met on the addresses `listed`
/// names (the silent or the refused ones): the first that met any.
struct PassedOver<'a> {
    /// The first new connection that passed over such an address.
    first: &'a Attempt,
    /// How many new connections did.
    met: usize,
    /// How many new HTTP/3 connections the run made.
    new: usize,
    /// The first one's such addresses, in words.
    addresses: String,
    /// The address that answered it.
    answered: String,
}

fn passed_over(
    run: &ProtocolRun,
    listed: fn(&crate::schema::QuicInfo) -> &Vec<String>,
) -> Option<PassedOver<'_>> {
    let new: Vec<&Attempt> = run
        .attempts
        .iter()
        .filter(|a| a.quic.is_some() && !is_reused(a))
        .collect();
    let met: Vec<&Attempt> = new
        .iter()
        .copied()
        .filter(|a| a.quic.as_ref().is_some_and(|q| !listed(q).is_empty()))
        .collect();
    let first = *met.first()?;
    Some(PassedOver {
        first,
        met: met.len(),
        new: new.len(),
        addresses: first
            .quic
            .as_ref()
            .map(|q| listed(q).join(", "))
            .unwrap_or_default(),
        answered: first
            .connection
            .as_ref()
            .map(|c| c.remote_addr.clone())
            .unwrap_or_default(),
    })
}

/// One warning per run whose new HTTP/3 connections passed over silent addresses.
pub(super) fn silent_addresses(result: &ProbeResult, out: &mut Vec<Finding>) {
    for run in &result.runs {
        let Some(PassedOver {
            first,
            met,
            new,
            addresses: silent,
            answered,
        }) = passed_over(run, |q| &q.silent_addresses)
        else {
            continue;
        };
        let handshake = completed(first, Phase::Quic);
        let detail = format!(
            "{} of {} new HTTP/3 connection(s) waited on {silent}, which never answered the QUIC \
             handshake, before {answered} did{}.",
            met,
            new,
            handshake
                .map(|span| format!(
                    " (the handshake took {})",
                    crate::format::ms(span.duration())
                ))
                .unwrap_or_default(),
        );
        out.push(finding(
            "h3_address_silent",
            Severity::Warning,
            format!("HTTP/3 waits on a silent address: {silent}"),
            Evidence {
                protocol: run.protocol,
                attempt: Some(first.attempt),
                phase: Some(Phase::Quic),
                duration: handshake.map(|span| span.duration()),
                detail,
            },
            "Clients try the name's addresses in turn and give each about 250 ms. Have the \
             server listen for QUIC (UDP) on every address its name resolves to (bind `[::]` as \
             well as `0.0.0.0`) and open UDP on that address's firewall, or stop publishing the \
             address; `h123 probe -4` or `-6` measures one family alone."
                .to_owned(),
        ));
    }
}

/// One info finding per run whose new HTTP/3 connections passed over
/// addresses that refused QUIC (nothing listens on their UDP port).
pub(super) fn refused_addresses(result: &ProbeResult, out: &mut Vec<Finding>) {
    for run in &result.runs {
        let Some(PassedOver {
            first,
            met,
            new,
            addresses: refused,
            answered,
        }) = passed_over(run, |q| &q.refused_addresses)
        else {
            continue;
        };
        out.push(finding(
            "h3_address_refused",
            Severity::Info,
            format!("Nothing listens for HTTP/3 on {refused}"),
            Evidence {
                protocol: run.protocol,
                attempt: Some(first.attempt),
                phase: Some(Phase::Quic),
                duration: None,
                detail: format!(
                    "{} of {} new HTTP/3 connection(s) were refused by {refused} (ICMP port \
                     unreachable: nothing listens on that UDP port) before {answered} answered; \
                     the refusal ends that address's turn at once, so it costs a round trip, \
                     not the protocol's time.",
                    met, new,
                ),
            },
            "Have the server listen for QUIC (UDP) on every address its name resolves to (bind \
             `[::]` as well as `0.0.0.0`), or stop publishing the address; `h123 probe -4` or \
             `-6` measures one family alone."
                .to_owned(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, result, reused, run};
    use crate::schema::QuicInfo;

    fn over_quic(mut a: Attempt, silent: &[&str]) -> Attempt {
        a.quic = Some(QuicInfo {
            silent_addresses: silent.iter().map(|s| s.to_string()).collect(),
            ..QuicInfo::default()
        });
        a
    }

    #[test]
    fn a_silent_address_passed_over_is_a_warning_naming_it() {
        let r = result(vec![run(
            Protocol::H3,
            vec![
                over_quic(fresh(1, 0, 0, 0, 1_000), &["[::1]:443"]),
                over_quic(reused(2, 1_000), &["[::1]:443"]),
                over_quic(fresh(3, 0, 0, 0, 1_000), &["[::1]:443"]),
            ],
        )]);
        let findings = crate::diagnosis::diagnose(&r);
        let f = findings
            .iter()
            .find(|f| f.id == "h3_address_silent")
            .expect("the finding");
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.ends_with("[::1]:443"), "{}", f.title);
        assert!(
            f.evidence
                .detail
                .starts_with("2 of 2 new HTTP/3 connection(s) waited on [::1]:443"),
            "{}",
            f.evidence.detail
        );
    }

    #[test]
    fn a_refused_address_is_a_calm_fact_not_a_wait() {
        let mut a = fresh(1, 0, 0, 0, 1_000);
        a.quic = Some(QuicInfo {
            refused_addresses: vec!["[::1]:443".into()],
            ..QuicInfo::default()
        });
        let findings = crate::diagnosis::diagnose(&result(vec![run(Protocol::H3, vec![a])]));
        let f = findings
            .iter()
            .find(|f| f.id == "h3_address_refused")
            .expect("the finding");
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.evidence
                .detail
                .starts_with("1 of 1 new HTTP/3 connection(s) were refused by [::1]:443"),
            "{}",
            f.evidence.detail
        );
        assert!(findings.iter().all(|f| f.id != "h3_address_silent"));
    }

    #[test]
    fn no_silent_address_no_finding() {
        let r = result(vec![run(
            Protocol::H3,
            vec![over_quic(fresh(1, 0, 0, 0, 1_000), &[])],
        )]);
        let findings = crate::diagnosis::diagnose(&r);
        assert!(findings.iter().all(|f| f.id != "h3_address_silent"));
    }
}
