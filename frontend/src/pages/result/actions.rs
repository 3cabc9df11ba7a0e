//! What to do with a result: copy its permalink or curl command, download it, run it again. The
//! buttons say what they do in `data-` attributes; the page's script does it.

use h123_shared::api::{ProbeLinks, ProbeRecord};
use h123_shared::curl::curl_command;
use h123_shared::{ProbeOptions, Visibility};
use leptos::prelude::*;

/// The options "Run again" posts: the measurement's, with the visibility left to the clicker (the
/// default, unlisted), never the author's `public`.
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
pub fn actions(record: &ProbeRecord, done: bool) -> impl IntoView + use<> {
    let links = ProbeLinks::for_id(&record.id);
    let curl = record
        .options
        .protocols
        .iter()
        .map(|p| curl_command(&record.options, *p))
        .collect::<Vec<_>>()
        .join("\n");
    let downloads = [
        (links.self_.clone(), "json", "JSON", !done),
        (links.har.clone(), "har", "HAR", false),
        (links.waterfall_svg.clone(), "svg", "SVG", false),
    ]
    .into_iter()
    .map(|(path, extension, text, partial)| {
        let class = if partial { "button partial" } else { "button" };
        view! {
            <a class=class href=path.clone() data-api=path download=format!("h123-{}.{extension}", record.id)>{text}</a>
        }
    })
    .collect_view();
    view! {
        <nav class="actions" aria-label="Result actions">
            <button type="button" data-action="copy" data-copy="permalink">"Copy permalink"</button>
            <button type="button" data-action="copy" data-copy="curl">"Copy curl command"</button>
            {downloads}
            <button type="button" class="primary" data-action="rerun" data-options=rerun_options(&record.options)>"Run again"</button>
            <span class="note" role="status"></span>
        </nav>
        <details class="copy-texts">
            <summary>"Permalink and curl commands"</summary>
            <pre data-text="permalink">{links.permalink}</pre>
            <pre data-text="curl">{curl}</pre>
        </details>
        <div class="rerun-problem" role="alert" hidden></div>
    }
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
