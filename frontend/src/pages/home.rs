//! `/`: the probe form and the recent results.

use crate::components::{ProbeForm, RecentList};
use leptos::prelude::*;

/// The home page.
#[component]
pub fn HomePage() -> impl IntoView {
    view! {
        <section class="intro">
            <h1>"Where does the time go?"</h1>
            <p>
                "Paste a URL. h123 measures DNS, connect, TLS, send, wait and receive for every attempt, "
                "over HTTP/1.1, HTTP/2 and HTTP/3, and draws them side by side on one time axis."
            </p>
        </section>
        <ProbeForm />
        <RecentList />
    }
}
