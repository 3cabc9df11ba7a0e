//! Error pages: what happened and what to do, for unknown ids, refused targets, rate limits and failures.

use crate::api::Error;
use h123_shared::markup::{element, escape};
use std::fmt::Write as _;

/// A titled explanation of a problem, with the next step, as markup (`section.problem`).
pub fn problem_section(title: &str, what: &str, next: &str, code: Option<&str>) -> String {
    let mut out = String::from(r#"<section class="problem" role="alert""#);
    if let Some(code) = code {
        let _ = write!(out, r#" data-code="{}""#, escape(code));
    }
    out.push('>');
    element(&mut out, "h1", "", title);
    element(&mut out, "p", r#" class="what""#, what);
    element(&mut out, "p", r#" class="next""#, next);
    if let Some(code) = code {
        let _ = write!(
            out,
            r#"<p class="code">Error code: <code>{}</code></p>"#,
            escape(code)
        );
    }
    out.push_str(r#"<p><a href="/">Back to a new measurement</a></p></section>"#);
    out
}

/// Title and next step for an API error; `bench` when it answered a bench request.
fn explain(error: &Error, bench: bool) -> (&'static str, String) {
    match error {
        Error::Api {
            status: 409,
            retry_after_secs,
            ..
        } if bench => (
            "A bench is running already",
            match retry_after_secs {
                Some(s) => format!("Benches run one at a time, so they do not measure each other. Try again in about {s} seconds."),
                None => "Benches run one at a time, so they do not measure each other. Try again when it is done.".into(),
            },
        ),
        Error::Api { status: 409, error, .. } if error.error.code == "still_running" => (
            "A result is still being measured",
            "Only finished results are compared. Open its page, wait until it says done, then compare again.".into(),
        ),
        Error::Api { status: 403, error, .. } if bench && error.error.code == "bench_disabled" => (
            "This server does not run benches",
            "Its operator has not enabled them. Run `h123 bench URL` from the CLI on a machine that may load the target.".into(),
        ),
        Error::Api { status: 403, .. } if bench => (
            "This target cannot be loaded from here",
            "Benches may load only the addresses this server's operator listed. To load another target, run `h123 bench URL` from the CLI against a server you are allowed to load."
                .into(),
        ),
        Error::Fetch(_) => (
            "Cannot reach the h123 server",
            "Check your connection and that the server is running, then reload the page.".into(),
        ),
        Error::Api { status: 404, .. } if bench => (
            "No load comparison with this id",
            "The link may be mistyped or cut short; start a new load comparison if it is gone."
                .into(),
        ),
        Error::Api { status: 404, .. } => (
            "No result with this id",
            "The link may be mistyped or cut short. Results live behind their full /r/… link; start a new measurement if it is gone."
                .into(),
        ),
        Error::Api {
            status: 429,
            retry_after_secs,
            ..
        } => (
            "Too many measurements at once",
            match retry_after_secs {
                Some(s) => format!("The server limits probes per client. Try again in {s} seconds."),
                None => "The server limits probes per client. Wait a moment and try again.".into(),
            },
        ),
        Error::Api { error, .. }
            if ["blocked", "forbidden", "not_allowed", "target"]
                .iter()
                .any(|k| error.error.code.contains(k)) =>
        (
            "This target cannot be measured from here",
            "The public server only probes public internet addresses (not loopback, private, link-local or similar). To measure a private server, run the h123 CLI on a machine that can reach it."
                .into(),
        ),
        Error::Api {
            status: 503,
            retry_after_secs,
            ..
        } => (
            "The server is busy",
            match retry_after_secs {
                Some(s) => format!("Too many measurements are running. Try again in {s} seconds."),
                None => "Too many measurements are running. Try again in a minute.".into(),
            },
        ),
        Error::Api { status, .. } if *status < 500 => (
            "The measurement was refused",
            "Fix the options as the message says, then submit again.".into(),
        ),
        Error::Api { .. } => (
            "The server failed",
            "This is not your fault. Try again in a moment; if it keeps failing, report it with the time it happened."
                .into(),
        ),
    }
}

/// What a problem page says of an API error (`bench` when it answered a bench request): its
/// title, what happened, the next step, and the error's code.
pub struct Problem {
    /// The heading.
    pub title: &'static str,
    /// What happened, in the server's words where it answered.
    pub what: String,
    /// What to do next.
    pub next: String,
    /// The API's error code, when it answered with one.
    pub code: Option<String>,
}

impl Problem {
    /// The words for `error`; `bench` when it answered a bench request.
    pub fn of(error: &Error, bench: bool) -> Self {
        let (title, next) = explain(error, bench);
        let what = match error {
            Error::Fetch(detail) => format!("The request did not complete: {detail}"),
            Error::Api { error, .. } => error.error.message.clone(),
        };
        Problem {
            title,
            what,
            next,
            code: error.code().map(str::to_owned),
        }
    }
}

/// The problem section of an API error; `bench` when it answered a bench request.
pub fn problem_markup(error: &Error, bench: bool) -> String {
    let p = Problem::of(error, bench);
    problem_section(p.title, &p.what, &p.next, p.code.as_deref())
}
