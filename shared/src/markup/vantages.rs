//! A probe across vantages as markup, per vantage: one group each (who it is, why it has no
//! result when it failed, its verdict, its waterfalls per protocol), every waterfall on one time
//! axis.

use super::{element, escape, verdict, waterfall};
use crate::live::AttemptKey;
use crate::live::vantages::RunningAt;
use crate::vantage::VantageRun;
use crate::{Micros, Phase};
use std::fmt::Write as _;

/// Every vantage's group, in the order of `runs` (as far as they are known), on the axis showing
/// `span` (`waterfall::fitted_span` over every vantage's result, and the browser's measurement
/// when there is one), with the attempts `running_at` each vantage live; verdicts once `done`.
pub fn groups(runs: &[VantageRun], running_at: &RunningAt, done: bool, span: Micros) -> String {
    let mut out =
        String::from(r#"<section class="vantage-groups" aria-labelledby="groups-title">"#);
    waterfall::head(
        &mut out,
        "groups-title",
        "From each vantage, on one time axis",
    );
    for run in runs {
        let running = running_at
            .iter()
            .find(|(name, _)| *name == run.vantage.name)
            .map_or(&[][..], |(_, running)| running.as_slice());
        group(&mut out, run, running, done, span);
    }
    out.push_str("</section>");
    out
}

/// One vantage's group: a vantage that failed shows its waterfalls only if it measured
/// something first.
fn group(
    out: &mut String,
    run: &VantageRun,
    running: &[(AttemptKey, Option<Phase>)],
    done: bool,
    span: Micros,
) {
    let vantage = &run.vantage;
    let name = escape(&vantage.name);
    out.push_str(r#"<section class="vantage-group"#);
    if run.problem.is_some() {
        out.push_str(" failed");
    }
    let _ = write!(
        out,
        r#"" data-vantage="{name}" aria-labelledby="vantage-title-{name}"><h2 id="vantage-title-{name}">"#
    );
    out.push_str(&escape(&format!("From {}", vantage.shown())));
    if vantage.label.is_some() {
        element(out, "code", r#" class="vantage-name""#, &vantage.name);
    }
    element(
        out,
        "span",
        r#" class="vantage-tags""#,
        &vantage.tags.join(", "),
    );
    out.push_str("</h2>");
    if let Some(problem) = &run.problem {
        let _ = write!(
            out,
            r#"<p class="vantage-problem" role="note"><strong>No result from this vantage: </strong>{}</p>"#,
            escape(problem)
        );
    }
    let drawn = run.result.as_ref().filter(|result| {
        run.problem.is_none() || result.runs.iter().any(|p| !p.attempts.is_empty())
    });
    if let Some(result) = drawn {
        if done {
            out.push_str(&verdict::verdict(result, Some(&vantage.name)).unwrap_or_default());
        }
        out.push_str(&waterfall::section(
            result,
            running,
            span,
            Some(&vantage.name),
        ));
    }
    out.push_str("</section>");
}
