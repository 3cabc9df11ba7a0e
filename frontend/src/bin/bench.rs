//! The bench page's bundle (`/b/{id}`).

use h123_frontend::pages::BenchPage;
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start(|route| match route {
        Route::Bench(id) => Some(view! { <BenchPage id /> }.into_any()),
        _ => None,
    });
}
