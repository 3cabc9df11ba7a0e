//! Link previews as the unfurlers of chats and social sites see them, from a real `h123 serve`:
//! a settled probe's permalink page fetched with their User-Agents (no cookies, no script),
//! its `og:image` and `twitter:image` read from the HTML and fetched, and the picture checked
//! to be a 1200×630 PNG of the result; a running or unknown probe gets no picture.

use crate::support::*;
use crate::web_assets::{Fetched, curl, serve_web_root};
use h123_shared::{Phase, palette};
use std::net::{IpAddr, SocketAddr};

/// The User-Agents of the common unfurlers.
const UNFURLERS: [&str; 3] = [
    "Twitterbot/1.0",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
];

/// The `content` of the `<meta>` tag whose `property` or `name` is `key`.
fn meta<'a>(html: &'a str, key: &str) -> Option<&'a str> {
    ["property", "name"].iter().find_map(|attr| {
        let start = format!("<meta {attr}=\"{key}\" content=\"");
        let rest = &html[html.find(&start)? + start.len()..];
        Some(&rest[..rest.find('"')?])
    })
}

/// `url` fetched as `agent` would.
fn unfurl(url: &str, agent: &str) -> Fetched {
    curl(url, &[&format!("User-Agent: {agent}"), "Accept: */*"])
}

/// A PNG's width, height and RGBA pixels, checking its signature and header on the way.
fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "the PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR", "the header chunk first");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("a PNG that decodes");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (be(16), be(20)));
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// How many pixels are exactly `#rrggbb`.
fn pixels_of(pixels: &[u8], hex: &str) -> usize {
    let rgb: Vec<u8> = (0..3)
        .map(|i| u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap())
        .collect();
    pixels.chunks(4).filter(|p| p[..3] == rgb[..]).count()
}

#[tokio::test]
async fn unfurlers_get_a_png_of_a_finished_probe_and_none_of_a_running_or_unknown_one() {
    let target = target().await;
    let (server, _, _dirs) = serve_web_root(&target).await;
    let addr: SocketAddr = server.addr;
    let from: IpAddr = "127.0.0.1".parse().unwrap();
    let body = probe_body(&target.https_url("/"), &["h1", "h2", "h3"], 2);
    let id = create_probe(addr, from, &body).await;
    probe_done(addr, from, &id).await;
    let png_url = format!("http://{addr}/api/v1/probes/{id}/preview.png");

    let mut first: Option<Vec<u8>> = None;
    for agent in UNFURLERS {
        let page = unfurl(&format!("http://{addr}/r/{id}"), agent);
        assert_eq!(page.status, 200, "{agent}");
        let html = String::from_utf8(page.body).unwrap();
        let (og, twitter) = (meta(&html, "og:image"), meta(&html, "twitter:image"));
        assert_eq!(
            og,
            Some(png_url.as_str()),
            "{agent}: absolute, the PNG: {html}"
        );
        assert_eq!(twitter, og, "{agent}");
        assert_eq!(meta(&html, "twitter:card"), Some("summary_large_image"));
        assert_eq!(meta(&html, "og:image:type"), Some("image/png"));
        assert_eq!(meta(&html, "og:image:width"), Some("1200"));
        assert_eq!(meta(&html, "og:image:height"), Some("630"));
        assert!(meta(&html, "og:image:alt").is_some_and(|a| a.starts_with("h123: https://")));

        let picture = unfurl(&png_url, agent);
        assert_eq!(picture.status, 200, "{agent}");
        assert_eq!(picture.header("content-type"), Some("image/png"));
        assert_eq!(
            picture.header("content-encoding"),
            None,
            "a PNG is not gzipped"
        );
        assert!(picture.header("etag").is_some());
        match &first {
            None => first = Some(picture.body.clone()),
            Some(bytes) => assert_eq!(&picture.body, bytes, "the same picture every time"),
        }
    }
    let bytes = first.unwrap();
    let (width, height, pixels) = decode(&bytes);
    assert_eq!((width, height), (1200, 630));
    // Not blank: mostly the white background, with the title and verdict's dark text and the
    // bars in the phases' colours.
    let white = pixels_of(&pixels, "#ffffff");
    assert!(white > 300_000 && white < 700_000, "{white} white pixels");
    assert!(
        pixels_of(&pixels, "#111827") > 2_000,
        "the heading and the verdict are drawn"
    );
    let per_phase: Vec<(Phase, usize)> = Phase::ALL
        .into_iter()
        .map(|p| (p, pixels_of(&pixels, palette::fill(p))))
        .collect();
    // The legend alone holds about 200 pixels of each colour; the bars of six attempts on an
    // axis fitted to the slowest one fill thousands more.
    let bars: usize = per_phase.iter().map(|(_, n)| n).sum();
    assert!(bars > 10_000, "the waterfall's bars: {per_phase:?}");
    for phase in [Phase::Tls, Phase::Quic, Phase::Wait] {
        let n = per_phase.iter().find(|(p, _)| *p == phase).unwrap().1;
        assert!(n > 150, "{phase:?} is drawn: {per_phase:?}");
    }
    // The ETag revalidates to 304 without a body.
    let tag = curl(&png_url, &[]).header("etag").unwrap().to_owned();
    let again = curl(&png_url, &[&format!("If-None-Match: {tag}")]);
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());

    // A running probe: its page names no picture, and its PNG is a JSON 409.
    let running = create_probe(
        addr,
        from,
        &probe_body(&target.https_url("/delay/3000"), &["h1"], 1),
    )
    .await;
    let page = unfurl(&format!("http://{addr}/r/{running}"), UNFURLERS[0]);
    let html = String::from_utf8(page.body).unwrap();
    assert!(
        meta(&html, "og:image").is_none() && meta(&html, "twitter:image").is_none(),
        "{html}"
    );
    let early = unfurl(
        &format!("http://{addr}/api/v1/probes/{running}/preview.png"),
        UNFURLERS[0],
    );
    assert_eq!(early.status, 409);
    assert_eq!(early.header("content-type"), Some("application/json"));
    let error: serde_json::Value = serde_json::from_slice(&early.body).unwrap();
    assert_eq!(error["error"]["code"], "still_running", "{error}");

    // An unknown one: a JSON 404.
    let unknown = unfurl(
        &format!("http://{addr}/api/v1/probes/zzzzzzzzzzzz/preview.png"),
        UNFURLERS[1],
    );
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.header("content-type"), Some("application/json"));
    let error: serde_json::Value = serde_json::from_slice(&unknown.body).unwrap();
    assert_eq!(error["error"]["code"], "not_found", "{error}");
}
