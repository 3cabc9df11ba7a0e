//! The verdict as markup: the answer to "which protocol is faster here, and why", first on the
//! page, with the significance rule on hover and below it where the rule weighed something.

use super::{element, escape};
use crate::ProbeResult;
use crate::verdict::VerdictKind;

/// The verdict of a finished result (the server's analysis, attached to every finished record)
/// as its section; nothing without an analysis. For one vantage's verdict among several, named
/// `vantage`, the section has no heading (its group's, `vantage-title-{name}`, names it) and no
/// footnote: the page says the rule once ([`rule`]), beside what it applies to.
pub fn verdict(result: &ProbeResult, vantage: Option<&str>) -> Option<String> {
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
    let mut out = format!(
        r#"<section class="{class}" aria-labelledby="{}" data-kind="{:?}">"#,
        escape(&labelled_by),
        v.kind
    );
    if vantage.is_none() {
        out.push_str(r#"<h2 id="verdict-title">Verdict</h2>"#);
    }
    let applies = v.rule_applies();
    let title = if applies {
        format!(r#" class="verdict-summary" title="{}""#, escape(&v.rule))
    } else {
        r#" class="verdict-summary""#.to_owned()
    };
    element(&mut out, "p", &title, &v.summary);
    if applies && vantage.is_none() {
        out.push_str(&rule(&v.rule));
    }
    out.push_str("</section>");
    Some(out)
}

/// The significance rule as the page's footnote, `<p class="rule">`: once a page, under the
/// answer it applies to (a verdict, the matrix across vantages, a comparison of two results).
pub fn rule(text: &str) -> String {
    let mut out = String::new();
    element(&mut out, "p", r#" class="rule""#, text);
    out
}
