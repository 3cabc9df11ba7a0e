//! The verdict: the answer to "which protocol is faster here, and why", first on the page, with
//! the significance rule on hover and below it where the rule weighed something.

use h123_shared::ProbeResult;
use h123_shared::verdict::VerdictKind;
use leptos::prelude::*;

/// The verdict of a finished result (the server's analysis, attached to every finished record)
/// as its section; nothing without an analysis. For one vantage's verdict among several, named
/// `vantage`, the section has no heading (its group's, `vantage-title-{name}`, names it) and no
/// footnote: the page says the rule once ([`rule`]), beside what it applies to.
pub fn verdict(result: &ProbeResult, vantage: Option<&str>) -> Option<impl IntoView + use<>> {
    let v = &result.analysis.as_ref()?.verdict;
    let class = match v.kind {
        VerdictKind::Faster => "verdict faster",
        VerdictKind::NoDifference => "verdict no_difference",
        VerdictKind::NotComparable => "verdict not_comparable",
        VerdictKind::Failed => "verdict failed",
    };
    let labelled_by = match vantage {
        None => "verdict-title".to_owned(),
        Some(name) => format!("vantage-title-{name}"),
    };
    let applies = v.rule_applies();
    let heading = vantage
        .is_none()
        .then(|| view! { <h2 id="verdict-title">"Verdict"</h2> });
    let footnote = (applies && vantage.is_none()).then(|| rule(v.rule.clone()));
    Some(view! {
        <section class=class aria-labelledby=labelled_by data-kind=format!("{:?}", v.kind)>
            {heading}
            <p class="verdict-summary" title=applies.then(|| v.rule.clone())>{v.summary.clone()}</p>
            {footnote}
        </section>
    })
}

/// The significance rule as the page's footnote, `<p class="rule">`: once a page, under the
/// answer it applies to (a verdict, the matrix across vantages, a comparison of two results).
pub fn rule(text: String) -> impl IntoView + use<> {
    view! { <p class="rule">{text}</p> }
}
