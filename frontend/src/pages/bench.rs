//! A bench's page (`/b/{id}`), drawn whole on the server, into the page itself and as
//! `GET /api/v1/benches/{id}/view`, which its island [`BenchFollow`] polls while the bench runs
//! and the islands bundle draws when a static host served the page (`islands::draw_remote`). Its
//! islands give it behaviour: times on the reader's clock, the copy button. Every string from the
//! record is text or an attribute value in a view, so the view escapes it.

mod chart;
pub mod decay;
mod progress;
mod summary;
mod table;

use super::parts::note;
use crate::islands::BenchFollow;
use h123_shared::api::{BenchRecord, ProbeStatus};
use h123_shared::bench::BenchResult;
use h123_shared::bench::words::{BENCH_CANCELLED, SWEEP_CANCELLED, title};
use h123_shared::sweep::SweepResult;
use leptos::prelude::*;

/// The page's bench: `<div id="bench" data-id data-status data-title>` holding the summary line
/// and actions, then while it runs its progress, once done its network note, comparison table,
/// percentile chart and caveats (or, stopped, why it has no figures); a sweep's decay chart once
/// a step has ended, and once finished how its network was applied and its caveats.
pub fn bench_page(record: &BenchRecord) -> impl IntoView + use<> {
    let sweep = record.sweep_result().filter(|s| !s.steps.is_empty());
    let body = match (record.status, &record.result) {
        (ProbeStatus::Running, _) => progress::progress(
            &record.options,
            &record.progress.clone().unwrap_or_default(),
        )
        .into_any(),
        (ProbeStatus::Done, _) if sweep.is_some() => ().into_any(),
        (ProbeStatus::Cancelled, _) if sweep.is_some() => pending(SWEEP_CANCELLED).into_any(),
        (ProbeStatus::Done, Some(result)) => figures(result).into_any(),
        _ => pending(BENCH_CANCELLED).into_any(),
    };
    let running = record.status == ProbeStatus::Running;
    let follow = running.then(|| view! { <BenchFollow/> });
    let sweep = sweep.map(|sweep| {
        let notes = (!running).then(|| sweep_notes(&sweep));
        view! { {decay::section(&record.id, &sweep).into_any()}{notes} }
    });
    view! {
        <div id="bench" data-id=record.id.clone() data-status=record.status.as_str() data-title=title(record)>
            {summary::summary(record)}
            {summary::actions(&record.id)}
            {body}
            {sweep}
            {follow}
        </div>
    }
}

/// A finished bench's figures: its network note, table, chart and caveats.
fn figures(result: &BenchResult) -> impl IntoView + use<> {
    let paths = result
        .runs
        .iter()
        .map(|r| (r.protocol, r.emulated.as_ref()));
    let lines = h123_shared::network::describe(result.options.network.as_ref(), paths);
    view! {
        {note("Emulated network", lines)}
        {table::table(result).into_any()}
        {chart::chart(result).into_any()}
        {caveats(h123_shared::bench::caveats(result))}
    }
}

/// A finished sweep's notes: how its network was applied, and its caveats.
fn sweep_notes(sweep: &SweepResult) -> impl IntoView + use<> {
    let lines = h123_shared::sweep::network_lines(sweep);
    view! {
        {note("Emulated network", lines)}
        {caveats(h123_shared::sweep::caveats(sweep))}
    }
}

/// What a reader of the figures should keep in mind, a sentence a line.
fn caveats(notes: Vec<String>) -> impl IntoView + use<> {
    let items = notes
        .into_iter()
        .map(|caveat| view! { <li>{caveat}</li> })
        .collect_view();
    view! {
        <section class="caveats" aria-labelledby="caveats-title">
            <h2 id="caveats-title">"Before you conclude"</h2>
            <ul>{items}</ul>
        </section>
    }
}

/// A line saying why figures are missing.
fn pending(text: &'static str) -> impl IntoView + use<> {
    view! { <p class="pending-note" role="status">{text}</p> }
}

#[cfg(test)]
mod tests;
