//! A probe's result page as markup: what `/r/{id}` shows, drawn on the server (into the page
//! before any script runs, and as the probe's live view) and only given behaviour in the browser.

use super::comparison::comparison;
use super::facts::facts;
use super::findings::findings;
use super::streams::streams;
use super::waterfall;
use super::{
    actions, browser, compare_with, element, escape, matrix, notes, summary, vantages, verdict,
};
use crate::api::{ProbeRecord, ProbeStatus};
use crate::browser::BrowserRun;
use crate::live::AttemptKey;
use crate::live::vantages::RunningAt;
use crate::schema::{Micros, Phase, ProbeResult};
use crate::table::comparison_table;
use crate::vantage::VantageRun;
use crate::waterfall::fitted_span;
use std::fmt::Write as _;

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
    pub fn markup(&self) -> String {
        let record = self.record;
        let done = record.status != ProbeStatus::Running;
        let span = self.span();
        let mut out = format!(
            r#"<div id="result" data-id="{}" data-status="{}" data-title="{}">"#,
            escape(&record.id),
            record.status.as_str(),
            escape(&summary::title(record))
        );
        out.push_str(&summary::summary(record));
        out.push_str(&actions::actions(record, done));
        if self.runs.is_empty() {
            self.one_vantage(&mut out, done, span);
        } else {
            self.across_vantages(&mut out, done, span);
        }
        let browser = match &record.browser {
            Some(run) => Some(browser::group(run, span)),
            None => browser::offer(record, self.now_unix_ms),
        };
        out.push_str(&browser.unwrap_or_default());
        if done {
            out.push_str(compare_with::FORM);
        }
        out.push_str("</div>");
        out
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
    fn one_vantage(&self, out: &mut String, done: bool, span: Micros) {
        let result = self.shown;
        if done {
            out.push_str(&verdict::verdict(result, None).unwrap_or_default());
        }
        out.push_str(&notes::network(result).unwrap_or_default());
        out.push_str(&notes::migration(result).unwrap_or_default());
        out.push_str(&waterfall::section(result, self.running, span, None));
        if !done {
            pending(out, PARTS_PENDING);
            return;
        }
        if let Some(inside) = streams(result) {
            section(out, "streams", "streams-title", &inside);
        }
        let table = comparison(&comparison_table(result));
        section(out, "comparison", "comparison-title", &table);
        let found = findings(result.analysis.as_ref());
        section(out, "findings", "findings-title", &found);
        section(out, "facts-section", "facts-title", &facts(result));
    }

    /// A probe across vantages: the matrix and findings across them once finished, then a group
    /// per vantage.
    fn across_vantages(&self, out: &mut String, done: bool, span: Micros) {
        if done {
            out.push_str(&matrix::matrix(self.runs, &self.record.options.protocols));
        } else {
            pending(out, MATRIX_PENDING);
        }
        out.push_str(&vantages::groups(self.runs, self.running_at, done, span));
    }
}

/// A section of class `class` headed by the element `labelled_by`, holding `inside`.
fn section(out: &mut String, class: &str, labelled_by: &str, inside: &str) {
    let _ = write!(
        out,
        r#"<section class="{class}" aria-labelledby="{labelled_by}">{inside}</section>"#
    );
}

/// What a running probe says of a part that appears once it has finished.
fn pending(out: &mut String, text: &str) {
    element(out, "p", r#" class="pending-note" role="status""#, text);
}

#[cfg(test)]
mod tests;
