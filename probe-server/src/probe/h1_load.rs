//! HTTP/1.1 for load (the bench's requests, and a probe's requests at once):
//! the request written and the response read by hand on a kept-alive
//! connection, in the sending task itself. Hyper's client (the probe's, in
//! `h1`) drives each connection from a task of its own, reached through a
//! channel: two task wake-ups and a request and header map built per request,
//! which wrk spends none of: 12.4 µs of CPU per request with hyper, 9.7
//! without, against wrk's 12.0 (loopback, TLS; figures in docs/bench.md).
//! The limits are the probe's: a response head of at most
//! [`MAX_HEADER_SECTION`] bytes and [`MAX_RESPONSE_HEADERS`] headers, a body
//! read up to `max_body` bytes (then the connection is dropped), chunk lines
//! and trailers within the head's cap; so a connection holds at most one head
//! cap plus one read of memory, whatever the server sends.

use super::connection::{ConnectSettings, Io, Target, open_tcp_tls};
use super::failure::{failure, from_io};
use super::h1::{ALPN, H1};
use super::http::{MAX_HEADER_SECTION, MAX_RESPONSE_HEADERS, RequestSpec};
use super::load::{Load, Reply};
use super::trace::{self, AttemptTrace};
use super::wire::{TimedIo, WireTap};
use bytes::{Buf, BytesMut};
use h123_shared::{Failure, FailureKind, Phase};
use http::Method;
use http::header::{CONTENT_LENGTH, HOST, USER_AGENT};
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Mutex;

/// Bytes asked of the connection per read (a TLS record's payload at most).
const READ_SIZE: usize = 16 * 1024;

/// A kept-alive HTTP/1.1 connection for load.
pub struct Keepalive {
    io: TimedIo<Box<dyn Io>>,
    /// Bytes read and not consumed yet.
    buf: BytesMut,
    /// The request's bytes, rebuilt in place for each request.
    request: Vec<u8>,
    /// Whether the connection can carry another request: false while one is
    /// under way (so a request dropped halfway, by a timeout, leaves it
    /// false), after the server closes it, and when a body was left unread.
    reusable: bool,
}

/// A bench worker's HTTP/1.1 connection: one request at a time, so it is
/// locked for each request (uncontended: one worker per connection).
#[derive(Clone)]
pub struct H1Handle(Arc<Mutex<Keepalive>>);

impl Load for H1 {
    const ONE_AT_A_TIME: bool = true;

    type Handle = H1Handle;

    async fn open_for_load(
        target: &Target<'_>,
        settings: &ConnectSettings,
    ) -> Result<H1Handle, Failure> {
        let mut scratch = AttemptTrace::start();
        let config = settings.tls_config(ALPN);
        let (io, _) =
            open_tcp_tls(target, settings, config, WireTap::silent(), &mut scratch).await?;
        Ok(H1Handle(Arc::new(Mutex::new(Keepalive {
            io,
            buf: BytesMut::with_capacity(READ_SIZE),
            request: Vec::new(),
            reusable: true,
        }))))
    }

    async fn send(handle: &mut H1Handle, spec: &RequestSpec) -> Result<Reply, Failure> {
        handle.0.lock().await.exchange(spec).await
    }

    fn is_closed(handle: &H1Handle) -> bool {
        handle.0.try_lock().is_ok_and(|conn| !conn.reusable)
    }
}

/// How a response's body ends (RFC 9112, section 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// No body (HEAD, 204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// Chunks, up to the last (empty) one and the trailers.
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

/// What the connection needs to know of a final response's head.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    status: u16,
    framing: Framing,
    /// Whether the server keeps the connection open afterwards.
    keep_alive: bool,
}

