//! `/b/{id}`: the permalink of a bench. Polls the record while it runs
//! (progress), then shows the comparison table, the latency percentile
//! chart and the caveats; a sweep shows its decay chart, growing step by step,
//! and once finished how the network was applied and its caveats.

use crate::api::{self, Error};
use crate::components::{
    ApiProblem, BenchActions, BenchNetworkNote, BenchProgressView, BenchSummaryLine, BenchTable,
    Caveats, DecayChart, PercentileChart, SweepNetworkNote,
};
use h123_shared::api::{BenchRecord, ProbeStatus};
use h123_shared::bench::BenchProgress;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::time::Duration;

/// How often a running bench is polled.
const POLL: Duration = Duration::from_millis(500);

/// What the page knows about its bench.
#[derive(Clone, Debug, PartialEq)]
enum State {
    Loading,
    Loaded(Box<BenchRecord>),
    Failed(Error),
}

/// Reads the record; while it runs, reads it again after [`POLL`].
fn poll(id: String, state: RwSignal<State>) {
    spawn_local(async move {
        match api::bench(&id).await {
            Ok(record) => {
                let running = record.status == ProbeStatus::Running;
                state.set(State::Loaded(Box::new(record)));
                if running {
                    set_timeout(move || poll(id, state), POLL);
                }
            }
            Err(e) => state.set(State::Failed(e)),
        }
    });
}

/// The bench page.
#[component]
pub fn BenchPage(
    /// The bench's id, from the path.
    id: String,
) -> impl IntoView {
    let state = RwSignal::new(State::Loading);
    poll(id, state);
    // The record without its progress: unchanged while the bench runs, so
    // the summary and actions are not redrawn on every poll.
    let shown = Memo::new(move |_| match state.get() {
        State::Loading => Ok(None),
        State::Loaded(record) => Ok(Some(BenchRecord {
            progress: None,
            ..*record
        })),
        State::Failed(error) => Err(error),
    });
    let progress = Signal::derive(move || {
        state.with(|s| match s {
            State::Loaded(record) => record.progress.clone().unwrap_or_default(),
            _ => Default::default(),
        })
    });
    move || match shown.get() {
        Err(error) => view! { <ApiProblem error bench=true /> }.into_any(),
        Ok(None) => view! {
            <p class="loading" role="status">
                "Loading the bench…"
            </p>
        }
        .into_any(),
        Ok(Some(record)) => view! { <BenchView record progress /> }.into_any(),
    }
}

/// A loaded bench: running with progress, done with its figures, or cancelled.
#[component]
fn BenchView(record: BenchRecord, progress: Signal<BenchProgress>) -> impl IntoView {
    let id = record.id.clone();
    // A sweep's chart, once a step has ended (while it runs, below the progress).
    let decay = record
        .sweep_result()
        .filter(|s| !s.steps.is_empty())
        .map(|sweep| {
            // A finished sweep says how the network was applied and what to keep in mind.
            let notes = (record.status != ProbeStatus::Running).then(|| {
                view! {
                    <SweepNetworkNote sweep=sweep.clone() />
                    <Caveats notes=h123_shared::sweep::caveats(&sweep) />
                }
            });
            view! { <DecayChart id sweep /> {notes} }
        });
    let swept = decay.is_some();
    let body = match (record.status, record.result.clone()) {
        (ProbeStatus::Running, _) => {
            view! { <BenchProgressView options=record.options.clone() progress /> }.into_any()
        }
        (ProbeStatus::Done, _) if swept => ().into_any(),
        (ProbeStatus::Cancelled, _) if swept => view! {
            <p class="pending-note" role="status">
                "This sweep was stopped before its last step (the server stopped or it ran over its time limit): the chart shows the steps it finished."
            </p>
        }
        .into_any(),
        (ProbeStatus::Done, Some(result)) => view! {
            <BenchNetworkNote result=result.clone() />
            <BenchTable result=result.clone() />
            <PercentileChart result=result.clone() />
            <Caveats notes=h123_shared::bench::caveats(&result) />
        }
        .into_any(),
        _ => view! {
            <p class="pending-note" role="status">
                "This bench was stopped before it finished (the server stopped or the bench ran over its time limit), so it has no figures. Start a new one from the home page."
            </p>
        }
        .into_any(),
    };
    view! {
        <BenchSummaryLine record=record.clone() />
        <BenchActions id=record.id.clone() />
        {body}
        {decay}
    }
}
