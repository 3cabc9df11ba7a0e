//! Checks of what people type into the probe form, run as they type; the server checks again.
//! The forms' fields as a whole are checked in [`probe_form`] and [`bench_form`].

pub mod bench_form;
pub mod probe_form;

use crate::schema::Header;
use crate::uri;

/// Longest URL the form accepts.
pub const MAX_URL_LEN: usize = 2048;

/// Why a URL cannot be probed, or `Ok` with the trimmed URL.
///
/// # Errors
/// A sentence saying what is wrong and how to fix it.
pub fn check_url(input: &str) -> Result<String, String> {
    let url = input.trim();
    if url.is_empty() {
        return Err("Enter the URL to measure, e.g. https://example.com/".into());
    }
    if url.len() > MAX_URL_LEN {
        return Err(format!("The URL is longer than {MAX_URL_LEN} characters."));
    }
    if let Some(problem) = whitespace_inside(url) {
        return Err(problem);
    }
    if !url.contains("://") {
        return Err(format!(
            "Start with http:// or https://, e.g. https://{url}"
        ));
    }
    let parts = uri::parse(url).ok_or_else(|| {
        "The URL needs a host after the scheme, with a valid port if one is given.".to_string()
    })?;
    if parts.scheme != "http" && parts.scheme != "https" {
        return Err(format!(
            "Only http and https can be measured, not {}.",
            parts.scheme
        ));
    }
    if parts.port == 0 {
        return Err("Port 0 cannot be connected to.".into());
    }
    if parts.host.starts_with('.') || parts.host.contains("..") {
        return Err(format!("`{}` is not a valid host name.", parts.host));
    }
    Ok(url.to_string())
}

/// The first whitespace inside a (trimmed) URL, named with the text before it; a URL cannot
/// hold any, and removing it silently could measure another address than the one meant.
fn whitespace_inside(url: &str) -> Option<String> {
    let (at, c) = url.char_indices().find(|(_, c)| c.is_whitespace())?;
    let what = match c {
        ' ' => "a space",
        '\t' => "a tab",
        '\n' | '\r' => "a line break",
        _ => "a whitespace character",
    };
    // The 24 characters before it, enough to find the place.
    let from = url[..at].char_indices().rev().nth(23).map_or(0, |(i, _)| i);
    let cut = if from > 0 { "…" } else { "" };
    Some(format!(
        "The URL contains {what} after “{cut}{}”. Remove it, or write a space in a path or query as %20.",
        &url[from..at]
    ))
}

/// Request headers the probe itself writes: framing (`host`,
/// `content-length`, `transfer-encoding`) and hop-by-hop ones (RFC 9110
/// section 7.6.1, plus `keep-alive` and `http2-settings`). A user's value
/// would make the request disagree with its own framing (request
/// smuggling) or with the connection's management. `proxy-*` and
/// pseudo-headers (`:authority`) are refused too ([`is_forbidden_header`]).
pub const FORBIDDEN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "keep-alive",
    "trailer",
    "http2-settings",
];

/// Why [`FORBIDDEN_HEADERS`] are refused, as the end of a sentence.
pub const FORBIDDEN_HEADER_WHY: &str =
    "framing, hop-by-hop, proxy and pseudo-headers are set by the probe itself";

/// Whether a header name is one a probe may not set: one of
/// [`FORBIDDEN_HEADERS`], any `proxy-*` header or an HTTP/2 pseudo-header
/// (`:authority`, ...). Case-insensitive.
pub fn is_forbidden_header(name: &str) -> bool {
    let lower = name.trim().to_ascii_lowercase();
    lower.starts_with(':')
        || lower.starts_with("proxy-")
        || FORBIDDEN_HEADERS.contains(&lower.as_str())
}

/// `Ok` when `value` may be sent as header `name`'s value: ASCII only, since
/// a header value travels as bytes and a receiver would read raw UTF-8 as
/// Latin-1 or refuse it.
///
/// # Errors
/// The first non-ASCII character, named, and how to send it instead.
pub fn check_header_value(name: &str, value: &str) -> Result<(), String> {
    match value.chars().find(|c| !c.is_ascii()) {
        None => Ok(()),
        Some(c) => Err(format!(
            "the value of `{name}` has a non-ASCII character ({c:?}, U+{:04X}): header values are \
             ASCII, so encode it first (percent-encoding, or RFC 8187's `UTF-8''...` in a parameter)",
            u32::from(c)
        )),
    }
}

