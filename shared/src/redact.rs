//! Secrets out of records: credentials in request headers, cookies in answers, URL passwords and
//! credential-looking query parameters and headers become a marker.
//!
//! A public server stores, streams and exports what a probe measured, never
//! what its creator used to get in: `authorization`, `proxy-authorization`
//! and `cookie` request headers, `set-cookie` response headers and the
//! userinfo of a URL keep their name (and a URL its user name) while the
//! value becomes [`REDACTED`], always. So does every header and every query or
//! fragment parameter whose name looks like a credential's ([`shape::looks_secret`]:
//! `api_key`, `token`, `sig`, `X-Api-Key`, `*-Token`, ...), unless the probe's
//! options keep it by name ([`ProbeOptions::keep_secret`]). The probe itself still
//! sends the real values: these functions apply to copies on their way out of the engine.

pub mod shape;

use crate::api::{BenchRecord, ProbeEvent, ProbeRecord};
use crate::bench::BenchOptions;
use crate::schema::{Attempt, Header, ProbeOptions, ProbeResult};

/// What a secret value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Request headers whose values are credentials (lowercase), whatever `keep_secret` says.
pub const SECRET_REQUEST_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie"];

/// Response headers whose values are credentials (lowercase), whatever `keep_secret` says.
pub const SECRET_RESPONSE_HEADERS: &[&str] = &["set-cookie"];

/// Most names one probe's `keep_secret` may list.
pub const MAX_KEEP_SECRET: usize = 16;

/// Whether a request header named `name` always carries a credential.
pub fn is_secret_request_header(name: &str) -> bool {
    SECRET_REQUEST_HEADERS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(name.trim()))
}

/// Whether a response header named `name` always carries a credential.
pub fn is_secret_response_header(name: &str) -> bool {
    SECRET_RESPONSE_HEADERS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(name.trim()))
}

/// Whether a header or parameter named `name` is hidden by shape: it looks like a
/// credential's and `keep` does not name it.
pub fn is_hidden_by_shape(name: &str, keep: &[String]) -> bool {
    shape::looks_secret(name) && !shape::is_kept(name, keep)
}

/// `url` without its password and credential-looking parameters: `https://user:pw@host/`
/// becomes `https://user:[redacted]@host/`, a lone user part (often a token, as in
/// `https://TOKEN@host/`) becomes `https://[redacted]@host/`, and `?api_key=K&q=1` becomes
/// `?api_key=[redacted]&q=1` (in the fragment too) unless `keep` names `api_key`.
/// A URL with nothing to hide comes back unchanged.
pub fn redact_url(url: &str, keep: &[String]) -> String {
    redact_urls_in(url, keep)
}

/// `text` with every `scheme://...` URL in it redacted as [`redact_url`] does (for failure
/// messages and header values that quote a URL). A URL ends at white space or a quote.
pub fn redact_urls_in(text: &str, keep: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let tail_start = at + 3;
        out.push_str(&rest[..tail_start]);
        let after = &rest[tail_start..];
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>'))
            .unwrap_or(after.len());
        redact_tail(&after[..end], keep, &mut out);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// A URL after its `scheme://` (authority, path, query, fragment), redacted into `out`.
fn redact_tail(tail: &str, keep: &[String], out: &mut String) {
    let end = tail.find(['/', '?', '#']).unwrap_or(tail.len());
    let authority = &tail[..end];
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
    let rest = &tail[end..];
    let (before_fragment, fragment) = match rest.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (rest, None),
    };
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            redact_params(query, keep, out);
        }
        None => out.push_str(before_fragment),
    }
    if let Some(fragment) = fragment {
        out.push('#');
        redact_params(fragment, keep, out);
    }
}

/// `name=value&...` with the values of credential-looking names redacted, into `out`.
fn redact_params(params: &str, keep: &[String], out: &mut String) {
    for (i, pair) in params.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((name, value)) if !value.is_empty() && is_hidden_by_shape(name, keep) => {
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED);
            }
            _ => out.push_str(pair),
        }
    }
}

