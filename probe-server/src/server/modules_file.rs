//! Scrape modules from a file (`h123 serve --modules FILE`), written as
//! blackbox_exporter's configuration is: `modules:` by name, each with
//! `prober: http`, `timeout` and an `http:` section whose fields mean what
//! blackbox's do, plus h123's own `protocols` and `whole_probe`. A field
//! h123 does not know is an error naming it, never silently ignored (a
//! `tls_config` that was dropped would change what the module measures).

use crate::probe::plan::{Limits, Plan};
use h123_shared::blackbox::{self, Module};
use h123_shared::{AddressFamily, Header, Method, ProbeOptions, Protocol};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    modules: BTreeMap<String, Spec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    #[serde(default)]
    prober: Option<String>,
    #[serde(default)]
    timeout: Option<String>,
    #[serde(default)]
    http: Http,
    /// h123: the protocols measured, the primary's candidates first.
    #[serde(default)]
    protocols: Option<Vec<Protocol>>,
    /// h123: a whole default probe (rounds, the verdict) rather than one request each.
    #[serde(default)]
    whole_probe: bool,
    /// h123: the hosts (`host` or `host:port`) the module's headers and body may go to; needed
    /// when it has either, since anyone who can reach `/probe` names the target.
    #[serde(default)]
    targets: Vec<String>,
}

#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Http {
    valid_status_codes: Vec<u16>,
    valid_http_versions: Vec<String>,
    method: Option<Method>,
    headers: BTreeMap<String, String>,
    body: Option<String>,
    preferred_ip_protocol: Option<String>,
    ip_protocol_fallback: Option<bool>,
    fail_if_ssl: bool,
    fail_if_not_ssl: bool,
}

/// The built-in modules, then those of the file at `path` (a module of the
/// same name replacing the built-in one), each checked against `limits` as
/// a probe's options are.
///
/// # Errors
/// One line naming the file and what is wrong in it.
pub fn load(path: &Path, limits: &Limits) -> Result<Vec<Module>, String> {
    let at = path.display();
    let text = read_bounded(path).map_err(|e| format!("{at}: {e}"))?;
    let file: File = serde_yaml::from_str(&text).map_err(|e| format!("{at}: {e}"))?;
    let mut modules = blackbox::built_in();
    for (name, spec) in file.modules {
        let module = module(&name, spec).map_err(|e| format!("{at}: module {name}: {e}"))?;
        Plan::new(options_of(&module), limits).map_err(|e| format!("{at}: module {name}: {e}"))?;
        modules.retain(|m| m.name != name);
        modules.push(module);
    }
    Ok(modules)
}

/// The most a modules file may hold: blackbox's own files are a few KiB.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The deepest a modules file may nest flow collections (`[` and `{`); its modules need 2.
const MAX_FLOW_DEPTH: usize = 32;

/// The file at `path` as text, refused before the YAML parser sees it when it is longer than
/// [`MAX_FILE_BYTES`] or nests brackets deeper than [`MAX_FLOW_DEPTH`]: the parser's time grows
/// much faster than the file with deep nesting (a 200 KB file of `[` took 37.8 s).
fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "longer than the {} KiB a modules file may have",
            MAX_FILE_BYTES / 1024
        ));
    }
    match flow_depth(&text) {
        depth if depth > MAX_FLOW_DEPTH => Err(format!(
            "brackets ([ or {{) nested more than {MAX_FLOW_DEPTH} deep"
        )),
        _ => Ok(text),
    }
}

/// How deep `text` nests `[` and `{` outside quotes and comments, at its deepest (brackets in
/// unquoted text count too, so this may say more than the parser would see, never less).
fn flow_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for line in text.lines() {
        let mut quote = None;
        let mut escaped = false;
        let mut after_space = true;
        for c in line.chars() {
            match quote {
                Some('"') if escaped => escaped = false,
                Some('"') if c == '\\' => escaped = true,
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    '#' if after_space => break,
                    '\'' | '"' => quote = Some(c),
                    '[' | '{' => {
                        depth += 1;
                        deepest = deepest.max(depth);
                    }
                    ']' | '}' => depth = depth.saturating_sub(1),
                    _ => {}
                },
            }
            after_space = c.is_whitespace();
        }
    }
    deepest
}

/// A probe as `module` asks for it, to a placeholder URL (to check it).
fn options_of(module: &Module) -> ProbeOptions {
    ProbeOptions {
        url: "https://example.com/".into(),
        protocols: module.protocols.clone(),
        method: module.method,
        headers: module.headers.clone(),
        body: module.body.as_ref().map(|text| h123_shared::RequestBody {
            text: Some(text.clone()),
            ..Default::default()
        }),
        family: module.family,
        ..ProbeOptions::default()
    }
}

