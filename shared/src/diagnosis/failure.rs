//! Failure rules: failures explained per kind, and HTTP/3 availability.

use super::*;
use crate::schema::FailureKind;

/// Whether an h1/h2 response advertised HTTP/3 in `Alt-Svc`, and the header value.
fn h3_advertised(result: &ProbeResult) -> Option<String> {
    all_attempts(result)
        .filter(|(run, _)| run.protocol != Protocol::H3)
        .filter_map(|(_, a)| a.response.as_ref()?.header("alt-svc"))
        .find(|v| {
            v.split(',').any(|alt| {
                let id = alt.split('=').next().unwrap_or("").trim();
                id == "h3" || id.starts_with("h3-")
            })
        })
        .map(str::to_string)
}

fn kind_id(kind: FailureKind) -> String {
    match serde_json::to_value(kind) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{kind:?}").to_ascii_lowercase(),
    }
}

/// HTTP/3 availability (`h3_advertised_unreachable`, `h3_unavailable`), then failures by kind (`failure_<kind>`).
pub(super) fn failures(result: &ProbeResult, out: &mut Vec<Finding>) {
    let advertised = h3_advertised(result);
    let shared_kinds: Vec<FailureKind> = all_attempts(result)
        .filter(|(run, _)| run.protocol != Protocol::H3)
        .filter_map(|(_, a)| a.failure.as_ref().map(|f| f.kind))
        .collect();
    let h3 = result.runs.iter().find(|r| r.protocol == Protocol::H3);
    let verdict = h3.and_then(|run| run.discovery.as_ref().map(|d| (run, d)));
    // "Not advertised" means something only when HTTP/1.1 or HTTP/2 got an answer that could
    // have advertised it; without one, a refusal's finding carries the hint to try HTTP/3.
    let tcp_answered = crate::schema::answered_over_tcp(&result.runs);
    if let Some((run, d)) = verdict
        && (tcp_answered || d.outcome != crate::schema::H3Outcome::NotAdvertised)
    {
        out.extend(super::h3::verdict(result, run, d));
    }
    let h3_untried = verdict.is_some_and(|(_, d)| d.via.is_none()) && !tcp_answered;
    // An h3 run that produced nothing, for reasons of its own: with a discovery
    // verdict, exactly when QUIC did not come up (the verdict explains it).
    let h3_down = match verdict {
        Some((run, d)) => (d.outcome != crate::schema::H3Outcome::Ok).then_some(run),
        None => h3.filter(|run| {
            run.skipped.is_some()
                || (!run.attempts.is_empty()
                    && run.attempts.iter().all(|a| {
                        a.failure
                            .as_ref()
                            .is_some_and(|f| !shared_kinds.contains(&f.kind))
                    }))
        }),
    };
    if let Some(run) =
        h3_down.filter(|_| verdict.is_none() && (tcp_answered || advertised.is_some()))
    {
        let first = run.attempts.first();
        let reason = run
            .skipped
            .clone()
            .or_else(|| {
                first
                    .and_then(|a| a.failure.as_ref())
                    .map(|f| f.message.clone())
            })
            .unwrap_or_default();
        let host_port = target(first.map_or(&result.options.url, |a| &a.url)).host_port;
        let url = shell_quote(&result.options.url);
        let (id, severity, title, ad) = match &advertised {
            Some(alt) => (
                "h3_advertised_unreachable",
                Severity::Warning,
                "HTTP/3 advertised but unreachable",
                format!(" The server advertises it (`Alt-Svc: {alt}`)."),
            ),
            None => (
                "h3_unavailable",
                Severity::Info,
                "HTTP/3 not available",
                " No Alt-Svc header advertised it.".to_string(),
            ),
        };
        let phase = first.and_then(|a| a.failure.as_ref()).map(|f| f.phase);
        out.push(finding(
            id,
            severity,
            title.to_string(),
            Evidence {
                protocol: Protocol::H3,
                attempt: first.map(|a| a.attempt),
                phase,
                duration: first.and_then(|a| phase.and_then(|p| a.phases.get(p))).map(|s| s.duration()),
                detail: format!(
                    "HTTP/3 {}: {reason}.{ad}",
                    if run.skipped.is_some() { "was skipped" } else { "failed" }
                ),
            },
            format!(
                "HTTP/3 runs over UDP: a QUIC timeout usually means UDP to {host_port} is blocked by a \
                 firewall on either side. Check with `curl --http3-only -v {url}`; if it also times out, \
                 open UDP on that port on the server or stop advertising h3 in Alt-Svc."
            ),
        ));
    }

    let mut groups: Vec<(FailureKind, Vec<(Protocol, &Attempt)>)> = Vec::new();
    for (run, a) in all_attempts(result) {
        let Some(f) = &a.failure else { continue };
        if h3_down.is_some() && run.protocol == Protocol::H3 {
            continue;
        }
        match groups.iter_mut().find(|(k, _)| *k == f.kind) {
            Some((_, list)) => list.push((run.protocol, a)),
            None => groups.push((f.kind, vec![(run.protocol, a)])),
        }
    }
    for (kind, list) in groups {
        let (protocol, a) = list[0];
        let Some(f) = &a.failure else { continue };
        let total = all_attempts(result).count();
        let which: Vec<String> = list.iter().map(|(p, a)| label(*p, a)).collect();
        let (title, next_step) = match h3_answered(result) {
            Some(endpoint) if kind == FailureKind::Refused => http3_only(&endpoint, &a.url),
            _ if kind == FailureKind::Refused && h3_untried => {
                let (title, next_step) = explain(kind, f.phase, protocol, &a.url);
                let url = shell_quote(&result.options.url);
                (
                    title,
                    format!(
                        "{next_step} If it speaks only HTTP/3 (QUIC on UDP), which nothing over \
                         TCP could advertise here, try it directly: tick \"Try HTTP/3 directly\" \
                         in the form or run `h123 probe --h3-direct {url}`."
                    ),
                )
            }
            _ => explain(kind, f.phase, protocol, &a.url),
        };
        let severity = if kind == FailureKind::Unsupported {
            Severity::Info
        } else {
            Severity::Critical
        };
        out.push(finding(
            &format!("failure_{}", kind_id(kind)),
            severity,
            title,
            Evidence {
                protocol,
                attempt: Some(a.attempt),
                phase: Some(f.phase),
                duration: a.phases.get(f.phase).map(|s| s.duration()),
                detail: format!(
                    "{} of {total} attempt(s) failed ({}) in the {} phase: {}",
                    list.len(),
                    which.join(", "),
                    f.phase.as_str(),
                    f.message
                ),
            },
            next_step,
        ));
    }
}

