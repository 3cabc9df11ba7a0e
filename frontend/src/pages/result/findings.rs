//! The diagnosis: findings most severe first, each with its evidence and next step.

use h123_shared::analysis::Analysis;
use h123_shared::diagnosis::{Finding, Severity};
use leptos::prelude::*;

/// The label of a severity.
fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Critical => "critical",
    }
}

/// The section's content: its heading, then the findings, or why there are none.
pub fn findings(analysis: Option<&Analysis>) -> impl IntoView + use<> {
    let body = match analysis.map(|a| a.findings.as_slice()) {
        None => view! { <p class="hint">"The server sent no analysis with this result."</p> }.into_any(),
        Some([]) => view! {
            <p class="hint">"Nothing stands out: every attempt succeeded and every phase is within the usual thresholds."</p>
        }
        .into_any(),
        Some(found) => view! { <ol class="finding-list">{list(found)}</ol> }.into_any(),
    };
    view! { <h2 id="findings-title">"Findings"</h2>{body} }
}

/// Every finding of `found` as a list item.
pub fn list(found: &[Finding]) -> impl IntoView + use<> {
    found.iter().map(item).collect_view()
}

/// One finding: its severity and title, evidence and next step.
fn item(finding: &Finding) -> impl IntoView + use<> {
    let severity = severity_name(finding.severity);
    view! {
        <li class=format!("finding severity-{severity}") data-id=finding.id.clone()>
            <p class="finding-title"><span class="severity">{severity}</span>{finding.title.clone()}</p>
            <p class="evidence">{finding.evidence.detail.clone()}</p>
            <p class="next-step"><strong>"Next: "</strong>{finding.next_step.clone()}</p>
        </li>
    }
}
