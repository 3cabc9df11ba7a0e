//! Secrets out of records: credentials in request headers, cookies in answers and URL passwords become a marker.
//!
//! A public server stores, streams and exports what a probe measured, never
//! what its creator used to get in: `authorization`, `proxy-authorization`
//! and `cookie` request headers, `set-cookie` response headers and the
//! userinfo of a URL keep their name (and a URL its user name) while the
//! value becomes [`REDACTED`]. The probe itself still sends the real values:
//! these functions apply to copies on their way out of the engine.

use crate::api::{ProbeEvent, ProbeRecord};
use crate::schema::{Attempt, Header, ProbeOptions, ProbeResult};

/// What a secret value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Request headers whose values are credentials (lowercase).
pub const SECRET_REQUEST_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie"];

/// Response headers whose values are credentials (lowercase).
pub const SECRET_RESPONSE_HEADERS: &[&str] = &["set-cookie"];

/// Whether a request header named `name` carries a credential.
pub fn is_secret_request_header(name: &str) -> bool {
    SECRET_REQUEST_HEADERS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(name.trim()))
}

/// Whether a response header named `name` carries a credential.
pub fn is_secret_response_header(name: &str) -> bool {
    SECRET_RESPONSE_HEADERS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(name.trim()))
}

/// `url` without its password: `https://user:pw@host/` becomes
/// `https://user:[redacted]@host/`, and a lone user part (often a token, as in
/// `https://TOKEN@host/`) becomes `https://[redacted]@host/`. A URL without
/// userinfo comes back unchanged.
pub fn redact_url(url: &str) -> String {
    redact_urls_in(url)
}

