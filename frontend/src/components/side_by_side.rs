//! Two results' verdicts and waterfalls, A above B, every waterfall on one time axis so a bar in
//! one compares honestly with the same bar in the other; drawn as markup (`shared::markup`).

use crate::chart::axis;
use h123_shared::api::ProbeRecord;
use h123_shared::markup::element;
use h123_shared::markup::verdict::verdict;
use h123_shared::markup::waterfall::{head, section};
use h123_shared::waterfall::fitted_span;
use leptos::prelude::*;
use std::fmt::Write as _;

/// Both results, on the axis common to them; its labels fitted to the axis once it is laid out.
#[component]
pub fn SideBySide(
    /// The first result's record.
    a: ProbeRecord,
    /// The second result's record.
    b: ProbeRecord,
) -> impl IntoView {
    request_animation_frame(|| axis::fit_labels(&document()));
    view! { <div inner_html=markup(&a, &b)></div> }
}

/// Both sides' groups, under one heading and legend.
fn markup(a: &ProbeRecord, b: &ProbeRecord) -> String {
    let span = fitted_span([&a.result, &b.result]);
    let mut out = String::from(r#"<section class="vantage-groups" aria-labelledby="sides-title">"#);
    head(&mut out, "sides-title", "Both results, on one time axis");
    for (name, record) in [("a", a), ("b", b)] {
        let _ = write!(
            out,
            r#"<section class="vantage-group" data-side="{name}" aria-labelledby="vantage-title-{name}">"#
        );
        element(
            &mut out,
            "h2",
            &format!(r#" id="vantage-title-{name}""#),
            &format!("{}: {}", name.to_ascii_uppercase(), record.options.url),
        );
        out.push_str(&verdict(&record.result, Some(name)).unwrap_or_default());
        out.push_str(&section(&record.result, &[], span, Some(name)));
        out.push_str("</section>");
    }
    out.push_str("</section>");
    out
}
