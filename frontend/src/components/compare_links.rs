//! A comparison's own links (A and B swapped, its JSON), drawn as plain markup.

use crate::api;
use h123_shared::markup::escape;

/// A comparison's links: A and B swapped, and its JSON.
pub fn compare_links(a: &str, b: &str) -> String {
    let (a, b) = (escape(a), escape(b));
    format!(
        r#"<nav class="actions" aria-label="Comparison actions"><a class="button" href="/compare/{b}/{a}">Swap A and B</a><a class="button" href="{}" download="h123-compare-{a}-{b}.json">JSON</a></nav>"#,
        escape(&api::api_url(&format!("/api/v1/compare/{a}/{b}")))
    )
}
