//! A permalink's page (`/r/{id}`, a comparison's `/compare/{a}/{b}`, a bench's `/b/{id}`):
//! `index.html` with the answer filled in before any script runs, and `og:` tags for link
//! previews: a probe's whole result as markup (the same as `/api/v1/probes/{id}/view`, a running
//! probe's with its progress so far) in the page's shell, a comparison's whole page
//! (the Leptos component `h123_frontend::pages::compare`, the same as
//! `/api/v1/compare/{a}/{b}/view`), a bench's (the Leptos component `h123_frontend::pages::bench`,
//! the same as `/api/v1/benches/{id}/view`).
//!
//! The page only says what the record's own JSON says to anyone holding
//! the link (an unlisted record's page is its permalink; nothing here lists
//! it elsewhere). Every string from the record is escaped. The record is read
//! under the API's read limits: when they refuse, or the record is unknown,
//! the caller serves the plain `index.html` and the app says what is wrong.

use super::view;
use super::{benches, probes};
use crate::server::AppState;
use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, header};
use h123_frontend::pages::{self, bench};
use h123_shared::api::{BenchLinks, ProbeComparison, ProbeLinks, ProbeRecord, ProbeStatus};
use h123_shared::bench::words::{description, title};
use h123_shared::format::shorten;
use h123_shared::markup::escape;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

/// Where the page's answer goes in `index.html`'s shell: it replaces everything
/// from this marker to [`SUMMARY_END`] (the home page's introduction).
pub const SUMMARY_MARKER: &str = "<!--h123:summary-->";

/// The end of the part the answer replaces.
pub const SUMMARY_END: &str = "<!--/h123:summary-->";

/// Where a shared page's link preview points, and what its script reads first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preview {
    /// The page's `og:title` (a comparison's heading too).
    pub title: String,
    /// The answer, in a sentence or a few (`og:description`).
    pub description: String,
    /// The picture link previews show (`og:image`, `twitter:image`: a 1200×630 PNG), as an
    /// absolute path; empty for none.
    pub image: String,
    /// The page itself (`og:url`), as an absolute path.
    pub url: String,
    /// The JSON the page's script reads first (the comparison's), as an absolute path:
    /// preloaded, so it arrives while the wasm downloads instead of after it ran.
    pub data: Option<String>,
}

/// Why a probe's page is not drawn: the plain `index.html` is served instead, and the app says
/// what is wrong.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NotDrawn {
    /// No probe has this id (the page answers 404).
    Unknown,
    /// The read limits refused, the store failed, or there is no `index.html`.
    Plain,
}

/// The page for probe `id` and its record, or why the plain `index.html` is served instead.
///
/// # Errors
/// [`NotDrawn`]: the record is unknown, or cannot be read now.
pub async fn render(
    state: &AppState,
    root: &Path,
    id: &str,
    request: &Parts,
) -> Result<(String, ProbeRecord), NotDrawn> {
    if !crate::store::is_valid_id(id) {
        return Err(NotDrawn::Unknown);
    }
    let _permit = admitted(state, request).ok_or(NotDrawn::Plain)?;
    let view = view::so_far(state, id).await.map_err(|e| match e {
        super::error::ApiError::NotFound(_) => NotDrawn::Unknown,
        _ => NotDrawn::Plain,
    })?;
    let result = view.markup(crate::probe::trace::unix_ms());
    let record = view.into_record();
    let page = page(root, &preview(&record), &result, request)
        .await
        .ok_or(NotDrawn::Plain)?;
    Ok((page, record))
}

/// The attribute on `<html>` that tells the loader the server rendered the page with Leptos: it
/// loads the islands bundle (not a page bundle) and hydrates each island.
pub const ISLANDS_MARK: &str = "data-islands";

/// `shell` with `body` (rendered by [`pages::render`]) drawn whole in place of its summary and
/// loading line, titled `title`, previewed as `preview` says, and marked [`ISLANDS_MARK`].
pub fn islands_page(
    shell: &str,
    preview: &Preview,
    title: &str,
    body: &str,
    headers: &HeaderMap,
) -> String {
    let page = fill(shell, preview, body, origin(headers).as_deref()).replacen(LOADING_LINE, "", 1);
    titled(page, title).replacen("<html", &format!("<html {ISLANDS_MARK}"), 1)
}

