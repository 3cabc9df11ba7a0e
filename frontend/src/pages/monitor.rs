//! A monitor's pages, drawn whole on the server (no island: nothing on them acts in the
//! browser): the monitor page (facts, status, window verdict, a chart per metric, deliveries,
//! badges), the status page (status and badges), and the page saying what went wrong. Every
//! string from the monitor or its runs is text or an attribute value in a view, so the view
//! escapes it.

pub mod badge;
mod chart;
mod status;

use h123_shared::format::wall_clock;
use h123_shared::monitor::{DeliveryLog, Monitor, Series, SeriesMetric, every_text};
use h123_shared::monitor_status::MonitorStatus;
use h123_shared::slo::{Gate, Statistic};
use h123_shared::{Micros, Visibility};
use leptos::prelude::*;

/// The windows a monitor page can show, by name and length.
pub const RANGES: [(&str, u64); 5] = [
    ("1h", 3_600_000),
    ("6h", 6 * 3_600_000),
    ("24h", 24 * 3_600_000),
    ("7d", 7 * 24 * 3_600_000),
    ("30d", 30 * 24 * 3_600_000),
];

/// What the monitor page shows.
pub struct MonitorPageData {
    /// The monitor, redacted.
    pub monitor: Monitor,
    /// The conditions firing now.
    pub firing: Vec<String>,
    /// Its status.
    pub status: MonitorStatus,
    /// The window's name (one of [`RANGES`]).
    pub range: &'static str,
    /// A series per metric over the window.
    pub series: Vec<Series>,
    /// The latest delivery tries, newest first.
    pub deliveries: Vec<DeliveryLog>,
}

/// The monitor page's body.
pub fn monitor_page(page: MonitorPageData) -> impl IntoView {
    let MonitorPageData {
        monitor,
        firing,
        status,
        range,
        series,
        deliveries,
    } = page;
    let firing = (!firing.is_empty()).then(|| {
        view! {
            <p class="monitor-firing" role="status"><strong>"Alerting:"</strong>" "{firing.join(", ")}</p>
        }
    });
    let verdict = series
        .first()
        .and_then(|s| s.verdict.as_ref())
        .map(|verdict| {
            let sentence = format!("Over the last {range}: {}", verdict.sentence);
            view! { <p class="monitor-verdict">{sentence}</p> }
        });
    let gates = monitor.spec.gates();
    let charts = series
        .iter()
        .map(|series| chart::section(series, threshold(&gates, series.metric)))
        .collect_view();
    let notifies = !monitor.spec.alerts.is_empty();
    view! {
        <article class="monitor" aria-labelledby="monitor-title" data-monitor=monitor.id.clone()>
            {heading("Monitor", &monitor)}
            {facts(&monitor)}
            {firing}
            {now(&status)}
            {ranges(&monitor.id, range)}
            {verdict}
            {charts}
            {deliveries_section(&deliveries, notifies)}
            {badges(&monitor)}
        </article>
    }
}

/// The status page's body: where each protocol stands, its uptime and p95, and the badges.
pub fn status_page(monitor: &Monitor, status: &MonitorStatus) -> impl IntoView + use<> {
    let history = format!("/m/{}", monitor.id);
    view! {
        <article class="monitor" aria-labelledby="monitor-title" data-monitor=monitor.id.clone()>
            {heading("Status", monitor)}
            {facts(monitor)}
            {now(status)}
            {badges(monitor)}
            <p><a href=history>"Charts and history"</a></p>
        </article>
    }
}

/// A page saying what went wrong (an unknown monitor, a busy server, a bad window).
pub fn problem(title: String, text: String) -> impl IntoView {
    view! {
        <section class="monitor-problem" aria-labelledby="problem-title">
            <h1 id="problem-title">{title}</h1>
            <p>{text}</p>
            <p><a href="/">"Measure a URL"</a></p>
        </section>
    }
}

/// The page's heading: `Monitor: URL`.
fn heading(kind: &'static str, m: &Monitor) -> impl IntoView + use<> {
    let url = m.spec.options.url.clone();
    view! { <h1 id="monitor-title">{kind}": "<span class="monitor-url">{url}</span></h1> }
}

