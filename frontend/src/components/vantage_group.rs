//! A probe across vantages, per vantage: one group each (who it is, why it has no result when it
//! failed, its verdict, its waterfalls per protocol), every waterfall on one time axis.

use crate::components::VerdictPanel;
use crate::components::waterfall::{Legend, PatternDefs, Waterfalls};
use h123_shared::live::vantages::RunningAt;
use h123_shared::vantage::{Vantage, VantageRun};
use h123_shared::{Micros, ProbeResult};
use leptos::prelude::*;

/// Every vantage's group, in the record's order, on the axis common to all of them.
#[component]
pub fn VantageGroups(
    /// The vantage runs as far as they are known (the same vantages all along).
    runs: Memo<Vec<VantageRun>>,
    /// Attempts still running, per vantage.
    running: Memo<RunningAt>,
    /// Whether the probe has finished (verdicts appear then).
    done: Memo<bool>,
    /// The common axis's span (`waterfall::fitted_span` over every vantage's result, and the
    /// browser's measurement when there is one).
    span: Memo<Micros>,
) -> impl IntoView {
    let groups = runs
        .get_untracked()
        .into_iter()
        .map(|run| group(run.vantage, runs, running, span, done))
        .collect_view();
    view! {
        <section class="vantage-groups" aria-labelledby="groups-title">
            <div class="section-head">
                <h2 id="groups-title">"From each vantage, on one time axis"</h2>
                <Legend />
            </div>
            <PatternDefs />
            {groups}
        </section>
    }
}

/// One vantage's group.
fn group(
    vantage: Vantage,
    runs: Memo<Vec<VantageRun>>,
    running: Memo<RunningAt>,
    span: Memo<Micros>,
    done: Memo<bool>,
) -> impl IntoView {
    let name = vantage.name.clone();
    let run = {
        let name = name.clone();
        move |pick: fn(&VantageRun) -> bool| {
            runs.with(|runs| runs.iter().any(|r| r.vantage.name == name && pick(r)))
        }
    };
    let problem = {
        let name = name.clone();
        move || {
            runs.with(|runs| {
                runs.iter()
                    .find(|r| r.vantage.name == name)
                    .and_then(|r| r.problem.clone())
            })
        }
    };
    // A vantage that failed shows its waterfalls only if it measured something first.
    let drawn = Memo::new({
        let run = run.clone();
        move |_| {
            run(|r| {
                r.result.as_ref().is_some_and(|result| {
                    r.problem.is_none() || result.runs.iter().any(|p| !p.attempts.is_empty())
                })
            })
        }
    });
    let failed = move || run(|r| r.problem.is_some());
    // A memo: an event at another vantage leaves this group's waterfalls as they are.
    let result = {
        let name = name.clone();
        Memo::new(move |_| {
            runs.with(|runs| {
                runs.iter()
                    .find(|r| r.vantage.name == name)
                    .and_then(|r| r.result.clone())
            })
            .unwrap_or_else(|| ProbeResult::empty(h123_shared::ProbeOptions::default(), 0, None))
        })
    };
    let mine = {
        let name = name.clone();
        Memo::new(move |_| {
            running.with(|all| {
                all.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, r)| r.clone())
                    .unwrap_or_default()
            })
        })
    };
    let title_id = format!("vantage-title-{name}");
    let tags = vantage.tags.join(", ");
    let (group_name, labelled_by, verdict_name, waterfalls_name) =
        (name.clone(), title_id.clone(), name.clone(), name.clone());
    view! {
        <section class="vantage-group" class:failed=failed data-vantage=group_name aria-labelledby=labelled_by>
            <h2 id=title_id>
                {format!("From {}", vantage.shown())}
                {vantage.label.is_some().then(|| view! { <code class="vantage-name">{name}</code> })}
                <span class="vantage-tags">{tags}</span>
            </h2>
            {move || {
                problem()
                    .map(|problem| {
                        view! {
                            <p class="vantage-problem" role="note">
                                <strong>"No result from this vantage: "</strong>
                                {problem}
                            </p>
                        }
                    })
            }}
            <Show when=move || done.get() && drawn.get()>
                <VerdictPanel result vantage=verdict_name.clone() />
            </Show>
            <Show when=move || drawn.get()>
                <Waterfalls result running=mine span vantage=waterfalls_name.clone() />
            </Show>
        </section>
    }
}
