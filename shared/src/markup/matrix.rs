//! The vantage x protocol matrix of a finished probe across vantages as markup
//! (`vantage::matrix_with`: median total and TTFB per cell for new and reused connections, the
//! faster protocol marked only where that vantage's verdict calls a difference) and the
//! cross-vantage findings in words, both over the verdicts of the record's stored analyses, never
//! recomputed; the significance rule under them, the page's one footnote, where it weighed
//! something.

use super::{element, escape};
use crate::format::ms;
use crate::vantage::{MATRIX_STATES, MatrixRow, VantageRun, findings_with, matrix_with, stored};
use crate::verdict::SIGNIFICANCE_RULE;
use crate::{Micros, Protocol};
use std::fmt::Write as _;

/// The matrix and the findings across vantages of a finished probe, as their section: a column
/// per protocol of `protocols` (those asked for, in order), a row group per run of `runs`.
pub fn matrix(runs: &[VantageRun], protocols: &[Protocol]) -> String {
    let mut out = String::from(
        r#"<section class="comparison vantage-matrix" aria-labelledby="matrix-title"><h2 id="matrix-title">Across vantages</h2>"#,
    );
    element(
        &mut out,
        "p",
        &format!(r#" class="hint" title="{}""#, escape(SIGNIFICANCE_RULE)),
        "Median total and time to first byte of the successful attempts, per vantage and protocol, \
         on a new and on a reused connection. \"Faster\" marks a protocol only where that vantage's \
         own verdict calls the difference beyond its measured noise.",
    );
    out.push_str(r#"<div class="table-scroll"><table><thead><tr><th scope="col">Vantage</th><th scope="col">Connection</th>"#);
    for p in protocols {
        element(&mut out, "th", r#" scope="col""#, p.http_version());
    }
    out.push_str("</tr></thead>");
    for row in matrix_with(runs, stored) {
        vantage_rows(&mut out, &row, protocols);
    }
    out.push_str("</table></div>");
    findings(&mut out, runs);
    let weighed = runs
        .iter()
        .filter_map(|r| r.result.as_ref()?.analysis.as_ref())
        .any(|a| a.verdict.rule_applies());
    if weighed {
        out.push_str(&super::verdict::rule(SIGNIFICANCE_RULE));
    }
    out.push_str("</section>");
    out
}

/// A vantage's rows: one per connection state (and one for its problem, if any), or a single
/// one saying why it has no figures.
fn vantage_rows(out: &mut String, row: &MatrixRow, protocols: &[Protocol]) {
    let name = escape(&row.vantage.name);
    let states: &[_] = if row.cells.is_empty() {
        &[]
    } else {
        &MATRIX_STATES
    };
    let span = states.len() + usize::from(row.problem.is_some());
    let mut head = format!(r#"<th scope="rowgroup" rowspan="{span}">"#);
    head.push_str(&escape(row.vantage.shown()));
    if row.vantage.label.is_some() {
        element(
            &mut head,
            "code",
            r#" class="vantage-name""#,
            &row.vantage.name,
        );
    }
    head.push_str("</th>");
    let mut head = Some(head);
    out.push_str("<tbody>");
    for &state in states {
        let label = state.label();
        let _ = write!(out, r#"<tr data-vantage="{name}" data-state="{label}">"#);
        out.push_str(&head.take().unwrap_or_default());
        element(out, "th", r#" scope="row""#, label);
        for &protocol in protocols {
            let p = protocol.as_str();
            let cell = row
                .cells
                .iter()
                .find(|c| c.protocol == protocol && c.state == state && c.count > 0);
            let Some(cell) = cell else {
                let _ = write!(out, r#"<td class="na" data-protocol="{p}">–</td>"#);
                continue;
            };
            let figure = |m: Option<Micros>| m.map(ms).unwrap_or_else(|| "–".into());
            let class = if cell.faster {
                r#" class="fastest""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r#"<td{class} data-protocol="{p}" data-count="{}"><span class="median total">{}</span><span class="ttfb">TTFB {}</span>{}</td>"#,
                cell.count,
                figure(cell.total),
                figure(cell.ttfb),
                if cell.faster {
                    r#"<span class="gap best">faster</span>"#
                } else {
                    ""
                },
            );
        }
        out.push_str("</tr>");
    }
    if let Some(problem) = &row.problem {
        let _ = write!(out, r#"<tr class="vantage-failed" data-vantage="{name}">"#);
        out.push_str(&head.take().unwrap_or_default());
        let attrs = format!(
            r#" class="vantage-problem" colspan="{}""#,
            protocols.len() + 1
        );
        element(out, "td", &attrs, problem);
        out.push_str("</tr>");
    }
    out.push_str("</tbody>");
}

/// The findings across vantages, or that nothing depends on the vantage.
fn findings(out: &mut String, runs: &[VantageRun]) {
    let found = findings_with(runs, stored);
    if found.is_empty() {
        element(
            out,
            "p",
            r#" class="hint vantage-findings-none""#,
            "Nothing here depends on the vantage: no vantage's verdict calls a protocol faster \
             where another's calls no difference, or another protocol.",
        );
    }
    out.push_str(r#"<ol class="finding-list vantage-findings">"#);
    for finding in &found {
        super::findings::item(out, finding);
    }
    out.push_str("</ol>");
}
