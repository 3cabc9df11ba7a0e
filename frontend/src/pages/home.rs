//! `/`: the probe form, the load comparison form when the server runs benches, and the recent results.

use crate::api;
use crate::components::{BenchForm, ProbeForm, RecentList};
use leptos::prelude::*;
use leptos::task::spawn_local;

/// The home page.
#[component]
pub fn HomePage() -> impl IntoView {
    crate::title::set("HTTP timing waterfalls");
    // What the server offers (network emulation, benches); nothing until it has answered.
    let info = RwSignal::new(None);
    // Until then, what the server said when it drew the form (the page keeps its form as drawn).
    let drawn = crate::takeover::drawn_offer();
    spawn_local(async move { info.set(api::server_info().await.ok()) });
    view! {
        <section class="intro">
            <h1>"Where does the time go?"</h1>
            <p>
                "Paste a URL. h123 measures DNS, connect, TLS, send, wait and receive for every attempt, "
                "over HTTP/1.1, HTTP/2 and HTTP/3, and draws them side by side on one time axis."
            </p>
        </section>
        <ProbeForm
            network_enabled=Signal::derive(move || {
                info.with(|info| match info {
                    Some(info) => info.network_enabled,
                    None => drawn.is_some_and(|(network, _)| network),
                })
            })
            public_only=Signal::derive(move || {
                info.with(|info| match info {
                    Some(info) => info.public_targets_only,
                    None => drawn.is_some_and(|(_, public_only)| public_only),
                })
            })
        />
        // Shown only when the server says it runs benches; nothing while it has not answered.
        {move || {
            info.with(|info| {
                let info = info.as_ref()?;
                Some((info.bench_limits?, info.bench_targets.clone()))
            })
            .map(|(bounds, targets)| view! { <BenchForm bounds targets /> })
        }}
        <RecentList />
    }
}