/// The page of the comparison at `/compare/{ids}` (`{a}/{b}`), rendered by Leptos and hydrated
/// as an islands page, or `None` as for [`render`] (and when either probe is unknown or still
/// running: the islands bundle then draws the API's answer, or the problem page).
pub async fn render_comparison(
    state: &AppState,
    root: &Path,
    ids: &str,
    request: &Parts,
) -> Option<String> {
    let (a, b) = ids.split_once('/')?;
    if !crate::store::is_valid_id(a) || !crate::store::is_valid_id(b) {
        return None;
    }
    let _permit = admitted(state, request)?;
    let (a, b) = (
        probes::load(state, a).await.ok()?,
        probes::load(state, b).await.ok()?,
    );
    if a.status == ProbeStatus::Running || b.status == ProbeStatus::Running {
        return None;
    }
    let both = ProbeComparison::of(a, b);
    let preview = Preview {
        title: format!("h123: compare {}", shorten(&both.b.options.url, 200)),
        // The "after" probe's picture (both have finished).
        image: ProbeLinks::for_id(&both.b.id).preview_png,
        description: shorten(&both.comparison.summary, 300),
        url: format!("/compare/{ids}"),
        // The whole comparison is in the page: its script reads nothing first.
        data: None,
    };
    let drawn = pages::render(|| pages::compare::compare_page(&both));
    let shell = shell(root).await?;
    // Titled as the comparison names itself (`data-title`).
    let title = format!("Comparison: {} · h123", both.comparison.summary);
    Some(islands_page(
        &shell,
        &preview,
        &title,
        &drawn,
        &request.headers,
    ))
}

/// The page of bench `id`, or why the plain `index.html` is served instead (as for [`render`]).
///
/// # Errors
/// [`NotDrawn`]: the bench is unknown, or cannot be read now.
pub async fn render_bench(
    state: &AppState,
    root: &Path,
    id: &str,
    request: &Parts,
) -> Result<String, NotDrawn> {
    if !crate::store::is_valid_id(id) {
        return Err(NotDrawn::Unknown);
    }
    let _permit = admitted(state, request).ok_or(NotDrawn::Plain)?;
    let record = benches::load(state, id).await.map_err(|e| match e {
        super::error::ApiError::NotFound(_) => NotDrawn::Unknown,
        _ => NotDrawn::Plain,
    })?;
    let links = BenchLinks::for_id(&record.id);
    let preview = Preview {
        title: format!(
            "h123: load comparison of {}",
            shorten(&record.options.url, 200)
        ),
        description: shorten(&description(&record), 300),
        // A bench has no picture of its own.
        image: String::new(),
        url: links.permalink,
        // The whole bench is in the page: its script reads nothing first.
        data: None,
    };
    let drawn = pages::render(|| bench::bench_page(&record));
    let shell = shell(root).await.ok_or(NotDrawn::Plain)?;
    // Titled as the bench names itself (`data-title`).
    let title = format!("{} · h123", title(&record));
    Ok(islands_page(
        &shell,
        &preview,
        &title,
        &drawn,
        &request.headers,
    ))
}

/// A read slot for one page, when the client's read quota admits one more read (a page costs
/// one, as its record does) and a slot is free; `None` (counted) otherwise.
pub fn admitted(state: &AppState, request: &Parts) -> Option<tokio::sync::OwnedSemaphorePermit> {
    let ip = request
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    if !state.read_limiter.check(state.client_key(ip)).allowed {
        state.metrics.rejected("read_rate");
        return None;
    }
    let permit = state.reads.clone().try_acquire_owned().ok();
    if permit.is_none() {
        state.metrics.rejected("reads_busy");
    }
    permit
}

/// The loading line of `index.html`'s shell, which a page drawn whole by the server drops.
pub const LOADING_LINE: &str = "<p class=\"loading\" role=\"status\">Loading h123…</p>";

/// A page the server draws whole (no script takes it over): `shell` (`index.html`) with
/// `preview` and `body` filled in, its `<title>` the preview's, and no loading line.
pub fn drawn_page(shell: &str, preview: &Preview, body: &str, headers: &HeaderMap) -> String {
    let page = fill(shell, preview, body, origin(headers).as_deref()).replacen(LOADING_LINE, "", 1);
    titled(page, &preview.title)
}

/// `page` with `title` in its `<title>`.
fn titled(page: String, title: &str) -> String {
    match (page.split_once("<title>"), page.split_once("</title>")) {
        (Some((head, _)), Some((_, rest))) => {
            format!("{head}<title>{}</title>{rest}", escape(title))
        }
        _ => page,
    }
}

/// The web root's `index.html`, the shell every page is drawn into; `None` when it has none, or
/// not as UTF-8.
pub async fn shell(root: &Path) -> Option<String> {
    String::from_utf8(super::web_root::read(root, "index.html").await?).ok()
}

/// `index.html` with `preview` and `body` filled in.
async fn page(root: &Path, preview: &Preview, body: &str, request: &Parts) -> Option<String> {
    let index = shell(root).await?;
    Some(fill(
        &index,
        preview,
        body,
        origin(&request.headers).as_deref(),
    ))
}

