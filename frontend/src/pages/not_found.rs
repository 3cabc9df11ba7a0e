//! Any path the router does not know.

use crate::components::Problem;
use leptos::prelude::*;

/// The page for unknown paths.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    view! {
        <Problem
            title="Page not found"
            what="There is no page at this address."
            next="Start a new measurement from the home page, or check the link you followed."
        />
    }
}
