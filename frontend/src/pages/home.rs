//! The home page (`/`), drawn on the server into `index.html` so it is on screen and takes typing
//! before its wasm has arrived: the probe form, the load comparison form when the server runs
//! benches, and the recent results' frame (filled by the page). The same drawing answers
//! `GET /api/v1/config/view`, which the home page's script (the `h123-home` bundle) fetches when a
//! static host served the page. The script gives the drawn forms their behaviour in place.

#[cfg(feature = "ssr")]
mod bench_form;
#[cfg(feature = "ssr")]
mod form_parts;
#[cfg(feature = "ssr")]
mod probe_form;
#[cfg(all(test, feature = "ssr"))]
mod tests;

/// The network picker's note when no profile is chosen.
pub const NETWORK_NOTE: &str =
    "Delay, loss and rate limits applied to every protocol alike, both ways.";

/// The sweep field's note when nothing is typed.
pub const SWEEP_NOTE: &str = "Empty: one bench. rtt=… or loss=…: the whole bench at each step, on top of the network, drawn as a decay curve.";

#[cfg(feature = "ssr")]
pub use page::{HomeForm, home_page};

#[cfg(feature = "ssr")]
mod page {
    use super::bench_form::bench_form;
    use super::probe_form::probe_form;
    use h123_shared::api::{BenchBounds, ServerInfo};
    use leptos::prelude::*;

    /// What the server offers that changes the home page.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct HomeForm {
        /// The server takes network conditions: the probe form's network picker is drawn.
        pub network: bool,
        /// The server measures public addresses only: the URL's hint says so.
        pub public_only: bool,
        /// The server runs benches within these bounds, on these targets: the load comparison
        /// form is drawn.
        pub bench: Option<(BenchBounds, Vec<String>)>,
    }

    impl HomeForm {
        /// What a server's `GET /api/v1/config` says it offers.
        pub fn of(info: &ServerInfo) -> Self {
            HomeForm {
                network: info.network_enabled,
                public_only: info.public_targets_only,
                bench: info
                    .bench_limits
                    .map(|bounds| (bounds, info.bench_targets.clone())),
            }
        }
    }

    /// The probe form, the load comparison form when offered, and the (still loading) recent
    /// results.
    pub fn home_page(form: &HomeForm) -> impl IntoView + use<> {
        let bench = form
            .bench
            .as_ref()
            .map(|(bounds, targets)| bench_form(bounds, targets));
        view! {
            {probe_form(form)}
            {bench}
            <section class="recent" aria-labelledby="recent-title">
                <h2 id="recent-title">"Recent results"</h2>
                <p class="hint">"Yours (remembered by this browser) and those their authors made public. Others are unlisted: only their link opens them."</p>
                <div class="recent-items"><p class="hint">"Loading…"</p></div>
            </section>
        }
    }
}
