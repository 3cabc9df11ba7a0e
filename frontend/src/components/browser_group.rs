//! "From your browser": the owner's own browser measurement beside the server's, on the same time
//! axis, what a browser hides, and the finding the server computed; and the offer to measure.
//! All of it is markup (one element, one click handler): far less wasm than a view tree.

use crate::api::{self, Error};
use crate::browser_measure;
use crate::components::local_time;
use crate::components::waterfall::axis_width;
use h123_shared::Micros;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::browser::{ATTEMPTS, BrowserRow, BrowserRun, rows};
use h123_shared::format::ms;
use h123_shared::markup::waterfall::{axis, grid, pct, phase_rects};
use h123_shared::markup::{element, escape};
use h123_shared::waterfall::{self, Tick};
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::fmt::Write as _;
use wasm_bindgen::JsCast;

/// The browser's group: its rows on the axis `axis_us` with `ticks` (those of the server's
/// waterfalls), labels thinned to `axis_px`.
fn markup(run: &BrowserRun, axis_us: Micros, ticks: &[Tick], axis_px: f64) -> String {
    let mut out = String::from(
        r#"<section class="browser-group" aria-labelledby="browser-title"><h2 id="browser-title">From your browser"#,
    );
    let _ = write!(
        out,
        r#" <span class="vantage-tags">{} · {}</span></h2>"#,
        escape(&run.browser_name()),
        escape(&local_time(run.measured_at_unix_ms))
    );
    if let Some(finding) = &run.finding {
        element(
            &mut out,
            "p",
            r#" class="verdict-summary browser-finding""#,
            &finding.summary,
        );
        out.push_str(r#"<ul class="browser-lines">"#);
        for line in &finding.lines {
            element(&mut out, "li", "", line);
        }
        out.push_str("</ul>");
    }
    out.push_str(r#"<div class="wf-panel browser-panel">"#);
    axis(&mut out, ticks, axis_px);
    out.push_str(r#"<ol class="wf-rows">"#);
    for row in rows(run, axis_us) {
        row_markup(&mut out, &row, ticks);
    }
    out.push_str("</ol></div>");
    notes(&mut out, run);
    out.push_str("</section>");
    out
}

/// One request's row: label and tags, track, total.
fn row_markup(out: &mut String, row: &BrowserRow, ticks: &[Tick]) {
    let class = format!(
        "wf-row{}{}{}",
        if row.reused { " reused" } else { "" },
        if row.failed { " failed" } else { "" },
        if row.hidden { " hidden-timing" } else { "" }
    );
    let _ = write!(
        out,
        r#"<li class="{class}" data-attempt="{}"><span class="wf-label">{}"#,
        row.attempt, row.label
    );
    if let Some(p) = &row.protocol {
        element(out, "span", r#" class="tag tag-protocol""#, p);
    }
    if row.reused {
        out.push_str(r#"<span class="tag tag-reused" title="ran on a connection the browser already had">reused</span>"#);
    }
    if row.failed {
        out.push_str(r#"<span class="tag tag-failed">failed</span>"#);
    }
    let description = escape(&row.description);
    let _ = write!(
        out,
        r#"</span><svg class="wf-track" role="img" aria-label="{description}"><title>{description}</title>"#
    );
    grid(out, ticks);
    if row.hidden {
        let _ = write!(
            out,
            r#"<rect class="opaque" data-phase="total" x="0" width="{}" y="4" height="16"></rect>"#,
            pct(row.width)
        );
    }
    for bar in &row.bars {
        let name = bar.phase.as_str();
        let _ = write!(
            out,
            r#"<g class="bar phase-{name}" data-phase="{name}"><title>{name} {} (from {} to {})</title>"#,
            ms(bar.end_us.saturating_sub(bar.start_us)),
            ms(bar.start_us),
            ms(bar.end_us)
        );
        phase_rects(out, bar.phase, bar.x, bar.width);
        out.push_str("</g>");
    }
    let _ = write!(
        out,
        r#"</svg><span class="wf-total">{}</span></li>"#,
        ms(row.total_us)
    );
}

/// What a browser hides, said plainly, and what is stored.
fn notes(out: &mut String, run: &BrowserRun) {
    out.push_str(r#"<ul class="browser-notes">"#);
    if run
        .attempts
        .iter()
        .any(|a| a.error.is_none() && !a.visible())
    {
        out.push_str("<li><strong>Only totals:</strong> the target sends no <code>Timing-Allow-Origin</code> header, so your browser shows another site's requests to this page as a total alone: no phases, no protocol, no connection state.</li>");
    }
    out.push_str("<li>Your browser chooses its own protocol (HTTP/3 only after the site advertises it with <code>Alt-Svc</code>) and may reuse a connection it already had; the server measured each protocol on purpose.</li>");
    out.push_str("<li>Requests went without cookies, past the browser's cache; another site's answer is opaque to this page, so its status is not known here.</li>");
    out.push_str("<li>Stored with this result: these timings and your browser's user agent, not your address.</li></ul>");
}

/// Where measuring from this browser stands, on a finished result this browser made and has not
/// measured.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Offered,
    Cannot(String),
    Measuring(usize),
    Saving,
    Failed(String),
}

impl Step {
    /// What the offer says at this step.
    fn words(&self) -> String {
        match self {
            Step::Offered => format!(
                "Your browser requests the URL {ATTEMPTS} times and reads what it may see of each request; the timings and your browser's user agent (not your address) are stored with this result, for everyone with its link."
            ),
            Step::Cannot(why) => format!("This URL cannot be measured from your browser: {why}"),
            Step::Measuring(n) => {
                format!("Measuring from your browser: {n} of {ATTEMPTS} requests…")
            }
            Step::Saving => "Storing your browser's measurement…".to_owned(),
            Step::Failed(why) => format!("Your browser's measurement was not stored: {why}"),
        }
    }

    /// The offer as markup: the step's words, and the button while it is offered.
    fn markup(&self) -> String {
        let mut out = String::from(
            r#"<section class="measure-here" aria-labelledby="measure-title"><h2 id="measure-title">Your browser as a vantage</h2>"#,
        );
        let class = if matches!(self, Step::Failed(_)) {
            r#" class="error""#
        } else {
            ""
        };
        element(
            &mut out,
            "p",
            &format!(r#"{class} aria-live="polite""#),
            &self.words(),
        );
        if *self == Step::Offered {
            out.push_str(r#"<button type="button" class="secondary" id="measure-here">Measure from this browser too</button>"#);
        }
        out.push_str("</section>");
        out
    }
}

/// Measures from this browser and stores the measurement with probe `id`; `step` follows it,
/// `stored` hears the record with the measurement.
fn measure_and_store(
    id: String,
    url: String,
    method: h123_shared::Method,
    step: RwSignal<Option<Step>>,
    stored: Callback<ProbeRecord>,
) {
    step.set(Some(Step::Measuring(0)));
    spawn_local(async move {
        let measured =
            browser_measure::measure(&url, method, |n| step.set(Some(Step::Measuring(n)))).await;
        step.set(Some(Step::Saving));
        match api::attach_browser(&id, &measured).await {
            Ok(record) => {
                browser_measure::forget_measure_query(&id);
                stored.run(record);
            }
            Err(Error::Api { error, .. }) => step.set(Some(Step::Failed(error.error.message))),
            Err(Error::Fetch(why)) => step.set(Some(Step::Failed(why))),
        }
    });
}

/// The browser as a vantage on a result, all drawn as markup: "From your browser" on the axis
/// `span` shows once the record has the measurement; before that, on a finished result this
/// browser made, the offer to measure ("Measure from this browser too" opens the measuring page,
/// which asks nothing more: the click was the consent), or why this URL cannot be measured.
#[component]
pub fn BrowserVantage(
    /// The record as far as it is known.
    record: Memo<Option<ProbeRecord>>,
    /// What the axis shared with the server's waterfalls must show.
    span: Memo<Micros>,
    /// Hears the record once the measurement is stored.
    stored: Callback<ProbeRecord>,
) -> impl IntoView {
    // The offer, on a finished result this browser made and has not measured.
    let step = RwSignal::new(None::<Step>);
    Effect::new(move |_| {
        let Some((id, url, method)) = record.with(|r| {
            r.as_ref()
                .filter(|r| {
                    r.status != ProbeStatus::Running
                        && !r.settled(js_sys::Date::now() as u64)
                        && api::is_mine(&r.id)
                })
                .map(|r| (r.id.clone(), r.options.url.clone(), r.options.method))
        }) else {
            return;
        };
        if step.get_untracked().is_some() {
            return;
        }
        match browser_measure::cannot_measure(&url, method) {
            Some(why) => step.set(Some(Step::Cannot(why))),
            None if browser_measure::opened_to_measure() => {
                measure_and_store(id, url, method, step, stored);
            }
            None => step.set(Some(Step::Offered)),
        }
    });
    let axis_px = axis_width();
    let html = move || {
        let group = record.with(|r| {
            let run = r.as_ref()?.browser.as_ref()?;
            let (end, ticks) = waterfall::axis(span.get());
            Some(markup(run, end, &ticks, f64::from(axis_px.get())))
        });
        group
            .or_else(|| step.with(|s| s.as_ref().map(Step::markup)))
            .unwrap_or_default()
    };
    let click = move |ev: leptos::ev::MouseEvent| {
        let on_button = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|e| e.id() == "measure-here");
        if let (true, Some(id)) = (
            on_button,
            record.with_untracked(|r| r.as_ref().map(|r| r.id.clone())),
        ) {
            browser_measure::open_to_measure(&id);
        }
    };
    view! { <div class="browser" inner_html=html on:click=click></div> }
}
