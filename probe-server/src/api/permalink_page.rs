//! A permalink's page (`/r/{id}`, or a comparison's `/compare/{a}/{b}`): `index.html` with the
//! answer filled in before any script runs: the verdict (or the comparison's summary) in the
//! page's shell and `og:` tags for link previews.
//!
//! The summary only says what the record's own JSON says to anyone holding
//! the link (an unlisted record's page is its permalink; nothing here lists
//! it elsewhere). Every string from the record is escaped. The record is read
//! under the API's read limits: when they refuse, or the record is unknown,
//! the caller serves the plain `index.html` and the app says what is wrong.

use super::probes;
use super::svg::shorten;
use crate::server::AppState;
use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::uri::Authority;
use axum::http::{HeaderMap, header};
use h123_shared::api::{ProbeComparison, ProbeLinks, ProbeRecord, ProbeStatus};
use h123_shared::markup::escape;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

/// Where the summary goes in `index.html`'s shell: it replaces everything
/// from this marker to [`SUMMARY_END`] (the home page's introduction).
pub const SUMMARY_MARKER: &str = "<!--h123:summary-->";

/// The end of the part the summary replaces.
pub const SUMMARY_END: &str = "<!--/h123:summary-->";

/// What a shared page shows before its script runs, and where its preview points.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preview {
    /// The page's heading and `og:title`.
    pub title: String,
    /// The answer, in a sentence or a few (`og:description`).
    pub description: String,
    /// The picture link previews show (`og:image`), as an absolute path.
    pub image: String,
    /// The page itself (`og:url`), as an absolute path.
    pub url: String,
    /// Whether the shell shows `image` too (a finished probe's waterfall picture), so the
    /// waterfalls are on screen before the script has run.
    pub picture: bool,
    /// The JSON the page's script reads first (a finished record's, or the comparison's), as an
    /// absolute path: preloaded, so it arrives while the wasm downloads instead of after it ran.
    pub data: Option<String>,
}

/// The page for probe `id` and its record, or `None` when the plain `index.html` should be
/// served instead (unknown record, read limits reached, no `index.html`).
pub async fn render(
    state: &AppState,
    root: &Path,
    id: &str,
    request: &Parts,
) -> Option<(String, ProbeRecord)> {
    if !crate::store::is_valid_id(id) {
        return None;
    }
    let _permit = admitted(state, request)?;
    let record = probes::load(state, id).await.ok()?;
    let page = page(root, &summary(&record), request).await?;
    Some((page, record))
}

/// The page of the comparison at `/compare/{ids}` (`{a}/{b}`), or `None` as for [`render`]
/// (and when either probe is unknown or still running).
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
    let preview = Preview {
        title: format!("h123: compare {}", shorten(&b.options.url, 200)),
        image: ProbeLinks::for_id(&b.id).waterfall_svg,
        description: shorten(&ProbeComparison::of(a, b.clone()).comparison.summary, 300),
        url: format!("/compare/{ids}"),
        picture: false,
        data: Some(format!("/api/v1/compare/{ids}")),
    };
    page(root, &preview, request).await
}

/// A read slot for one page, when the client's read quota admits one more read (a page costs
/// one, as its record does) and a slot is free; `None` (counted) otherwise.
fn admitted(state: &AppState, request: &Parts) -> Option<tokio::sync::OwnedSemaphorePermit> {
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

/// `index.html` with `preview` filled in.
async fn page(root: &Path, preview: &Preview, request: &Parts) -> Option<String> {
    let index = tokio::fs::read_to_string(root.join("index.html"))
        .await
        .ok()?;
    Some(fill(&index, preview, origin(&request.headers).as_deref()))
}

/// `index` with `preview`'s `og:` tags before `</head>` and its summary in
/// place of [`SUMMARY_MARKER`] .. [`SUMMARY_END`]; `origin` (`http://host`) makes the image URL absolute,
/// as link previews want.
pub fn fill(index: &str, preview: &Preview, origin: Option<&str>) -> String {
    let absolute = |path: &str| format!("{}{path}", origin.unwrap_or(""));
    let (title, description) = (escape(&preview.title), escape(&preview.description));
    let meta = format!(
        "<meta property=\"og:type\" content=\"website\" />\
         <meta property=\"og:title\" content=\"{title}\" />\
         <meta property=\"og:description\" content=\"{description}\" />\
         <meta property=\"og:image\" content=\"{image}\" />\
         <meta property=\"og:url\" content=\"{url}\" />\
         <meta name=\"twitter:card\" content=\"summary_large_image\" />{preload}",
        image = escape(&absolute(&preview.image)),
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
    // The picture's path is the page's own server's: relative, so no Host can redirect it.
    let picture = if preview.picture {
        format!(
            "<img class=\"shell-waterfall\" src=\"{}\" alt=\"The waterfalls of {title}\" width=\"960\" />",
            escape(&preview.image)
        )
    } else {
        String::new()
    };
    let body = format!(
        "<section class=\"shell-summary\" aria-labelledby=\"shell-summary-title\">\
         <h1 id=\"shell-summary-title\">{title}</h1>\
         <p class=\"shell-verdict\">{description}</p>{picture}\
         <p class=\"hint\">{hint}</p></section>",
        hint = if preview.picture {
            "Loading the interactive page…"
        } else {
            "Loading the waterfalls…"
        },
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

/// A probe page's preview: the URL, and the verdict (or the record's state
/// when there is none yet).
fn summary(record: &ProbeRecord) -> Preview {
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
        image: links.waterfall_svg,
        url: links.permalink,
        picture: record.status != ProbeStatus::Running,
        // A running probe's page follows its events: a snapshot fetched early would be stale.
        data: (record.status != ProbeStatus::Running).then_some(links.self_),
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

    #[test]
    fn record_strings_are_escaped_in_tags_and_body() {
        let index = "<html><head><title>t</title></head><body>\
                     <!--h123:summary--><p>intro</p><!--/h123:summary--></body></html>";
        let page = fill(
            index,
            &summary(&record("https://x.test/\"><script>alert(1)</script>")),
            Some("http://h.test"),
        );
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.contains("&lt;script&gt;"), "{page}");
        assert!(page.contains(
            "<meta property=\"og:image\" content=\"http://h.test/api/v1/probes/abcDEF123/waterfall.svg\" />"
        ));
        assert!(page.contains("class=\"shell-summary\""));
        assert!(!page.contains(SUMMARY_MARKER));
        assert!(!page.contains("intro"), "{page}");
        assert!(
            !page.contains("shell-waterfall"),
            "a running probe has no picture yet"
        );
        assert!(
            !page.contains("rel=\"preload\""),
            "a running probe's page follows its events, not a snapshot"
        );
        let mut done = record("https://x.test/");
        done.status = ProbeStatus::Done;
        let page = fill(index, &summary(&done), Some("http://h.test"));
        assert!(
            page.contains(
                "<img class=\"shell-waterfall\" src=\"/api/v1/probes/abcDEF123/waterfall.svg\""
            ),
            "{page}"
        );
        assert!(
            page.contains(
                "<link rel=\"preload\" href=\"/api/v1/probes/abcDEF123\" as=\"fetch\" crossorigin=\"anonymous\" />"
            ),
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