impl Keepalive {
    /// Sends `spec` and reads the response, its body up to `spec.max_body` bytes.
    async fn exchange(&mut self, spec: &RequestSpec) -> Result<Reply, Failure> {
        if !self.reusable {
            return Err(failure(
                Phase::Send,
                FailureKind::Reset,
                "the connection was closed after the previous response",
            ));
        }
        self.reusable = false;
        write_request(spec, &mut self.request);
        self.io
            .write_all(&self.request)
            .await
            .map_err(|e| from_io(Phase::Send, &e))?;
        self.io
            .flush()
            .await
            .map_err(|e| from_io(Phase::Send, &e))?;
        let head = self.read_head(spec.method == Method::HEAD).await?;
        let headers_at = trace::now();
        let (body_bytes, whole) = match head.framing {
            Framing::Empty => (0, true),
            Framing::Length(n) => self.read_length(n, spec.max_body).await?,
            Framing::Chunked => self.read_chunked(spec.max_body).await?,
            Framing::UntilClose => (self.read_until_close(spec.max_body).await?, false),
        };
        // Bytes past the response were never asked for: the connection is out of step.
        self.reusable = whole && head.keep_alive && self.buf.is_empty();
        Ok(Reply {
            status: head.status,
            headers_at,
            body_bytes,
        })
    }

    /// Reads more of the response into the buffer; an end of stream is an error in `phase`.
    async fn fill(&mut self, phase: Phase) -> Result<(), Failure> {
        match self.read_some().await {
            Ok(0) => Err(failure(
                phase,
                FailureKind::Reset,
                "the server closed the connection before the response ended",
            )),
            Ok(_) => Ok(()),
            Err(e) => Err(from_io(phase, &e)),
        }
    }

    async fn read_some(&mut self) -> io::Result<usize> {
        self.buf.reserve(READ_SIZE);
        self.io.read_buf(&mut self.buf).await
    }

    /// Reads heads until a final one (skipping 1xx), consuming them.
    async fn read_head(&mut self, head_request: bool) -> Result<Head, Failure> {
        loop {
            match parse_head(&self.buf, head_request)? {
                Some((len, head)) => {
                    self.buf.advance(len);
                    if let Some(head) = head {
                        return Ok(head);
                    }
                }
                None if self.buf.len() >= MAX_HEADER_SECTION => {
                    return Err(protocol(
                        Phase::Wait,
                        format!("response head over {MAX_HEADER_SECTION} bytes"),
                    ));
                }
                None => self.fill(Phase::Wait).await?,
            }
        }
    }

    /// Reads a body of `len` bytes, stopping once `max` are in; returns
    /// the bytes read and whether that was the whole body.
    async fn read_length(&mut self, len: u64, max: u64) -> Result<(u64, bool), Failure> {
        let mut read = 0;
        loop {
            let take = (len - read).min(self.buf.len() as u64);
            self.buf.advance(take as usize);
            read += take;
            if read == len || read >= max {
                return Ok((read, read == len));
            }
            self.fill(Phase::Receive).await?;
        }
    }

    /// Reads a chunked body to its end (chunks, last chunk, trailers),
    /// stopping once `max` bytes are in; returns the data bytes read and
    /// whether that was the whole body.
    async fn read_chunked(&mut self, max: u64) -> Result<(u64, bool), Failure> {
        let mut read = 0;
        loop {
            if read >= max {
                return Ok((read, false));
            }
            let size = match httparse::parse_chunk_size(&self.buf) {
                Ok(httparse::Status::Complete((used, size))) => {
                    self.buf.advance(used);
                    size
                }
                Ok(httparse::Status::Partial) if self.buf.len() < MAX_HEADER_SECTION => {
                    self.fill(Phase::Receive).await?;
                    continue;
                }
                _ => return Err(protocol(Phase::Receive, "malformed chunk size line")),
            };
            if size == 0 {
                self.read_trailers().await?;
                return Ok((read, true));
            }
            let (got, whole) = self.read_length(size, max - read).await?;
            read += got;
            if !whole {
                return Ok((read, false));
            }
            while self.buf.len() < 2 {
                self.fill(Phase::Receive).await?;
            }
            if !self.buf.starts_with(b"\r\n") {
                return Err(protocol(Phase::Receive, "chunk not ended by CRLF"));
            }
            self.buf.advance(2);
        }
    }

    /// Reads the trailer section after the last chunk, up to its empty line.
    async fn read_trailers(&mut self) -> Result<(), Failure> {
        let mut seen = 0;
        loop {
            match self.buf.windows(2).position(|w| w == b"\r\n") {
                Some(end) => {
                    self.buf.advance(end + 2);
                    if end == 0 {
                        return Ok(());
                    }
                    seen += end + 2;
                }
                None => self.fill(Phase::Receive).await?,
            }
            if seen + self.buf.len() > MAX_HEADER_SECTION {
                return Err(protocol(
                    Phase::Receive,
                    format!("trailers over {MAX_HEADER_SECTION} bytes"),
                ));
            }
        }
    }

