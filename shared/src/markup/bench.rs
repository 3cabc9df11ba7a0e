//! A bench's whole page as markup (`/b/{id}`): drawn by the server into the page itself and as
//! `GET /api/v1/benches/{id}/view`, which the bench page's script polls while the bench runs and
//! fetches when a static host served the page. The script only gives it behaviour (times on the
//! reader's clock, the copy button, the API links on the configured base, the title).

pub mod chart;
pub mod decay;
pub mod progress;
pub mod summary;
pub mod table;

use super::notes::note;
use super::result::status_name;
use super::{element, escape};
use crate::api::{BenchRecord, ProbeStatus};
use crate::bench::BenchResult;
use crate::sweep::SweepResult;

/// What a sweep stopped before its last step says above the steps it finished.
pub const SWEEP_CANCELLED: &str = "This sweep was stopped before its last step (the server stopped or it ran over its time limit): the chart shows the steps it finished.";

/// What a bench stopped before it finished says in place of its figures.
pub const BENCH_CANCELLED: &str = "This bench was stopped before it finished (the server stopped or the bench ran over its time limit), so it has no figures. Start a new one from the home page.";

/// The page's bench: `<div id="bench" data-id data-status data-title>` holding the summary line
/// and actions, then while it runs its progress, once done its network note, comparison table,
/// percentile chart and caveats (or, stopped, why it has no figures); a sweep's decay chart once
/// a step has ended, and once finished how its network was applied and its caveats.
pub fn page(record: &BenchRecord) -> String {
    let mut out = format!(
        r#"<div id="bench" data-id="{}" data-status="{}" data-title="{}">"#,
        escape(&record.id),
        status_name(record.status),
        escape(&summary::title(record))
    );
    out.push_str(&summary::summary(record));
    out.push_str(&summary::actions(&record.id));
    let sweep = record.sweep_result().filter(|s| !s.steps.is_empty());
    match (record.status, &record.result) {
        (ProbeStatus::Running, _) => out.push_str(&progress::progress(
            &record.options,
            &record.progress.clone().unwrap_or_default(),
        )),
        (ProbeStatus::Done, _) if sweep.is_some() => {}
        (ProbeStatus::Cancelled, _) if sweep.is_some() => pending(&mut out, SWEEP_CANCELLED),
        (ProbeStatus::Done, Some(result)) => figures(&mut out, result),
        _ => pending(&mut out, BENCH_CANCELLED),
    }
    if let Some(sweep) = sweep {
        out.push_str(&decay::section(&record.id, &sweep));
        if record.status != ProbeStatus::Running {
            sweep_notes(&mut out, &sweep);
        }
    }
    out.push_str("</div>");
    out
}

/// A finished bench's figures: its network note, table, chart and caveats.
fn figures(out: &mut String, result: &BenchResult) {
    let paths = result
        .runs
        .iter()
        .map(|r| (r.protocol, r.emulated.as_ref()));
    let lines = crate::network::describe(result.options.network.as_ref(), paths);
    out.push_str(&note("Emulated network", &lines).unwrap_or_default());
    out.push_str(&table::table(result));
    out.push_str(&chart::chart(result));
    caveats(out, &crate::bench::caveats(result));
}

/// A finished sweep's notes: how its network was applied, and its caveats.
fn sweep_notes(out: &mut String, sweep: &SweepResult) {
    let lines = crate::sweep::network_lines(sweep);
    out.push_str(&note("Emulated network", &lines).unwrap_or_default());
    caveats(out, &crate::sweep::caveats(sweep));
}

/// What a reader of the figures should keep in mind, a sentence a line.
fn caveats(out: &mut String, notes: &[String]) {
    out.push_str(r#"<section class="caveats" aria-labelledby="caveats-title"><h2 id="caveats-title">Before you conclude</h2><ul>"#);
    for caveat in notes {
        element(out, "li", "", caveat);
    }
    out.push_str("</ul></section>");
}

/// A line saying why figures are missing.
fn pending(out: &mut String, text: &str) {
    element(out, "p", r#" class="pending-note" role="status""#, text);
}

#[cfg(test)]
mod tests;
