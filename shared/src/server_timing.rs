//! `Server-Timing` response headers: parsing, and placing the metrics inside the wait phase.
//!
//! The syntax is the W3C Server Timing one: comma-separated metrics, each a
//! name followed by `;`-separated parameters, of which `dur` (milliseconds) and
//! `desc` (a token or a quoted string) are understood, e.g.
//! `db;dur=53.2, cache;desc="hit", app;dur=47.2;desc="render"`. Parsing is
//! lenient and never panics: a metric without a valid name is dropped, a bad or
//! negative `dur` is treated as missing, and for a repeated parameter the first
//! one wins, as the specification says.

use crate::schema::{Attempt, Micros, ResponseInfo};
use serde::{Deserialize, Serialize};

/// One metric of a `Server-Timing` header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerTimingMetric {
    /// Metric name, e.g. `db`.
    pub name: String,
    /// Its `dur` parameter, in milliseconds, when present, finite and not negative.
    pub duration_ms: Option<f64>,
    /// Its `desc` parameter, unquoted.
    pub description: Option<String>,
}

/// A metric placed on the attempt's timeline, inside the wait phase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubSpan {
    /// Metric name.
    pub name: String,
    /// Metric description, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Offset where the sub-span starts.
    pub start_us: Micros,
    /// Offset where the sub-span ends.
    pub end_us: Micros,
    /// Whether it was cut short to fit in the wait phase.
    pub clamped: bool,
}

/// Parses one header value (or several joined by commas).
pub fn parse(header: &str) -> Vec<ServerTimingMetric> {
    split_outside_quotes(header, ',')
        .into_iter()
        .filter_map(parse_metric)
        .collect()
}

/// All metrics of a response's `Server-Timing` headers, in order.
pub fn from_response(response: &ResponseInfo) -> Vec<ServerTimingMetric> {
    response
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("server-timing"))
        .flat_map(|h| parse(&h.value))
        .collect()
}

/// Lays an attempt's `Server-Timing` metrics inside its wait phase: metrics
/// with a positive duration, one after another from the wait start, in header
/// order, each cut at the wait end (`clamped`). Metrics that would start at or
/// after the wait end are dropped. Empty without a wait phase or a response.
///
/// Servers do not say when each metric happened, nor whether metrics nest (a
/// `total` metric often covers the others), so this layout is a reading aid,
/// not a measurement.
pub fn wait_subspans(attempt: &Attempt) -> Vec<SubSpan> {
    let (Some(wait), Some(response)) = (attempt.phases.wait, attempt.response.as_ref()) else {
        return Vec::new();
    };
    let mut cursor = wait.start_us;
    let mut spans = Vec::new();
    for metric in from_response(response) {
        let Some(duration_ms) = metric.duration_ms.filter(|d| *d > 0.0) else {
            continue;
        };
        if cursor >= wait.end_us {
            break;
        }
        // `as` saturates for huge values; at least 1 µs so tiny metrics stay visible.
        let duration_us = ((duration_ms * 1000.0).round() as u64).max(1);
        let wanted_end = cursor.0.saturating_add(duration_us);
        let end = Micros(wanted_end.min(wait.end_us.0));
        spans.push(SubSpan {
            name: metric.name,
            description: metric.description,
            start_us: cursor,
            end_us: end,
            clamped: wanted_end > wait.end_us.0,
        });
        cursor = end;
    }
    spans
}

fn parse_metric(text: &str) -> Option<ServerTimingMetric> {
    let mut parts = split_outside_quotes(text, ';').into_iter();
    let name = parts.next()?.trim();
    if !is_token(name) {
        return None;
    }
    let mut metric = ServerTimingMetric {
        name: name.to_string(),
        duration_ms: None,
        description: None,
    };
    let (mut seen_dur, mut seen_desc) = (false, false);
    for param in parts {
        let (key, value) = match param.split_once('=') {
            Some((k, v)) => (k.trim(), unquote(v.trim())),
            None => (param.trim(), String::new()),
        };
        if key.eq_ignore_ascii_case("dur") && !seen_dur {
            seen_dur = true;
            metric.duration_ms = value
                .parse::<f64>()
                .ok()
                .filter(|d| d.is_finite() && *d >= 0.0);
        } else if key.eq_ignore_ascii_case("desc") && !seen_desc {
            seen_desc = true;
            metric.description = Some(value).filter(|d| !d.is_empty());
        }
    }
    Some(metric)
}

/// Splits on `sep` where it is not inside a double-quoted string; a backslash
/// inside quotes escapes the next character. An unterminated quote runs to the end.
fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut in_quotes, mut escaped, mut start) = (false, false, 0);
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if in_quotes && c == '\\' {
            escaped = true;
        } else if c == '"' {
            in_quotes = !in_quotes;
        } else if c == sep && !in_quotes {
            pieces.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    pieces.push(&text[start..]);
    pieces
}

