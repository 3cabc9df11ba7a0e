//! A small, forgiving URL splitter for the parts the mappings need, and
//! the one `%XX` decoder (no I/O, no deps).

/// `text`'s bytes with each `%XX` escape decoded; a `%` without two hex
/// digits after it is kept as it is.
pub fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], escaped) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// The parts of an absolute `scheme://authority/path?query#fragment` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UrlParts<'a> {
    /// Scheme, lowercased.
    pub scheme: String,
    /// Host without brackets (an IPv6 literal comes out as `::1`).
    pub host: &'a str,
    /// Explicit port, or the scheme's default (80, 443; 0 when unknown).
    pub port: u16,
    /// The query string without `?` and without the fragment, if any.
    pub query: Option<&'a str>,
}

/// Splits `url`, or `None` when it has no `scheme://host`.
pub(crate) fn parse(url: &str) -> Option<UrlParts<'_>> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return None;
    }
    let scheme = scheme.to_ascii_lowercase();
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => 0,
    };
    let port = match port {
        Some(p) if !p.is_empty() => p.parse().ok()?,
        _ => default_port,
    };
    let without_fragment = tail.split('#').next().unwrap_or("");
    let query = without_fragment.split_once('?').map(|(_, q)| q);
    Some(UrlParts {
        scheme,
        host,
        port,
        query,
    })
}

/// The IP part of a socket address: `1.2.3.4:443` -> `1.2.3.4`, `[::1]:443` -> `::1`.
/// A bare address comes back unchanged.
pub(crate) fn ip_of(addr: &str) -> &str {
    if let Some(bracketed) = addr.strip_prefix('[') {
        return bracketed.split(']').next().unwrap_or(bracketed);
    }
    match addr.rsplit_once(':') {
        // One colon: IPv4 (or host) with port; more than one: a bare IPv6 address.
        Some((ip, port)) if !ip.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => ip,
        _ => addr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_decode_and_broken_ones_stay() {
        assert_eq!(percent_decoded("a%20b%2fc"), b"a b/c");
        assert_eq!(percent_decoded("100%"), b"100%");
        assert_eq!(percent_decoded("%zz%4"), b"%zz%4");
        assert_eq!(percent_decoded("%C3%A9"), "é".as_bytes());
    }

    #[test]
    fn splits_common_urls() {
        let p = parse("HTTPS://user:pw@Example.com:8443/a/b?x=1&y=2#frag").unwrap();
        assert_eq!(p.scheme, "https");
        assert_eq!(p.host, "Example.com");
        assert_eq!(p.port, 8443);
        assert_eq!(p.query, Some("x=1&y=2"));

        let p = parse("http://example.com").unwrap();
        assert_eq!((p.host, p.port, p.query), ("example.com", 80, None));

        let p = parse("https://[2001:db8::1]/?q").unwrap();
        assert_eq!((p.host, p.port, p.query), ("2001:db8::1", 443, Some("q")));

        let p = parse("https://h:/#?notquery").unwrap();
        assert_eq!((p.port, p.query), (443, None));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "example.com",
            "://x",
            "https://",
            "https://h:99999/",
            "https://[::1/",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn strips_ports_from_addresses() {
        assert_eq!(ip_of("192.0.2.1:443"), "192.0.2.1");
        assert_eq!(ip_of("[2001:db8::1]:443"), "2001:db8::1");
        assert_eq!(ip_of("2001:db8::1"), "2001:db8::1");
        assert_eq!(ip_of("192.0.2.1"), "192.0.2.1");
    }
}
