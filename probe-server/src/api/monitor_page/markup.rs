//! A monitor's pages as markup: the monitor page (facts, status, window verdict, a chart per
//! metric, deliveries, badges) and the status page (status and badges). Every string from the
//! monitor or its runs is escaped.

use super::chart;
use crate::store::monitor_rows::DeliveryLog;
use h123_shared::format::{ms, wall_clock};
use h123_shared::markup::escape;
use h123_shared::monitor::{Monitor, PointState, Series, SeriesMetric, every_text};
use h123_shared::monitor_status::{LastRun, MonitorStatus, WINDOWS};
use h123_shared::slo::Gate;
use h123_shared::{Micros, Visibility};
use std::fmt::Write as _;

/// The windows a monitor page can show, by name and length.
pub const RANGES: [(&str, u64); 5] = [
    ("1h", 3_600_000),
    ("6h", 6 * 3_600_000),
    ("24h", 24 * 3_600_000),
    ("7d", 7 * 24 * 3_600_000),
    ("30d", 30 * 24 * 3_600_000),
];

/// What the monitor page shows.
pub struct MonitorPage<'a> {
    /// The monitor, redacted.
    pub monitor: &'a Monitor,
    /// The conditions firing now.
    pub firing: Vec<String>,
    /// Its status.
    pub status: &'a MonitorStatus,
    /// The window's name (one of [`RANGES`]).
    pub range: &'a str,
    /// A series per metric over the window.
    pub series: Vec<Series>,
    /// The latest delivery tries, newest first.
    pub deliveries: &'a [DeliveryLog],
}

/// The monitor page's body.
pub fn monitor_page(page: &MonitorPage) -> String {
    let m = page.monitor;
    let mut out = String::with_capacity(64 * 1024);
    opening(&mut out, "Monitor", m);
    if !page.firing.is_empty() {
        let _ = write!(
            out,
            r#"<p class="monitor-firing" role="status"><strong>Alerting:</strong> {}</p>"#,
            escape(&page.firing.join(", "))
        );
    }
    now(&mut out, page.status);
    ranges(&mut out, &m.id, page.range);
    if let Some(verdict) = page.series.first().and_then(|s| s.verdict.as_ref()) {
        let _ = write!(
            out,
            r#"<p class="monitor-verdict">Over the last {}: {}</p>"#,
            page.range,
            escape(&verdict.sentence)
        );
    }
    let gates = m.spec.gates();
    for series in &page.series {
        out.push_str(&chart::section(series, threshold(&gates, series.metric)));
    }
    deliveries(&mut out, page.deliveries, !m.spec.alerts.is_empty());
    badges(&mut out, m);
    out.push_str("</article>");
    out
}

/// The status page's body: where each protocol stands, its uptime and p95, and the badges.
pub fn status_page(monitor: &Monitor, status: &MonitorStatus) -> String {
    let mut out = String::with_capacity(8 * 1024);
    opening(&mut out, "Status", monitor);
    now(&mut out, status);
    badges(&mut out, monitor);
    let _ = write!(
        out,
        r#"<p><a href="/m/{}">Charts and history</a></p></article>"#,
        escape(&monitor.id)
    );
    out
}

/// A page saying what went wrong (an unknown monitor, a busy server, a bad window).
pub fn problem(title: &str, text: &str) -> String {
    format!(
        r#"<section class="monitor-problem" aria-labelledby="problem-title"><h1 id="problem-title">{}</h1><p>{}</p><p><a href="/">Measure a URL</a></p></section>"#,
        escape(title),
        escape(text)
    )
}

/// The page's article opened: its heading (`Monitor: URL`) and the monitor's facts.
fn opening(out: &mut String, kind: &str, m: &Monitor) {
    let _ = write!(
        out,
        r#"<article class="monitor" aria-labelledby="monitor-title" data-monitor="{id}"><h1 id="monitor-title">{kind}: <span class="monitor-url">{url}</span></h1>"#,
        id = escape(&m.id),
        url = escape(&m.spec.options.url),
    );
    facts(out, m);
}

