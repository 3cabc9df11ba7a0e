//! HTML written as text: the web UI draws most of its parts (the waterfalls, the comparison
//! table, findings, facts, requests at once, the vantage matrix, the vantage picker's boxes) as
//! markup, far less wasm than a view tree of their own, and pure, so the parts that need no
//! browser live here; a result's whole page ([`result::ResultView`]), a comparison's
//! ([`compare_page`]) and the home page's forms ([`home`]) are drawn by the server from them (a
//! bench's page is a Leptos component now, `h123_frontend::pages::bench`). Every text put in goes
//! through [`escape`].

pub mod actions;
pub mod bench_form;
pub mod browser;
pub mod compare_page;
pub mod compare_with;
pub mod comparison;
pub mod facts;
pub mod findings;
pub mod form_parts;
pub mod home;
pub mod matrix;
pub mod notes;
pub mod result;
pub mod streams;
pub mod summary;
pub mod vantages;
pub mod verdict;
pub mod waterfall;

use crate::format::{datetime_minute, wall_clock};
use std::fmt::Write as _;

/// `text` with `&`, `<`, `>`, `"` and `'` escaped, safe inside an element or a quoted attribute
/// of HTML or SVG; control characters become spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Appends `<tag attrs>text</tag>` to `out`, `text` escaped (`attrs` is written as given).
pub fn element(out: &mut String, tag: &str, attrs: &str, text: &str) {
    let _ = write!(out, "<{tag}{attrs}>{}</{tag}>", escape(text));
}

/// A moment, `unix_ms` milliseconds since the epoch, as a `<time>` element: its `datetime` in UTC
/// to the minute, its milliseconds in `data-unix-ms`, and as text its wall clock in UTC, which a
/// page's script rewrites to the reader's own zone (a server knows none).
pub fn time(unix_ms: u64) -> String {
    format!(
        r#"<time datetime="{}" data-unix-ms="{unix_ms}">{}</time>"#,
        datetime_minute(unix_ms),
        escape(&wall_clock(unix_ms, 0))
    )
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn markup_in_text_stays_text() {
        assert_eq!(
            escape(r#"<img src=x onerror="a()"> & 'b'"#),
            "&lt;img src=x onerror=&quot;a()&quot;&gt; &amp; &#39;b&#39;"
        );
        assert_eq!(
            escape("a\u{0}b\nc"),
            "a b c",
            "control characters become spaces"
        );
        let mut out = String::new();
        element(&mut out, "td", r#" class="x""#, "a<b");
        assert_eq!(out, r#"<td class="x">a&lt;b</td>"#);
    }

    #[test]
    fn a_time_carries_its_moment_in_utc_for_the_page_to_show_in_the_readers_zone() {
        // 2023-11-14 22:13:20 UTC.
        assert_eq!(
            time(1_700_000_000_000),
            r#"<time datetime="2023-11-14T22:13Z" data-unix-ms="1700000000000">2023-11-14 22:13 UTC</time>"#
        );
        assert_eq!(
            time(0),
            r#"<time datetime="1970-01-01T00:00Z" data-unix-ms="0">1970-01-01 00:00 UTC</time>"#
        );
        // 2024-02-29 23:59:59.999 UTC: the minute, not rounded up into March.
        assert_eq!(
            time(1_709_251_199_999),
            r#"<time datetime="2024-02-29T23:59Z" data-unix-ms="1709251199999">2024-02-29 23:59 UTC</time>"#
        );
    }
}