/// Removes surrounding quotes and backslash escapes from a quoted string;
/// returns a token unchanged.
fn unquote(value: &str) -> String {
    let Some(inner) = value.strip_prefix('"') else {
        return value.to_string();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// An RFC 9110 token.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Header, Phases, Span, TtfbSource};

    fn metric(name: &str, dur: Option<f64>, desc: Option<&str>) -> ServerTimingMetric {
        ServerTimingMetric {
            name: name.into(),
            duration_ms: dur,
            description: desc.map(Into::into),
        }
    }

    #[test]
    fn parses_the_common_shapes() {
        assert_eq!(
            parse(
                r#"db;dur=53.2, cache;desc="Cache Read";dur=23.2, app ; dur = 47 ; desc=render, miss"#
            ),
            vec![
                metric("db", Some(53.2), None),
                metric("cache", Some(23.2), Some("Cache Read")),
                metric("app", Some(47.0), Some("render")),
                metric("miss", None, None),
            ]
        );
    }

    #[test]
    fn quoted_strings_may_hold_separators_and_escapes() {
        assert_eq!(
            parse(r#"q;desc="a, b; c \"d\"";dur=1,next"#),
            vec![
                metric("q", Some(1.0), Some(r#"a, b; c "d""#)),
                metric("next", None, None)
            ]
        );
    }

    #[test]
    fn first_parameter_wins_and_bad_values_are_missing() {
        assert_eq!(parse("a;dur=1;dur=2"), vec![metric("a", Some(1.0), None)]);
        assert_eq!(parse("a;dur=x;dur=2"), vec![metric("a", None, None)]);
        for bad in ["a;dur=-1", "a;dur=NaN", "a;dur=inf", "a;dur", "a;dur="] {
            assert_eq!(parse(bad), vec![metric("a", None, None)], "{bad}");
        }
        assert_eq!(
            parse("a;DESC=x;Dur=2"),
            vec![metric("a", Some(2.0), Some("x"))]
        );
    }

    #[test]
    fn garbage_never_panics() {
        for junk in [
            "",
            ",,,",
            ";;;",
            "\"",
            "\"a\";dur=1",
            "a;desc=\"unterminated",
            "a;desc=\"x\\",
            "é;dur=1",
            "x;dur=1e400",
            "  ,  a  ,",
            "a b;dur=1",
            "a;=;=;dur=3",
        ] {
            let _ = parse(junk);
        }
        assert_eq!(parse(",,a,,"), vec![metric("a", None, None)]);
        assert_eq!(
            parse("a;desc=\"unterminated"),
            vec![metric("a", None, Some("unterminated"))]
        );
        assert!(parse("é;dur=1").is_empty());
        assert!(parse("a b;dur=1").is_empty());
        assert_eq!(parse("a;=;=;dur=3"), vec![metric("a", Some(3.0), None)]);
    }

    fn attempt(wait: Option<(u64, u64)>, headers: &[&str]) -> Attempt {
        Attempt {
            attempt: 1,
            hop: 0,
            url: "https://example.com/".into(),
            started_at_unix_ms: 0,
            chain_start_us: None,
            phases: Phases {
                wait: wait.map(|(s, e)| Span {
                    start_us: Micros(s),
                    end_us: Micros(e),
                }),
                ..Phases::default()
            },
            ttfb_source: TtfbSource::TransportRead,
            dns: None,
            connection: None,
            tls: None,
            response: Some(ResponseInfo {
                status: 200,
                http_version: "HTTP/2".into(),
                headers: headers
                    .iter()
                    .map(|v| Header {
                        name: "server-timing".into(),
                        value: (*v).into(),
                    })
                    .collect(),
                headers_truncated: false,
                body_bytes: 0,
                truncated: false,
            }),
            quic: None,
            failure: None,
            tcp_info: None,
            migration: None,
        }
    }

    #[test]
    fn subspans_are_consecutive_from_the_wait_start_across_headers() {
        let a = attempt(
            Some((1_000, 101_000)),
            &["db;dur=20;desc=\"query\", hit", "app;dur=30.5"],
        );
        let spans = wait_subspans(&a);
        assert_eq!(spans.len(), 2);
        assert_eq!(
            (spans[0].start_us, spans[0].end_us),
            (Micros(1_000), Micros(21_000))
        );
        assert_eq!(spans[0].description.as_deref(), Some("query"));
        assert_eq!(
            (spans[1].start_us, spans[1].end_us),
            (Micros(21_000), Micros(51_500))
        );
        assert!(spans.iter().all(|s| !s.clamped));
    }

    #[test]
    fn subspans_are_clamped_to_the_wait_span() {
        let a = attempt(
            Some((0, 10_000)),
            &["a;dur=8, b;dur=5, c;dur=1, d;dur=1e300"],
        );
        let spans = wait_subspans(&a);
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[1].name, "b");
        assert_eq!(
            (spans[1].start_us, spans[1].end_us),
            (Micros(8_000), Micros(10_000))
        );
        assert!(spans[1].clamped && !spans[0].clamped);

        assert!(wait_subspans(&attempt(None, &["a;dur=1"])).is_empty());
        assert!(wait_subspans(&attempt(Some((5, 5)), &["a;dur=1"])).is_empty());
        let mut no_response = attempt(Some((0, 10)), &[]);
        no_response.response = None;
        assert!(wait_subspans(&no_response).is_empty());
        // Sub-microsecond metrics still get one microsecond.
        let tiny = wait_subspans(&attempt(Some((0, 10)), &["t;dur=0.0001, z;dur=0"]));
        assert_eq!(tiny.len(), 1);
        assert_eq!(tiny[0].end_us, Micros(1));
    }
}
