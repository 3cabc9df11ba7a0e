//! The comparison page's bundle (`/compare/{a}/{b}`).

use h123_frontend::navigate;
use h123_frontend::pages::{ComparePage, NotFoundPage};
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start(|| match navigate::current() {
        Route::Compare(a, b) => view! { <ComparePage a b /> }.into_any(),
        _ => view! { <NotFoundPage /> }.into_any(),
    });
}
