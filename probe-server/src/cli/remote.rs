//! `h123 probe --server URL`: the probe runs on an h123 server through its
//! REST API (`POST /api/v1/probes`, then its event stream until `done`), and
//! the CLI prints what the server measured as it prints a local probe.
//!
//! One HTTP/1.1 connection to the server, over TLS for an `https` server
//! (system roots, or `--server-cacert`). What the server answers is bounded:
//! an answer body over [`MAX_ANSWER`] or a stream silent for [`SILENCE`] ends
//! the call with a readable error, never a hang.

use crate::probe::plain_client;
use crate::probe::tls::TrustSettings;
use bytes::Bytes;
use h123_shared::ProbeOptions;
use h123_shared::api::{ApiError, ProbeCreated, ProbeRecord};
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use std::path::Path;
use std::time::Duration;
use tokio::net::TcpStream;
use url::Url;

/// The most bytes read of one answer or event (a whole record arrives in the
/// `done` event; the server caps records well below this).
pub const MAX_ANSWER: usize = 64 * 1024 * 1024;

/// How long the server may stay silent: its event stream sends a keep-alive
/// comment every 15 seconds.
pub const SILENCE: Duration = Duration::from_secs(45);

/// Why the server gave no result.
#[derive(Debug, PartialEq, Eq)]
pub enum RemoteError {
    /// The probe was refused, with a readable line: by the server (a 4xx
    /// answer, naming its code), or here (a bad `--server` URL or CA file).
    Refused(String),
    /// The server could not be reached, failed, or did not answer as an h123 server.
    Trouble(String),
}

/// A probe the server finished.
#[derive(Debug)]
pub struct Finished {
    /// The record, with its result and analysis.
    pub record: ProbeRecord,
    /// The page that shows it, on that server.
    pub permalink: String,
}

/// Asks the h123 server at `server` to run a probe with `options`, follows
/// it to its end and returns the finished record. `cacert` replaces the
/// system's roots for an https server.
///
/// # Errors
/// [`RemoteError::Refused`] when the server answers 4xx (bad options, a
/// blocked target, a rate limit); [`RemoteError::Trouble`] when it cannot be
/// reached, answers 5xx or something that is not h123's API.
pub async fn probe(
    server: &str,
    cacert: Option<&Path>,
    options: &ProbeOptions,
) -> Result<Finished, RemoteError> {
    let base = base_url(server)?;
    let mut sender = connect(&base, cacert).await?;
    let body = serde_json::to_vec(options)
        .map_err(|e| RemoteError::Trouble(format!("cannot encode the options: {e}")))?;
    let create = request(&base, Method::POST, "api/v1/probes", Bytes::from(body))?;
    let answer = within(
        SILENCE,
        "the probe to be accepted",
        sender.send_request(create),
    )
    .await?
    .map_err(|e| trouble(&base, e))?;
    let status = answer.status();
    let text = read_all(answer.into_body()).await?;
    if status != StatusCode::ACCEPTED {
        return Err(refusal(status, &text, "the probe"));
    }
    let created: ProbeCreated = serde_json::from_slice(&text).map_err(|e| {
        RemoteError::Trouble(format!("{base} is not an h123 server (its answer: {e})"))
    })?;
    let permalink = base
        .join(created.links.permalink.trim_start_matches('/'))
        .map_or_else(|_| created.links.permalink.clone(), String::from);
    let events = request(
        &base,
        Method::GET,
        created.links.events.trim_start_matches('/'),
        Bytes::new(),
    )?;
    let answer = within(SILENCE, "the event stream", sender.send_request(events))
        .await?
        .map_err(|e| trouble(&base, e))?;
    if !answer.status().is_success() {
        let status = answer.status();
        let text = read_all(answer.into_body()).await?;
        return Err(refusal(status, &text, "the probe"));
    }
    let record = done_event(answer.into_body()).await?;
    Ok(Finished { record, permalink })
}

/// The body of `GET path` (below the API's base) on the h123 server at
/// `server`, e.g. a finished probe's `/har`, as the API gives it.
///
/// # Errors
/// As [`probe`]: a 4xx is [`RemoteError::Refused`], anything else that is
/// not a success [`RemoteError::Trouble`].
pub async fn get(server: &str, cacert: Option<&Path>, path: &str) -> Result<Vec<u8>, RemoteError> {
    call(server, cacert, Method::GET, path, None, Vec::new()).await
}

