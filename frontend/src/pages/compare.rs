//! `/compare/{a}/{b}`: two finished results side by side: what differs between them (by the
//! verdict's significance rule), metric by metric, and both waterfalls on one time axis.

use crate::api::{self, Error};
use crate::components::{ApiProblem, DiffTable, SideBySide, compare_links, local_time};
use h123_shared::api::{ProbeComparison, ProbeRecord};
use h123_shared::markup::escape;
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::fmt::Write as _;

/// What the page knows about its two results.
#[derive(Clone, Debug, PartialEq)]
enum State {
    Loading,
    Shown(Box<ProbeComparison>),
    Failed(Error),
}

/// The comparison page.
#[component]
pub fn ComparePage(
    /// The first result's id (before).
    a: String,
    /// The second result's id (after).
    b: String,
) -> impl IntoView {
    let state = RwSignal::new(State::Loading);
    crate::chart::listen(&document());
    spawn_local(async move {
        state.set(match api::comparison(&a, &b).await {
            Ok(both) => State::Shown(Box::new(both)),
            Err(e) => State::Failed(e),
        });
    });
    move || match state.get() {
        State::Loading => view! {
            <p class="loading" role="status">
                "Loading both results…"
            </p>
        }
        .into_any(),
        State::Failed(error) => view! { <ApiProblem error /> }.into_any(),
        State::Shown(both) => view! { <Compared both=*both /> }.into_any(),
    }
}

/// The two results and their comparison.
#[component]
fn Compared(both: ProbeComparison) -> impl IntoView {
    crate::title::set(&format!("Comparison: {}", both.comparison.summary));
    let head =
        side_line("A", &both.a) + &side_line("B", &both.b) + &compare_links(&both.a.id, &both.b.id);
    view! {
        <section class="summary" aria-label="Results compared">
            <h1 class="target">"Two results compared"</h1>
            <div inner_html=head></div>
        </section>
        <DiffTable comparison=both.comparison />
        <SideBySide a=both.a b=both.b />
    }
}

/// One side's line, as markup: its letter, URL (linking to its own page) and when it was measured.
fn side_line(letter: &str, record: &ProbeRecord) -> String {
    let mut out = format!(
        r#"<p class="meta side-line" data-side="{letter}"><strong class="side">{letter}</strong> <a href="/r/{}">"#,
        escape(&record.id)
    );
    out.push_str(&escape(&record.options.url));
    let _ = write!(
        out,
        "</a> · {} attempts per protocol · {}</p>",
        record.options.attempts(),
        escape(&local_time(record.created_at_unix_ms))
    );
    out
}
