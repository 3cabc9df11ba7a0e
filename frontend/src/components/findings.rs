//! The diagnosis: findings most severe first, each with its evidence and next step.

use h123_shared::ProbeResult;
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

/// One finding.
#[component]
fn FindingItem(finding: Finding) -> impl IntoView {
    let severity = severity_name(finding.severity);
    view! {
        <li class=format!("finding severity-{severity}") data-id=finding.id>
            <p class="finding-title">
                <span class="severity">{severity}</span>
                {finding.title}
            </p>
            <p class="evidence">{finding.evidence.detail}</p>
            <p class="next-step">
                <strong>"Next: "</strong>
                {finding.next_step}
            </p>
        </li>
    }
}

/// All findings of a result, from the server's analysis (attached to every finished record).
#[component]
pub fn Findings(
    /// The finished result.
    #[prop(into)]
    result: Signal<ProbeResult>,
) -> impl IntoView {
    let findings =
        Memo::new(move |_| result.with(|r| r.analysis.as_ref().map(|a| a.findings.clone())));
    view! {
        <section class="findings" aria-labelledby="findings-title">
            <h2 id="findings-title">"Findings"</h2>
            {move || {
                let Some(findings) = findings.get() else {
                    return view! { <p class="hint">"The server sent no analysis with this result."</p> }
                        .into_any();
                };
                if findings.is_empty() {
                    view! { <p class="hint">"Nothing stands out: every attempt succeeded and every phase is within the usual thresholds."</p> }
                        .into_any()
                } else {
                    view! {
                        <ol class="finding-list">
                            {findings
                                .into_iter()
                                .map(|finding| view! { <FindingItem finding /> })
                                .collect_view()}
                        </ol>
                    }
                        .into_any()
                }
            }}
        </section>
    }
}
