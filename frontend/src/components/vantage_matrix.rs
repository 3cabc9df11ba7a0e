//! The vantage x protocol matrix of a finished probe across vantages (`shared::vantage::matrix`:
//! median total and TTFB per cell for new and reused connections, the faster protocol marked only
//! where that vantage's verdict calls a difference) and the cross-vantage findings in words, both
//! over the verdicts of the record's stored analyses, never recomputed here.

use crate::components::FindingItem;
use h123_shared::format::ms;
use h123_shared::vantage::{
    MATRIX_STATES, MatrixRow, VantageRun, findings_with, matrix_with, stored,
};
use h123_shared::verdict::SIGNIFICANCE_RULE;
use h123_shared::{Micros, Protocol};
use leptos::prelude::*;

/// One cell: total and TTFB medians, and "faster" when the vantage's verdict calls it.
fn cell(row: &MatrixRow, protocol: Protocol, state: h123_shared::chain::ConnState) -> AnyView {
    let found = row
        .cells
        .iter()
        .find(|c| c.protocol == protocol && c.state == state && c.count > 0);
    let Some(cell) = found else {
        return view! { <td class="na" data-protocol=protocol.as_str()>"–"</td> }.into_any();
    };
    let figure = |m: Option<Micros>| m.map(ms).unwrap_or_else(|| "–".into());
    view! {
        <td class:fastest=cell.faster data-protocol=protocol.as_str() data-count=cell.count>
            <span class="median total">{figure(cell.total)}</span>
            <span class="ttfb">{format!("TTFB {}", figure(cell.ttfb))}</span>
            {cell.faster.then(|| view! { <span class="gap best">"faster"</span> })}
        </td>
    }
    .into_any()
}

/// A vantage's rows: one per connection state (and one for its problem, if any), or a single
/// one saying why it has no figures.
fn vantage_rows(row: MatrixRow, protocols: &[Protocol]) -> AnyView {
    let name = row.vantage.name.clone();
    let note = row.problem.clone();
    let states: &[_] = if row.cells.is_empty() {
        &[]
    } else {
        &MATRIX_STATES
    };
    let mut head = Some(view! {
        <th scope="rowgroup" rowspan=states.len() + usize::from(note.is_some())>
            {row.vantage.shown().to_owned()}
            {row.vantage.label.is_some().then(|| view! { <code class="vantage-name">{name.clone()}</code> })}
        </th>
    });
    let rows = states
        .iter()
        .map(|&state| {
            view! {
                <tr data-vantage=name.clone() data-state=state.label()>
                    {head.take()}
                    <th scope="row">{state.label()}</th>
                    {protocols.iter().map(|&p| cell(&row, p, state)).collect_view()}
                </tr>
            }
        })
        .collect_view();
    let note = note.map(|problem| {
        view! {
            <tr class="vantage-failed" data-vantage=name.clone()>
                {head.take()}
                <td class="vantage-problem" colspan=protocols.len() + 1>{problem}</td>
            </tr>
        }
    });
    view! { <tbody>{rows} {note}</tbody> }.into_any()
}

/// The matrix and the findings across vantages of a finished probe.
#[component]
pub fn VantageMatrix(
    /// The probe's vantage runs, each with its final (analyzed) result or its problem.
    runs: Vec<VantageRun>,
    /// The protocols asked for, in order (the columns).
    protocols: Vec<Protocol>,
) -> impl IntoView {
    let found = findings_with(&runs, stored);
    let across = if found.is_empty() {
        view! {
            <p class="hint vantage-findings-none">
                "Nothing here depends on the vantage: no vantage's verdict calls a protocol faster where another's calls no difference, or another protocol."
            </p>
        }
        .into_any()
    } else {
        view! {
            <ol class="finding-list vantage-findings">
                {found.into_iter().map(|finding| view! { <FindingItem finding /> }).collect_view()}
            </ol>
        }
        .into_any()
    };
    view! {
        <section class="comparison vantage-matrix" aria-labelledby="matrix-title">
            <h2 id="matrix-title">"Across vantages"</h2>
            <p class="hint" title=SIGNIFICANCE_RULE>
                "Median total and time to first byte of the successful attempts, per vantage and protocol, on a new and on a reused connection. \"Faster\" marks a protocol only where that vantage's own verdict calls the difference beyond its measured noise."
            </p>
            <div class="table-scroll">
                <table>
                    <thead>
                        <tr>
                            <th scope="col">"Vantage"</th>
                            <th scope="col">"Connection"</th>
                            {protocols.iter().map(|p| view! { <th scope="col">{p.http_version()}</th> }).collect_view()}
                        </tr>
                    </thead>
                    {matrix_with(&runs, stored).into_iter().map(|row| vantage_rows(row, &protocols)).collect_view()}
                </table>
            </div>
            {across}
        </section>
    }
}
