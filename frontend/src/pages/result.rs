//! `/r/{id}`: the permalink of a probe, filled in live while it runs; a probe across vantages shows
//! its vantage x protocol matrix, then a group per vantage, each event landing in its vantage's group.

use crate::api::{self, Error, EventStream, StreamMessage};
use crate::components::{
    Actions, ApiProblem, BrowserVantage, CompareWith, Comparison, Facts, Findings, MigrationNote,
    NetworkNote, ProbeSummaryLine, StreamsChart, VantageGroups, VantageMatrix, VerdictPanel,
    Waterfalls,
};
use crate::perf;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::browser::BrowserRun;
use h123_shared::live::vantages::{LiveVantages, RunningAt};
use h123_shared::live::{AttemptKey, LiveResult};
use h123_shared::vantage::VantageRun;
use h123_shared::waterfall::fitted_span;
use h123_shared::{Micros, Phase, ProbeResult};
use leptos::prelude::*;
use leptos::task::spawn_local;

/// What the page knows about its probe.
#[derive(Clone, Debug, PartialEq)]
enum State {
    Loading,
    Running(ProbeRecord, Box<Live>),
    Finished(ProbeRecord),
    Failed(Error),
}

/// A running probe's results as far as its events go: the record's own, and each vantage's.
#[derive(Clone, Debug, PartialEq)]
struct Live {
    own: LiveResult,
    vantages: LiveVantages,
}

impl Live {
    fn new(record: &ProbeRecord) -> Box<Live> {
        Box::new(Live {
            own: LiveResult::new(record.result.clone()),
            vantages: LiveVantages::new(record),
        })
    }
}

