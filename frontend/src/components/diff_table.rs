//! A comparison of two results, drawn once as markup (`shared::markup`; nothing in it changes):
//! the answer and its caveats, then per protocol and connection state each metric's median in A
//! and in B, and the difference only where it is beyond the noise.

use h123_shared::compare::{Comparison, ComparisonKind, SideFigures};
use h123_shared::format::ms;
use h123_shared::markup::verdict::rule;
use h123_shared::markup::{element, escape};
use leptos::prelude::*;
use std::fmt::Write as _;

/// A side's median, with how many values it is taken over.
fn figures(out: &mut String, f: Option<SideFigures>) {
    match f {
        Some(f) => {
            let _ = write!(
                out,
                r#"<td><span class="median">{}</span><span class="p95">n={}</span></td>"#,
                ms(f.median),
                f.count
            );
        }
        None => out.push_str(r#"<td class="na">–</td>"#),
    }
}

/// The answer: its summary, caveats and the rule (the page's one footnote: the verdicts under it
/// carry none), where the rule weighed something.
fn answer(c: &Comparison) -> String {
    let kind = match c.kind {
        ComparisonKind::Differs => "faster",
        ComparisonKind::NoDifference => "no_difference",
        ComparisonKind::NotComparable => "not_comparable",
    };
    let applies = c.rule_applies();
    let mut out = format!(
        r#"<section class="verdict {kind}" aria-labelledby="compare-title" data-kind="{kind}"><h2 id="compare-title">What differs</h2>"#
    );
    let title = if applies {
        format!(r#" class="verdict-summary" title="{}""#, escape(&c.rule))
    } else {
        r#" class="verdict-summary""#.to_owned()
    };
    element(&mut out, "p", &title, &c.summary);
    if !c.caveats.is_empty() {
        out.push_str(r#"<ul class="compare-caveats">"#);
        for caveat in &c.caveats {
            element(&mut out, "li", "", caveat);
        }
        out.push_str("</ul>");
    }
    if applies {
        out.push_str(&rule(&c.rule));
    }
    out.push_str("</section>");
    out
}

/// The table, metric by metric.
fn table(c: &Comparison) -> String {
    let mut out = format!(
        r#"<section class="comparison" aria-labelledby="diff-title"><h2 id="diff-title">Metric by metric</h2><p class="hint" title="{}">Median per metric over successful attempts, new connections compared with new ones and reused with reused. A difference is named only where it clears the measured noise and the floor (0.5 ms or 5% of the faster median), and a phase's also those of the whole request.</p><div class="table-scroll"><table class="diff-table"><thead><tr><th scope="col">Metric</th><th scope="col">A</th><th scope="col">B</th><th scope="col">Difference</th></tr></thead><tbody>"#,
        escape(&c.rule)
    );
    for g in &c.groups {
        let _ = write!(
            out,
            r#"<tr class="state"><th scope="rowgroup" colspan="4">{} · {}</th></tr>"#,
            g.protocol.http_version(),
            g.state.label()
        );
        for row in &g.metrics {
            out.push_str("<tr>");
            element(&mut out, "th", r#" scope="row""#, row.metric.as_str());
            figures(&mut out, row.a);
            figures(&mut out, row.b);
            let class = match row.faster {
                Some(side) => format!(r#" class="gap called side-{}""#, side.letter()),
                None => r#" class="gap-none""#.to_owned(),
            };
            element(&mut out, "td", &class, &row.said());
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div></section>");
    out
}

/// The comparison's answer and table.
#[component]
pub fn DiffTable(
    /// The comparison.
    comparison: Comparison,
) -> impl IntoView {
    let markup = answer(&comparison) + &table(&comparison);
    view! { <div class="compared" inner_html=markup></div> }
}
