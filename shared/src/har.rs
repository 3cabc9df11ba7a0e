//! HAR 1.2 export of a probe result, for browser dev tools and HAR viewers.
//!
//! One page per measured protocol (id `h1`, `h2`, `h3`) and one entry per
//! attempt and redirect hop, failed attempts included. Timings follow HAR
//! semantics:
//!
//! - `connect` includes `ssl`, and `ssl` is not added again in `time`.
//! - HTTP/3 has no separate TCP and TLS handshakes: the QUIC handshake's
//!   duration is reported as both `connect` and `ssl`.
//! - `dns`, `connect` and `ssl` are -1 when the phase did not happen (a
//!   reused connection, an IP literal, plain http); `send`, `wait` and
//!   `receive` are never negative (0 when a failure stopped the attempt first).
//! - `blocked` holds the part of the attempt's total that no phase covers
//!   (before the first phase and the small gaps between phases), so that
//!   `time` equals both the attempt's total and, as HAR requires, the sum of
//!   the non-negative timings `blocked + dns + connect + send + wait + receive`.
//!
//! An entry's `response.status` is 0 when no response arrived; a failure
//! after the headers keeps the real status. Either way `_failure` says what
//! went wrong. Custom fields start with `_`: `_protocol`, `_attempt`, `_hop`,
//! `_reused`, `_failure`, `_tls`, `_tcp_info` (the kernel's TCP facts at
//! connect, first byte and end, on h1 and h2 entries), `_quic` (QUIC's path
//! statistics), `_h3_discovery` (on HTTP/3 entries), and with
//! `--all-addresses` `_address` (`address`, `family`, `main`) on every entry
//! of a run with other addresses, whose attempts follow the main run's on
//! the same page.
//!
//! A record measured from several vantages has its own document
//! ([`vantages::to_har`]): a page per vantage and protocol.

pub mod browser;
pub mod vantages;

use crate::schema::{
    Attempt, Method, Micros, ProbeResult, Protocol, ProtocolRun, RequestBody, Span,
};
use crate::uri;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// HAR `timings` of one entry, in milliseconds; -1 where not applicable.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HarTimings {
    /// Time not covered by any phase (never negative).
    pub blocked: f64,
    /// Name lookup, or -1.
    pub dns: f64,
    /// TCP connect plus TLS handshake, or the QUIC handshake, or -1.
    pub connect: f64,
    /// TLS (or QUIC) handshake, or -1; already included in `connect`.
    pub ssl: f64,
    /// Writing the request.
    pub send: f64,
    /// Waiting for the first byte.
    pub wait: f64,
    /// Reading the body.
    pub receive: f64,
}

impl HarTimings {
    /// Maps an attempt's phases onto HAR timings.
    pub fn from_attempt(attempt: &Attempt) -> HarTimings {
        let p = &attempt.phases;
        let d = |s: Option<Span>| s.map(|s| s.duration().0);
        // HAR has no proxy timing: the tunnel's set-up is folded into `connect`
        // (and shown on its own as `_proxy` on the entry).
        let connect_us = match (p.quic, p.connect, p.tls) {
            (Some(quic), _, _) => Some(quic.duration().0),
            (None, None, None) => None,
            (None, connect, tls) => {
                Some(d(connect).unwrap_or(0) + d(p.proxy).unwrap_or(0) + d(tls).unwrap_or(0))
            }
        };
        let ssl_us = d(p.tls.or(p.quic));
        let (dns_us, send_us, wait_us, receive_us) = (d(p.dns), d(p.send), d(p.wait), d(p.receive));
        let covered = [dns_us, connect_us, send_us, wait_us, receive_us]
            .iter()
            .map(|v| v.unwrap_or(0))
            .fold(0u64, u64::saturating_add);
        let ms_or = |v: Option<u64>, absent: f64| v.map_or(absent, |us| Micros(us).as_ms());
        HarTimings {
            blocked: p.total.duration().saturating_sub(Micros(covered)).as_ms(),
            dns: ms_or(dns_us, -1.0),
            connect: ms_or(connect_us, -1.0),
            ssl: ms_or(ssl_us, -1.0),
            send: ms_or(send_us, 0.0),
            wait: ms_or(wait_us, 0.0),
            receive: ms_or(receive_us, 0.0),
        }
    }

    /// The entry's `time`: the sum of the non-negative timings except `ssl`
    /// (which `connect` includes), added in document order.
    pub fn time(&self) -> f64 {
        [
            self.blocked,
            self.dns,
            self.connect,
            self.send,
            self.wait,
            self.receive,
        ]
        .into_iter()
        .filter(|v| *v >= 0.0)
        .sum()
    }
}

