//! The bench page's bundle (`/b/{id}`).

use h123_frontend::navigate;
use h123_frontend::pages::{BenchPage, NotFoundPage};
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start(|| match navigate::current() {
        Route::Bench(id) => view! { <BenchPage id /> }.into_any(),
        _ => view! { <NotFoundPage /> }.into_any(),
    });
}
