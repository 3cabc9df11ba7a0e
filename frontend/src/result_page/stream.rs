//! A running probe's live view: the server's `GET /api/v1/probes/{id}/view/events` sends the
//! result drawn afresh as its events arrive (`view`), then finished (`done`).

use crate::api;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_futures::spawn_local;
use web_sys::{EventSource, MessageEvent};

/// Follows probe `id` until it finishes, drawing each view the server sends; should the stream
/// break, fetches the view once instead (whatever it missed, the stored record has).
pub fn follow(id: &str) {
    let url = api::api_url(&format!("/api/v1/probes/{id}/view/events"));
    let Ok(source) = EventSource::new(&url) else {
        refetch(id.to_owned());
        return;
    };
    for name in ["view", "done"] {
        let closing = source.clone();
        let listener = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            if name == "done" {
                closing.close();
            }
            if let Some(html) = event.data().as_string() {
                super::replace(&html);
            }
        });
        let _ = source.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
        listener.forget();
    }
    let closing = source.clone();
    let id = id.to_owned();
    let lost = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        // The browser retries on its own while CONNECTING; a CLOSED stream is gone.
        if closing.ready_state() == EventSource::CLOSED {
            refetch(id.clone());
        }
    });
    source.set_onerror(Some(lost.as_ref().unchecked_ref()));
    lost.forget();
}

/// A second after the stream broke, draws the stored view of probe `id` (which follows it
/// again, should it still run): a stream the server keeps refusing is not retried at once.
fn refetch(id: String) {
    spawn_local(async move {
        crate::browser_measure::sleep(1000).await;
        super::fetch(&id).await;
    });
}
