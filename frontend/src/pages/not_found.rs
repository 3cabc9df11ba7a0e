//! The page for a path no page knows: what happened, what to do, and (an island) a way back to
//! the page the visitor came from.

/// The page's heading (and, with " · h123", its title).
pub const TITLE: &str = "Page not found";

/// What happened.
pub const WHAT: &str = "There is no page at this address.";

/// What to do about it.
pub const NEXT: &str =
    "Start a new measurement from the home page, or check the link you followed.";

#[cfg(any(feature = "ssr", feature = "hydrate"))]
pub use page::NotFoundPage;

#[cfg(any(feature = "ssr", feature = "hydrate"))]
mod page {
    use super::{NEXT, TITLE, WHAT};
    use crate::islands::GoBack;
    use leptos::prelude::*;

    /// The "not found" page: the problem section the other problem pages have, with the way
    /// back.
    #[component]
    pub fn NotFoundPage() -> impl IntoView {
        view! {
            <section class="problem" role="alert">
                <h1>{TITLE}</h1>
                <p class="what">{WHAT}</p>
                <p class="next">{NEXT}</p>
                <GoBack/>
                <p><a href="/">"Back to a new measurement"</a></p>
            </section>
        }
    }
}
