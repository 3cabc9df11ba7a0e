//! The verdict: the answer to "which protocol is faster here, and why", first on the page.

use h123_shared::ProbeResult;
use h123_shared::markup::{element, escape};
use h123_shared::verdict::VerdictKind;
use leptos::prelude::*;

/// The verdict of a finished result (the server's analysis, attached to every
/// finished record), with the significance rule on hover and below.
#[component]
pub fn VerdictPanel(
    /// The finished result.
    #[prop(into)]
    result: Signal<ProbeResult>,
    /// The vantage's name, when this is one vantage's verdict among several, in its group
    /// (headed `vantage-title-{name}`).
    #[prop(optional)]
    vantage: Option<String>,
) -> impl IntoView {
    // One vantage's verdict among several: the group's heading names it.
    let labelled_by = match &vantage {
        None => "verdict-title".to_owned(),
        Some(name) => format!("vantage-title-{name}"),
    };
    let scoped = vantage.is_some();
    let verdict =
        Memo::new(move |_| result.with(|r| r.analysis.as_ref().map(|a| a.verdict.clone())));
    move || {
        let v = verdict.get()?;
        let class = match v.kind {
            VerdictKind::Faster => "verdict faster",
            VerdictKind::NoDifference => "verdict no_difference",
            VerdictKind::NotComparable => "verdict not_comparable",
            VerdictKind::Failed => "verdict failed",
        };
        let mut inside = String::new();
        if !scoped {
            inside.push_str(r#"<h2 id="verdict-title">Verdict</h2>"#);
        }
        element(
            &mut inside,
            "p",
            &format!(r#" class="verdict-summary" title="{}""#, escape(&v.rule)),
            &v.summary,
        );
        element(&mut inside, "p", r#" class="rule""#, &v.rule);
        Some(view! {
            <section class=class aria-labelledby=labelled_by.clone() data-kind=format!("{:?}", v.kind) inner_html=inside></section>
        })
    }
}
