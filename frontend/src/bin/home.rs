//! The home page's bundle (`/`), which also says "not found" for paths no bundle knows.

use h123_frontend::pages::HomePage;
use h123_shared::route::Route;
use leptos::prelude::*;

fn main() {
    h123_frontend::start_taking_over(|route| match route {
        Route::Home => Some(view! { <HomePage /> }.into_any()),
        _ => None,
    });
}