/// The whole result as a HAR 1.2 document (`{"log": {...}}`).
pub fn to_har(result: &ProbeResult) -> Value {
    let skipped: Vec<String> = skipped_notes(result).collect();
    let mut log = json!({
        "version": "1.2",
        "creator": creator(),
        "pages": pages(result),
        "entries": entries(result),
    });
    if !skipped.is_empty() {
        log["comment"] = Value::String(skipped.join("; "));
    }
    let analysis = crate::analysis::of(result);
    log["_outcome"] = json!(analysis.outcome);
    log["_verdict"] = json!(analysis.verdict);
    log["_findings"] = json!(analysis.findings);
    json!({ "log": log })
}

/// The `creator` of every HAR h123 writes.
fn creator() -> Value {
    json!({ "name": "h123", "version": env!("CARGO_PKG_VERSION") })
}

/// A page per protocol that made attempts, with its first attempt's start.
fn pages(result: &ProbeResult) -> Vec<Value> {
    result
        .runs
        .iter()
        .filter(|run| !run.attempts.is_empty())
        .map(|run| {
            let started = run.attempts[0].started_at_unix_ms;
            json!({
                "startedDateTime": iso8601(started),
                "id": run.protocol.as_str(),
                "title": format!("{} {}", run.protocol.http_version(), result.options.url),
                "pageTimings": { "onContentLoad": -1, "onLoad": -1 },
            })
        })
        .collect()
}

/// Every attempt and hop of every run as an entry, each run's other
/// addresses after its main run.
fn entries(result: &ProbeResult) -> Vec<Value> {
    result
        .runs
        .iter()
        .flat_map(|run| {
            let main = run.attempts.iter().map(move |a| {
                let mut e = entry(result, run, a);
                if !run.other_addresses.is_empty() {
                    let ip = crate::addresses::main_address(&run.attempts);
                    e["_address"] = json!({
                        "address": ip.map(|ip| ip.to_string()),
                        "family": ip.map(crate::schema::AddressFamily::of),
                        "main": true,
                    });
                }
                e
            });
            main.chain(run.other_addresses.iter().flat_map(move |other| {
                other.attempts.iter().map(move |a| {
                    let mut e = entry(result, run, a);
                    e["_address"] = json!({
                        "address": other.address,
                        "family": other.family,
                        "main": false,
                    });
                    // Each address's run numbers its own connections.
                    if let Some(c) = &a.connection {
                        e["connection"] = json!(format!(
                            "{}-{}-{}",
                            run.protocol.as_str(),
                            other.address,
                            c.id
                        ));
                    }
                    e
                })
            }))
        })
        .collect()
}

/// `h3 skipped: why` for each protocol that was not measured.
fn skipped_notes(result: &ProbeResult) -> impl Iterator<Item = String> + '_ {
    result.runs.iter().filter_map(|run| {
        run.skipped
            .as_ref()
            .map(|why| format!("{} skipped: {why}", run.protocol))
    })
}