/// Redacts headers: the value of one that `always` names or that is hidden by shape becomes
/// [`REDACTED`]; any other's URLs are redacted as [`redact_urls_in`] does (a `Location`'s query).
fn redact_headers(headers: &mut [Header], always: fn(&str) -> bool, keep: &[String]) {
    for header in headers.iter_mut() {
        if always(&header.name) || is_hidden_by_shape(&header.name, keep) {
            header.value = REDACTED.to_owned();
        } else if header.value.contains("://") {
            header.value = redact_urls_in(&header.value, keep);
        }
    }
}

/// Redacts the options' URL (userinfo and credential-looking parameters) and secret request
/// headers, keeping what `keep_secret` names, and drops a request body's bytes (its size,
/// hash and content type stay).
pub fn redact_options(options: &mut ProbeOptions) {
    let keep = std::mem::take(&mut options.keep_secret);
    options.url = redact_url(&options.url, &keep);
    redact_headers(&mut options.headers, is_secret_request_header, &keep);
    if let Some(body) = &mut options.body {
        body.text = None;
        body.base64 = None;
    }
    options.keep_secret = keep;
}

/// Redacts a bench's options as [`redact_options`] does a probe's: its URL and request headers.
pub fn redact_bench_options(options: &mut BenchOptions) {
    let keep = std::mem::take(&mut options.keep_secret);
    options.url = redact_url(&options.url, &keep);
    redact_headers(&mut options.headers, is_secret_request_header, &keep);
    options.keep_secret = keep;
}

/// Redacts a stored or served bench: its options and the options its figures carry (the
/// result's, each sweep step's), keeping only what the bench's own options name.
pub fn redact_bench_record(record: &mut BenchRecord) {
    redact_bench_options(&mut record.options);
    let keep = &record.options.keep_secret;
    let results = record
        .result
        .iter_mut()
        .chain(record.steps.iter_mut().map(|step| &mut step.result));
    for result in results {
        result.options.keep_secret = keep.clone();
        redact_bench_options(&mut result.options);
    }
}

/// Redacts an attempt's URL, its `set-cookie` and credential-looking answers, URLs in its
/// answers' headers (a `Location`'s query) and URLs quoted in its failure.
pub fn redact_attempt(attempt: &mut Attempt, keep: &[String]) {
    attempt.url = redact_url(&attempt.url, keep);
    if let Some(response) = &mut attempt.response {
        redact_headers(&mut response.headers, is_secret_response_header, keep);
    }
    if let Some(failure) = &mut attempt.failure {
        failure.message = redact_urls_in(&failure.message, keep);
    }
}

/// Redacts a whole result (keeping what its options' `keep_secret` names): its options and
/// every attempt; an analysis is made again from what remains, since its findings quote URLs
/// and headers.
pub fn redact_result(result: &mut ProbeResult) {
    let keep = result.options.keep_secret.clone();
    redact_result_keeping(result, &keep);
}

/// [`redact_result`] keeping what `keep` names, whatever the result's own options say.
fn redact_result_keeping(result: &mut ProbeResult, keep: &[String]) {
    result.options.keep_secret = keep.to_vec();
    redact_options(&mut result.options);
    for run in &mut result.runs {
        for reason in [&mut run.skipped, &mut run.stopped].into_iter().flatten() {
            *reason = redact_urls_in(reason, keep);
        }
        run.attempts
            .iter_mut()
            .for_each(|attempt| redact_attempt(attempt, keep));
        for other in &mut run.other_addresses {
            if let Some(reason) = other.stopped.as_mut() {
                *reason = redact_urls_in(reason, keep);
            }
            other
                .attempts
                .iter_mut()
                .for_each(|attempt| redact_attempt(attempt, keep));
        }
    }
    if result.analysis.is_some() {
        result.analysis = None;
        result.analysis = Some(crate::analysis::analyze(result));
    }
}

/// Redacts a stored or served record: its options and its results, keeping only what the
/// record's own options name.
pub fn redact_record(record: &mut ProbeRecord) {
    redact_options(&mut record.options);
    let keep = record.options.keep_secret.clone();
    redact_result_keeping(&mut record.result, &keep);
    for run in &mut record.vantages {
        if let Some(result) = &mut run.result {
            redact_result_keeping(result, &keep);
        }
    }
}

