//! Protocols a server does not offer: an HTTP/1.1 or HTTP/2 run its TLS
//! handshake showed the server does not speak, as calm as HTTP/3's
//! `h3_not_advertised` (a fact about the server, not a failure).

use super::*;

/// `h1_not_offered` / `h2_not_offered` for every run whose server does not speak its protocol.
pub(super) fn not_offered(result: &ProbeResult, out: &mut Vec<Finding>) {
    let url = shell_quote(&result.options.url);
    for run in &result.runs {
        let Some(not_offered) = &run.not_offered else {
            continue;
        };
        let (id, title, next_step) = match run.protocol {
            Protocol::H2 => (
                "h2_not_offered",
                "HTTP/2 not offered",
                format!(
                    "Clients use HTTP/1.1 here. To offer HTTP/2, enable it on the TLS listener (nginx: \
                     `http2 on;` or `listen 443 ssl http2`; Apache: `a2enmod http2` and `Protocols h2 \
                     http/1.1`; Caddy and h2o offer it by default) and check what TLS agrees with \
                     `curl -sv --http2 {url} -o /dev/null 2>&1 | grep ALPN`."
                ),
            ),
            _ => (
                "h1_not_offered",
                "HTTP/1.1 not offered",
                format!(
                    "This server speaks only newer protocols over TLS, so HTTP/1.1-only clients \
                     (older tools, some proxies) cannot reach it. Check with \
                     `curl -sv --http1.1 {url} -o /dev/null 2>&1 | grep ALPN`."
                ),
            ),
        };
        out.push(finding(
            id,
            Severity::Info,
            title.to_string(),
            Evidence {
                protocol: run.protocol,
                attempt: None,
                phase: Some(Phase::Tls),
                duration: None,
                detail: format!("{}.", not_offered.reason(run.protocol)),
            },
            next_step,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, result, run};
    use crate::schema::NotOffered;

    #[test]
    fn a_server_without_http2_is_a_calm_fact() {
        let mut h2 = run(Protocol::H2, Vec::new());
        let not_offered = NotOffered {
            offered: vec!["h2".into(), "http/1.1".into()],
            chosen: Some("http/1.1".into()),
            closed: false,
        };
        h2.skipped = Some(not_offered.reason(Protocol::H2));
        h2.not_offered = Some(not_offered);
        let r = result(vec![
            run(Protocol::H1, vec![fresh(1, 1_000, 1_000, 1_000, 1_000)]),
            h2,
        ]);
        let findings = crate::diagnosis::diagnose(&r);
        let f = findings
            .iter()
            .find(|f| f.id == "h2_not_offered")
            .expect("the finding");
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(
            f.evidence.detail,
            "this server does not offer HTTP/2: offered h2 and http/1.1 in TLS (ALPN), it chose http/1.1."
        );
        assert!(
            findings.iter().all(|f| f.severity == Severity::Info),
            "{findings:?}"
        );
    }
}
