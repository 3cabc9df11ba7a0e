//! The home page's bundle (`/`), which also says "not found" for paths no bundle knows.

use h123_frontend::navigate;
use h123_frontend::pages::{HomePage, NotFoundPage};
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start(|| match navigate::current() {
        Route::Home => view! { <HomePage /> }.into_any(),
        _ => view! { <NotFoundPage /> }.into_any(),
    });
}