/// Redacts a live event before anyone sees it, keeping what `keep` names.
pub fn redact_event(event: &mut ProbeEvent, keep: &[String]) {
    match event {
        ProbeEvent::Attempt { attempt, .. } => redact_attempt(attempt, keep),
        ProbeEvent::Skipped { reason, .. } | ProbeEvent::Stopped { reason, .. } => {
            *reason = redact_urls_in(reason, keep)
        }
        ProbeEvent::Phase { .. } | ProbeEvent::Discovery { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Failure, FailureKind, Phase, ResponseInfo};

    fn redact_url_(url: &str) -> String {
        redact_url(url, &[])
    }

    fn header(name: &str, value: &str) -> Header {
        Header {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn urls_lose_their_password_and_lone_tokens() {
        assert_eq!(
            redact_url_("https://alice:s3cret@example.com:8443/p?q=1"),
            "https://alice:[redacted]@example.com:8443/p?q=1"
        );
        assert_eq!(
            redact_url_("https://ghp_TOKEN@example.com/"),
            "https://[redacted]@example.com/"
        );
        assert_eq!(
            redact_url_("http://example.com/a@b?c=d@e"),
            "http://example.com/a@b?c=d@e",
            "an @ after the authority is not userinfo"
        );
        assert_eq!(redact_url_("https://[::1]:443/"), "https://[::1]:443/");
        assert_eq!(redact_url_("not a url"), "not a url");
        assert_eq!(
            redact_urls_in(
                "redirect to https://u:p@a.example/ refused; then http://b/",
                &[]
            ),
            "redirect to https://u:[redacted]@a.example/ refused; then http://b/"
        );
        assert_eq!(
            redact_url_("https://a:b:c@@host/"),
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
        redact_event(&mut event, &[]);
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

    #[test]
    fn credential_looking_parameters_and_headers_are_hidden_unless_kept() {
        assert_eq!(
            redact_url_(
                "https://example.com/p?q=1&api_key=K1&X-Amz-Signature=S#access_token=T&x=y"
            ),
            "https://example.com/p?q=1&api_key=[redacted]&X-Amz-Signature=[redacted]#access_token=[redacted]&x=y"
        );
        assert_eq!(
            redact_urls_in("cannot reach https://h/?token=abc now", &[]),
            "cannot reach https://h/?token=[redacted] now"
        );
        let mut options = ProbeOptions {
            url: "https://example.com/?api_key=K1&sig=S".into(),
            headers: vec![
                header("X-Api-Key", "K2"),
                header("X-Auth-Token", "T"),
                header("Referer", "https://r.example/?password=P"),
                header("accept", "text/html"),
                header("Authorization", "Bearer B"),
            ],
            keep_secret: vec!["x-api-key".into(), "sig".into(), "authorization".into()],
            ..ProbeOptions::default()
        };
        redact_options(&mut options);
        assert_eq!(options.url, "https://example.com/?api_key=[redacted]&sig=S");
        let values: Vec<_> = options.headers.iter().map(|h| h.value.as_str()).collect();
        assert_eq!(
            values,
            [
                "K2",
                REDACTED,
                "https://r.example/?password=[redacted]",
                "text/html",
                REDACTED
            ],
            "a kept name stays; Authorization is hidden whatever keep_secret says"
        );
    }

    #[test]
    fn answers_lose_credential_looking_headers_and_location_tokens() {
        let mut attempt = crate::fixture::fresh(1, 1_000, 300, 2_000, 3_000);
        attempt.url = "https://example.com/?token=T1".into();
        let response = attempt.response.as_mut().unwrap();
        response.headers.push(header("x-csrf-token", "T2"));
        response
            .headers
            .push(header("location", "https://cdn.example/f?Signature=T3&v=2"));
        redact_attempt(&mut attempt, &[]);
        let json = serde_json::to_string(&attempt).unwrap();
        for secret in ["T1", "T2", "T3"] {
            assert!(!json.contains(secret), "{secret} in {json}");
        }
        assert!(json.contains("v=2"), "{json}");
    }
}
