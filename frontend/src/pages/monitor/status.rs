//! A monitor's status as a table: a row per protocol and vantage, its last run, and its uptime
//! and p95 per window; above it, the latest slot when its run is under way or was cancelled.

use h123_shared::format::{ms, status as http_status, wall_clock};
use h123_shared::monitor::PointState;
use h123_shared::monitor_status::{LastRun, LatestSlot, MonitorStatus, WINDOWS};
use leptos::prelude::*;

/// The latest slot's line when its run is under way or was cancelled, then the status table, or
/// a line saying no run has finished yet.
pub fn table(status: &MonitorStatus) -> AnyView {
    let latest = status.latest.as_ref().map(latest_slot);
    if status.rows.is_empty() {
        let text = match latest {
            Some(_) => "No run has finished yet.",
            None => "No runs yet.",
        };
        return view! { {latest}<p class="hint">{text}</p> }.into_any();
    }
    let uptime_heads = WINDOWS
        .iter()
        .map(|(name, _)| view! { <th scope="col">{format!("Uptime {name}")}</th> })
        .collect_view();
    let p95_heads = WINDOWS
        .iter()
        .map(|(name, _)| view! { <th scope="col">{format!("p95 {name}")}</th> })
        .collect_view();
    let rows = status
        .rows
        .iter()
        .map(|row| {
            let name = super::chart::line_name(row.protocol, &row.vantage);
            let uptimes = row
                .windows
                .iter()
                .map(|w| view! { <td>{w.uptime_text()}</td> })
                .collect_view();
            let p95s = row
                .windows
                .iter()
                .map(|w| view! { <td>{w.p95_total.map_or("—".to_owned(), ms)}</td> })
                .collect_view();
            view! {
                <tr data-protocol=row.protocol.as_str()>
                    <th scope="row">{name}</th>
                    <td>{last_run(&row.last)}</td>
                    {uptimes}
                    {p95s}
                </tr>
            }
        })
        .collect_view();
    let missed: Vec<String> = status
        .missed
        .iter()
        .map(|m| format!("{} in {}", m.missed, m.window))
        .collect();
    let hint = format!(
        "Up: every attempt answered without an HTTP error. p95 of the total on new connections over the runs that were up. Missed slots: {}.",
        missed.join(", ")
    );
    view! {
        {latest}
        <table class="monitor-status">
            <thead>
                <tr><th scope="col">"Protocol"</th><th scope="col">"Last run"</th>{uptime_heads}{p95_heads}</tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
        <p class="hint">{hint}</p>
    }
    .into_any()
}

/// The latest slot in a line: "running since 2026-12-07 12:01 UTC" (its run under way, neither
/// up nor down), or "cancelled" with the slot and why.
fn latest_slot(latest: &LatestSlot) -> impl IntoView + use<> {
    let (word, text) = match latest.state {
        PointState::Running => (
            "running",
            format!(" since {}", wall_clock(latest.since_unix_ms, 0)),
        ),
        _ => (
            "cancelled",
            format!(
                " the run at {}{}",
                wall_clock(latest.slot_unix_ms, 0),
                latest
                    .detail
                    .as_ref()
                    .map_or(String::new(), |why| format!(": {why}"))
            ),
        ),
    };
    view! {
        <p class="monitor-latest" role="status" data-state=latest.state.as_str()>
            <span class="state muted">{word}</span>{text}
        </p>
    }
}

/// A last run in a cell: its state as a badge, its figure or reason, and a link to it.
fn last_run(last: &LastRun) -> impl IntoView + use<> {
    let (class, word) = match last.state {
        PointState::Ok if last.breached.is_empty() => ("state ok", "up".to_owned()),
        PointState::Ok => ("state warn", "over a threshold".to_owned()),
        PointState::HttpError => (
            "state warn",
            last.status.map_or("HTTP error".to_owned(), http_status),
        ),
        PointState::Failed => ("state danger", "failing".to_owned()),
        PointState::Skipped => ("state danger", "not measured".to_owned()),
        PointState::Missed => ("state muted", "missed".to_owned()),
        PointState::Running => ("state muted", "running".to_owned()),
        PointState::Cancelled => ("state muted", "cancelled".to_owned()),
    };
    let total = last
        .total
        .filter(|_| last.state == PointState::Ok)
        .map(|total| format!(" {}", ms(total)));
    let detail = last
        .detail
        .clone()
        .map(|detail| view! { " "<span class="detail">{detail}</span> });
    let at = format!(" at {}", wall_clock(last.slot_unix_ms, 0));
    let run = last
        .probe_id
        .as_ref()
        .map(|probe| view! { " "<a href=format!("/r/{probe}")>"run"</a> });
    view! { <span class=class>{word}</span>{total}{detail}{at}{run} }
}