/// One HAR entry for one attempt (or redirect hop) of a run.
pub fn entry(result: &ProbeResult, run: &ProtocolRun, attempt: &Attempt) -> Value {
    let protocol: Protocol = run.protocol;
    let timings = HarTimings::from_attempt(attempt);
    let response = attempt.response.as_ref();
    let header_list = |headers: &[crate::schema::Header]| -> Vec<Value> {
        headers
            .iter()
            .map(|h| json!({ "name": h.name, "value": h.value }))
            .collect()
    };
    let status = response.map_or(0, |r| r.status);
    let mut content = json!({
        "size": response.map_or(0, |r| r.body_bytes),
        "mimeType": response.and_then(|r| r.header("content-type")).unwrap_or("x-unknown"),
    });
    if response.is_some_and(|r| r.truncated) {
        content["comment"] = json!("body cut at the probe's size cap");
    }
    let mut response_json = json!({
        "status": status,
        "statusText": crate::format::reason_phrase(status),
        "httpVersion": protocol.http_version(),
        "cookies": [],
        "headers": response.map(|r| header_list(&r.headers)).unwrap_or_default(),
        "content": content,
        "redirectURL": response.and_then(|r| r.header("location")).unwrap_or(""),
        "headersSize": -1,
        "bodySize": response.map_or(-1, |r| i64::try_from(r.body_bytes).unwrap_or(i64::MAX)),
    });
    if let Some(failure) = &attempt.failure {
        // Chrome's own HAR files name a failure in `response._error`.
        response_json["_error"] = json!(failure.message);
    }
    let (method, body) = hop_request(result, run, attempt);
    let mut entry = json!({
        "pageref": protocol.as_str(),
        "startedDateTime": iso8601(attempt.started_at_unix_ms),
        "time": timings.time(),
        "request": {
            "method": method.as_str(),
            "url": attempt.url,
            "httpVersion": protocol.http_version(),
            "cookies": [],
            "headers": header_list(&result.options.headers),
            "queryString": query_string(&attempt.url),
            "headersSize": -1,
            "bodySize": body.and_then(|b| b.size).unwrap_or(0),
        },
        "response": response_json,
        "cache": {},
        "timings": timings,
        "_protocol": protocol.as_str(),
        "_attempt": attempt.attempt,
        "_hop": attempt.hop,
        "_reused": attempt.connection.as_ref().is_some_and(|c| c.reused),
    });
    if let Some(body) = body {
        // The body's bytes are never kept (they may hold secrets): only its type and size.
        entry["request"]["postData"] = json!({
            "mimeType": body.content_type.as_deref().unwrap_or(""),
            "text": "",
            "_redacted": true,
            "_size": body.size,
            "_sha256": body.sha256,
        });
    }
    if let Some(connection) = &attempt.connection {
        entry["serverIPAddress"] = json!(uri::ip_of(&connection.remote_addr));
        entry["connection"] = json!(format!("{}-{}", protocol.as_str(), connection.id));
    }
    if let Some(failure) = &attempt.failure {
        entry["_failure"] = json!(failure);
    }
    if let Some(tls) = &attempt.tls {
        entry["_tls"] = json!(tls);
    }
    if let Some(tcp) = &attempt.tcp_info {
        entry["_tcp_info"] = json!(tcp);
    }
    if let Some(quic) = &attempt.quic {
        entry["_quic"] = json!(quic);
    }
    if let Some(proxy) = attempt.connection.as_ref().and_then(|c| c.proxy.as_ref()) {
        let mut facts = json!(proxy);
        facts["time"] = json!(attempt.phases.proxy.map_or(-1.0, |s| s.duration().as_ms()));
        entry["_proxy"] = facts;
    }
    if let Some(discovery) = &run.discovery {
        entry["_h3_discovery"] = json!(discovery);
    }
    entry
}

/// The method of an attempt's hop (changed by the redirects before it, as
/// [`Method::after_redirect`] says) and the body it carried, if any.
fn hop_request<'a>(
    result: &'a ProbeResult,
    run: &ProtocolRun,
    attempt: &Attempt,
) -> (Method, Option<&'a RequestBody>) {
    let asked = result.options.method;
    let method = run
        .attempts
        .iter()
        .filter(|a| a.attempt == attempt.attempt && a.hop < attempt.hop)
        .filter_map(|a| a.response.as_ref())
        .fold(asked, |method, response| {
            method.after_redirect(response.status)
        });
    let body = result.options.body.as_ref().filter(|_| method == asked);
    (method, body)
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC with milliseconds,
/// e.g. `2023-11-14T22:13:20.000Z`.
pub fn iso8601(unix_ms: u64) -> String {
    let days = unix_ms / 86_400_000;
    let ms_of_day = unix_ms % 86_400_000;
    let (year, month, day) = crate::format::civil_from_days(days);
    let (h, m, s, ms) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// The URL's query as HAR `queryString` pairs, percent-decoded (`+` is a space).
fn query_string(url: &str) -> Vec<Value> {
    let Some(query) = uri::parse(url).and_then(|u| u.query) else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            json!({ "name": percent_decode(name), "value": percent_decode(value) })
        })
        .collect()
}