/// Where HTTP/3 answered (its endpoint), when some HTTP/3 attempt got an answer.
fn h3_answered(result: &ProbeResult) -> Option<String> {
    let run = result.runs.iter().find(|r| r.protocol == Protocol::H3)?;
    run.attempts.iter().find(|a| a.response.is_some())?;
    let endpoint = run.discovery.as_ref().and_then(|d| d.endpoint.clone());
    Some(endpoint.unwrap_or_else(|| target(&result.options.url).host_port))
}

/// Title and next step for TCP connections refused where HTTP/3 answered (`endpoint`): a
/// server that speaks only HTTP/3, which no browser reaches on a first visit.
fn http3_only(endpoint: &str, url: &str) -> (String, String) {
    let Target {
        host_port,
        host_space_port,
        ..
    } = target(url);
    (
        "Nothing listens on TCP: this server answers HTTP/3 only".into(),
        format!(
            "QUIC answered on {endpoint} (UDP), but nothing accepts TCP connections on {host_port}. \
             Browsers learn of HTTP/3 from an HTTP/1.1 or HTTP/2 answer's `Alt-Svc` header (or an \
             HTTPS DNS record), so without TCP they cannot reach the site on a first visit: serve \
             HTTP/1.1 and HTTP/2 over TCP beside HTTP/3 (check with `nc -vz {host_space_port}`)."
        ),
    )
}

