//! A problem page's section as a Leptos component: what happened and what to do.

use crate::components::Problem;
use leptos::prelude::*;

/// `problem` as `<section class="problem">`: its heading, what happened, the next step, the
/// error's code where the API gave one, and the way home.
#[component]
pub fn ProblemSection(
    /// What to say.
    problem: Problem,
) -> impl IntoView {
    let Problem {
        title,
        what,
        next,
        code,
    } = problem;
    let shown = code.clone();
    view! {
        <section class="problem" role="alert" data-code=shown>
            <h1>{title}</h1>
            <p class="what">{what}</p>
            <p class="next">{next}</p>
            {code.map(|code| view! { <p class="code">"Error code: "<code>{code}</code></p> })}
            <p><a href="/">"Back to a new measurement"</a></p>
        </section>
    }
}
