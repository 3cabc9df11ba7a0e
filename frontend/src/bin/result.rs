//! The result page's bundle (`/r/{id}`).

use h123_frontend::pages::ResultPage;
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start(|route| match route {
        Route::Result(id) => Some(view! { <ResultPage id /> }.into_any()),
        _ => None,
    });
}