/// Interval, protocols, vantages, state and thresholds in a line.
fn facts(m: &Monitor) -> impl IntoView + use<> {
    let options = &m.spec.options;
    let protocols: Vec<&str> = options.protocols.iter().map(|p| p.http_version()).collect();
    let mut facts = vec![
        format!("every {}", every_text(m.spec.every_ms)),
        protocols.join(", "),
    ];
    if !options.vantages.is_empty() {
        facts.push(format!("from {}", options.vantages.join(", ")));
    }
    facts.push(match m.paused {
        true => "paused".to_owned(),
        false => format!("next run {}", wall_clock(m.next_slot_unix_ms, 0)),
    });
    if !m.spec.thresholds.is_empty() {
        facts.push(format!("thresholds {}", m.spec.thresholds.join(", ")));
    }
    if options.visibility == Visibility::Public {
        facts.push("public".to_owned());
    }
    view! { <p class="monitor-facts">{facts.join(" · ")}</p> }
}

/// The "Now" section: the status table under its heading.
fn now(status: &MonitorStatus) -> impl IntoView + use<> {
    view! {
        <section aria-labelledby="now-title">
            <h2 id="now-title">"Now"</h2>
            {status::table(status)}
        </section>
    }
}

/// The window links, the shown one marked current.
fn ranges(id: &str, shown: &str) -> impl IntoView + use<> {
    let links = RANGES
        .iter()
        .map(|(name, _)| {
            let href = format!("/m/{id}?range={name}");
            let current = (*name == shown).then_some("page");
            view! { " "<a href=href aria-current=current>{*name}</a> }
        })
        .collect_view();
    view! {
        <nav class="monitor-ranges" aria-label="Window"><span>"Window:"</span>{links}</nav>
    }
}

/// The lowest threshold on `metric`'s median for every protocol, when there is one.
fn threshold(gates: &[Gate], metric: SeriesMetric) -> Option<Micros> {
    gates
        .iter()
        .filter(|g| g.protocol.is_none() && g.statistic == Statistic::Median)
        .filter(|g| g.metric.as_str() == metric.as_str())
        .map(|g| g.threshold_us)
        .min()
}

