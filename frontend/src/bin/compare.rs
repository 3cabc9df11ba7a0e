//! The comparison page's bundle (`/compare/{a}/{b}`).

use h123_frontend::pages::ComparePage;
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start(|route| match route {
        Route::Compare(a, b) => Some(view! { <ComparePage a b /> }.into_any()),
        _ => None,
    });
}
