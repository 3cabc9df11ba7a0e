//! The comparison table as markup: per connection state, median (and p95) per phase per
//! protocol; a leader and gaps only beyond the noise; a protocol that produced nothing keeps its
//! column and says why.

use super::{element, escape};
use crate::format::ms;
use crate::table::{ComparisonTable, TableCell};
use crate::verdict::SIGNIFICANCE_RULE;
use std::fmt::Write as _;

/// The section's content: the hint, then the table.
pub fn comparison(t: &ComparisonTable) -> String {
    let mut out = String::from(r#"<h2 id="comparison-title">Comparison</h2>"#);
    let _ = write!(
        out,
        r#"<p class="hint" title="{}">Median per phase over successful attempts, new connections compared with new ones and reused with reused{}. "Fastest" and gaps appear only where the difference clears the measured noise and the floor (0.5 ms or 5% of the faster median), and a phase's also those of the whole request.</p>"#,
        escape(SIGNIFICANCE_RULE),
        if t.show_p95 {
            ", with the 95th percentile"
        } else {
            ""
        }
    );
    out.push_str(
        r#"<div class="table-scroll"><table class="protocol-table"><thead><tr><th scope="col">Phase</th>"#,
    );
    for c in &t.columns {
        element(&mut out, "th", r#" scope="col""#, c.protocol.http_version());
    }
    out.push_str("</tr></thead><tbody>");
    if t.columns.iter().any(|c| c.unmeasured.is_some()) {
        out.push_str(r#"<tr class="unmeasured-row"><th scope="row">status</th>"#);
        for c in &t.columns {
            match &c.unmeasured {
                Some(why) => {
                    out.push_str(r#"<td class="unmeasured">"#);
                    element(&mut out, "a", r##" href="#findings-title""##, why);
                    out.push_str("</td>");
                }
                None => out.push_str("<td>measured</td>"),
            }
        }
        out.push_str("</tr>");
    }
    for section in &t.sections {
        let _ = write!(
            out,
            r#"<tr class="state"><th scope="rowgroup" colspan="{}">{}</th></tr>"#,
            t.columns.len() + 1,
            section.state.label()
        );
        for row in &section.rows {
            out.push_str("<tr>");
            element(&mut out, "th", r#" scope="row""#, row.metric.as_str());
            for cell in &row.cells {
                cell_markup(&mut out, cell.as_ref(), t.show_p95);
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div>");
    out
}

/// One cell: median, p95 when there are several values, and "fastest" or the gap when beyond the noise.
fn cell_markup(out: &mut String, cell: Option<&TableCell>, show_p95: bool) {
    let Some(cell) = cell else {
        out.push_str(r#"<td class="na">–</td>"#);
        return;
    };
    let _ = write!(
        out,
        r#"<td{}><span class="median">{}</span>"#,
        if cell.fastest {
            r#" class="fastest""#
        } else {
            ""
        },
        ms(cell.median)
    );
    if let Some(p95) = cell.p95.filter(|_| show_p95) {
        let _ = write!(out, r#"<span class="p95">p95 {}</span>"#, ms(p95));
    }
    if cell.fastest {
        out.push_str(r#"<span class="gap best">fastest</span>"#);
    }
    if let Some(d) = cell.diff_ms {
        let _ = write!(out, r#"<span class="gap">+{d:.2} ms</span>"#);
    }
    out.push_str("</td>");
}