/// The result page.
#[component]
pub fn ResultPage(
    /// The probe's id, from the path.
    id: String,
) -> impl IntoView {
    let state = RwSignal::new(State::Loading);
    // The live events while the probe runs; closed when the page goes.
    let stream = StoredValue::new_local(None::<EventStream>);
    on_cleanup(move || drop(stream.try_set_value(None)));
    spawn_local(async move {
        match api::probe(&id).await {
            Ok(record) if record.status == ProbeStatus::Running => {
                let live = Live::new(&record);
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

    let record = Memo::new(move |_| {
        state.with(|s| match s {
            State::Running(r, _) | State::Finished(r) => Some(r.clone()),
            State::Loading | State::Failed(_) => None,
        })
    });
    let shown = Memo::new(move |_| {
        state.with(|s| match s {
            State::Running(_, live) => Some(live.own.snapshot()),
            State::Finished(r) => Some(r.result.clone()),
            State::Loading | State::Failed(_) => None,
        })
    });
    let running = Memo::new(move |_| {
        state.with(|s| match s {
            State::Running(_, live) => live.own.running(),
            _ => Vec::new(),
        })
    });
    let runs = Memo::new(move |_| {
        state.with(|s| match s {
            State::Running(_, live) => live.vantages.runs(),
            State::Finished(r) => r.vantages.clone(),
            State::Loading | State::Failed(_) => Vec::new(),
        })
    });
    let running_at = Memo::new(move |_| {
        state.with(|s| match s {
            State::Running(_, live) => live.vantages.running(),
            _ => Vec::new(),
        })
    });

    // The owner's browser measurement arrived: the record now holds it.
    let stored = Callback::new(move |record| state.set(State::Finished(record)));
    // The page is built once per stage; events only update the memos above, never rebuild it.
    let stage = Memo::new(move |_| {
        state.with(|s| match s {
            State::Loading => Stage::Loading,
            State::Failed(error) => Stage::Failed(error.clone()),
            State::Running(..) | State::Finished(_) => Stage::Shown,
        })
    });
    move || match stage.get() {
        Stage::Failed(error) => view! { <ApiProblem error /> }.into_any(),
        Stage::Loading => view! {
            <p class="loading" role="status">
                "Loading the result…"
            </p>
        }
        .into_any(),
        Stage::Shown => view! {
            <ResultView record shown running runs running_at stored />
        }
        .into_any(),
    }
}

/// What the page shows: its parts change with the state, the stage only with a new id or an error.
#[derive(Clone, Debug, PartialEq)]
enum Stage {
    Loading,
    Failed(Error),
    Shown,
}

/// Applies one message of the progress stream to the page state.
fn on_stream(state: RwSignal<State>, message: StreamMessage) {
    match message {
        StreamMessage::Event(vantage, event) => state.update(|s| {
            if let State::Running(_, live) = s
                && let Some(event) = live.vantages.apply(vantage.as_deref(), event)
            {
                live.own.apply(event);
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

/// The result, live or final: summary, actions, then either (at one vantage) verdict, waterfalls,
/// comparison, findings and facts, or (across vantages) the matrix and a group per vantage; the
/// owner's browser measurement on the same axis (or the offer to make one); once finished, the
/// field that compares it with another result (last, so the keyboard path to the waterfalls
/// stays short).
#[component]
fn ResultView(
    record: Memo<Option<ProbeRecord>>,
    shown: Memo<Option<ProbeResult>>,
    running: Memo<Vec<(AttemptKey, Option<Phase>)>>,
    runs: Memo<Vec<VantageRun>>,
    running_at: Memo<RunningAt>,
    stored: Callback<ProbeRecord>,
) -> impl IntoView {
    let done = Memo::new(move |_| {
        record.with(|r| r.as_ref().is_some_and(|r| r.status != ProbeStatus::Running))
    });
    let multi = Memo::new(move |_| runs.with(|r| !r.is_empty()));
    let result = Signal::derive(move || shown.get().unwrap_or_else(empty_result));
    // One axis for the server's waterfalls (every vantage's) and the browser's rows.
    let span = Memo::new(move |_| {
        let server = if multi.get() {
            runs.with(|runs| fitted_span(runs.iter().filter_map(|r| r.result.as_ref())))
        } else {
            result.with(|r| fitted_span([r]))
        };
        let browser = record.with(|r| {
            r.as_ref()
                .and_then(|r| r.browser.as_ref())
                .map_or(Micros(0), BrowserRun::span)
        });
        server.max(browser)
    });
    view! {
        {move || record.get().map(|record| view! { <ProbeSummaryLine record /> })}
        {move || record.get().map(|record| view! { <Actions record done /> })}
        <Show
            when=move || multi.get()
            fallback=move || view! { <OneVantage result running done span /> }
        >
            <AcrossVantages record runs running_at done span />
        </Show>
        <BrowserVantage record span stored />
        {move || {
            record
                .get()
                .filter(|_| done.get())
                .map(|record| view! { <CompareWith id=record.id /> })
        }}
    }
}

/// A probe across vantages: the matrix and findings across them once finished, then a group per vantage.
#[component]
fn AcrossVantages(
    record: Memo<Option<ProbeRecord>>,
    runs: Memo<Vec<VantageRun>>,
    running_at: Memo<RunningAt>,
    done: Memo<bool>,
    span: Memo<Micros>,
) -> impl IntoView {
    let matrix = move || {
        if !done.get() {
            return view! {
                <p class="pending-note" role="status">
                    "The matrix across vantages appears when every vantage has finished."
                </p>
            }
            .into_any();
        }
        let protocols = record.with_untracked(|r| {
            r.as_ref()
                .map(|r| r.options.protocols.clone())
                .unwrap_or_default()
        });
        view! { <VantageMatrix runs=runs.get_untracked() protocols /> }.into_any()
    };
    view! {
        {matrix}
        <VantageGroups runs running=running_at done span />
    }
}

/// A probe at one vantage: verdict, waterfalls, comparison, findings, facts.
#[component]
fn OneVantage(
    result: Signal<ProbeResult>,
    running: Memo<Vec<(AttemptKey, Option<Phase>)>>,
    done: Memo<bool>,
    span: Memo<Micros>,
) -> impl IntoView {
    view! {
        <Show when=move || done.get()>
            <VerdictPanel result />
        </Show>
        <NetworkNote result />
        <MigrationNote result />
        <Waterfalls result running span />
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
            <StreamsChart result />
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
