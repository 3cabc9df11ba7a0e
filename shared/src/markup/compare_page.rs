//! A comparison of two finished results as markup (`/compare/{a}/{b}`): drawn by the server into
//! the page itself, so the answer is on screen at the first paint, and by the comparison page's
//! script from `GET /api/v1/compare/{a}/{b}` when a static host served the page. The page's
//! script only gives it behaviour (times on the reader's clock, the waterfalls' hover and keys,
//! the axis labels fitted, the API links on the configured base). Nothing in it changes.

use super::verdict::{rule, verdict};
use super::waterfall::{head, section};
use super::{element, escape, time};
use crate::api::{ProbeComparison, ProbeRecord};
use crate::compare::{Comparison, ComparisonKind, SideFigures};
use crate::format::ms;
use crate::waterfall::fitted_span;
use std::fmt::Write as _;

/// The whole comparison: `<section id="comparison" data-title>` (the heading, each side's line,
/// the links), the answer and the table metric by metric, and both results on one time axis.
pub fn page(both: &ProbeComparison) -> String {
    let mut out = format!(
        r#"<section class="summary" id="comparison" aria-label="Results compared" data-title="{}"><h1 class="target">Two results compared</h1><div>"#,
        escape(&format!("Comparison: {}", both.comparison.summary))
    );
    side_line(&mut out, "A", &both.a);
    side_line(&mut out, "B", &both.b);
    links(&mut out, &both.a.id, &both.b.id);
    out.push_str("</div></section>");
    let _ = write!(
        out,
        r#"<div class="compared">{}{}</div>"#,
        answer(&both.comparison),
        table(&both.comparison)
    );
    let _ = write!(out, "<div>{}</div>", sides(&both.a, &both.b));
    out
}

/// One side's line: its letter, URL (linking to its own page) and when it was measured (a
/// `<time>` the page writes on the reader's clock).
fn side_line(out: &mut String, letter: &str, record: &ProbeRecord) {
    let _ = write!(
        out,
        r#"<p class="meta side-line" data-side="{letter}"><strong class="side">{letter}</strong> <a href="/r/{}">"#,
        escape(&record.id)
    );
    out.push_str(&escape(&record.options.url));
    let _ = write!(
        out,
        "</a> · {} attempts per protocol · {}</p>",
        record.options.attempts(),
        time(record.created_at_unix_ms)
    );
}

/// A comparison's links: A and B swapped, and its JSON (`data-api`: on the API's base).
fn links(out: &mut String, a: &str, b: &str) {
    let (a, b) = (escape(a), escape(b));
    let _ = write!(
        out,
        r#"<nav class="actions" aria-label="Comparison actions"><a class="button" href="/compare/{b}/{a}">Swap A and B</a><a class="button" href="/api/v1/compare/{a}/{b}" data-api="/api/v1/compare/{a}/{b}" download="h123-compare-{a}-{b}.json">JSON</a></nav>"#
    );
}

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
pub fn answer(c: &Comparison) -> String {
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
pub fn table(c: &Comparison) -> String {
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

/// Both sides' groups, under one heading and legend.
pub fn sides(a: &ProbeRecord, b: &ProbeRecord) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_escaped_and_on_the_api() {
        let mut out = String::new();
        links(&mut out, "a\"b", "c");
        assert!(out.contains(r#"href="/compare/c/a&quot;b""#));
        assert!(out.contains(r#"data-api="/api/v1/compare/a&quot;b/c""#));
    }
}
