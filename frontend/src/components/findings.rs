//! The diagnosis: findings most severe first, each with its evidence and next step. Drawn as
//! markup: one element, however many findings.

use h123_shared::ProbeResult;
use h123_shared::analysis::Analysis;
use h123_shared::diagnosis::{Finding, Severity};
use h123_shared::markup::{element, escape};
use leptos::prelude::*;
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
fn markup(analysis: Option<&Analysis>) -> String {
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

/// One finding.
fn item(out: &mut String, finding: &Finding) {
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

/// All findings of a result, from the server's analysis (attached to every finished record).
#[component]
pub fn Findings(
    /// The finished result.
    #[prop(into)]
    result: Signal<ProbeResult>,
) -> impl IntoView {
    view! {
        <section
            class="findings"
            aria-labelledby="findings-title"
            inner_html=move || result.with(|r| markup(r.analysis.as_ref()))
        ></section>
    }
}