fn module(name: &str, spec: Spec) -> Result<Module, String> {
    if let Some(prober) = spec.prober.as_deref().filter(|p| *p != "http") {
        return Err(format!("prober {prober:?}: h123 has the http prober only"));
    }
    let versions = spec
        .http
        .valid_http_versions
        .iter()
        .map(|v| version(v))
        .collect::<Result<Vec<_>, _>>()?;
    let protocols = match spec.protocols {
        Some(protocols) if protocols.is_empty() => return Err("protocols is empty".into()),
        Some(protocols) => protocols,
        None if !versions.is_empty() => versions.clone(),
        None => vec![Protocol::H2, Protocol::H1],
    };
    // blackbox prefers a family and falls back to the other unless told not to.
    let family = match (
        spec.http.preferred_ip_protocol.as_deref(),
        spec.http.ip_protocol_fallback,
    ) {
        (None, _) | (Some(_), None | Some(true)) => AddressFamily::Any,
        (Some("ip4"), Some(false)) => AddressFamily::V4,
        (Some("ip6"), Some(false)) => AddressFamily::V6,
        (Some(other), _) => return Err(format!("preferred_ip_protocol {other:?}: ip4 or ip6")),
    };
    let mut module = Module::new(name, "from the modules file", &protocols, spec.whole_probe);
    module.valid_status_codes = spec.http.valid_status_codes;
    module.valid_http_versions = versions;
    module.fail_if_ssl = spec.http.fail_if_ssl;
    module.fail_if_not_ssl = spec.http.fail_if_not_ssl;
    module.method = spec.http.method.unwrap_or_default();
    module.headers = spec
        .http
        .headers
        .into_iter()
        .map(|(name, value)| Header { name, value })
        .collect();
    module.body = spec.http.body;
    module.family = family;
    module.timeout_ms = spec.timeout.as_deref().map(duration_ms).transpose()?;
    module.targets = spec
        .targets
        .iter()
        .map(|t| target(t))
        .collect::<Result<_, _>>()?;
    if module.targets.is_empty() && (!module.headers.is_empty() || module.body.is_some()) {
        return Err(
            "its headers or body would go to any target a scrape names: list the hosts \
             they may go to in `targets` (host or host:port)"
                .into(),
        );
    }
    Ok(module)
}

/// One of a module's `targets`, checked and in lower case: a host name, an IPv4 address or an
/// IPv6 address in brackets, with an optional port.
fn target(text: &str) -> Result<String, String> {
    let bad = || format!("targets: {text:?} is not a host or host:port");
    let url = url::Url::parse(&format!("http://{text}/")).map_err(|_| bad())?;
    let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(bad)?;
    if url.path() != "/" || !url.username().is_empty() || url.query().is_some() {
        return Err(bad());
    }
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    Ok(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None if text.ends_with(":80") => format!("{host}:80"),
        None => host,
    })
}

/// `HTTP/1.1`, `HTTP/2.0` (or `HTTP/2`), `HTTP/3.0` (or `HTTP/3`), as blackbox writes them.
fn version(text: &str) -> Result<Protocol, String> {
    match text {
        "HTTP/1.1" => Ok(Protocol::H1),
        "HTTP/2" | "HTTP/2.0" => Ok(Protocol::H2),
        "HTTP/3" | "HTTP/3.0" => Ok(Protocol::H3),
        other => Err(format!(
            "valid_http_versions {other:?}: HTTP/1.1, HTTP/2.0 or HTTP/3.0"
        )),
    }
}

