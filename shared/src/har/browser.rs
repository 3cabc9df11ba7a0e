//! The owner's browser measurement in a probe's HAR 1.2 export.
//!
//! One more page, `browser` (title `The probe owner's browser (Chrome 131) URL`), and an entry per request
//! on it: `timings` from the phases the browser showed (`connect` includes `ssl`, or QUIC's
//! handshake; `send` is 0, since the browser counts sending in the wait), or, when the target
//! hid them, the whole time as `wait` with a `comment` saying so. The answer is opaque to the
//! page, so `response.status` is 0; a request that failed carries `_error`. Each entry's
//! `_browser` says whether its connection was reused (absent when hidden), and the log's
//! `_browser` holds the user agent and the finding.

use super::iso8601;
use crate::browser::{BrowserAttempt, BrowserRun};
use crate::schema::{Micros, Phase};
use serde_json::{Value, json};

/// The page id of the browser's requests.
pub const PAGE_ID: &str = "browser";

/// Adds `run` (the browser's requests to `url`) to `har`, a probe's export.
pub fn add(har: &mut Value, run: &BrowserRun, url: &str) {
    let log = &mut har["log"];
    if let Some(pages) = log["pages"].as_array_mut() {
        pages.push(json!({
            "startedDateTime": iso8601(run.measured_at_unix_ms),
            "id": PAGE_ID,
            "title": format!("The probe owner's browser ({}) {url}", run.browser_name()),
            "pageTimings": { "onContentLoad": -1, "onLoad": -1 },
        }));
    }
    if let Some(entries) = log["entries"].as_array_mut() {
        entries.extend(run.attempts.iter().map(|a| entry(run, a, url)));
    }
    log["_browser"] = json!({ "user_agent": run.user_agent, "finding": run.finding });
}

/// One request as an entry.
fn entry(run: &BrowserRun, a: &BrowserAttempt, url: &str) -> Value {
    let span = |phase: Phase| {
        a.phases
            .iter()
            .find(|p| p.phase == phase)
            .map_or(-1.0, |p| ms(p.end_us.saturating_sub(p.start_us)))
    };
    let (dns, ssl) = (span(Phase::Dns), span(Phase::Tls));
    let connect = match (span(Phase::Connect), span(Phase::Quic)) {
        (c, _) if c >= 0.0 => c + ssl.max(0.0),
        (_, q) => q,
    };
    let hidden = !a.visible() && a.error.is_none();
    let (wait, receive) = if hidden {
        (ms(a.total_us), 0.0)
    } else {
        (span(Phase::Wait).max(0.0), span(Phase::Receive).max(0.0))
    };
    let version = a.protocol.clone().unwrap_or_default();
    let mut entry = json!({
        "pageref": PAGE_ID,
        "startedDateTime": iso8601(run.measured_at_unix_ms),
        "time": ms(a.total_us),
        "request": {
            "method": "GET", "url": url, "httpVersion": version, "cookies": [], "headers": [],
            "queryString": [], "headersSize": -1, "bodySize": 0,
        },
        "response": {
            "status": 0, "statusText": "", "httpVersion": version, "cookies": [], "headers": [],
            "content": { "size": 0, "mimeType": "" }, "redirectURL": "", "headersSize": -1,
            "bodySize": -1,
        },
        "cache": {},
        "timings": {
            "blocked": -1, "dns": dns, "connect": connect, "ssl": ssl, "send": 0,
            "wait": wait, "receive": receive,
        },
    });
    if let Some(reused) = a.reused {
        entry["_browser"] = json!({ "reused": reused });
    }
    if hidden {
        entry["comment"] = json!("the target sent no Timing-Allow-Origin: only the total is known");
    }
    if let Some(error) = &a.error {
        entry["response"]["_error"] = json!(error);
    }
    entry
}

/// Microseconds as HAR's milliseconds.
fn ms(us: Micros) -> f64 {
    us.0 as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::browser::Marks;

    #[test]
    fn the_browser_is_a_page_with_an_entry_per_request() {
        let visible = BrowserAttempt::from_marks(&Marks {
            start: 1.0,
            dns_start: 1.0,
            dns_end: 2.0,
            connect_start: 2.0,
            secure_start: 3.0,
            connect_end: 5.0,
            request_start: 5.0,
            response_start: 25.0,
            response_end: 26.0,
            protocol: "h2".into(),
        });
        let hidden = BrowserAttempt::from_marks(&Marks {
            start: 1.0,
            response_end: 31.5,
            ..Marks::default()
        });
        let run = BrowserRun {
            user_agent: "Mozilla/5.0 Chrome/131.0".into(),
            measured_at_unix_ms: 1_700_000_000_000,
            attempts: vec![visible, hidden, BrowserAttempt::failed(3.0, "offline")],
            finding: None,
        };
        let mut har = json!({ "log": { "pages": [], "entries": [] } });
        add(&mut har, &run, "https://example.com/");
        let log = &har["log"];
        assert_eq!(log["pages"][0]["id"], PAGE_ID);
        assert_eq!(
            log["pages"][0]["title"],
            "The probe owner's browser (Chrome 131) https://example.com/"
        );
        let e = &log["entries"];
        assert_eq!(e.as_array().unwrap().len(), 3);
        assert_eq!(
            e[0]["timings"],
            json!({"blocked": -1, "dns": 1.0, "connect": 3.0, "ssl": 2.0, "send": 0, "wait": 20.0, "receive": 1.0})
        );
        assert_eq!(
            (e[0]["time"].as_f64(), e[0]["_browser"]["reused"].as_bool()),
            (Some(25.0), Some(false))
        );
        assert_eq!(e[1]["timings"]["wait"], 30.5);
        assert!(
            e[1]["comment"]
                .as_str()
                .unwrap()
                .contains("Timing-Allow-Origin")
        );
        assert_eq!(e[2]["response"]["_error"], "offline");
        assert_eq!(log["_browser"]["user_agent"], run.user_agent.as_str());
    }
}
