//! `Alt-Svc` (RFC 7838) parsing: where a server says it also speaks HTTP/3.

use crate::json::ReadJson;
use serde::{Deserialize, Serialize};

/// Default freshness of an `Alt-Svc` entry without `ma`, in seconds (24 hours).
pub const DEFAULT_MAX_AGE_S: u64 = 86_400;

/// One alternative service.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AltSvc {
    /// ALPN protocol id, e.g. `h3` or `h3-29`.
    pub protocol: String,
    /// Alternative host; `None` means the origin's own host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Alternative port.
    pub port: u16,
    /// Freshness in seconds (`ma`).
    pub max_age_s: u64,
}

impl AltSvc {
    /// Whether this entry offers final HTTP/3 (`h3`), not a draft version.
    pub fn is_h3(&self) -> bool {
        self.protocol == "h3"
    }
}

/// Parses an `Alt-Svc` header value; `clear` and malformed entries yield nothing.
pub fn parse(value: &str) -> Vec<AltSvc> {
    split_outside_quotes(value, ',')
        .into_iter()
        .filter_map(|entry| parse_entry(entry.trim()))
        .collect()
}

/// Entries advertising final HTTP/3, in the order given.
pub fn h3_entries(value: &str) -> Vec<AltSvc> {
    parse(value).into_iter().filter(AltSvc::is_h3).collect()
}

fn parse_entry(entry: &str) -> Option<AltSvc> {
    let mut parts = split_outside_quotes(entry, ';').into_iter();
    let (protocol, authority) = parts.next()?.split_once('=')?;
    let authority = authority.trim().strip_prefix('"')?.strip_suffix('"')?;
    let (host, port) = authority.rsplit_once(':')?;
    let port = port.parse().ok()?;
    // An IPv6 literal comes in brackets (RFC 3986 `IP-literal`); the host
    // kept is the bare address (the engine brackets it again to dial it).
    let host = match host.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']').filter(|a| a.contains(':'))?,
        None if host.contains([':', '[', ']']) => return None,
        None => host,
    };
    let mut max_age_s = DEFAULT_MAX_AGE_S;
    for param in parts {
        if let Some((name, value)) = param.split_once('=')
            && name.trim().eq_ignore_ascii_case("ma")
        {
            max_age_s = value.trim().trim_matches('"').parse().ok()?;
        }
    }
    Some(AltSvc {
        protocol: percent_decode(protocol.trim()),
        host: (!host.is_empty()).then(|| host.to_owned()),
        port,
        max_age_s,
    })
}

/// Splits on `sep` where it is not inside a quoted string.
fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// ALPN ids may be percent-encoded (`h3%2D29`).
fn percent_decode(id: &str) -> String {
    String::from_utf8_lossy(&crate::uri::percent_decoded(id)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_common_forms() {
        let entries =
            parse(r#"h3=":443"; ma=2592000, h3-29=":8443"; ma=60, h2="alt.example.com:443""#);
        assert_eq!(entries.len(), 3);
        assert_eq!(
            entries[0],
            AltSvc {
                protocol: "h3".into(),
                host: None,
                port: 443,
                max_age_s: 2_592_000
            }
        );
        assert_eq!(entries[1].protocol, "h3-29");
        assert_eq!(entries[2].host.as_deref(), Some("alt.example.com"));
        assert_eq!(entries[2].max_age_s, DEFAULT_MAX_AGE_S);
        assert_eq!(h3_entries(r#"h3-29=":1", h3=":2""#)[0].port, 2);
    }

    #[test]
    fn ipv6_hosts_persist_and_encoded_ids() {
        let entries = parse(r#"h3%2D29="[::1]:443"; persist=1; ma=5"#);
        assert_eq!(entries[0].protocol, "h3-29");
        assert_eq!(entries[0].host.as_deref(), Some("::1"));
        assert_eq!(entries[0].max_age_s, 5);
        let entry = &h3_entries(r#"h3="[2001:db8::1]:8443""#)[0];
        assert_eq!(entry.host.as_deref(), Some("2001:db8::1"));
        assert_eq!(entry.port, 8443);
    }

    #[test]
    fn clear_and_garbage_yield_nothing() {
        for value in [
            "clear",
            "",
            "h3",
            "h3=:443",
            r#"h3=":port""#,
            r#"h3=":443"; ma=x"#,
            r#"h3="::1:443""#,
            r#"h3="[::1:443""#,
            r#"h3="[example.com]:443""#,
            ",,;;\"\"",
        ] {
            assert!(parse(value).is_empty(), "{value:?}");
        }
    }

    #[test]
    fn commas_inside_quotes_do_not_split() {
        let entries = parse(r#"h3="a,b:443""#);
        assert_eq!(entries[0].host.as_deref(), Some("a,b"));
    }
}
