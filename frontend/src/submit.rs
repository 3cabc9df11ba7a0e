//! A form's request to the API: one at a time, what it answered handed on, a refusal kept for
//! the page to show. (Plain signals and a spawned task: Leptos's `Action` cost each page's wasm
//! some 4 KB gzipped.)

use crate::api::{Error, Result};
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::future::Future;

/// Where a form's request stands.
#[derive(Clone, Copy)]
pub struct Submission {
    /// Sent and not answered yet (and still so while the page moves on after a success).
    pub pending: RwSignal<bool>,
    /// Why the last request was refused.
    pub refused: RwSignal<Option<Error>>,
}

impl Default for Submission {
    /// Nothing sent yet.
    fn default() -> Self {
        Submission {
            pending: RwSignal::new(false),
            refused: RwSignal::new(None),
        }
    }
}

impl Submission {
    /// Sends `request` unless one is pending; calls `then` with its answer, or keeps its refusal.
    pub fn send<T: 'static>(
        self,
        request: impl Future<Output = Result<T>> + 'static,
        then: impl FnOnce(T) + 'static,
    ) {
        if self.pending.get_untracked() {
            return;
        }
        self.pending.set(true);
        self.refused.set(None);
        spawn_local(async move {
            match request.await {
                Ok(answer) => then(answer),
                Err(error) => {
                    self.refused.set(Some(error));
                    self.pending.set(false);
                }
            }
        });
    }
}
