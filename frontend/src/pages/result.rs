//! `/r/{id}`: the permalink of a probe, filled in live while it runs.

use crate::api::{self, Error, EventStream, StreamMessage};
use crate::components::{
    Actions, ApiProblem, Comparison, Facts, Findings, ProbeSummaryLine, VerdictPanel, Waterfalls,
};
use crate::perf;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::live::{AttemptKey, LiveResult};
use h123_shared::{Phase, ProbeResult};
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;

/// What the page knows about its probe.
#[derive(Clone, Debug, PartialEq)]
enum State {
    Loading,
    Running(ProbeRecord, Box<LiveResult>),
    Finished(ProbeRecord),
    Failed(Error),
}

/// The result page.
#[component]
pub fn ResultPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.with(|p| p.get("id").unwrap_or_default()));
    let state = RwSignal::new(State::Loading);

    Effect::new(move |_| {
        let id = id.get();
        state.set(State::Loading);
        let stream = StoredValue::new_local(None::<EventStream>);
        on_cleanup(move || drop(stream.try_set_value(None)));
        spawn_local(async move {
            let answer = api::probe(&id).await;
            if stream.is_disposed() {
                return; // The page moved on to another id (or away) meanwhile.
            }
            match answer {
                Ok(record) if record.status == ProbeStatus::Running => {
                    let live = Box::new(LiveResult::new(record.result.clone()));
                    state.set(State::Running(record, live));
                    match EventStream::open(&id, move |m| on_stream(state, m)) {
                        Ok(s) => drop(stream.try_set_value(Some(s))),
                        Err(e) => state.set(State::Failed(e)),
                    }
                }
                Ok(record) => {
                    perf::mark_result_then_paint();
                    state.set(State::Finished(record));
                }
                Err(e) => state.set(State::Failed(e)),
            }
        });
    });

    let record = Memo::new(move |_| match state.get() {
        State::Running(r, _) | State::Finished(r) => Some(r),
        State::Loading | State::Failed(_) => None,
    });
    let shown = Memo::new(move |_| match state.get() {
        State::Running(_, live) => Some(live.snapshot()),
        State::Finished(r) => Some(r.result),
        State::Loading | State::Failed(_) => None,
    });
    let running = Memo::new(move |_| match state.get() {
        State::Running(_, live) => live.running(),
        _ => Vec::new(),
    });

    move || match state.get() {
        State::Failed(error) => view! { <ApiProblem error /> }.into_any(),
        State::Loading => view! {
            <p class="loading" role="status">
                "Loading the result…"
            </p>
        }
        .into_any(),
        State::Running(..) | State::Finished(_) => view! {
            <ResultView record shown running />
        }
        .into_any(),
    }
}

/// Applies one message of the progress stream to the page state.
fn on_stream(state: RwSignal<State>, message: StreamMessage) {
    match message {
        StreamMessage::Event(event) => state.update(|s| {
            if let State::Running(_, live) = s {
                live.apply(event);
            }
        }),
        StreamMessage::Done(record) => {
            perf::mark_result_then_paint();
            state.set(State::Finished(*record));
        }
        StreamMessage::Lost => {
            // Whatever the stream missed, the stored record has.
            let id = state.with_untracked(|s| match s {
                State::Running(r, _) => Some(r.id.clone()),
                _ => None,
            });
            if let Some(id) = id {
                spawn_local(async move {
                    match api::probe(&id).await {
                        Ok(record) => state.set(State::Finished(record)),
                        Err(e) => state.set(State::Failed(e)),
                    }
                });
            }
        }
    }
}

/// The result, live or final: summary, actions, waterfalls, comparison, findings, facts.
#[component]
fn ResultView(
    record: Memo<Option<ProbeRecord>>,
    shown: Memo<Option<ProbeResult>>,
    running: Memo<Vec<(AttemptKey, Option<Phase>)>>,
) -> impl IntoView {
    let done = Memo::new(move |_| {
        record.with(|r| r.as_ref().is_some_and(|r| r.status != ProbeStatus::Running))
    });
    let result = Signal::derive(move || shown.get().unwrap_or_else(empty_result));
    view! {
        {move || record.get().map(|record| view! { <ProbeSummaryLine record /> })}
        {move || record.get().map(|record| view! { <Actions record done /> })}
        <Show when=move || done.get()>
            <VerdictPanel result />
        </Show>
        <Waterfalls result running />
        <Show
            when=move || done.get()
            fallback=|| {
                view! {
                    <p class="pending-note" role="status">
                        "Comparison, findings and facts appear when every attempt has finished."
                    </p>
                }
            }
        >
            <Comparison result />
            <Findings result />
            <Facts result />
        </Show>
    }
}

/// A result with no runs, shown for an instant before the first one arrives.
fn empty_result() -> ProbeResult {
    ProbeResult::empty(h123_shared::ProbeOptions::default(), 0, None)
}