/// Parses the advanced section's headers, one `Name: value` per line (blank
/// lines ignored).
///
/// # Errors
/// The first bad line, with the reason.
pub fn parse_headers(text: &str) -> Result<Vec<Header>, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("`{line}`: write headers as `Name: value`."))?;
            let name = name.trim();
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if name.is_empty() || !name.chars().all(token) {
                return Err(format!("`{name}` is not a valid header name."));
            }
            if is_forbidden_header(name) {
                return Err(format!(
                    "header `{}` cannot be set: {FORBIDDEN_HEADER_WHY}.",
                    name.to_ascii_lowercase()
                ));
            }
            check_header_value(name, value.trim()).map_err(|e| format!("{e}."))?;
            Ok(Header {
                name: name.to_ascii_lowercase(),
                value: value.trim().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_non_ascii_header_value_is_refused_by_name() {
        let said = parse_headers("X-Name: Zoë").unwrap_err();
        assert!(
            said.starts_with("the value of `X-Name` has a non-ASCII character ('ë', U+00EB)"),
            "{said}"
        );
        assert!(parse_headers("X-Name: Zoe%C3%AB").is_ok());
        assert!(check_header_value("x", "caf\u{e9}").is_err());
    }

    use super::*;

    #[test]
    fn framing_and_hop_by_hop_headers_are_refused_as_typed() {
        for line in [
            "Host: a",
            "content-length: 1",
            "Proxy-Authorization: x",
            "TE: trailers",
        ] {
            let e = parse_headers(line).unwrap_err();
            assert!(e.contains("cannot be set"), "{line}: {e}");
        }
        assert!(is_forbidden_header(":path"));
        assert!(!is_forbidden_header("authorization"));
        assert!(parse_headers("Authorization: Bearer x\nX-Host: y").is_ok());
    }

    #[test]
    fn good_urls_pass_trimmed() {
        for url in [
            "https://example.com/",
            " http://127.0.0.1:8080/delay/50 ",
            "https://[::1]:8443/x?y=1",
            "HTTPS://Example.com",
        ] {
            assert_eq!(check_url(url), Ok(url.trim().to_string()), "{url}");
        }
    }

    #[test]
    fn bad_urls_say_why() {
        let cases = [
            ("", "Enter the URL"),
            (
                "example.com",
                "Start with http:// or https://, e.g. https://example.com",
            ),
            ("ftp://example.com/", "not ftp"),
            ("https:///path", "needs a host"),
            ("https://example.com:99999/", "needs a host"),
            (
                "https://exa mple.com/",
                "contains a space after “https://exa”",
            ),
            (
                "https://example.com/a\nb",
                "contains a line break after “https://example.com/a”",
            ),
            ("https://example.com/a\tb", "contains a tab after"),
            (
                "https://example.com/a/long/path/to/x y",
                "a space after “…ple.com/a/long/path/to/x”",
            ),
            ("https://example.com:0/", "Port 0"),
            ("https://a..b/", "not a valid host"),
        ];
        for (url, want) in cases {
            let err = check_url(url).unwrap_err();
            assert!(err.contains(want), "{url}: {err}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert!(check_url(&long).unwrap_err().contains("longer"));
    }

    #[test]
    fn headers_one_per_line() {
        let h = parse_headers("Accept: text/html\n\n  X-Trace:  a:b  \n").unwrap();
        assert_eq!(
            h,
            vec![
                Header {
                    name: "accept".into(),
                    value: "text/html".into()
                },
                Header {
                    name: "x-trace".into(),
                    value: "a:b".into()
                },
            ]
        );
        assert!(
            parse_headers("no colon")
                .unwrap_err()
                .contains("Name: value")
        );
        assert!(
            parse_headers("bad name: x")
                .unwrap_err()
                .contains("not a valid")
        );
        assert_eq!(parse_headers(""), Ok(Vec::new()));
    }
}
