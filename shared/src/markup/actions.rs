//! What to do with a result, as markup: copy its permalink or curl command, download it, run it
//! again. The buttons say what they do in `data-` attributes; the page's script does it.

use super::escape;
use crate::api::{ProbeLinks, ProbeRecord};
use crate::curl::curl_command;
use crate::{ProbeOptions, Visibility};
use std::fmt::Write as _;

/// The options "Run again" posts: the measurement's, with the visibility left
/// to the clicker (the default, unlisted), never the author's `public`.
pub fn rerun_options(options: &ProbeOptions) -> String {
    let options = ProbeOptions {
        visibility: Visibility::default(),
        ..options.clone()
    };
    // Serializing options (plain data, string keys) cannot fail.
    serde_json::to_string(&options).unwrap_or_default()
}

/// The actions bar of a result (`done`: it has finished, so its JSON is complete), the texts the
/// copy buttons copy (the permalink as a path, which the page prefixes with its origin), and the
/// empty alert where a refused "Run again" says why. A download's `href` is the API's path, also
/// in its `data-api`, for a page whose API lives elsewhere to prefix.
pub fn actions(record: &ProbeRecord, done: bool) -> String {
    let links = ProbeLinks::for_id(&record.id);
    let id = escape(&record.id);
    let curl = record
        .options
        .protocols
        .iter()
        .map(|p| curl_command(&record.options, *p))
        .collect::<Vec<_>>()
        .join("\n");
    // Escaped line by line: `escape` would make the line breaks spaces.
    let curl = curl.split('\n').map(escape).collect::<Vec<_>>().join("\n");
    let options = rerun_options(&record.options);
    let mut out = String::from(
        r#"<nav class="actions" aria-label="Result actions"><button type="button" data-action="copy" data-copy="permalink">Copy permalink</button><button type="button" data-action="copy" data-copy="curl">Copy curl command</button>"#,
    );
    let downloads = [
        (&links.self_, "json", "JSON", !done),
        (&links.har, "har", "HAR", false),
        (&links.waterfall_svg, "svg", "SVG", false),
    ];
    for (path, extension, text, partial) in downloads {
        let path = escape(path);
        let _ = write!(
            out,
            r#"<a class="button{}" href="{path}" data-api="{path}" download="h123-{id}.{extension}">{text}</a>"#,
            if partial { " partial" } else { "" }
        );
    }
    let _ = write!(
        out,
        r#"<button type="button" class="primary" data-action="rerun" data-options="{}">Run again</button><span class="note" role="status"></span></nav>"#,
        escape(&options)
    );
    let _ = write!(
        out,
        r#"<details class="copy-texts"><summary>Permalink and curl commands</summary><pre data-text="permalink">{}</pre><pre data-text="curl">{}</pre></details><div class="rerun-problem" role="alert" hidden></div>"#,
        escape(&links.permalink),
        curl
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_again_takes_the_options_but_not_the_author_s_visibility() {
        let options = ProbeOptions {
            url: "https://example.com/".into(),
            repeat: 3,
            visibility: Visibility::Public,
            ..ProbeOptions::default()
        };
        let again: ProbeOptions = serde_json::from_str(&rerun_options(&options)).unwrap();
        assert_eq!(again.visibility, Visibility::Unlisted);
        assert_eq!(
            again,
            ProbeOptions {
                visibility: Visibility::Unlisted,
                ..options
            }
        );
    }
}
