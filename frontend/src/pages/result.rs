//! A probe's result page (`/r/{id}`), drawn whole on the server: into the page itself, and as
//! the probe's live view (`GET /api/v1/probes/{id}/view` and its event stream), which the result
//! page's script (the `h123-result` bundle) swaps in while the probe runs and fetches when a
//! static host served the page. The script only gives it behaviour, finding its parts by the
//! classes, ids and `data-` attributes drawn here. Every string from the record is text or an
//! attribute value in a view, so the view escapes it.

pub mod actions;
mod browser;
mod comparison;
mod facts;
mod findings;
mod matrix;
mod notes;
pub mod picture;
mod streams;
mod summary;
mod vantages;
pub mod verdict;
pub mod waterfall;

pub use summary::title;

use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::browser::BrowserRun;
use h123_shared::live::AttemptKey;
use h123_shared::live::vantages::RunningAt;
use h123_shared::schema::{Micros, Phase, ProbeResult};
use h123_shared::table::comparison_table;
use h123_shared::vantage::VantageRun;
use h123_shared::waterfall::fitted_span;
use leptos::prelude::*;

/// What a running probe at one vantage says in place of its comparison, findings and facts.
const PARTS_PENDING: &str =
    "Comparison, findings and facts appear when every attempt has finished.";

/// What a running probe across vantages says in place of its matrix.
const MATRIX_PENDING: &str = "The matrix across vantages appears when every vantage has finished.";

/// A probe as its page shows it: the record and, while it runs, how far its events got.
pub struct ResultView<'a> {
    /// The record (its status says whether it still runs).
    pub record: &'a ProbeRecord,
    /// The result as far as it is known (the record's own once finished).
    pub shown: &'a ProbeResult,
    /// The record's own attempts still running, with their open phase.
    pub running: &'a [(AttemptKey, Option<Phase>)],
    /// Each vantage's run as far as it is known (none when it runs at the server alone).
    pub runs: &'a [VantageRun],
    /// Per vantage, the attempts still running there.
    pub running_at: &'a RunningAt,
    /// Now, for whether the record still accepts a browser measurement.
    pub now_unix_ms: u64,
}

impl ResultView<'_> {
    /// The page's result: `<div id="result" ...>` (with the probe's id, status and the page's
    /// title in `data-` attributes) and everything in it: the summary, the actions, then at one
    /// vantage the verdict, notes, waterfalls, and the comparison, findings and facts, or across
    /// vantages the matrix and a group per vantage; the owner's browser measurement on the same
    /// axis (or the hidden offer to make one); once finished, the field that compares it with
    /// another result (last, so the keyboard path to the waterfalls stays short).
    pub fn view(&self) -> impl IntoView + use<> {
        let record = self.record;
        let done = record.status != ProbeStatus::Running;
        let span = self.span();
        let body = if self.runs.is_empty() {
            self.one_vantage(done, span).into_any()
        } else {
            self.across_vantages(done, span).into_any()
        };
        let browser = match &record.browser {
            Some(run) => Some(browser::group(run, span).into_any()),
            None => browser::offer(record, self.now_unix_ms).map(IntoAny::into_any),
        };
        view! {
            <div id="result" data-id=record.id.clone() data-status=record.status.as_str() data-title=title(record)>
                {summary::summary(record)}
                {actions::actions(record, done)}
                {body}
                {browser}
                {done.then(compare_with)}
            </div>
        }
    }

    /// The time the one axis of the server's waterfalls (every vantage's) and the browser's rows
    /// must show.
    fn span(&self) -> Micros {
        let server = if self.runs.is_empty() {
            fitted_span([self.shown])
        } else {
            fitted_span(self.runs.iter().filter_map(|r| r.result.as_ref()))
        };
        let browser = self
            .record
            .browser
            .as_ref()
            .map_or(Micros(0), BrowserRun::span);
        server.max(browser)
    }

    /// A probe at one vantage: verdict, notes, waterfalls, then requests at once, comparison,
    /// findings and facts, or while it runs, that they are to come.
    fn one_vantage(&self, done: bool, span: Micros) -> impl IntoView + use<> {
        let result = self.shown;
        let parts = if done {
            let streams = streams::streams(result).map(|inside| {
                view! { <section class="streams" aria-labelledby="streams-title">{inside}</section> }
            });
            view! {
                {streams}
                <section class="comparison" aria-labelledby="comparison-title">
                    {comparison::comparison(&comparison_table(result))}
                </section>
                <section class="findings" aria-labelledby="findings-title">
                    {findings::findings(result.analysis.as_ref())}
                </section>
                <section class="facts-section" aria-labelledby="facts-title">{facts::facts(result)}</section>
            }
            .into_any()
        } else {
            pending(PARTS_PENDING).into_any()
        };
        view! {
            {done.then(|| verdict::verdict(result, None)).flatten()}
            {notes::network(result)}
            {notes::migration(result)}
            {waterfall::section(result, self.running, span, None)}
            {parts}
        }
    }

    /// A probe across vantages: the matrix and findings across them once finished, then a group
    /// per vantage.
    fn across_vantages(&self, done: bool, span: Micros) -> impl IntoView + use<> {
        let matrix = if done {
            matrix::matrix(self.runs, &self.record.options.protocols).into_any()
        } else {
            pending(MATRIX_PENDING).into_any()
        };
        view! {
            {matrix}
            {vantages::groups(self.runs, self.running_at, done, span)}
        }
    }
}

/// "Compare with…" on a finished result: a field for another result's permalink or id (that one
/// is A, before; this one B, after), and the alert where a refused entry says why. The page's
/// script reads and marks it on submit.
fn compare_with() -> impl IntoView + use<> {
    view! {
        <form class="compare-with">
            <label for="compare-with">"Compare with another result"</label>
            <input id="compare-with" type="text" placeholder="https://…/r/… or an id" aria-describedby="compare-with-problem"/>
            <button type="submit">"Compare"</button>
            <span id="compare-with-problem" class="field-problem" role="alert"></span>
        </form>
    }
}

/// What a running probe says of a part that appears once it has finished.
fn pending(text: &'static str) -> impl IntoView + use<> {
    view! { <p class="pending-note" role="status">{text}</p> }
}

#[cfg(test)]
mod tests;
