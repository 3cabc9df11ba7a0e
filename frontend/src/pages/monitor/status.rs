//! A monitor's status as a table: a row per protocol and vantage, its last run, and its uptime
//! and p95 per window.

use h123_shared::format::{ms, status as http_status, wall_clock};
use h123_shared::monitor::PointState;
use h123_shared::monitor_status::{LastRun, MonitorStatus, WINDOWS};
use leptos::prelude::*;

/// The status table, or a line saying there are no runs yet.
pub fn table(status: &MonitorStatus) -> AnyView {
    if status.rows.is_empty() {
        return view! { <p class="hint">"No runs yet."</p> }.into_any();
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
