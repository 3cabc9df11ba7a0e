//! Which proxy a connection goes through (CLI only): `-x` URLs, curl's proxy
//! environment variables with `NO_PROXY`, and the credentials, which never
//! reach a record. The tunnel itself is [`tunnel`].

pub mod tunnel;

use h123_shared::{ProxyInfo, ProxyKind};
use url::Url;

/// One proxy: its kind, address and optional credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    /// HTTP `CONNECT`, SOCKS5 or SOCKS5 with remote name resolution.
    pub kind: ProxyKind,
    /// Host name or address literal (IPv6 without brackets).
    pub host: String,
    /// Port.
    pub port: u16,
    /// User name and password, as given (percent-decoded).
    credentials: Option<(String, String)>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("kind", &self.kind)
            .field("address", &self.address())
            .field("authenticated", &self.credentials.is_some())
            .finish()
    }
}

impl Proxy {
    /// Parses a proxy URL as curl's `-x` does: `[scheme://][user:pass@]host[:port]`,
    /// scheme `http` (the default), `socks5` or `socks5h`, port 1080 by default.
    ///
    /// # Errors
    /// One readable line (never echoing the credentials) when the URL is malformed
    /// or names a proxy scheme h123 does not speak.
    pub fn parse(text: &str) -> Result<Proxy, String> {
        let with_scheme = if text.contains("://") {
            text.to_owned()
        } else {
            format!("http://{text}")
        };
        let url = Url::parse(&with_scheme)
            .map_err(|e| format!("proxy `{}` is not a valid URL: {e}", strip_userinfo(text)))?;
        let kind = match url.scheme() {
            "http" => ProxyKind::Http,
            "socks5" => ProxyKind::Socks5,
            "socks5h" => ProxyKind::Socks5h,
            other => {
                return Err(format!(
                    "proxy scheme `{other}` is not supported: use http://, socks5:// or socks5h://"
                ));
            }
        };
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| format!("proxy `{}` has no host", strip_userinfo(text)))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let decode = |s: &str| {
            percent_decode(s).ok_or_else(|| "proxy credentials are not valid UTF-8".to_string())
        };
        let credentials = if url.username().is_empty() && url.password().is_none() {
            None
        } else {
            Some((
                decode(url.username())?,
                decode(url.password().unwrap_or_default())?,
            ))
        };
        Ok(Proxy {
            kind,
            host,
            port: url.port().unwrap_or(1080),
            credentials,
        })
    }

    /// `host:port` (IPv6 in brackets), without credentials.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The user name and password offered to the proxy, if any.
    pub fn credentials(&self) -> Option<(&str, &str)> {
        self.credentials
            .as_ref()
            .map(|(u, p)| (u.as_str(), p.as_str()))
    }

    /// Whether the target's name is resolved here rather than by the proxy
    /// (only plain `socks5`).
    pub fn resolves_locally(&self) -> bool {
        self.kind == ProxyKind::Socks5
    }

    /// The record's facts about this proxy, given its reply.
    pub fn info(&self, reply: String) -> ProxyInfo {
        ProxyInfo {
            kind: self.kind,
            address: self.address(),
            authenticated: self.credentials.is_some(),
            reply,
        }
    }
}

/// Which proxy each request goes through: one for every URL (`-x`), or
/// curl's environment variables per scheme with `NO_PROXY` exceptions.
#[derive(Clone, Debug, Default)]
pub struct ProxySettings {
    https: Option<Proxy>,
    http: Option<Proxy>,
    no_proxy: Vec<String>,
}

impl ProxySettings {
    /// Every request through `proxy` (`-x`).
    pub fn always(proxy: Proxy) -> Self {
        ProxySettings {
            https: Some(proxy.clone()),
            http: Some(proxy),
            no_proxy: Vec::new(),
        }
    }

