//! A comparison of two finished results (`/compare/{a}/{b}`), drawn whole on the server: into the
//! page itself, so the answer is on screen at the first paint, and as
//! `GET /api/v1/compare/{a}/{b}/view`, which the islands bundle draws when a static host served
//! the page (`islands::draw_remote`). Its islands give it behaviour: times on the reader's clock
//! ([`LocalTime`](crate::islands::LocalTime)), the waterfalls' hover, keys and fitted axes
//! ([`WaterfallChart`](crate::islands::WaterfallChart)).

use super::parts::time;
use super::result::verdict::{rule, verdict};
use super::result::waterfall::{head, section};
use h123_shared::api::{ProbeComparison, ProbeRecord};
use h123_shared::compare::{Comparison, ComparisonKind, SideFigures};
use h123_shared::format::ms;
use h123_shared::waterfall::fitted_span;
use leptos::prelude::*;

/// The whole comparison: `<section id="comparison" data-title>` (the heading, each side's line,
/// the links), the answer and the table metric by metric, and both results on one time axis.
pub fn compare_page(both: &ProbeComparison) -> impl IntoView + use<> {
    view! {
        <section class="summary" id="comparison" aria-label="Results compared" data-title=format!("Comparison: {}", both.comparison.summary)>
            <h1 class="target">"Two results compared"</h1>
            <div>
                {side_line("A", &both.a)}
                {side_line("B", &both.b)}
                {links(&both.a.id, &both.b.id)}
            </div>
        </section>
        <div class="compared">{answer(&both.comparison)}{table(&both.comparison)}</div>
        <div>{sides(&both.a, &both.b)}</div>
    }
}

/// One side's line: its letter, URL (linking to its own page) and when it was measured (a
/// `<time>` the page writes on the reader's clock).
fn side_line(letter: &'static str, record: &ProbeRecord) -> impl IntoView + use<> {
    view! {
        <p class="meta side-line" data-side=letter>
            <strong class="side">{letter}</strong>" "
            <a href=format!("/r/{}", record.id)>{record.options.url.clone()}</a>
            {format!(" · {} attempts per protocol · ", record.options.attempts())}
            {time(record.created_at_unix_ms)}
        </p>
    }
}

/// A comparison's links: A and B swapped, and its JSON (`data-api`: on the API's base).
fn links(a: &str, b: &str) -> impl IntoView + use<> {
    let json = format!("/api/v1/compare/{a}/{b}");
    view! {
        <nav class="actions" aria-label="Comparison actions">
            <a class="button" href=format!("/compare/{b}/{a}")>"Swap A and B"</a>
            <a class="button" href=json.clone() data-api=json download=format!("h123-compare-{a}-{b}.json")>"JSON"</a>
        </nav>
    }
}

/// A side's median, with how many values it is taken over.
fn figures(f: Option<SideFigures>) -> AnyView {
    match f {
        Some(f) => view! {
            <td><span class="median">{ms(f.median)}</span><span class="p95">{format!("n={}", f.count)}</span></td>
        }
        .into_any(),
        None => view! { <td class="na">"–"</td> }.into_any(),
    }
}

/// The answer: its summary, caveats and the rule (the page's one footnote: the verdicts under it
/// carry none), where the rule weighed something.
fn answer(c: &Comparison) -> impl IntoView + use<> {
    let kind = match c.kind {
        ComparisonKind::Differs => "faster",
        ComparisonKind::NoDifference => "no_difference",
        ComparisonKind::NotComparable => "not_comparable",
    };
    let applies = c.rule_applies();
    let caveats = (!c.caveats.is_empty()).then(|| {
        let items = c
            .caveats
            .iter()
            .map(|caveat| view! { <li>{caveat.clone()}</li> })
            .collect_view();
        view! { <ul class="compare-caveats">{items}</ul> }
    });
    view! {
        <section class=format!("verdict {kind}") aria-labelledby="compare-title" data-kind=kind>
            <h2 id="compare-title">"What differs"</h2>
            <p class="verdict-summary" title=applies.then(|| c.rule.clone())>{c.summary.clone()}</p>
            {caveats}
            {applies.then(|| rule(c.rule.clone()))}
        </section>
    }
}

/// The table, metric by metric.
fn table(c: &Comparison) -> impl IntoView + use<> {
    let groups = c
        .groups
        .iter()
        .map(|g| {
            let rows = g
                .metrics
                .iter()
                .map(|row| {
                    let class = match row.faster {
                        Some(side) => format!("gap called side-{}", side.letter()),
                        None => "gap-none".to_owned(),
                    };
                    view! {
                        <tr>
                            <th scope="row">{row.metric.as_str()}</th>
                            {figures(row.a)}
                            {figures(row.b)}
                            <td class=class>{row.said()}</td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <tr class="state">
                    <th scope="rowgroup" colspan="4">{format!("{} · {}", g.protocol.http_version(), g.state.label())}</th>
                </tr>
                {rows}
            }
        })
        .collect_view();
    view! {
        <section class="comparison" aria-labelledby="diff-title">
            <h2 id="diff-title">"Metric by metric"</h2>
            <p class="hint" title=c.rule.clone()>
                "Median per metric over successful attempts, new connections compared with new ones and reused with reused. A difference is named only where it clears the measured noise and the floor (0.5 ms or 5% of the faster median), and a phase's also those of the whole request."
            </p>
            <div class="table-scroll">
                <table class="diff-table">
                    <thead><tr><th scope="col">"Metric"</th><th scope="col">"A"</th><th scope="col">"B"</th><th scope="col">"Difference"</th></tr></thead>
                    <tbody>{groups}</tbody>
                </table>
            </div>
        </section>
    }
}

/// Both sides' groups, under one heading and legend.
fn sides(a: &ProbeRecord, b: &ProbeRecord) -> impl IntoView + use<> {
    let span = fitted_span([&a.result, &b.result]);
    let groups = [("a", a), ("b", b)]
        .into_iter()
        .map(|(name, record)| {
            view! {
                <section class="vantage-group" data-side=name aria-labelledby=format!("vantage-title-{name}")>
                    <h2 id=format!("vantage-title-{name}")>{format!("{}: {}", name.to_ascii_uppercase(), record.options.url)}</h2>
                    {verdict(&record.result, Some(name))}
                    {section(&record.result, &[], span, Some(name))}
                </section>
            }
        })
        .collect_view();
    view! {
        <section class="vantage-groups" aria-labelledby="sides-title">
            {head("sides-title", "Both results, on one time axis".to_owned())}
            {groups}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::render;

    #[test]
    fn links_are_escaped_and_on_the_api() {
        let out = render(|| links("a\"b", "c"));
        assert!(out.contains(r#"href="/compare/c/a&quot;b""#), "{out}");
        assert!(
            out.contains(r#"data-api="/api/v1/compare/a&quot;b/c""#),
            "{out}"
        );
    }
}
