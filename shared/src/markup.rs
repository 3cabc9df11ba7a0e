//! HTML written as text, what is left of it: the small pieces the page bundles still write and
//! the link-preview tags the server puts in a page's head. The pages and the pictures are Leptos
//! components (`h123_frontend::pages`), whose view macros escape by construction. Every text
//! put in here goes through [`escape`].

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
}