/// A form-encoded `s` decoded: `+` is a space, then `%XX` escapes (lossily, as UTF-8).
fn percent_decode(s: &str) -> String {
    String::from_utf8_lossy(&crate::uri::percent_decoded(&s.replace('+', " "))).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, attempt, failed, fresh, reused, run, span};
    use crate::schema::{FailureKind, Header, Phase, TlsInfo};

    fn timings_sum(t: &Value) -> f64 {
        ["blocked", "dns", "connect", "send", "wait", "receive"]
            .iter()
            .map(|k| t[k].as_f64().unwrap())
            .filter(|v| *v >= 0.0)
            .sum()
    }

    #[test]
    fn civil_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
        assert_eq!(iso8601(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
        assert_eq!(iso8601(1_735_689_599_000), "2024-12-31T23:59:59.000Z");
        // Far future stays well-formed.
        assert!(iso8601(u64::MAX).ends_with('Z'));
    }

    #[test]
    fn new_tls_connection_connect_includes_ssl() {
        let t = HarTimings::from_attempt(&fresh(1, 1_000, 2_000, 5_000, 40_000));
        assert_eq!((t.dns, t.connect, t.ssl), (1.0, 7.0, 5.0));
        assert_eq!(
            (t.send, t.wait, t.receive, t.blocked),
            (0.05, 40.0, 0.5, 0.0)
        );
        assert_eq!(t.time(), 1.0 + 7.0 + 0.05 + 40.0 + 0.5);
    }

    #[test]
    fn absent_phases_are_minus_one_and_gaps_go_to_blocked() {
        let mut a = reused(2, 3_000);
        a.phases.total.end_us = Micros(3_550 + 250);
        let t = HarTimings::from_attempt(&a);
        assert_eq!((t.dns, t.connect, t.ssl), (-1.0, -1.0, -1.0));
        assert_eq!(t.blocked, 0.25);
        assert_eq!(t.time(), 3.8);

        // Plain http: connect without ssl.
        let plain = attempt(1, &[(Phase::Connect, 300), (Phase::Send, 10)], false);
        let t = HarTimings::from_attempt(&plain);
        assert_eq!((t.connect, t.ssl), (0.3, -1.0));
    }

    #[test]
    fn quic_is_both_connect_and_ssl() {
        let a = attempt(
            1,
            &[
                (Phase::Dns, 100),
                (Phase::Quic, 9_000),
                (Phase::Send, 10),
                (Phase::Wait, 1_000),
            ],
            false,
        );
        let t = HarTimings::from_attempt(&a);
        assert_eq!((t.connect, t.ssl), (9.0, 9.0));
        // `ssl` is inside `connect`, so time counts it once.
        assert_eq!(t.time(), 0.1 + 9.0 + 0.01 + 1.0 + 0.0);
    }

    #[test]
    fn failed_attempt_keeps_non_negative_request_timings() {
        let a = failed(
            attempt(1, &[(Phase::Dns, 100), (Phase::Connect, 5_000_000)], false),
            Phase::Connect,
            FailureKind::Timeout,
        );
        let t = HarTimings::from_attempt(&a);
        assert_eq!((t.send, t.wait, t.receive), (0.0, 0.0, 0.0));
        assert_eq!(t.time(), 5_000.1);
    }

    #[test]
    fn time_is_the_sum_of_timings_for_every_entry() {
        let mut odd = reused(3, 123_457);
        odd.phases.total = span(0, 987_654_321).unwrap();
        let r = fixture::result(vec![
            run(
                Protocol::H1,
                vec![fresh(1, 1_111, 2_223, 3_337, 44_449), reused(2, 777), odd],
            ),
            run(
                Protocol::H3,
                vec![failed(
                    attempt(1, &[(Phase::Quic, 333)], false),
                    Phase::Quic,
                    FailureKind::Timeout,
                )],
            ),
        ]);
        let har = to_har(&r);
        let entries = har["log"]["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 4);
        for e in entries {
            let t = &e["timings"];
            assert_eq!(e["time"].as_f64().unwrap(), timings_sum(t), "{e}");
            for k in ["send", "wait", "receive", "blocked"] {
                assert!(t[k].as_f64().unwrap() >= 0.0);
            }
        }
        assert!((entries[2]["time"].as_f64().unwrap() - 987_654.321).abs() < 1e-6);
    }

    #[test]
    fn tcp_and_quic_facts_ride_on_their_entries() {
        let mut tcp = fresh(1, 1_000, 1_000, 1_000, 1_000);
        tcp.tcp_info = Some(crate::schema::TcpInfoSnapshots {
            at_connect: Some(crate::schema::TcpInfo {
                rtt_us: Some(Micros(31)),
                snd_cwnd: Some(10),
                ..Default::default()
            }),
            ..Default::default()
        });
        let mut quic = attempt(1, &[(Phase::Quic, 333)], false);
        quic.quic = Some(crate::schema::QuicInfo {
            cwnd_bytes: Some(12_000),
            ..Default::default()
        });
        let r = fixture::result(vec![
            run(Protocol::H1, vec![tcp, reused(2, 777)]),
            run(Protocol::H3, vec![quic]),
        ]);
        let har = to_har(&r);
        let entries = har["log"]["entries"].as_array().unwrap();
        assert_eq!(entries[0]["_tcp_info"]["at_connect"]["rtt_us"], 31);
        assert_eq!(entries[0]["_tcp_info"]["at_connect"]["snd_cwnd"], 10);
        assert!(entries[1].get("_tcp_info").is_none());
        assert!(entries[2].get("_tcp_info").is_none());
        assert_eq!(entries[2]["_quic"]["cwnd_bytes"], 12_000);
    }

    #[test]
    fn document_has_the_har_shape() {
        let mut first = fresh(1, 1_000, 1_000, 1_000, 1_000);
        first.tls = Some(TlsInfo {
            alpn: Some("h2".into()),
            version: "TLSv1.3".into(),
            cipher: "TLS13_AES_128_GCM_SHA256".into(),
            resumed: false,
            verified: true,
            certificates: Vec::new(),
        });
        let mut redirect = reused(2, 1_000);
        redirect.response.as_mut().unwrap().status = 301;
        redirect.response.as_mut().unwrap().headers = vec![Header {
            name: "Location".into(),
            value: "https://example.com/new".into(),
        }];
        let mut refused = failed(
            attempt(1, &[(Phase::Connect, 100)], false),
            Phase::Connect,
            FailureKind::Refused,
        );
        refused.response = None;
        refused.connection = None;
        let mut h3 = run(Protocol::H3, Vec::new());
        h3.skipped = Some("no QUIC support".into());
        let mut r = fixture::result(vec![
            run(Protocol::H2, vec![first, redirect]),
            run(Protocol::H1, vec![refused]),
            h3,
        ]);
        r.options.headers = vec![Header {
            name: "accept".into(),
            value: "*/*".into(),
        }];
        r.options.url = "https://example.com/path?q=a%20b&x=1+2&flag".into();
        let har = to_har(&r);
        let log = &har["log"];
        assert_eq!(log["version"], "1.2");
        assert_eq!(log["creator"]["name"], "h123");
        assert_eq!(log["comment"], "h3 skipped: no QUIC support");
        let pages = log["pages"].as_array().unwrap();
        assert_eq!(pages.len(), 2);
        assert_eq!(pages[0]["id"], "h2");
        assert_eq!(pages[0]["startedDateTime"], "2023-11-14T22:13:21.000Z");

        let e = &log["entries"][0];
        for key in [
            "pageref",
            "startedDateTime",
            "time",
            "request",
            "response",
            "cache",
            "timings",
        ] {
            assert!(!e[key].is_null(), "missing {key}");
        }
        assert_eq!(e["request"]["method"], "GET");
        assert_eq!(e["request"]["httpVersion"], "HTTP/2");
        assert_eq!(e["request"]["headers"][0]["name"], "accept");
        assert_eq!(
            e["request"]["queryString"],
            json!([{ "name": "q", "value": "1" }])
        );
        assert_eq!(e["response"]["status"], 200);
        assert_eq!(e["response"]["statusText"], "OK");
        assert_eq!(
            e["response"]["content"],
            json!({ "size": 1000, "mimeType": "text/html" })
        );
        assert_eq!(e["response"]["bodySize"], 1000);
        assert_eq!(e["response"]["redirectURL"], "");
        assert_eq!(e["serverIPAddress"], "192.0.2.1");
        assert_eq!(e["connection"], "h2-1");
        assert_eq!(
            (
                e["_protocol"].as_str(),
                e["_attempt"].as_u64(),
                e["_reused"].as_bool()
            ),
            (Some("h2"), Some(1), Some(false))
        );
        assert_eq!(e["_tls"]["version"], "TLSv1.3");
        assert!(e.get("_failure").is_none());

        let redirect = &log["entries"][1];
        assert_eq!(
            redirect["response"]["redirectURL"],
            "https://example.com/new"
        );
        assert_eq!(redirect["response"]["content"]["mimeType"], "x-unknown");
        assert_eq!(redirect["_reused"], true);

        let refused = &log["entries"][2];
        assert_eq!(refused["response"]["status"], 0);
        assert_eq!(refused["response"]["bodySize"], -1);
        assert_eq!(refused["_failure"]["kind"], "refused");
        assert!(refused.get("serverIPAddress").is_none());
        assert!(refused["response"]["_error"].is_string());
    }

    #[test]
    fn query_strings_are_decoded() {
        let q = query_string("https://h/p?q=a%20b&x=1+2&flag&bad=%zz%4&&utf=%C3%A9#frag=no");
        assert_eq!(
            q,
            vec![
                json!({ "name": "q", "value": "a b" }),
                json!({ "name": "x", "value": "1 2" }),
                json!({ "name": "flag", "value": "" }),
                json!({ "name": "bad", "value": "%zz%4" }),
                json!({ "name": "utf", "value": "é" }),
            ]
        );
        assert!(query_string("not a url").is_empty());
    }
}
