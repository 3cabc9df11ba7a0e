//! The vantage x protocol matrix of a finished probe across vantages (`vantage::matrix_with`:
//! median total and TTFB per cell for new and reused connections, the faster protocol marked only
//! where that vantage's verdict calls a difference) and the cross-vantage findings in words, both
//! over the verdicts of the record's stored analyses, never recomputed; the significance rule
//! under them, the page's one footnote, where it weighed something.

use super::findings::list;
use super::verdict::rule;
use h123_shared::format::ms;
use h123_shared::vantage::{
    MATRIX_STATES, MatrixRow, VantageRun, findings_with, matrix_with, stored,
};
use h123_shared::verdict::SIGNIFICANCE_RULE;
use h123_shared::{Micros, Protocol};
use leptos::prelude::*;

/// The matrix and the findings across vantages of a finished probe, as their section: a column
/// per protocol of `protocols` (those asked for, in order), a row group per run of `runs`.
pub fn matrix(runs: &[VantageRun], protocols: &[Protocol]) -> impl IntoView + use<> {
    let heads = protocols
        .iter()
        .map(|p| view! { <th scope="col">{p.http_version()}</th> })
        .collect_view();
    let groups = matrix_with(runs, stored)
        .iter()
        .map(|row| vantage_rows(row, protocols))
        .collect_view();
    let weighed = runs
        .iter()
        .filter_map(|r| r.result.as_ref()?.analysis.as_ref())
        .any(|a| a.verdict.rule_applies());
    view! {
        <section class="comparison vantage-matrix" aria-labelledby="matrix-title">
            <h2 id="matrix-title">"Across vantages"</h2>
            <p class="hint" title=SIGNIFICANCE_RULE>
                "Median total and time to first byte of the successful attempts, per vantage and protocol, on a new and on a reused connection. \"Faster\" marks a protocol only where that vantage's own verdict calls the difference beyond its measured noise."
            </p>
            <div class="table-scroll">
                <table>
                    <thead><tr><th scope="col">"Vantage"</th><th scope="col">"Connection"</th>{heads}</tr></thead>
                    {groups}
                </table>
            </div>
            {findings(runs)}
            {weighed.then(|| rule(SIGNIFICANCE_RULE.to_owned()))}
        </section>
    }
}

/// A vantage's rows: one per connection state (and one for its problem, if any), or a single
/// one saying why it has no figures.
fn vantage_rows(row: &MatrixRow, protocols: &[Protocol]) -> impl IntoView + use<> {
    let name = row.vantage.name.clone();
    let states: &[_] = if row.cells.is_empty() {
        &[]
    } else {
        &MATRIX_STATES
    };
    let span = states.len() + usize::from(row.problem.is_some());
    let code = row.vantage.label.is_some().then(|| {
        view! { <code class="vantage-name">{row.vantage.name.clone()}</code> }
    });
    let mut head = Some(view! {
        <th scope="rowgroup" rowspan=span>{row.vantage.shown().to_owned()}{code}</th>
    });
    let mut rows = Vec::new();
    for &state in states {
        let label = state.label();
        let cells = protocols
            .iter()
            .map(|&protocol| {
                let p = protocol.as_str();
                let cell = row
                    .cells
                    .iter()
                    .find(|c| c.protocol == protocol && c.state == state && c.count > 0);
                let Some(cell) = cell else {
                    return view! { <td class="na" data-protocol=p>"–"</td> }.into_any();
                };
                let figure = |m: Option<Micros>| m.map(ms).unwrap_or_else(|| "–".into());
                let faster = cell
                    .faster
                    .then(|| view! { <span class="gap best">"faster"</span> });
                view! {
                    <td class=cell.faster.then_some("fastest") data-protocol=p data-count=cell.count>
                        <span class="median total">{figure(cell.total)}</span>
                        <span class="ttfb">{format!("TTFB {}", figure(cell.ttfb))}</span>
                        {faster}
                    </td>
                }
                .into_any()
            })
            .collect_view();
        rows.push(
            view! {
                <tr data-vantage=name.clone() data-state=label>
                    {head.take()}
                    <th scope="row">{label}</th>
                    {cells}
                </tr>
            }
            .into_any(),
        );
    }
    if let Some(problem) = &row.problem {
        rows.push(
            view! {
                <tr class="vantage-failed" data-vantage=name.clone()>
                    {head.take()}
                    <td class="vantage-problem" colspan=protocols.len() + 1>{problem.clone()}</td>
                </tr>
            }
            .into_any(),
        );
    }
    view! { <tbody>{rows}</tbody> }
}

/// The findings across vantages, or that nothing depends on the vantage.
fn findings(runs: &[VantageRun]) -> impl IntoView + use<> {
    let found = findings_with(runs, stored);
    let none = found.is_empty().then(|| {
        view! {
            <p class="hint vantage-findings-none">
                "Nothing here depends on the vantage: no vantage's verdict calls a protocol faster where another's calls no difference, or another protocol."
            </p>
        }
    });
    view! {
        {none}
        <ol class="finding-list vantage-findings">{list(&found)}</ol>
    }
}