/// The latest delivery tries as a table.
fn deliveries_section(log: &[DeliveryLog], notifies: bool) -> impl IntoView + use<> {
    let body = if log.is_empty() {
        let text = match notifies {
            true => "Nothing sent yet: no condition has started or stopped.",
            false => "This monitor notifies nobody (it has no webhook or Alertmanager).",
        };
        view! { <p class="hint">{text}</p> }.into_any()
    } else {
        let rows = log
            .iter()
            .map(|d| {
                let class = match d.delivered {
                    true => "state ok",
                    false => "state danger",
                };
                view! {
                    <tr>
                        <td>{wall_clock(d.at_unix_ms, 0)}</td>
                        <td>{d.target.clone()}</td>
                        <td>{format!("{} {}", d.key, d.status)}</td>
                        <td>{d.attempt}</td>
                        <td><span class=class>{d.outcome.clone()}</span></td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <table class="monitor-deliveries">
                <thead>
                    <tr>
                        <th scope="col">"When (UTC)"</th>
                        <th scope="col">"To"</th>
                        <th scope="col">"Condition"</th>
                        <th scope="col">"Try"</th>
                        <th scope="col">"Answer"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <section aria-labelledby="deliveries-title">
            <h2 id="deliveries-title">"Alert deliveries"</h2>
            {body}
        </section>
    }
}

/// Each protocol's badge, and the Markdown that shows it elsewhere.
fn badges(m: &Monitor) -> impl IntoView + use<> {
    let items = m
        .spec
        .options
        .protocols
        .iter()
        .map(|protocol| {
            let path = format!("/badge/{}/{}.svg", m.id, protocol.as_str());
            let version = protocol.http_version();
            let alt = format!("{version}: the last run's total");
            let markdown = format!("![{version}]({path})");
            view! { <li><img src=path alt=alt height="20"/>" "<code>{markdown}</code></li> }
        })
        .collect_view();
    view! {
        <section aria-labelledby="badges-title">
            <h2 id="badges-title">"Badges"</h2>
            <ul class="monitor-badges">{items}</ul>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::render;
    use h123_shared::monitor::MonitorRequest;

    pub(super) fn monitor(url: &str) -> Monitor {
        let request: MonitorRequest = serde_json::from_value(serde_json::json!({
            "url": url, "protocols": ["h2", "h3"], "every": "1m",
            "thresholds": {"total": "100ms"}, "visibility": "public"
        }))
        .unwrap();
        Monitor {
            id: "mon123abc".into(),
            created_at_unix_ms: 0,
            spec: request.spec(60_000).unwrap(),
            paused: false,
            next_slot_unix_ms: 60_000,
        }
    }

    #[test]
    fn the_status_page_escapes_the_url_and_links_the_history_and_badges() {
        let m = monitor("https://x.test/\"><script>alert(1)</script>");
        let status = MonitorStatus {
            at_unix_ms: 0,
            rows: Vec::new(),
            missed: Vec::new(),
            latest: None,
        };
        let html = render(|| status_page(&m, &status));
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("No runs yet."), "{html}");
        assert!(html.contains(r#"<a href="/m/mon123abc">"#), "{html}");
        assert!(html.contains(r#"src="/badge/mon123abc/h3.svg""#), "{html}");
        assert!(html.contains("every 1m · HTTP/2, HTTP/3"), "{html}");
    }

    #[test]
    fn a_running_slot_reads_running_since_and_a_cancelled_one_says_why_never_down() {
        use h123_shared::Protocol;
        use h123_shared::monitor::PointState;
        use h123_shared::monitor_status::{LastRun, LatestSlot, StatusRow, WindowFigures};
        let m = monitor("https://x.test/");
        // 2026-12-07 12:00 UTC and a minute later.
        let (earlier, slot) = (1_796_644_800_000, 1_796_644_860_000);
        let row = StatusRow {
            protocol: Protocol::H2,
            vantage: String::new(),
            last: LastRun {
                slot_unix_ms: earlier,
                state: PointState::Ok,
                total: Some(Micros(40_000)),
                status: Some(200),
                breached: Vec::new(),
                detail: None,
                probe_id: Some("p1".into()),
            },
            windows: vec![WindowFigures {
                window: "24h".into(),
                runs: 1,
                up: 1,
                p95_total: Some(Micros(40_000)),
            }],
        };
        let mut status = MonitorStatus {
            at_unix_ms: slot + 500,
            rows: vec![row],
            missed: Vec::new(),
            latest: Some(LatestSlot {
                slot_unix_ms: slot,
                state: PointState::Running,
                since_unix_ms: slot + 120,
                detail: None,
            }),
        };
        let html = render(|| status_page(&m, &status));
        assert!(
            html.contains(r#"<span class="state muted">running</span> since 2026-12-07 12:01 UTC"#),
            "{html}"
        );
        assert!(html.contains(r#"data-state="running""#), "{html}");
        // The last finished run still stands, up, with its figure; nothing reads down.
        assert!(
            html.contains(r#"<span class="state ok">up</span> 40"#),
            "{html}"
        );
        assert!(!html.contains("state danger"), "{html}");
        assert!(!html.contains(">missed<"), "{html}");

        status.latest = Some(LatestSlot {
            state: PointState::Cancelled,
            detail: Some("the server stopped during this run".into()),
            ..status.latest.clone().unwrap()
        });
        let html = render(|| status_page(&m, &status));
        assert!(
            html.contains(
                r#"<span class="state muted">cancelled</span> the run at 2026-12-07 12:01 UTC: the server stopped during this run"#
            ),
            "{html}"
        );
        assert!(!html.contains("state danger"), "{html}");

        // A first run under way: no finished run yet, and no "No runs yet.".
        status.rows.clear();
        status.latest.as_mut().unwrap().state = PointState::Running;
        let html = render(|| status_page(&m, &status));
        assert!(html.contains("No run has finished yet."), "{html}");
        assert!(html.contains("running</span> since"), "{html}");
        assert!(!html.contains("No runs yet."), "{html}");
    }

    #[test]
    fn the_window_shown_is_the_current_link() {
        let html = render(|| ranges("mon123abc", "7d"));
        assert!(
            html.contains(r#"<a href="/m/mon123abc?range=7d" aria-current="page">7d</a>"#),
            "{html}"
        );
        assert_eq!(html.matches("aria-current").count(), 1, "{html}");
    }

    #[test]
    fn a_delivery_log_names_each_try_and_escapes_what_a_receiver_said() {
        let log = [DeliveryLog {
            at_unix_ms: 0,
            target: "https://hooks.test:443".into(),
            key: "total>100ms".into(),
            status: "firing".into(),
            attempt: 2,
            outcome: "<b>502</b>".into(),
            delivered: false,
        }];
        let html = render(|| deliveries_section(&log, true));
        assert!(html.contains("total&gt;100ms firing"), "{html}");
        assert!(
            html.contains(r#"<span class="state danger">&lt;b&gt;502&lt;/b&gt;</span>"#),
            "{html}"
        );
        let none = render(|| deliveries_section(&[], false));
        assert!(none.contains("notifies nobody"), "{none}");
    }

    #[test]
    fn a_total_threshold_on_the_median_is_drawn_on_the_total_chart_only() {
        let gates = monitor("https://x.test/").spec.gates();
        assert_eq!(
            threshold(&gates, SeriesMetric::Total),
            Some(Micros(100_000))
        );
        assert_eq!(threshold(&gates, SeriesMetric::Ttfb), None);
    }
}