/// `index` with `preview`'s `og:` tags before `</head>` and `body` (markup, escaped by whoever
/// drew it) in place of [`SUMMARY_MARKER`] .. [`SUMMARY_END`]; `origin` (`http://host`) makes
/// the image URL absolute, as link previews want.
pub fn fill(index: &str, preview: &Preview, body: &str, origin: Option<&str>) -> String {
    let absolute = |path: &str| format!("{}{path}", origin.unwrap_or(""));
    let (title, description) = (escape(&preview.title), escape(&preview.description));
    let meta = format!(
        "<meta property=\"og:type\" content=\"website\" />\
         <meta property=\"og:title\" content=\"{title}\" />\
         <meta property=\"og:description\" content=\"{description}\" />\
         {image}<meta property=\"og:url\" content=\"{url}\" />{preload}",
        // A page without a picture (a problem page) has no image tags.
        image = match preview.image.is_empty() {
            true => String::new(),
            false => image_tags(
                &absolute(&preview.image),
                &preview.title,
                &preview.description
            ),
        },
        url = escape(&absolute(&preview.url)),
        // The page's script fetches it as a plain CORS GET with the same credentials, so the
        // browser hands it the preloaded answer.
        preload = preview
            .data
            .as_deref()
            .map_or(String::new(), |path| format!(
                "<link rel=\"preload\" href=\"{}\" as=\"fetch\" crossorigin=\"anonymous\" />",
                escape(path)
            )),
    );
    let page = match index.split_once("</head>") {
        Some((head, rest)) => format!("{head}{meta}</head>{rest}"),
        None => index.to_owned(),
    };
    match page.split_once(SUMMARY_MARKER) {
        Some((before, after)) => {
            let after = after
                .split_once(SUMMARY_END)
                .map_or(after, |(_, rest)| rest);
            format!("{before}{body}{after}")
        }
        None => page,
    }
}

/// The tags of a preview's picture at `image` (absolute): its size and type, and its
/// description (`alt`) from the page's title and description, as the unfurlers read them.
fn image_tags(image: &str, title: &str, description: &str) -> String {
    use super::svg::{HEIGHT, WIDTH};
    let (image, alt) = (
        escape(image),
        escape(&shorten(&format!("{title}: {description}"), 420)),
    );
    format!(
        "<meta property=\"og:image\" content=\"{image}\" />\
         <meta property=\"og:image:type\" content=\"image/png\" />\
         <meta property=\"og:image:width\" content=\"{WIDTH}\" />\
         <meta property=\"og:image:height\" content=\"{HEIGHT}\" />\
         <meta property=\"og:image:alt\" content=\"{alt}\" />\
         <meta name=\"twitter:card\" content=\"summary_large_image\" />\
         <meta name=\"twitter:image\" content=\"{image}\" />\
         <meta name=\"twitter:image:alt\" content=\"{alt}\" />"
    )
}

/// A probe page's preview: the URL, the verdict (or the record's state
/// when there is none yet), and the picture once it has finished.
fn preview(record: &ProbeRecord) -> Preview {
    let links = ProbeLinks::for_id(&record.id);
    let verdict = record
        .result
        .analysis
        .as_ref()
        .map(|a| a.verdict.summary.as_str());
    let description = match (record.status, verdict) {
        (ProbeStatus::Running, _) => "Running: the attempts are being measured.".to_owned(),
        (ProbeStatus::Cancelled, Some(v)) => format!("Cancelled. {v}"),
        (_, Some(v)) => v.to_owned(),
        (_, None) => "No verdict.".to_owned(),
    };
    Preview {
        title: format!("h123: {}", shorten(&record.options.url, 200)),
        description: shorten(&description, 300),
        // A running probe has no picture yet (its PNG answers 409).
        image: match record.status {
            ProbeStatus::Running => String::new(),
            _ => links.preview_png,
        },
        url: links.permalink,
        // The page's script reads no record: the result is in the page, live changes come drawn.
        data: None,
    }
}