/// The body of `method path` (below the API's base) on the h123 server at `server`, with
/// `json` as the body when given and `owner_token` as `X-H123-Owner`.
///
/// # Errors
/// As [`get`].
pub async fn call(
    server: &str,
    cacert: Option<&Path>,
    method: Method,
    path: &str,
    owner_token: Option<&str>,
    json: Vec<u8>,
) -> Result<Vec<u8>, RemoteError> {
    let base = base_url(server)?;
    let mut sender = connect(&base, cacert).await?;
    let mut asked = request(
        &base,
        method,
        path.trim_start_matches('/'),
        Bytes::from(json),
    )?;
    if let Some(token) = owner_token {
        let value = header::HeaderValue::from_str(token)
            .map_err(|_| RemoteError::Refused("the owner token is not a header value".into()))?;
        asked.headers_mut().insert("x-h123-owner", value);
    }
    let answer = within(SILENCE, "the answer", sender.send_request(asked))
        .await?
        .map_err(|e| trouble(&base, e))?;
    let status = answer.status();
    let body = read_all(answer.into_body()).await?;
    if status.is_success() {
        Ok(body)
    } else {
        Err(refusal(status, &body, "the request"))
    }
}

/// The server's base URL, ending in `/` so API paths join below it.
pub(crate) fn base_url(server: &str) -> Result<Url, RemoteError> {
    let mut url = Url::parse(server)
        .map_err(|e| RemoteError::Refused(format!("--server `{server}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(RemoteError::Refused(format!(
            "--server `{server}` must be an http:// or https:// URL"
        )));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

/// An HTTP/1.1 client of `base`'s server (over TLS, checked against `cacert` or the system's
/// roots, when its scheme is `https`).
pub(crate) async fn connect(
    base: &Url,
    cacert: Option<&Path>,
) -> Result<SendRequest<Full<Bytes>>, RemoteError> {
    let host = base.host_str().unwrap_or_default();
    let port = base.port_or_known_default().unwrap_or(80);
    let tcp = within(
        SILENCE,
        "the connection",
        TcpStream::connect((host.trim_matches(['[', ']']), port)),
    )
    .await?
    .map_err(|e| RemoteError::Trouble(format!("cannot reach {base}: {e}")))?;
    let trust = match cacert {
        Some(path) => TrustSettings::from_ca_file(path).map_err(RemoteError::Refused)?,
        None => TrustSettings::system(),
    };
    within(
        SILENCE,
        "the TLS handshake",
        plain_client::over(tcp, base, &trust),
    )
    .await?
    .map_err(|e| RemoteError::Trouble(format!("cannot talk to {base}: {e}")))
}

pub(crate) fn request(
    base: &Url,
    method: Method,
    path: &str,
    body: Bytes,
) -> Result<Request<Full<Bytes>>, RemoteError> {
    let url = base
        .join(path)
        .map_err(|e| RemoteError::Trouble(format!("bad API path {path}: {e}")))?;
    let authority = &url[url::Position::BeforeHost..url::Position::BeforePath];
    let mut builder = Request::builder()
        .method(method)
        .uri(&url[url::Position::BeforePath..])
        .header(header::HOST, authority)
        .header(
            header::USER_AGENT,
            concat!("h123/", env!("CARGO_PKG_VERSION")),
        );
    if !body.is_empty() {
        builder = builder.header(header::CONTENT_TYPE, "application/json");
    }
    builder
        .body(Full::new(body))
        .map_err(|e| RemoteError::Trouble(format!("bad request to {url}: {e}")))
}

pub(crate) fn trouble(base: &Url, e: hyper::Error) -> RemoteError {
    RemoteError::Trouble(format!("talking to {base} failed: {e}"))
}

/// Waits for `what` at most `limit`.
pub(crate) async fn within<T>(
    limit: Duration,
    what: &str,
    future: impl Future<Output = T>,
) -> Result<T, RemoteError> {
    tokio::time::timeout(limit, future).await.map_err(|_| {
        RemoteError::Trouble(format!(
            "the server was silent for {}s waiting for {what}",
            limit.as_secs()
        ))
    })
}

/// A 4xx answer to `what` as a refusal naming the server's error code and message; anything
/// else as trouble.
fn refusal(status: StatusCode, body: &[u8], what: &str) -> RemoteError {
    let said = serde_json::from_slice::<ApiError>(body)
        .map(|e| format!("{} ({})", e.error.message, e.error.code))
        .unwrap_or_else(|_| format!("HTTP {status}"));
    if status.is_client_error() {
        RemoteError::Refused(format!("the server refused {what}: {said}"))
    } else {
        RemoteError::Trouble(format!("the server failed: {said}"))
    }
}

/// The whole body of an answer, at most [`MAX_ANSWER`] bytes.
pub(crate) async fn read_all(mut body: Incoming) -> Result<Vec<u8>, RemoteError> {
    let mut out = Vec::new();
    while let Some(frame) = within(SILENCE, "the answer", body.frame()).await? {
        let frame = frame.map_err(|e| RemoteError::Trouble(format!("reading the answer: {e}")))?;
        if let Some(data) = frame.data_ref() {
            if out.len() + data.len() > MAX_ANSWER {
                return Err(RemoteError::Trouble(format!(
                    "the server's answer is over {MAX_ANSWER} bytes"
                )));
            }
            out.extend_from_slice(data);
        }
    }
    Ok(out)
}

/// Reads Server-Sent Events until `done`, whose data is the finished record.
async fn done_event(mut body: Incoming) -> Result<ProbeRecord, RemoteError> {
    let mut sse = SseReader::default();
    while let Some(frame) = within(SILENCE, "the probe's events", body.frame()).await? {
        let frame = frame.map_err(|e| RemoteError::Trouble(format!("reading the events: {e}")))?;
        let Some(data) = frame.data_ref() else {
            continue;
        };
        for (event, data) in sse.push(data)? {
            if event == "done" {
                return serde_json::from_str(&data).map_err(|e| {
                    RemoteError::Trouble(format!("the server's final record is unreadable: {e}"))
                });
            }
        }
    }
    Err(RemoteError::Trouble(
        "the server ended the event stream before the probe was done".into(),
    ))
}

/// An incremental Server-Sent Events parser: bytes in, whole `(event, data)` pairs out.
#[derive(Default)]
struct SseReader {
    pending: Vec<u8>,
    event: String,
    data: String,
}

impl SseReader {
    /// Takes more bytes; returns the events they complete.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<(String, String)>, RemoteError> {
        if self.pending.len() + self.data.len() + bytes.len() > MAX_ANSWER {
            return Err(RemoteError::Trouble(format!(
                "an event from the server is over {MAX_ANSWER} bytes"
            )));
        }
        self.pending.extend_from_slice(bytes);
        let mut done = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() || !self.event.is_empty() {
                    let event = std::mem::take(&mut self.event);
                    let data = std::mem::take(&mut self.data);
                    done.push((
                        if event.is_empty() {
                            "message".into()
                        } else {
                            event
                        },
                        data,
                    ));
                }
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.event = value.to_owned(),
                "data" => {
                    if !self.data.is_empty() {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                }
                _ => {}
            }
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_become_bases_and_bad_ones_are_refused() {
        assert_eq!(
            base_url("http://127.0.0.1:8080").unwrap().as_str(),
            "http://127.0.0.1:8080/"
        );
        assert_eq!(
            base_url("https://h123.example/tools?x=1").unwrap().as_str(),
            "https://h123.example/tools/"
        );
        assert!(matches!(base_url("ftp://x/"), Err(RemoteError::Refused(_))));
        assert!(matches!(base_url("nonsense"), Err(RemoteError::Refused(_))));
    }

    #[test]
    fn events_are_parsed_across_chunk_boundaries() {
        let mut sse = SseReader::default();
        assert!(sse.push(b": keep-alive\n\nevent: pha").unwrap().is_empty());
        let got = sse
            .push(b"se\r\nid: 0\ndata: {\"a\":1}\n\nevent: done\ndata: x\ndata: y\n\n")
            .unwrap();
        assert_eq!(
            got,
            vec![
                ("phase".to_string(), "{\"a\":1}".to_string()),
                ("done".to_string(), "x\ny".to_string()),
            ]
        );
    }

    #[test]
    fn four_hundreds_are_refusals_naming_the_code_and_the_rest_trouble() {
        let body = br#"{"error":{"code":"blocked_target","message":"10.0.0.1 is private"}}"#;
        assert_eq!(
            refusal(StatusCode::FORBIDDEN, body, "the probe"),
            RemoteError::Refused(
                "the server refused the probe: 10.0.0.1 is private (blocked_target)".into()
            )
        );
        assert_eq!(
            refusal(StatusCode::BAD_GATEWAY, b"<html>", "the probe"),
            RemoteError::Trouble("the server failed: HTTP 502 Bad Gateway".into())
        );
    }
}