    /// The proxies curl would take from the environment, `var` reading one
    /// variable: `https_proxy`/`HTTPS_PROXY` for https URLs, `http_proxy` for
    /// http ones (curl ignores `HTTP_PROXY`, which a CGI request header can
    /// set), `all_proxy`/`ALL_PROXY` otherwise, and `no_proxy`/`NO_PROXY`
    /// (names, domain suffixes, addresses, or `*`). Empty values count as unset.
    ///
    /// # Errors
    /// One readable line naming the variable whose proxy URL is malformed.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let first = |names: &[&'static str]| {
            names.iter().find_map(|name| {
                var(name)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (*name, v))
            })
        };
        let parse = |found: Option<(&'static str, String)>| {
            found
                .map(|(name, value)| Proxy::parse(value.trim()).map_err(|e| format!("{name}: {e}")))
                .transpose()
        };
        let all = parse(first(&["all_proxy", "ALL_PROXY"]))?;
        let https = parse(first(&["https_proxy", "HTTPS_PROXY"]))?.or_else(|| all.clone());
        let http = parse(first(&["http_proxy"]))?.or(all);
        let no_proxy = first(&["no_proxy", "NO_PROXY"])
            .map(|(_, v)| {
                v.split(',')
                    .map(|s| s.trim().trim_start_matches('.').to_ascii_lowercase())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Ok(ProxySettings {
            https,
            http,
            no_proxy,
        })
    }

    /// Whether any URL would go through a proxy.
    pub fn is_empty(&self) -> bool {
        self.https.is_none() && self.http.is_none()
    }

    /// The proxy for a request to `url`, if any.
    pub fn for_url(&self, url: &Url) -> Option<&Proxy> {
        let proxy = match url.scheme() {
            "https" => self.https.as_ref(),
            _ => self.http.as_ref(),
        }?;
        let host = url
            .host_str()?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let excepted = self.no_proxy.iter().any(|entry| {
            entry == "*"
                || host == *entry
                || host
                    .strip_suffix(entry.as_str())
                    .is_some_and(|rest| rest.ends_with('.'))
        });
        (!excepted).then_some(proxy)
    }
}

/// `text` with any `user:pass@` removed, for error messages.
fn strip_userinfo(text: &str) -> String {
    let (scheme, rest) = text.split_once("://").unwrap_or(("", text));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let rest = match rest[..authority_end].rfind('@') {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    if scheme.is_empty() {
        rest.to_owned()
    } else {
        format!("{scheme}://{rest}")
    }
}

/// Decodes `%XX` escapes (credentials in a URL); `None` when the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    String::from_utf8(h123_shared::uri::percent_decoded(text)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_parse_as_curl_reads_them() {
        let p = Proxy::parse("http://us%40er:p%3Ass@127.0.0.1:3128").unwrap();
        assert_eq!(p.kind, ProxyKind::Http);
        assert_eq!(p.address(), "127.0.0.1:3128");
        assert_eq!(p.credentials(), Some(("us@er", "p:ss")));
        let p = Proxy::parse("proxy.example").unwrap();
        assert_eq!(
            (p.kind, p.port, p.credentials()),
            (ProxyKind::Http, 1080, None)
        );
        let p = Proxy::parse("socks5h://[::1]:9050").unwrap();
        assert_eq!(
            (p.kind, p.address()),
            (ProxyKind::Socks5h, "[::1]:9050".to_owned())
        );
        assert!(Proxy::parse("socks5://h:1").unwrap().resolves_locally());
        let err = Proxy::parse("https://u:secret@proxy:1").unwrap_err();
        assert!(err.contains("https") && !err.contains("secret"), "{err}");
        let err = Proxy::parse("http://u:secret@:1").unwrap_err();
        assert!(!err.contains("secret"), "{err}");
        assert!(!format!("{:?}", Proxy::parse("http://u:secret@p:1").unwrap()).contains("secret"));
    }

    #[test]
    fn the_environment_is_read_as_curl_reads_it() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let url = |u: &str| Url::parse(u).unwrap();
        let s = ProxySettings::from_env(env(&[
            ("HTTPS_PROXY", "http://secure:3128"),
            ("HTTP_PROXY", "http://ignored:1"),
            ("ALL_PROXY", "socks5h://all:1080"),
            ("NO_PROXY", "internal.example, .corp.example,10.0.0.1"),
        ]))
        .unwrap();
        let host = |u: &str| s.for_url(&url(u)).map(|p| p.host.clone());
        assert_eq!(host("https://a.example/"), Some("secure".into()));
        assert_eq!(host("http://a.example/"), Some("all".into()));
        assert_eq!(host("https://internal.example/"), None);
        assert_eq!(host("https://x.corp.example/"), None);
        assert_eq!(host("https://corp.example/"), None);
        assert_eq!(host("https://notcorp.example/"), Some("secure".into()));
        assert_eq!(host("http://10.0.0.1/"), None);
        let none = ProxySettings::from_env(env(&[("https_proxy", " ")])).unwrap();
        assert!(none.is_empty());
        let star = ProxySettings::from_env(env(&[("https_proxy", "p:1"), ("no_proxy", "*")]));
        assert_eq!(star.unwrap().for_url(&url("https://a/")), None);
        let bad = ProxySettings::from_env(env(&[("https_proxy", "ftp://u:pw@p")])).unwrap_err();
        assert!(
            bad.starts_with("https_proxy:") && !bad.contains("pw"),
            "{bad}"
        );
    }
}