/// `text` with the userinfo of every `scheme://user:pw@host` in it redacted
/// as [`redact_url`] does (for failure messages that quote a URL).
pub fn redact_urls_in(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let authority_start = at + 3;
        out.push_str(&rest[..authority_start]);
        let after = &rest[authority_start..];
        let end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace() || c == '"')
            .unwrap_or(after.len());
        let authority = &after[..end];
        match authority.rfind('@') {
            Some(userinfo_end) => {
                let userinfo = &authority[..userinfo_end];
                if let Some((user, _)) = userinfo.split_once(':') {
                    out.push_str(user);
                    out.push(':');
                }
                out.push_str(REDACTED);
                out.push_str(&authority[userinfo_end..]);
            }
            None => out.push_str(authority),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn redact_headers(headers: &mut [Header], secret: fn(&str) -> bool) {
    for header in headers.iter_mut().filter(|h| secret(&h.name)) {
        header.value = REDACTED.to_owned();
    }
}

/// Redacts the options' URL userinfo and secret request headers, and drops
/// a request body's bytes (its size, hash and content type stay).
pub fn redact_options(options: &mut ProbeOptions) {
    options.url = redact_url(&options.url);
    redact_headers(&mut options.headers, is_secret_request_header);
    if let Some(body) = &mut options.body {
        body.text = None;
        body.base64 = None;
    }
}

/// Redacts an attempt's URL, its `set-cookie` answers and URLs quoted in its failure.
pub fn redact_attempt(attempt: &mut Attempt) {
    attempt.url = redact_url(&attempt.url);
    if let Some(response) = &mut attempt.response {
        redact_headers(&mut response.headers, is_secret_response_header);
    }
    if let Some(failure) = &mut attempt.failure {
        failure.message = redact_urls_in(&failure.message);
    }
}

/// Redacts a whole result: its options and every attempt; an analysis is
/// made again from what remains, since its findings quote URLs and headers.
pub fn redact_result(result: &mut ProbeResult) {
    redact_options(&mut result.options);
    for run in &mut result.runs {
        for reason in [&mut run.skipped, &mut run.stopped].into_iter().flatten() {
            *reason = redact_urls_in(reason);
        }
        run.attempts.iter_mut().for_each(redact_attempt);
        for other in &mut run.other_addresses {
            if let Some(reason) = other.stopped.as_mut() {
                *reason = redact_urls_in(reason);
            }
            other.attempts.iter_mut().for_each(redact_attempt);
        }
    }
    if result.analysis.is_some() {
        result.analysis = None;
        result.analysis = Some(crate::analysis::analyze(result));
    }
}

/// Redacts a stored or served record: its options and its result.
pub fn redact_record(record: &mut ProbeRecord) {
    redact_options(&mut record.options);
    redact_result(&mut record.result);
    for run in &mut record.vantages {
        if let Some(result) = &mut run.result {
            redact_result(result);
        }
    }
}

/// Redacts a live event before anyone sees it.
pub fn redact_event(event: &mut ProbeEvent) {
    match event {
        ProbeEvent::Attempt { attempt, .. } => redact_attempt(attempt),
        ProbeEvent::Skipped { reason, .. } | ProbeEvent::Stopped { reason, .. } => {
            *reason = redact_urls_in(reason)
        }
        ProbeEvent::Phase { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Failure, FailureKind, Phase, ResponseInfo};

    fn header(name: &str, value: &str) -> Header {
        Header {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn urls_lose_their_password_and_lone_tokens() {
        assert_eq!(
            redact_url("https://alice:s3cret@example.com:8443/p?q=1"),
            "https://alice:[redacted]@example.com:8443/p?q=1"
        );
        assert_eq!(
            redact_url("https://ghp_TOKEN@example.com/"),
            "https://[redacted]@example.com/"
        );
        assert_eq!(
            redact_url("http://example.com/a@b?c=d@e"),
            "http://example.com/a@b?c=d@e",
            "an @ after the authority is not userinfo"
        );
        assert_eq!(redact_url("https://[::1]:443/"), "https://[::1]:443/");
        assert_eq!(redact_url("not a url"), "not a url");
        assert_eq!(
            redact_urls_in("redirect to https://u:p@a.example/ refused; then http://b/"),
            "redirect to https://u:[redacted]@a.example/ refused; then http://b/"
        );
        assert_eq!(
            redact_url("https://a:b:c@@host/"),
            "https://a:[redacted]@host/",
            "the last @ ends the userinfo"
        );
    }

    #[test]
    fn secret_headers_keep_their_name_and_lose_their_value() {
        let mut options = ProbeOptions {
            url: "https://u:pw@example.com/".into(),
            headers: vec![
                header("Authorization", "Bearer abc"),
                header("proxy-authorization", "Basic xyz"),
                header("cookie", "sid=1"),
                header("accept", "text/html"),
            ],
            ..ProbeOptions::default()
        };
        redact_options(&mut options);
        let values: Vec<_> = options.headers.iter().map(|h| h.value.as_str()).collect();
        assert_eq!(values, [REDACTED, REDACTED, REDACTED, "text/html"]);
        assert_eq!(options.headers[0].name, "Authorization");
        assert_eq!(options.url, "https://u:[redacted]@example.com/");
    }

    #[test]
    fn bodies_keep_their_size_hash_and_type_only() {
        let mut options = ProbeOptions {
            body: Some(crate::schema::RequestBody {
                text: Some("password=hunter2".into()),
                base64: Some("aHVudGVyMg==".into()),
                content_type: Some("application/x-www-form-urlencoded".into()),
                size: Some(16),
                sha256: Some("ab".into()),
            }),
            ..ProbeOptions::default()
        };
        redact_options(&mut options);
        let json = serde_json::to_string(&options).unwrap();
        assert!(
            !json.contains("hunter2") && !json.contains("aHVudGVyMg"),
            "{json}"
        );
        let body = options.body.unwrap();
        assert_eq!((body.size, body.sha256.as_deref()), (Some(16), Some("ab")));
        assert!(body.content_type.is_some());
    }

    #[test]
    fn attempts_lose_set_cookie_and_urls_in_failures() {
        let mut attempt: Attempt = serde_json::from_value(serde_json::json!({
            "attempt": 1, "hop": 1, "url": "https://u:pw@example.com/next",
            "started_at_unix_ms": 0, "phases": {"total": {"start_us": 0, "end_us": 1}},
            "ttfb_source": "transport_read"
        }))
        .unwrap();
        attempt.response = Some(ResponseInfo {
            status: 302,
            http_version: "HTTP/1.1".into(),
            headers: vec![header("Set-Cookie", "sid=2"), header("server", "x")],
            body_bytes: 0,
            truncated: false,
            headers_truncated: false,
        });
        attempt.failure = Some(Failure {
            phase: Phase::Connect,
            kind: FailureKind::Refused,
            message: "cannot reach https://u:pw@example.com/".into(),
        });
        let mut event = ProbeEvent::Attempt {
            protocol: crate::schema::Protocol::H1,
            attempt: Box::new(attempt),
        };
        redact_event(&mut event);
        let json = serde_json::to_string(&event).unwrap();
        assert!(!json.contains("pw") && !json.contains("sid=2"), "{json}");
        assert!(json.contains("\"server\""), "{json}");
    }

    #[test]
    fn side_runs_of_other_addresses_are_redacted_too() {
        let mut result = crate::fixture::result(vec![crate::fixture::run(
            crate::schema::Protocol::H2,
            Vec::new(),
        )]);
        let mut attempt = crate::fixture::fresh(1, 1_000, 300, 2_000, 3_000);
        attempt.url = "https://u:pw@example.com/".into();
        attempt
            .response
            .as_mut()
            .unwrap()
            .headers
            .push(header("Set-Cookie", "sid=2"));
        result.runs[0]
            .other_addresses
            .push(crate::schema::AddressRun {
                address: "::1".into(),
                family: crate::schema::AddressFamily::V6,
                stopped: None,
                cut_short: None,
                attempts: vec![attempt],
            });
        redact_result(&mut result);
        let json = serde_json::to_string(&result).unwrap();
        assert!(!json.contains("pw") && !json.contains("sid=2"), "{json}");
    }
}
