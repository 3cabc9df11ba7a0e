//! The result page's bundle (`/r/{id}`).

use h123_frontend::navigate;
use h123_frontend::pages::{NotFoundPage, ResultPage};
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start(|| match navigate::current() {
        Route::Result(id) => view! { <ResultPage id /> }.into_any(),
        _ => view! { <NotFoundPage /> }.into_any(),
    });
}