/// A Prometheus duration (`500ms`, `5s`, `1m`) in ms.
fn duration_ms(text: &str) -> Result<u64, String> {
    let bad = || format!("timeout {text:?}: a duration such as 500ms, 5s or 1m");
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| bad())?;
    let scale = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        _ => return Err(bad()),
    };
    Ok(number.saturating_mul(scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(yaml: &str) -> Result<Vec<Module>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("modules.yml");
        std::fs::write(&path, yaml).unwrap();
        load(&path, &crate::server::server_limits())
    }

    #[test]
    fn a_blackbox_module_reads_as_blackbox_means_it() {
        let modules = loaded(
            "modules:\n  strict_h3:\n    prober: http\n    timeout: 4s\n    http:\n      \
             valid_status_codes: [200, 204]\n      valid_http_versions: [\"HTTP/3.0\"]\n      \
             method: HEAD\n      headers:\n        Accept: text/html\n      fail_if_not_ssl: true\n      \
             preferred_ip_protocol: ip4\n      ip_protocol_fallback: false\n    \
             targets: [example.com]\n",
        )
        .unwrap();
        let m = modules.iter().find(|m| m.name == "strict_h3").unwrap();
        assert_eq!(m.protocols, vec![Protocol::H3], "from valid_http_versions");
        assert_eq!(m.valid_status_codes, vec![200, 204]);
        assert_eq!(m.method, Method::Head);
        assert_eq!(m.headers[0].value, "text/html");
        assert_eq!(m.family, AddressFamily::V4);
        assert_eq!(m.timeout_ms, Some(4_000));
        assert!(m.fail_if_not_ssl);
        assert!(
            modules.iter().any(|m| m.name == "compare"),
            "built-ins stay"
        );
    }

    #[test]
    fn a_file_too_long_or_nested_too_deep_is_refused_before_parsing() {
        let long = loaded(&"#".repeat(200 * 1024)).unwrap_err();
        assert!(long.contains("longer than the 64 KiB"), "{long}");
        let deep = loaded(&format!("modules: {}", "[".repeat(60 * 1024))).unwrap_err();
        assert!(deep.contains("nested more than 32 deep"), "{deep}");
        let lines = loaded(&format!("modules:\n{}", "  - [\n".repeat(40))).unwrap_err();
        assert!(lines.contains("nested more than 32 deep"), "{lines}");
        // Brackets in quotes and comments are text.
        let quoted = format!(
            "modules:  # {open}\n  m:\n    targets: [a.example]\n    http:\n      headers:\n        X-A: \"{open}\\\"\"\n        X-B: '{open}'\n",
            open = "[".repeat(40)
        );
        let modules = loaded(&quoted).unwrap();
        let m = modules.iter().find(|m| m.name == "m").unwrap();
        assert_eq!(m.headers[0].value, format!("{}\"", "[".repeat(40)));
    }

    #[test]
    fn what_h123_cannot_honour_is_refused_by_name() {
        let unknown = loaded(
            "modules:\n  m:\n    http:\n      tls_config:\n        insecure_skip_verify: true\n",
        )
        .unwrap_err();
        assert!(unknown.contains("tls_config"), "{unknown}");
        let prober = loaded("modules:\n  m:\n    prober: icmp\n").unwrap_err();
        assert!(prober.contains("http prober only"), "{prober}");
        let post = loaded(
            "modules:\n  m:\n    targets: [a.example]\n    http:\n      method: POST\n      body: x\n",
        )
        .unwrap_err();
        assert!(
            post.contains("module m"),
            "a public server's methods: {post}"
        );
        let version =
            loaded("modules:\n  m:\n    http:\n      valid_http_versions: [\"HTTP/1.0\"]\n")
                .unwrap_err();
        assert!(version.contains("HTTP/1.0"), "{version}");
    }

    #[test]
    fn headers_go_only_to_the_targets_the_file_lists() {
        let open = loaded("modules:\n  m:\n    http:\n      headers:\n        X-Key: s3cret\n")
            .unwrap_err();
        assert!(
            open.contains("module m") && open.contains("list the hosts"),
            "{open}"
        );
        let modules = loaded(
            "modules:\n  m:\n    targets: [Api.Example., \"api.example:8443\", \"[::1]:443\", 192.0.2.7]\n    \
             http:\n      headers:\n        X-Key: s3cret\n",
        )
        .unwrap();
        let m = modules.iter().find(|m| m.name == "m").unwrap();
        assert_eq!(
            m.targets,
            ["api.example", "api.example:8443", "[::1]:443", "192.0.2.7"]
        );
        assert!(m.may_send_to("API.example.", 443));
        assert!(m.may_send_to("[::1]", 443));
        assert!(!m.may_send_to("[::1]", 8443));
        assert!(!m.may_send_to("evil.example", 443));
        assert!(!m.may_send_to("api.example.evil.example", 443));
        let built_in = modules.iter().find(|m| m.name == "compare").unwrap();
        assert!(
            built_in.may_send_to("anywhere.example", 443),
            "no headers, any target"
        );
        for bad in ["a.example/path", "user@a.example", "", "a.example:99999"] {
            let refused = loaded(&format!(
                "modules:\n  m:\n    targets: [\"{bad}\"]\n    http:\n      headers:\n        X-Key: k\n"
            ))
            .unwrap_err();
            assert!(
                refused.contains("is not a host or host:port"),
                "{bad}: {refused}"
            );
        }
    }
}
