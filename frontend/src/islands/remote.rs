//! A page the server did not draw (a static host served the shell, or the server could not draw
//! it, as for an unknown id): drawn from the API's view of it, for the islands in it to hydrate.

use crate::components::Problem;
use crate::pages::problem::ProblemSection;
use crate::result_page::{actions, set_title};
use crate::{api, navigate};
use h123_shared::route::Route;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::wasm_bindgen;

/// Draws the current page into the shell's `<main>` as the API draws it (a comparison's or a
/// bench's view),
/// titled as it says, its API links on the configured base; or the problem page when the API
/// cannot give it. `index.html`'s loader calls this before it hydrates the islands.
#[wasm_bindgen]
pub async fn draw_remote() {
    let Some(document) = window().document() else {
        return;
    };
    let Ok(Some(main)) = document.query_selector("#shell main") else {
        return;
    };
    let (drawn, bench) = match navigate::current() {
        Route::Compare(a, b) => (api::comparison_view(&a, &b).await, false),
        Route::Bench(id) => (api::bench_view(&id).await, true),
        _ => return,
    };
    match drawn {
        Ok(html) => {
            main.set_inner_html(&html);
            if let Ok(Some(drawing)) = document.query_selector("#comparison, #bench") {
                set_title(&document, drawing.get_attribute("data-title").as_deref());
            }
            actions::api_links(&document);
        }
        Err(error) => {
            let problem = Problem::of(&error, bench);
            set_title(&document, Some(problem.title));
            main.set_inner_html("");
            if let Ok(main) = main.dyn_into::<web_sys::HtmlElement>() {
                // The page keeps the problem for its life.
                std::mem::forget(leptos::mount::mount_to(main, move || {
                    view! { <ProblemSection problem/> }
                }));
            }
        }
    }
}
