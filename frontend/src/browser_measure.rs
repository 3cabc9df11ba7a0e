//! Measuring the probed URL from this browser: a few requests to it, each read back from the
//! browser's Resource Timing entry (what `shared::browser` turns into phases).
//!
//! The requests are `no-cors` (the target need not allow this page; its answer stays opaque, so
//! neither its status nor its body is read), bypass the HTTP cache, and carry no cookies and no
//! referrer. A page may fetch a target only if its Content-Security-Policy allows it, which
//! `h123 serve` grants to `/r/{id}?measure=browser` alone: measuring starts from that page.

use gloo_net::http::{Request, RequestBuilder};
use h123_shared::Method;
use h123_shared::browser::{
    ATTEMPTS, BrowserAttempt, BrowserRun, MEASURE_QUERY, Marks, asks_to_measure,
};
use wasm_bindgen::JsCast;
use web_sys::{
    PerformanceResourceTiming, ReferrerPolicy, RequestCache, RequestCredentials, RequestMode,
};

/// Whether this document was opened as the measuring page (`?measure=browser`).
pub fn opened_to_measure() -> bool {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .is_some_and(|q| asks_to_measure(&q))
}

/// Opens result `id` as the measuring page (a full load, for its policy), which then measures.
pub fn open_to_measure(id: &str) {
    if let Some(window) = web_sys::window() {
        let _ = window
            .location()
            .assign(&format!("/r/{id}?{MEASURE_QUERY}"));
    }
}

/// Drops `?measure=browser` from the address once measured, so a reload shows the result.
pub fn forget_measure_query(id: &str) {
    if let Some(history) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("/r/{id}")),
        );
    }
}

/// Why this browser cannot measure `url` with `method`, if it cannot.
pub fn cannot_measure(url: &str, method: Method) -> Option<String> {
    if !matches!(method, Method::Get | Method::Head) {
        return Some(format!(
            "A page can only send GET and HEAD to another site without its consent (CORS), not {}.",
            method.as_str()
        ));
    }
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Some("Only http and https URLs can be measured from a browser.".to_owned());
    }
    let secure_page = web_sys::window()
        .and_then(|w| w.location().protocol().ok())
        .is_some_and(|p| p == "https:");
    if secure_page && url.starts_with("http://") {
        return Some(
            "This page is served over HTTPS, and browsers refuse plain-HTTP requests from it (mixed content)."
                .to_owned(),
        );
    }
    None
}

/// Requests `url` [`ATTEMPTS`] times one after another and reads each back; `progress` hears the
/// number of requests made so far.
pub async fn measure(url: &str, method: Method, progress: impl Fn(usize)) -> BrowserRun {
    let mut attempts = Vec::with_capacity(ATTEMPTS);
    let name = resolved(url);
    for n in 0..ATTEMPTS {
        progress(n);
        attempts.push(one(url, &name, method).await);
    }
    progress(ATTEMPTS);
    BrowserRun {
        user_agent: String::new(),
        measured_at_unix_ms: 0,
        attempts,
        finding: None,
    }
}

/// `url` as the browser writes it in its entries' `name` (e.g. with the path's `/` added).
fn resolved(url: &str) -> String {
    web_sys::Url::new(url).map_or_else(|_| url.to_owned(), |u| u.href())
}

/// One request and what its entry shows.
async fn one(url: &str, name: &str, method: Method) -> BrowserAttempt {
    let before = entries(name).len();
    let started = now();
    let builder = match method {
        Method::Head => RequestBuilder::new(url).method(gloo_net::http::Method::HEAD),
        _ => Request::get(url),
    };
    let sent = builder
        .mode(RequestMode::NoCors)
        .cache(RequestCache::NoStore)
        .credentials(RequestCredentials::Omit)
        .referrer_policy(ReferrerPolicy::NoReferrer)
        .send()
        .await;
    let answer = match sent {
        Ok(response) => response.binary().await.map(drop),
        Err(e) => Err(e),
    };
    if let Err(e) = answer {
        return BrowserAttempt::failed(now() - started, &e.to_string());
    }
    // The entry is queued when the body ends, which may be a moment after the promise settles.
    for _ in 0..50 {
        let all = entries(name);
        if all.len() > before
            && let Some(entry) = all.last()
        {
            return BrowserAttempt::from_marks(&marks(entry));
        }
        sleep(20).await;
    }
    BrowserAttempt::failed(
        now() - started,
        "the browser recorded no timing entry for this request",
    )
}

/// The Resource Timing entries named `name`, oldest first.
fn entries(name: &str) -> Vec<PerformanceResourceTiming> {
    let Some(performance) = web_sys::window().and_then(|w| w.performance()) else {
        return Vec::new();
    };
    performance
        .get_entries_by_name_with_entry_type(name, "resource")
        .iter()
        .filter_map(|e| e.dyn_into::<PerformanceResourceTiming>().ok())
        .collect()
}

/// An entry's marks.
fn marks(e: &PerformanceResourceTiming) -> Marks {
    Marks {
        start: e.start_time(),
        dns_start: e.domain_lookup_start(),
        dns_end: e.domain_lookup_end(),
        connect_start: e.connect_start(),
        secure_start: e.secure_connection_start(),
        connect_end: e.connect_end(),
        request_start: e.request_start(),
        response_start: e.response_start(),
        response_end: e.response_end(),
        protocol: e.next_hop_protocol(),
    }
}

/// The page's clock, in milliseconds.
fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Waits `ms` milliseconds.
pub async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
