//! A probe across vantages, per vantage: one group each (who it is, why it has no result when it
//! failed, its verdict, its waterfalls per protocol), every waterfall on one time axis.

use super::{verdict, waterfall};
use h123_shared::live::AttemptKey;
use h123_shared::live::vantages::RunningAt;
use h123_shared::vantage::VantageRun;
use h123_shared::{Micros, Phase};
use leptos::prelude::*;

/// Every vantage's group, in the order of `runs` (as far as they are known), on the axis showing
/// `span` (`fitted_span` over every vantage's result, and the browser's measurement when there
/// is one), with the attempts `running_at` each vantage live; verdicts once `done`.
pub fn groups(
    runs: &[VantageRun],
    running_at: &RunningAt,
    done: bool,
    span: Micros,
) -> impl IntoView + use<> {
    let groups = runs
        .iter()
        .map(|run| {
            let running = running_at
                .iter()
                .find(|(name, _)| *name == run.vantage.name)
                .map_or(&[][..], |(_, running)| running.as_slice());
            group(run, running, done, span)
        })
        .collect_view();
    view! {
        <section class="vantage-groups" aria-labelledby="groups-title">
            {waterfall::head("groups-title", "From each vantage, on one time axis".to_owned())}
            {groups}
        </section>
    }
}

/// One vantage's group: a vantage that failed shows its waterfalls only if it measured
/// something first.
fn group(
    run: &VantageRun,
    running: &[(AttemptKey, Option<Phase>)],
    done: bool,
    span: Micros,
) -> impl IntoView + use<> {
    let vantage = &run.vantage;
    let name = vantage.name.clone();
    let class = if run.problem.is_some() {
        "vantage-group failed"
    } else {
        "vantage-group"
    };
    let code = vantage
        .label
        .is_some()
        .then(|| view! { <code class="vantage-name">{vantage.name.clone()}</code> });
    let problem = run.problem.clone().map(|problem| {
        view! {
            <p class="vantage-problem" role="note"><strong>"No result from this vantage: "</strong>{problem}</p>
        }
    });
    let drawn = run.result.as_ref().filter(|result| {
        run.problem.is_none() || result.runs.iter().any(|p| !p.attempts.is_empty())
    });
    let drawn = drawn.map(|result| {
        let verdict = done
            .then(|| verdict::verdict(result, Some(&vantage.name)))
            .flatten();
        view! {
            {verdict}
            {waterfall::section(result, running, span, Some(&vantage.name))}
        }
    });
    view! {
        <section class=class data-vantage=name.clone() aria-labelledby=format!("vantage-title-{name}")>
            <h2 id=format!("vantage-title-{name}")>
                {format!("From {}", vantage.shown())}
                {code}
                <span class="vantage-tags">{vantage.tags.join(", ")}</span>
            </h2>
            {problem}
            {drawn}
        </section>
    }
}
