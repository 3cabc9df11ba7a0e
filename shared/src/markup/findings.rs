//! The diagnosis as markup: findings most severe first, each with its evidence and next step.

use super::{element, escape};
use crate::analysis::Analysis;
use crate::diagnosis::{Finding, Severity};
use std::fmt::Write as _;

/// The label of a severity.
fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Critical => "critical",
    }
}

/// The section's content: its heading, then the findings, or why there are none.
pub fn findings(analysis: Option<&Analysis>) -> String {
    let mut out = String::from(r#"<h2 id="findings-title">Findings</h2>"#);
    match analysis.map(|a| a.findings.as_slice()) {
        None => out.push_str(r#"<p class="hint">The server sent no analysis with this result.</p>"#),
        Some([]) => out.push_str(r#"<p class="hint">Nothing stands out: every attempt succeeded and every phase is within the usual thresholds.</p>"#),
        Some(findings) => {
            out.push_str(r#"<ol class="finding-list">"#);
            for finding in findings {
                item(&mut out, finding);
            }
            out.push_str("</ol>");
        }
    }
    out
}

/// One finding: its severity and title, evidence and next step.
pub(super) fn item(out: &mut String, finding: &Finding) {
    let severity = severity_name(finding.severity);
    let _ = write!(
        out,
        r#"<li class="finding severity-{severity}" data-id="{}"><p class="finding-title"><span class="severity">{severity}</span>{}</p>"#,
        escape(&finding.id),
        escape(&finding.title)
    );
    element(out, "p", r#" class="evidence""#, &finding.evidence.detail);
    let _ = write!(
        out,
        r#"<p class="next-step"><strong>Next: </strong>{}</p></li>"#,
        escape(&finding.next_step)
    );
}