/// `scheme://host` of the request, when its `Host` is a valid authority
/// (`X-Forwarded-Proto: https` from a TLS-terminating proxy gives `https`).
fn origin(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let authority: Authority = host.parse().ok()?;
    let https = headers
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
    let scheme = if https { "https" } else { "http" };
    Some(format!("{scheme}://{authority}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn record(url: &str) -> ProbeRecord {
        let options = serde_json::json!({ "url": url });
        serde_json::from_value(serde_json::json!({
            "id": "abcDEF123",
            "status": "running",
            "created_at_unix_ms": 0,
            "options": options,
            "result": { "schema_version": h123_shared::SCHEMA_VERSION, "started_at_unix_ms": 0, "options": options, "runs": [] },
        }))
        .unwrap()
    }

    const INDEX: &str = "<html><head><title>t</title></head><body>\
                         <!--h123:summary--><p>intro</p><!--/h123:summary-->\
                         <p class=\"loading\">…</p></body></html>";

    #[test]
    fn a_probe_page_holds_its_result_and_escaped_preview_tags_without_a_picture_or_preload() {
        let hostile = record("https://x.test/\"><script>alert(1)</script>");
        let result = "<div id=\"result\" data-id=\"abcDEF123\" data-status=\"running\"></div>";
        let page = fill(INDEX, &preview(&hostile), result, Some("http://h.test"));
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.contains("&lt;script&gt;"), "{page}");
        assert!(
            !page.contains("og:image") && !page.contains("twitter:"),
            "a running probe has no picture yet: {page}"
        );
        assert!(
            page.contains("<meta property=\"og:url\" content=\"http://h.test/r/abcDEF123\" />")
        );
        assert!(page.contains(
            "<meta property=\"og:description\" content=\"Running: the attempts are being measured.\" />"
        ));
        assert!(
            page.contains(&format!("<body>{result}<p class=\"loading\">")),
            "the result replaces the intro, the loading line stays for the script: {page}"
        );
        assert!(
            !page.contains(SUMMARY_MARKER) && !page.contains("intro"),
            "{page}"
        );
        let mut done = record("https://x.test/");
        done.status = ProbeStatus::Done;
        let page = fill(INDEX, &preview(&done), result, Some("http://h.test"));
        assert!(
            !page.contains("shell-waterfall") && !page.contains("shell-summary"),
            "the result is the page: {page}"
        );
        assert!(
            !page.contains("rel=\"preload\""),
            "the page's script reads no record: {page}"
        );
        assert!(
            page.contains("<meta property=\"og:description\" content=\"No verdict.\" />"),
            "{page}"
        );
        for tag in [
            "<meta property=\"og:image\" content=\"http://h.test/api/v1/probes/abcDEF123/preview.png\" />",
            "<meta property=\"og:image:type\" content=\"image/png\" />",
            "<meta property=\"og:image:width\" content=\"1200\" />",
            "<meta property=\"og:image:height\" content=\"630\" />",
            "<meta property=\"og:image:alt\" content=\"h123: https://x.test/: No verdict.\" />",
            "<meta name=\"twitter:card\" content=\"summary_large_image\" />",
            "<meta name=\"twitter:image\" content=\"http://h.test/api/v1/probes/abcDEF123/preview.png\" />",
            "<meta name=\"twitter:image:alt\" content=\"h123: https://x.test/: No verdict.\" />",
        ] {
            assert!(page.contains(tag), "{tag} in {page}");
        }
    }

    #[test]
    fn a_page_keeps_its_escaped_preview_and_preload() {
        let preview = Preview {
            title: "h123: compare <b>".to_owned(),
            description: "B is <i>faster</i>".to_owned(),
            image: "/api/v1/probes/bbb/preview.png".to_owned(),
            url: "/compare/aaa/bbb".to_owned(),
            data: Some("/api/v1/compare/aaa/bbb".to_owned()),
        };
        let page = fill(INDEX, &preview, "<section>drawn</section>", None);
        assert!(
            page.contains("<meta property=\"og:title\" content=\"h123: compare &lt;b&gt;\" />"),
            "{page}"
        );
        assert!(page.contains("<section>drawn</section>"), "{page}");
        assert!(
            page.contains(
                "<link rel=\"preload\" href=\"/api/v1/compare/aaa/bbb\" as=\"fetch\" crossorigin=\"anonymous\" />"
            ),
            "{page}"
        );
        assert!(!page.contains("<b>") && !page.contains("intro"), "{page}");
    }

    #[test]
    fn a_drawn_page_has_its_title_and_no_loading_line() {
        let shell = include_str!("../../../frontend/site/index.html");
        assert!(
            shell.contains(LOADING_LINE),
            "index.html keeps the line a drawn page drops"
        );
        let preview = Preview {
            title: "h123 monitor: <x>".to_owned(),
            description: "up".to_owned(),
            image: String::new(),
            url: "/m/abc".to_owned(),
            data: None,
        };
        let page = drawn_page(
            shell,
            &preview,
            "<article>drawn</article>",
            &HeaderMap::new(),
        );
        assert!(
            page.contains("<title>h123 monitor: &lt;x&gt;</title>"),
            "{page}"
        );
        assert!(page.contains("<article>drawn</article>"));
        assert!(
            !page.contains(LOADING_LINE) && !page.contains("og:image"),
            "{page}"
        );
    }

    #[test]
    fn the_origin_comes_from_a_valid_host_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(origin(&headers), None);
        headers.insert(header::HOST, HeaderValue::from_static("h.test:8080"));
        assert_eq!(origin(&headers).as_deref(), Some("http://h.test:8080"));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert_eq!(origin(&headers).as_deref(), Some("https://h.test:8080"));
        headers.insert(header::HOST, HeaderValue::from_static("a b"));
        assert_eq!(origin(&headers), None);
    }
}
