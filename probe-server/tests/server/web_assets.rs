//! The web UI's files from a real `h123 serve`: precompressed brotli and gzip
//! chosen by `Accept-Encoding` (fetched with curl, decoded by the `brotli`
//! and `gzip` tools to the original bytes), cache headers by kind of file,
//! ETags per encoding, and a permalink's page with its result's markup and `og:` tags.

use crate::support::*;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::Command;

/// A hashed wasm name, as scripts/build-web writes them.
const WASM: &str = "app-0123456789abcdef_bg.wasm";

/// A hashed stylesheet name.
const CSS: &str = "style-5546b83d3fc61a1.css";

/// The shape of `dist/index.html`: the shell with its summary markers and its inline loader.
pub(crate) const INDEX: &str = "<!doctype html><html><head><title>h123</title>\
<script type=\"module\">import init from '/app.js'; await init();</script></head><body>\
<div id=\"shell\"><main><!--h123:summary--><section class=\"intro\"><h1>Where does the time go?</h1>\
</section><!--/h123:summary--></main></div></body></html>";

/// One answer as curl saw it: status, headers (lowercase names) and raw body bytes.
pub(crate) struct Fetched {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Fetched {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// `GET url` with curl, sending exactly `extra` headers (curl sends no
/// `Accept-Encoding` of its own without `--compressed`).
pub(crate) fn curl(url: &str, extra: &[&str]) -> Fetched {
    let dir = tempfile::tempdir().unwrap();
    let (head, body) = (dir.path().join("head"), dir.path().join("body"));
    let mut command = Command::new("curl");
    command.args(["-s", "-D"]).arg(&head).arg("-o").arg(&body);
    for header in extra {
        command.args(["-H", header]);
    }
    let status = command.arg(url).status().expect("curl runs");
    assert!(status.success(), "curl {url}: {status}");
    let head = std::fs::read_to_string(head).unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split_whitespace().nth(1).unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Fetched {
        status: status.parse().unwrap(),
        headers,
        body: std::fs::read(body).unwrap_or_default(),
    }
}

/// `bytes` decoded by the command-line tool of `encoding`.
fn decode(encoding: Option<&str>, bytes: &[u8]) -> Vec<u8> {
    let tool = match encoding {
        None => return bytes.to_vec(),
        Some("br") => "brotli",
        Some("gzip") => "gzip",
        Some(other) => panic!("unexpected Content-Encoding {other}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body");
    std::fs::write(&file, bytes).unwrap();
    let out = Command::new(tool)
        .args(["-d", "-c"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool} -d: {:?}", out.status);
    out.stdout
}

/// `h123 serve` against `target` with a fresh database and [`web_root`]'s files as its web UI:
/// the server, the bundle's bytes, and its folders (removed when dropped).
pub(crate) async fn serve_web_root(
    target: &h123_target::TestTarget,
) -> (ServerProcess, Vec<u8>, [tempfile::TempDir; 2]) {
    let dir = tempfile::tempdir().unwrap();
    let web = tempfile::tempdir().unwrap();
    let wasm = web_root(web.path());
    let server = ServerProcess::start_with_web_root(
        target,
        &dir.path().join("h123.sqlite"),
        web.path(),
        &[],
    )
    .await;
    (server, wasm, [dir, web])
}

/// A web root as `scripts/build-web` leaves it: each file with `.br` and `.gz` copies.
pub(crate) fn web_root(dir: &Path) -> Vec<u8> {
    // About 300 KB that compresses, but not to nothing.
    let wasm: Vec<u8> = (0u32..20_000)
        .flat_map(|i| {
            format!("attempt {i} phase {} ", i.wrapping_mul(2_654_435_761) % 97).into_bytes()
        })
        .collect();
    std::fs::write(dir.join(WASM), &wasm).unwrap();
    std::fs::write(dir.join(CSS), "body { color: black; }\n".repeat(100)).unwrap();
    std::fs::write(dir.join("index.html"), INDEX).unwrap();
    for name in [WASM, CSS, "index.html"] {
        let file = dir.join(name);
        let br = Command::new("brotli")
            .args(["--best", "--keep", "--force"])
            .arg(&file)
            .status();
        assert!(
            br.expect("the brotli tool runs (scripts/build-web installs it)")
                .success()
        );
        let gz = Command::new("gzip")
            .args(["-9", "--keep", "--force", "--no-name"])
            .arg(&file)
            .status();
        assert!(gz.unwrap().success());
    }
    wasm
}

#[tokio::test]
async fn precompressed_files_follow_accept_encoding_with_cache_headers_and_etags() {
    let target = target().await;
    let (server, wasm, dirs) = serve_web_root(&target).await;
    let url = format!("http://{}/{WASM}", server.addr);

    let cases: [(Option<&str>, Option<&str>); 7] = [
        (Some("gzip, deflate, br, zstd"), Some("br")), // Chromium's
        (Some("br"), Some("br")),
        (Some("gzip"), Some("gzip")),
        (Some("br;q=0, gzip;q=0.8"), Some("gzip")),
        (Some("*"), Some("br")),
        (Some("identity"), None),
        (None, None), // no Accept-Encoding at all
    ];
    let mut tags = HashMap::new();
    for (accept, expected) in cases {
        let header = accept.map(|a| format!("Accept-Encoding: {a}"));
        let sent: Vec<&str> = header.iter().map(String::as_str).collect();
        let got = curl(&url, &sent);
        assert_eq!(got.status, 200, "{accept:?}");
        assert_eq!(got.header("content-encoding"), expected, "{accept:?}");
        assert_eq!(got.header("vary"), Some("accept-encoding"), "{accept:?}");
        assert_eq!(got.header("content-type"), Some("application/wasm"));
        assert_eq!(
            got.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "a hashed name is immutable"
        );
        assert_eq!(
            decode(expected, &got.body),
            wasm,
            "{accept:?} decodes to the original bytes"
        );
        if let Some(e) = expected {
            assert!(got.body.len() < wasm.len() / 2, "{e} is smaller");
        }
        let tag = got.header("etag").expect("an ETag").to_owned();
        assert_eq!(*tags.entry(expected).or_insert_with(|| tag.clone()), tag);
    }
    assert_eq!(tags.len(), 3, "one ETag per encoding: {tags:?}");

    // Conditional requests: each encoding's own tag gives 304; another encoding's does not.
    let br_tag = &tags[&Some("br")];
    let revalidated = curl(
        &url,
        &["Accept-Encoding: br", &format!("If-None-Match: {br_tag}")],
    );
    assert_eq!(revalidated.status, 304);
    assert!(revalidated.body.is_empty());
    assert_eq!(revalidated.header("etag"), Some(br_tag.as_str()));
    let other = curl(
        &url,
        &["Accept-Encoding: gzip", &format!("If-None-Match: {br_tag}")],
    );
    assert_eq!(other.status, 200);
    assert_eq!(other.header("content-encoding"), Some("gzip"));

    // index.html and the routes answered with it: revalidated every time (a path no page knows,
    // or a bench no one made, gets it as a 404: the app says what was not found).
    for (path, status) in [
        ("/", 200),
        ("/index.html", 200),
        ("/b/abcdefghijkl", 404),
        ("/no/such/page", 404),
    ] {
        let got = curl(
            &format!("http://{}{path}", server.addr),
            &["Accept-Encoding: gzip, br"],
        );
        assert_eq!(got.status, status, "{path}");
        assert_eq!(got.header("cache-control"), Some("no-cache"), "{path}");
        assert_eq!(got.header("content-encoding"), Some("br"), "{path}");
        assert_eq!(decode(Some("br"), &got.body), INDEX.as_bytes(), "{path}");
    }
    // Revalidating the page keeps the page's policy (a browser stores the 304's headers).
    let page = curl(&format!("http://{}/", server.addr), &[]);
    let tag = page.header("etag").expect("an ETag");
    let revalidated = curl(
        &format!("http://{}/", server.addr),
        &[&format!("If-None-Match: {tag}")],
    );
    assert_eq!(revalidated.status, 304);
    for answer in [&page, &revalidated] {
        let csp = answer.header("content-security-policy").unwrap_or_default();
        assert!(
            csp.contains("script-src 'self' 'wasm-unsafe-eval' 'sha256-"),
            "{csp}"
        );
    }
    // With the shell's loading line, `/` is drawn per request: the probe form in its place.
    let drawn = INDEX.replace(
        "<!--/h123:summary-->",
        "<!--/h123:summary--><p class=\"loading\" role=\"status\">Loading h123…</p>",
    );
    std::fs::write(dirs[1].path().join("index.html"), &drawn).unwrap();
    let home = curl(
        &format!("http://{}/", server.addr),
        &["Accept-Encoding: gzip, br"],
    );
    assert_eq!(home.status, 200);
    assert_eq!(home.header("cache-control"), Some("no-cache"));
    assert_eq!(
        home.header("content-encoding"),
        Some("gzip"),
        "drawn per request"
    );
    let home = String::from_utf8(decode(Some("gzip"), &home.body)).unwrap();
    assert!(!home.contains("Loading h123"), "{home}");
    assert!(
        home.contains("<form novalidate aria-labelledby=\"probe-title\" data-drawn=\"server\""),
        "{home}"
    );
    assert!(home.contains("<input id=\"url\" name=\"url\""), "{home}");
    // Other pages keep the plain shell.
    let other = curl(&format!("http://{}/b/abcdefghijkl", server.addr), &[]);
    assert_eq!(String::from_utf8(other.body).unwrap(), drawn);
    std::fs::write(dirs[1].path().join("index.html"), INDEX).unwrap();
    let css = curl(&format!("http://{}/{CSS}", server.addr), &[]);
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(
        css.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    // Nothing outside the root, hidden or encoded is opened: those paths get the page.
    for path in ["/%2e%2e/Cargo.toml", "/.hidden", "/..%2fCargo.toml"] {
        let got = curl(&format!("http://{}{path}", server.addr), &[]);
        assert_eq!(got.body, INDEX.as_bytes(), "{path}");
    }
}

#[tokio::test]
async fn a_permalink_page_carries_its_result_and_preview_tags_and_nothing_leaks_elsewhere() {
    let target = target().await;
    let (server, _, _dirs) = serve_web_root(&target).await;
    let addr: SocketAddr = server.addr;
    let from: IpAddr = "127.0.0.1".parse().unwrap();
    // Characters a URL keeps as they are which HTML must escape: `&` (here starting what would
    // read as an entity if it were not escaped).
    let probe_url = target.https_url("/?q=%3Cb%3E&x=&lt;i&gt;");
    let body = probe_body(&probe_url, &["h1", "h2"], 2);
    let id = create_probe(addr, from, &body).await;
    // The stream ends with the final record (an unlisted probe: the default).
    let record = probe_done(addr, from, &id).await;
    let verdict = record
        .result
        .analysis
        .as_ref()
        .unwrap()
        .verdict
        .summary
        .clone();

    let page = curl(
        &format!("http://{addr}/r/{id}"),
        &["Accept-Encoding: br, gzip"],
    );
    assert_eq!(page.status, 200);
    assert_eq!(page.header("cache-control"), Some("no-cache"));
    assert_eq!(
        page.header("content-encoding"),
        Some("gzip"),
        "rendered per request, so gzipped then (no brotli copy to send)"
    );
    assert_eq!(page.header("vary"), Some("accept-encoding"));
    let html = String::from_utf8(decode(Some("gzip"), &page.body)).unwrap();
    // The verdict, cut to a preview's 300 characters when longer (its wording, and so its
    // length, depends on the figures measured).
    let escaped = h123_shared::markup::escape(&h123_shared::format::shorten(&verdict, 300));
    assert!(
        html.contains(&format!(
            "<meta property=\"og:description\" content=\"{escaped}\" />"
        )),
        "{html}"
    );
    assert!(html.contains(&format!(
        "<meta property=\"og:title\" content=\"h123: {}\" />",
        h123_shared::markup::escape(&record.options.url)
    )));
    assert!(html.contains(&format!(
        "<meta property=\"og:image\" content=\"http://{addr}/api/v1/probes/{id}/preview.png\" />"
    )));
    let image = format!("http://{addr}/api/v1/probes/{id}/waterfall.svg");
    assert!(
        html.contains("id=\"result\"")
            && html.contains(&format!("data-id=\"{id}\""))
            && html.contains("data-status=\"done\""),
        "the result's markup is in the page: {html}"
    );
    assert!(
        !html.contains("x=&lt;i&gt;"),
        "the URL's `&` is escaped everywhere: {html}"
    );
    assert!(
        !html.contains("Where does the time go?"),
        "the result replaces the intro"
    );
    assert!(
        html.contains("<script type=\"module\">"),
        "the app still loads"
    );
    assert!(
        !html.contains("shell-waterfall") && !html.contains("rel=\"preload\""),
        "no picture and no record to preload: the result is in the page: {html}"
    );
    let svg = curl(&image, &[]);
    assert_eq!(svg.status, 200);
    assert_eq!(svg.header("content-type"), Some("image/svg+xml"));

    // The record's JSON is sent gzipped to who accepts it: the same bytes as the plain answer,
    // under a tag of its own.
    let json_url = format!("http://{addr}/api/v1/probes/{id}");
    let plain = curl(&json_url, &[]);
    let gzipped = curl(&json_url, &["Accept-Encoding: gzip"]);
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    assert_eq!(decode(Some("gzip"), &gzipped.body), plain.body);
    assert!(
        gzipped.body.len() * 3 < plain.body.len(),
        "{} bytes",
        gzipped.body.len()
    );
    assert_ne!(gzipped.header("etag"), plain.header("etag"));

    // The record appears on its own permalink only.
    for path in ["/", "/index.html", "/b/abcdefghijkl", "/r/zzzzzzzzzzzz"] {
        let got = curl(&format!("http://{addr}{path}"), &[]);
        let text = String::from_utf8(got.body).unwrap();
        assert_eq!(text, INDEX, "{path}");
        assert!(!text.contains(&id) && !text.contains("og:"), "{path}");
    }
}