/// Title and next step for a failure of this kind.
fn explain(kind: FailureKind, phase: Phase, protocol: Protocol, url: &str) -> (String, String) {
    let Target {
        host,
        host_space_port,
        host_port,
    } = target(url);
    let url = shell_quote(url);
    let openssl = format!("`openssl s_client -connect {host_port} -servername {host} -showcerts`");
    let flag = match protocol {
        Protocol::H1 => "--http1.1",
        Protocol::H2 => "--http2",
        Protocol::H3 => "--http3-only",
    };
    match kind {
        FailureKind::Timeout => (
            format!("Timed out in the {} phase", phase.as_str()),
            match phase {
                Phase::Dns => format!("The resolver did not answer: try `dig +stats {host}` and another resolver with `dig +stats {host} @1.1.1.1`."),
                Phase::Connect => format!("No answer to the TCP handshake usually means a firewall drops the packets: try `nc -vz -w 5 {host_space_port}` and `ping -c 5 {host}`."),
                Phase::Proxy => "The proxy took the connection but did not open the tunnel in time: check the proxy's logs, and time the same request with `curl -x PROXY -w '%{time_connect} %{time_appconnect}\\n' -o /dev/null URL`.".to_string(),
                Phase::Tls => format!("The TLS handshake stalled: run {openssl} and check for middleboxes that drop large handshake packets."),
                Phase::Quic => format!("QUIC runs over UDP, which is often blocked: try `curl --http3-only -v {url}` and check that UDP to {host_port} is open."),
                Phase::Send | Phase::Wait | Phase::Receive => format!("The server took the request but did not finish in time: try `curl -v -m 120 -o /dev/null {url}` and look at the server's logs for this request."),
            },
        ),
        FailureKind::NameNotFound => (
            "Host name does not resolve (NXDOMAIN)".into(),
            format!("Check the spelling and the DNS records: `dig +stats {host} A` and `dig +stats {host} AAAA`."),
        ),
        FailureKind::Dns => (
            "DNS lookup failed".into(),
            format!("Query the resolver directly with `dig +stats {host}` and compare another resolver: `dig +stats {host} @1.1.1.1`."),
        ),
        FailureKind::Refused => (
            "Connection refused".into(),
            format!("Nothing accepts connections on {host_port}, or a firewall rejects them: check with `nc -vz {host_space_port}` that the server runs and listens on the public address."),
        ),
        FailureKind::Reset => (
            "Connection reset by the peer".into(),
            format!("The server or a proxy closed the connection early: see where with `curl -v {flag} {url}` and check their logs and limits (request size, timeouts)."),
        ),
        FailureKind::Certificate => (
            "Certificate not accepted".into(),
            format!("Inspect the chain with {openssl}: check expiry, that the name is in the SAN list, and missing intermediates. For a private CA give h123 its CA file (`h123 probe --cacert ca.pem URL`; a server trusts the CA given to `h123 serve --cacert`), or skip verification (the form's option, `h123 probe -k`, `curl -k`) only to test."),
        ),
        FailureKind::Tls => (
            "TLS handshake failed".into(),
            format!("See what the server accepts with {openssl}, and try `-tls1_2` / `-tls1_3` to compare protocol versions."),
        ),
        FailureKind::Protocol => (
            format!("The server broke the {} protocol", protocol.http_version()),
            format!("Reproduce with `curl -v {flag} {url}`; proxies and load balancers in front of the server are common culprits."),
        ),
        FailureKind::Blocked => (
            "Target not allowed by the safety policy".into(),
            "The target resolves to a private, loopback or otherwise reserved address that this server does not probe. Run the CLI on your own machine (`h123 probe URL`) to measure it.".into(),
        ),
        FailureKind::Unsupported => (
            format!("{} not available for this target", protocol.http_version()),
            format!("This build or target does not support {}; compare with `curl -v {flag} {url}`.", protocol.http_version()),
        ),
        FailureKind::ProxyRefused => (
            "The proxy refused the tunnel".into(),
            "The proxy answered but did not open a tunnel to the target: check the proxy's address, its credentials (`-x scheme://user:pass@host:port`), and whether its rules allow this host and port.".into(),
        ),
        FailureKind::Budget => (
            "Stopped at the server's byte budget".into(),
            "This server reads at most a set number of bytes from a target per probe (its `--max-probe-bytes`), and this probe's answers spent them. Probe fewer attempts or streams, a smaller page, or run `h123 probe URL` on your own machine.".into(),
        ),
        FailureKind::Io => (
            "Network error".into(),
            format!("Reproduce with `curl -v {flag} {url}` and check the network path with `mtr {host}`."),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, run};

    #[test]
    fn failures_are_grouped_by_kind_and_come_first() {
        let refused = |n| {
            failed(
                attempt(n, &[(Phase::Connect, 300)], false),
                Phase::Connect,
                FailureKind::Refused,
            )
        };
        let r = result(vec![
            run(Protocol::H1, vec![refused(1)]),
            run(Protocol::H2, vec![refused(1)]),
            run(Protocol::H3, vec![fresh(1, 200_000, 1_000, 1_000, 1_000)]),
        ]);
        let f = diagnose(&r);
        assert_eq!(ids(&f), vec!["failure_refused", "dns_slow"]);
        assert!(
            f[0].evidence
                .detail
                .starts_with("2 of 3 attempt(s) failed (h1 #1, h2 #1)"),
            "{}",
            f[0].evidence.detail
        );
        assert!(f[0].next_step.contains("nc -vz example.com 443"));
        // HTTP/3 answered where TCP was refused: a server that speaks HTTP/3 only, said so.
        assert_eq!(
            f[0].title,
            "Nothing listens on TCP: this server answers HTTP/3 only"
        );
        assert!(
            f[0].next_step.contains("QUIC answered on example.com:443"),
            "{}",
            f[0].next_step
        );
        assert!(!f[0].next_step.contains("that the server runs"));

        // HTTP/3 asked for but not tried (nothing over TCP answered to advertise it): the
        // refusal carries the hint to try it directly, and no HTTP/3 finding is made.
        let mut untried = run(Protocol::H3, vec![]);
        untried.discovery = Some(crate::schema::H3Discovery {
            alt_svc: Vec::new(),
            https_record: None,
            https_lookup: None,
            via: None,
            endpoint: None,
            outcome: crate::schema::H3Outcome::NotAdvertised,
            detail: "HTTP/3 was not tried".into(),
            quic_budget_ms: None,
        });
        let unanswered = |n| {
            let mut a = refused(n);
            a.response = None;
            a
        };
        let f = diagnose(&result(vec![
            run(Protocol::H1, vec![unanswered(1)]),
            run(Protocol::H2, vec![unanswered(1)]),
            untried,
        ]));
        assert_eq!(ids(&f), vec!["failure_refused"]);
        assert_eq!(f[0].title, "Connection refused");
        assert!(f[0].next_step.contains("--h3-direct"), "{}", f[0].next_step);

        let cert = failed(
            attempt(1, &[(Phase::Tls, 300)], false),
            Phase::Tls,
            FailureKind::Certificate,
        );
        let nx = failed(
            attempt(1, &[(Phase::Dns, 300)], false),
            Phase::Dns,
            FailureKind::NameNotFound,
        );
        let f = diagnose(&result(vec![
            run(Protocol::H1, vec![cert]),
            run(Protocol::H2, vec![nx]),
        ]));
        assert_eq!(
            ids(&f),
            vec!["failure_certificate", "failure_name_not_found"]
        );
        assert!(f[0].next_step.contains("-showcerts"));
        assert!(f[1].title.contains("NXDOMAIN"));
    }

    #[test]
    fn h3_failures_of_its_own_are_an_availability_finding() {
        let quic_timeout = || {
            failed(
                attempt(1, &[(Phase::Quic, 5_000_000)], false),
                Phase::Quic,
                FailureKind::Timeout,
            )
        };
        let mut h2 = fresh(1, 0, 1_000, 1_000, 1_000);
        header(&mut h2, "alt-svc", "h3=\":443\"; ma=86400, h2=\":443\"");
        let r = result(vec![
            run(Protocol::H2, vec![h2.clone()]),
            run(Protocol::H3, vec![quic_timeout()]),
        ]);
        let f = diagnose(&r);
        assert_eq!(ids(&f), vec!["h3_advertised_unreachable"]);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(f[0].title, "HTTP/3 advertised but unreachable");
        assert_eq!(
            (f[0].evidence.phase, f[0].evidence.duration),
            (Some(Phase::Quic), Some(Micros(5_000_000)))
        );
        assert!(f[0].evidence.detail.contains("Alt-Svc: h3="));

        let not_advertised = result(vec![
            run(Protocol::H2, vec![fresh(1, 0, 1_000, 1_000, 1_000)]),
            run(Protocol::H3, vec![quic_timeout()]),
        ]);
        let f = diagnose(&not_advertised);
        assert_eq!(ids(&f), vec!["h3_unavailable"]);
        assert_eq!(f[0].severity, Severity::Info);

        let mut skipped = run(Protocol::H3, Vec::new());
        skipped.skipped = Some("QUIC disabled".into());
        let f = diagnose(&result(vec![run(Protocol::H2, vec![h2]), skipped]));
        assert_eq!(ids(&f), vec!["h3_advertised_unreachable"]);
        assert!(f[0].evidence.detail.contains("was skipped: QUIC disabled"));

        // The same failure on every protocol is a general failure.
        let wait_timeout = |n| failed(fresh(n, 0, 1, 1, 1), Phase::Wait, FailureKind::Timeout);
        let f = diagnose(&result(vec![
            run(Protocol::H1, vec![wait_timeout(1)]),
            run(Protocol::H3, vec![wait_timeout(1)]),
        ]));
        assert_eq!(ids(&f), vec!["failure_timeout"]);
    }
}