    /// Reads a body that ends with the connection, stopping once `max` bytes are in.
    async fn read_until_close(&mut self, max: u64) -> Result<u64, Failure> {
        let mut read = self.buf.len() as u64;
        self.buf.clear();
        while read < max {
            match self.read_some().await {
                Ok(0) => break,
                Ok(n) => read += n as u64,
                // A TLS peer that closes without close_notify ends the body all the same.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(from_io(Phase::Receive, &e)),
            }
            self.buf.clear();
        }
        Ok(read)
    }
}

fn protocol(phase: Phase, message: impl Into<String>) -> Failure {
    failure(phase, FailureKind::Protocol, message)
}

/// Writes the request `spec` describes into `out`, as hyper's client would:
/// origin-form target, `Host` and `User-Agent` unless given, the given
/// headers (a later one replacing an earlier one of the same name),
/// `Content-Length` for a body (or an empty one where a body is expected).
fn write_request(spec: &RequestSpec, out: &mut Vec<u8>) {
    let url = &spec.url;
    out.clear();
    out.extend_from_slice(spec.method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(url[url::Position::BeforePath..url::Position::AfterQuery].as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let given = |name: &http::HeaderName| spec.headers.iter().any(|(n, _)| n == name);
    let mut header = |name: &[u8], value: &[u8]| {
        for part in [name, b": ", value, b"\r\n"] {
            out.extend_from_slice(part);
        }
    };
    if !given(&HOST) {
        let authority = &url[url::Position::BeforeHost..url::Position::BeforePath];
        header(b"host", authority.as_bytes());
    }
    if !given(&USER_AGENT) {
        header(
            b"user-agent",
            concat!("h123/", env!("CARGO_PKG_VERSION")).as_bytes(),
        );
    }
    for (i, (name, value)) in spec.headers.iter().enumerate() {
        if !spec.headers[i + 1..].iter().any(|(n, _)| n == name) {
            header(name.as_str().as_bytes(), value.as_bytes());
        }
    }
    let expects_body = matches!(spec.method, Method::POST | Method::PUT | Method::PATCH);
    if !given(&CONTENT_LENGTH) && (!spec.body.is_empty() || expects_body) {
        header(b"content-length", spec.body.len().to_string().as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&spec.body);
}

/// Parses a response head at the start of `buf`: `None` while incomplete,
/// else its length and, for a final (not 1xx) response, what follows it.
fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<(usize, Option<Head>)>, Failure> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_RESPONSE_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(protocol(
                Phase::Wait,
                format!("more than {MAX_RESPONSE_HEADERS} response headers"),
            ));
        }
        Err(e) => return Err(protocol(Phase::Wait, format!("bad response head: {e}"))),
    };
    let status = response.code.unwrap_or_default();
    match status {
        101 => return Err(protocol(Phase::Wait, "101 Switching Protocols unasked")),
        100..=199 => return Ok(Some((len, None))),
        _ => {}
    }
    let mut length: Option<u64> = None;
    let mut chunked = None;
    let mut close = response.version == Some(0);
    for h in response.headers.iter() {
        let value = || String::from_utf8_lossy(h.value);
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = value().trim().parse::<u64>().ok();
            match (n, length) {
                (Some(n), None) => length = Some(n),
                (Some(n), Some(m)) if n == m => {}
                _ => return Err(protocol(Phase::Wait, "bad or conflicting Content-Length")),
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            let codings = value();
            let last = codings.rsplit(',').next().map(str::trim);
            chunked = Some(last.is_some_and(|c| c.eq_ignore_ascii_case("chunked")));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in value().split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    close = true;
                } else if token.eq_ignore_ascii_case("keep-alive") && response.version == Some(0) {
                    close = false;
                }
            }
        }
    }
    let framing = if head_request || status == 204 || status == 304 {
        Framing::Empty
    } else {
        match (chunked, length) {
            (Some(true), _) => Framing::Chunked,
            (Some(false), _) | (None, None) => Framing::UntilClose,
            (None, Some(n)) => Framing::Length(n),
        }
    };
    Ok(Some((
        len,
        Some(Head {
            status,
            framing,
            keep_alive: !close && framing != Framing::UntilClose,
        }),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Option<(usize, Option<Head>)> {
        parse_head(text.as_bytes(), false).expect("parses")
    }

    fn final_head(text: &str) -> Head {
        head(text).and_then(|(_, h)| h).expect("a final head")
    }

    #[test]
    fn a_head_is_incomplete_until_its_empty_line() {
        assert_eq!(head("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"), None);
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        let (len, parsed) = head(text).expect("complete");
        assert_eq!(&text[len..], "hi");
        assert_eq!(
            parsed,
            Some(Head {
                status: 200,
                framing: Framing::Length(2),
                keep_alive: true
            })
        );
    }

    #[test]
    fn framing_follows_rfc_9112() {
        let chunked =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(final_head(chunked).framing, Framing::Chunked);
        let unframed = "HTTP/1.1 200 OK\r\n\r\n";
        assert_eq!(final_head(unframed).framing, Framing::UntilClose);
        assert!(!final_head(unframed).keep_alive);
        assert_eq!(
            final_head("HTTP/1.1 204 No Content\r\n\r\n").framing,
            Framing::Empty
        );
        let sized = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
        let for_head = parse_head(sized.as_bytes(), true).expect("parses");
        assert_eq!(
            for_head.and_then(|(_, h)| h).map(|h| h.framing),
            Some(Framing::Empty)
        );
    }

    #[test]
    fn the_server_closing_or_http_1_0_ends_keep_alive() {
        assert!(
            !final_head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                .keep_alive
        );
        assert!(!final_head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive);
        assert!(
            final_head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n")
                .keep_alive
        );
    }

    #[test]
    fn interim_responses_are_skipped_and_bad_heads_fail() {
        assert!(matches!(
            head("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"),
            Some((_, None))
        ));
        for bad in [
            "HTTP/1.1 101 Switching Protocols\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "NOT HTTP\r\n\r\n",
        ] {
            assert!(parse_head(bad.as_bytes(), false).is_err(), "{bad}");
        }
        let many: String = (0..=MAX_RESPONSE_HEADERS)
            .map(|i| format!("x-{i}: 1\r\n"))
            .collect();
        let text = format!("HTTP/1.1 200 OK\r\n{many}\r\n");
        assert!(parse_head(text.as_bytes(), false).is_err());
    }

    #[test]
    fn the_request_is_written_as_hyper_would() {
        let spec = |method: Method,
                    headers: Vec<(http::HeaderName, http::HeaderValue)>,
                    body: &'static [u8]| RequestSpec {
            method,
            url: url::Url::parse("https://example.test:8443/a?b=1").expect("url"),
            headers,
            body: bytes::Bytes::from_static(body),
            max_body: 1,
            phase_limit: std::time::Duration::from_secs(1),
        };
        let mut out = Vec::new();
        write_request(&spec(Method::GET, Vec::new(), b""), &mut out);
        let ua = concat!("h123/", env!("CARGO_PKG_VERSION"));
        assert_eq!(
            String::from_utf8_lossy(&out),
            format!("GET /a?b=1 HTTP/1.1\r\nhost: example.test:8443\r\nuser-agent: {ua}\r\n\r\n")
        );
        let headers = vec![
            (HOST, http::HeaderValue::from_static("other")),
            (http::header::ACCEPT, http::HeaderValue::from_static("x")),
            (http::header::ACCEPT, http::HeaderValue::from_static("y")),
        ];
        write_request(&spec(Method::POST, headers, b"body"), &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            format!(
                "POST /a?b=1 HTTP/1.1\r\nuser-agent: {ua}\r\nhost: other\r\naccept: y\r\ncontent-length: 4\r\n\r\nbody"
            )
        );
    }

    /// A connection whose server side is `server`: what the test writes there is what the client reads.
    fn over_pipe() -> (Keepalive, tokio::io::DuplexStream) {
        let (client, server) = tokio::io::duplex(1 << 20);
        let io: Box<dyn Io> = Box::new(client);
        let conn = Keepalive {
            io: TimedIo::new(io, WireTap::silent()),
            buf: BytesMut::new(),
            request: Vec::new(),
            reusable: true,
        };
        (conn, server)
    }

    fn get(max_body: u64) -> RequestSpec {
        RequestSpec {
            method: Method::GET,
            url: url::Url::parse("http://example.test/").expect("url"),
            headers: Vec::new(),
            body: bytes::Bytes::new(),
            max_body,
            phase_limit: std::time::Duration::from_secs(1),
        }
    }

    /// Sends a GET over `conn` with `response` already waiting on the server side.
    async fn answered(
        conn: &mut Keepalive,
        server: &mut tokio::io::DuplexStream,
        response: &str,
        max_body: u64,
    ) -> Result<Reply, Failure> {
        server
            .write_all(response.as_bytes())
            .await
            .expect("server writes");
        conn.exchange(&get(max_body)).await
    }

    #[tokio::test]
    async fn chunked_and_sized_bodies_are_counted_and_the_connection_kept() {
        let (mut conn, mut server) = over_pipe();
        let chunked = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n3\r\nabc\r\n0\r\nx-trailer: 1\r\n\r\n";
        let reply = answered(&mut conn, &mut server, chunked, 1 << 20)
            .await
            .expect("a reply");
        assert_eq!((reply.status, reply.body_bytes), (200, 8));
        assert!(conn.reusable);
        let sized = "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope";
        let reply = answered(&mut conn, &mut server, sized, 1 << 20)
            .await
            .expect("a reply");
        assert_eq!((reply.status, reply.body_bytes), (404, 4));
        assert!(conn.reusable);
        let mut sent = vec![0; 2 * 64];
        let n = tokio::io::AsyncReadExt::read(&mut server, &mut sent)
            .await
            .expect("requests");
        assert!(
            String::from_utf8_lossy(&sent[..n])
                .starts_with("GET / HTTP/1.1\r\nhost: example.test\r\n")
        );
    }

    #[tokio::test]
    async fn a_body_past_the_cap_or_a_close_ends_the_connection() {
        let (mut conn, mut server) = over_pipe();
        let big = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{}",
            "x".repeat(50_000)
        );
        let reply = answered(&mut conn, &mut server, &big, 1000)
            .await
            .expect("a reply");
        assert!(
            reply.body_bytes >= 1000 && reply.body_bytes < 100_000,
            "{}",
            reply.body_bytes
        );
        assert!(!conn.reusable);
        let again = conn
            .exchange(&get(1000))
            .await
            .expect_err("the connection is spent");
        assert_eq!(again.kind, FailureKind::Reset);

        let (mut conn, mut server) = over_pipe();
        let close = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
        let reply = answered(&mut conn, &mut server, close, 1000)
            .await
            .expect("a reply");
        assert_eq!(reply.body_bytes, 2);
        assert!(!conn.reusable);

        let (mut conn, mut server) = over_pipe();
        server
            .write_all(b"HTTP/1.1 200 OK\r\n\r\nuntil the end")
            .await
            .expect("server writes");
        server.shutdown().await.expect("the server closes its side");
        let reply = conn.exchange(&get(1000)).await.expect("a reply");
        assert_eq!(reply.body_bytes, 13);
        assert!(!conn.reusable);
    }

    #[tokio::test]
    async fn a_response_cut_short_or_a_head_over_the_cap_fails() {
        let (mut conn, mut server) = over_pipe();
        server
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
            .await
            .expect("server writes");
        server.shutdown().await.expect("the server closes its side");
        let cut = conn.exchange(&get(1000)).await.expect_err("cut short");
        assert_eq!((cut.kind, cut.phase), (FailureKind::Reset, Phase::Receive));

        let (mut conn, mut server) = over_pipe();
        let huge = format!(
            "HTTP/1.1 200 OK\r\nx-big: {}\r\n",
            "a".repeat(MAX_HEADER_SECTION)
        );
        let failed = answered(&mut conn, &mut server, &huge, 1000)
            .await
            .expect_err("over the cap");
        assert_eq!(
            (failed.kind, failed.phase),
            (FailureKind::Protocol, Phase::Wait)
        );
    }
}
