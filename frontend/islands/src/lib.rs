//! The islands bundle's entry: links h123-frontend's `#[island]`s (each one a wasm-bindgen export
//! that `index.html`'s loader calls with its `<leptos-island>` element) into one wasm module.
#![cfg(target_arch = "wasm32")]

pub use h123_frontend::islands;