/// Interval, protocols, vantages, state and thresholds in a line.
fn facts(out: &mut String, m: &Monitor) {
    let protocols: Vec<&str> = m
        .spec
        .options
        .protocols
        .iter()
        .map(|p| p.http_version())
        .collect();
    let mut facts = vec![
        format!("every {}", every_text(m.spec.every_ms)),
        protocols.join(", "),
    ];
    if !m.spec.options.vantages.is_empty() {
        facts.push(format!("from {}", m.spec.options.vantages.join(", ")));
    }
    facts.push(match m.paused {
        true => "paused".to_owned(),
        false => format!("next run {}", wall_clock(m.next_slot_unix_ms, 0)),
    });
    if !m.spec.thresholds.is_empty() {
        facts.push(format!("thresholds {}", m.spec.thresholds.join(", ")));
    }
    if m.spec.options.visibility == Visibility::Public {
        facts.push("public".to_owned());
    }
    let _ = write!(
        out,
        r#"<p class="monitor-facts">{}</p>"#,
        escape(&facts.join(" · "))
    );
}

/// The "Now" section: the status table under its heading.
fn now(out: &mut String, status: &MonitorStatus) {
    out.push_str(r#"<section aria-labelledby="now-title"><h2 id="now-title">Now</h2>"#);
    status_table(out, status);
    out.push_str("</section>");
}

/// The status as a table: a row per protocol and vantage, its last run, uptime and p95 per window.
fn status_table(out: &mut String, status: &MonitorStatus) {
    if status.rows.is_empty() {
        out.push_str(r#"<p class="hint">No runs yet.</p>"#);
        return;
    }
    out.push_str(
        r#"<table class="monitor-status"><thead><tr><th scope="col">Protocol</th><th scope="col">Last run</th>"#,
    );
    for (name, _) in WINDOWS {
        let _ = write!(out, r#"<th scope="col">Uptime {name}</th>"#);
    }
    for (name, _) in WINDOWS {
        let _ = write!(out, r#"<th scope="col">p95 {name}</th>"#);
    }
    out.push_str("</tr></thead><tbody>");
    for row in &status.rows {
        let name = match row.vantage.as_str() {
            "" => row.protocol.http_version().to_owned(),
            v => format!("{} from {v}", row.protocol.http_version()),
        };
        let _ = write!(
            out,
            r#"<tr data-protocol="{}"><th scope="row">{}</th><td>{}</td>"#,
            row.protocol.as_str(),
            escape(&name),
            last_run(&row.last)
        );
        for w in &row.windows {
            let _ = write!(out, "<td>{}</td>", w.uptime_text());
        }
        for w in &row.windows {
            let _ = write!(out, "<td>{}</td>", w.p95_total.map_or("—".to_owned(), ms));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    let missed: Vec<String> = status
        .missed
        .iter()
        .map(|m| format!("{} in {}", m.missed, m.window))
        .collect();
    let _ = write!(
        out,
        r#"<p class="hint">Up: every attempt answered without an HTTP error. p95 of the total on new connections over the runs that were up. Missed slots: {}.</p>"#,
        missed.join(", ")
    );
}

/// A last run in a cell: its state as a badge, its figure or reason, and a link to it.
fn last_run(last: &LastRun) -> String {
    let (class, word) = match last.state {
        PointState::Ok if last.breached.is_empty() => ("ok", "up".to_owned()),
        PointState::Ok => ("warn", "over a threshold".to_owned()),
        PointState::HttpError => (
            "warn",
            last.status
                .map_or("HTTP error".to_owned(), h123_shared::format::status),
        ),
        PointState::Failed => ("danger", "failing".to_owned()),
        PointState::Skipped => ("danger", "not measured".to_owned()),
        PointState::Missed => ("muted", "missed".to_owned()),
    };
    let mut cell = format!(r#"<span class="state {class}">{}</span>"#, escape(&word));
    if let Some(total) = last.total.filter(|_| last.state == PointState::Ok) {
        let _ = write!(cell, " {}", ms(total));
    }
    if let Some(detail) = &last.detail {
        let _ = write!(cell, r#" <span class="detail">{}</span>"#, escape(detail));
    }
    let _ = write!(cell, " at {}", escape(&wall_clock(last.slot_unix_ms, 0)));
    if let Some(probe) = &last.probe_id {
        let _ = write!(cell, r#" <a href="/r/{}">run</a>"#, escape(probe));
    }
    cell
}

/// The window links, the shown one marked current.
fn ranges(out: &mut String, id: &str, shown: &str) {
    out.push_str(r#"<nav class="monitor-ranges" aria-label="Window"><span>Window:</span>"#);
    for (name, _) in RANGES {
        let current = if name == shown {
            r#" aria-current="page""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r#" <a href="/m/{}?range={name}"{current}>{name}</a>"#,
            escape(id)
        );
    }
    out.push_str("</nav>");
}

/// The lowest threshold on `metric`'s median for every protocol, when there is one.
fn threshold(gates: &[Gate], metric: SeriesMetric) -> Option<Micros> {
    gates
        .iter()
        .filter(|g| g.protocol.is_none() && g.statistic == h123_shared::slo::Statistic::Median)
        .filter(|g| g.metric.as_str() == metric.as_str())
        .map(|g| g.threshold_us)
        .min()
}

/// The latest delivery tries as a table.
fn deliveries(out: &mut String, log: &[DeliveryLog], has_targets: bool) {
    out.push_str(r#"<section aria-labelledby="deliveries-title"><h2 id="deliveries-title">Alert deliveries</h2>"#);
    if log.is_empty() {
        let text = match has_targets {
            true => "Nothing sent yet: no condition has started or stopped.",
            false => "This monitor notifies nobody (it has no webhook or Alertmanager).",
        };
        let _ = write!(out, r#"<p class="hint">{text}</p></section>"#);
        return;
    }
    out.push_str(r#"<table class="monitor-deliveries"><thead><tr><th scope="col">When (UTC)</th><th scope="col">To</th><th scope="col">Condition</th><th scope="col">Try</th><th scope="col">Answer</th></tr></thead><tbody>"#);
    for d in log {
        let class = if d.delivered { "ok" } else { "danger" };
        let _ = write!(
            out,
            r#"<tr><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td><td><span class="state {class}">{}</span></td></tr>"#,
            escape(&wall_clock(d.at_unix_ms, 0)),
            escape(&d.target),
            escape(&d.key),
            escape(&d.status),
            d.attempt,
            escape(&d.outcome),
        );
    }
    out.push_str("</tbody></table></section>");
}

/// Each protocol's badge, and the Markdown that shows it elsewhere.
fn badges(out: &mut String, m: &Monitor) {
    out.push_str(r#"<section aria-labelledby="badges-title"><h2 id="badges-title">Badges</h2><ul class="monitor-badges">"#);
    for protocol in &m.spec.options.protocols {
        let path = format!("/badge/{}/{}.svg", m.id, protocol.as_str());
        let _ = write!(
            out,
            r#"<li><img src="{p}" alt="{v}: the last run's total" height="20"/> <code>![{v}]({p})</code></li>"#,
            p = escape(&path),
            v = protocol.http_version(),
        );
    }
    out.push_str("</ul></section>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::monitor::MonitorRequest;

    fn monitor(url: &str) -> Monitor {
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
        };
        let html = status_page(&m, &status);
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("No runs yet."), "{html}");
        assert!(html.contains(r#"<a href="/m/mon123abc">"#), "{html}");
        assert!(html.contains(r#"src="/badge/mon123abc/h3.svg""#), "{html}");
        assert!(html.contains("every 1m · HTTP/2, HTTP/3"), "{html}");
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
