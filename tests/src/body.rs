//! The response body type of the target, independent of the transport (h1 and h2 now, h3 later).

use std::fmt;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// Size of the largest data frame the target emits; generated bodies are slices of one static buffer.
pub const FRAME_BYTES: usize = 64 * 1024;

/// How long a failing body pauses after its last data frame before failing, so the transport
/// flushes the response head and that data first (hyper's h1 server closes the connection
/// without flushing on a body error; h2 drops a stream's queued frames when it resets it).
pub const FAIL_GRACE: Duration = Duration::from_millis(20);

/// How long each dripped body took from its route to the release of its last byte, in the
/// order they ended: the target's own account of a drip, which a busy machine's late timers
/// lengthen as they lengthen what the client sees. One list for the process: the tests that
/// read it take it whole, one at a time.
static DRIP_SPANS: Mutex<Vec<Duration>> = Mutex::new(Vec::new());

/// Takes the spans of the drips that ended since the last call, oldest first.
pub fn take_drip_spans() -> Vec<Duration> {
    DRIP_SPANS
        .lock()
        .map(|mut spans| std::mem::take(&mut *spans))
        .unwrap_or_default()
}

/// The filler every generated body is made of.
static FILL: [u8; FRAME_BYTES] = [b'x'; FRAME_BYTES];

/// The error a [`TargetBody`] fails with on purpose (`/close-mid-body`), so that hyper closes
/// an HTTP/1.1 connection or resets an HTTP/2 stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyError(&'static str);

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for BodyError {}

/// A response body: implements [`http_body::Body`] with `Bytes` data, so any transport that
/// polls frames (hyper's h1/h2 servers, an h3 stream loop) can send it.
pub struct TargetBody {
    kind: Kind,
}

/// What a [`TargetBody`] produces.
enum Kind {
    /// One chunk, then the end (`None` once sent).
    Full(Option<Bytes>),
    /// `remaining` filler bytes as fast as the reader takes them, then the end, or (if
    /// `fail_at_end`) an error after [`FAIL_GRACE`] (the timer, once started, in `grace`).
    Fill {
        remaining: u64,
        fail_at_end: bool,
        grace: Option<Pin<Box<Sleep>>>,
    },
    /// Filler bytes released on a schedule.
    Drip(Box<Drip>),
}

/// The state of a dripping body: `total` bytes released in `chunks` equal steps, step `i`
/// (1-based) due at `start + span * i / chunks`.
struct Drip {
    total: u64,
    chunks: u32,
    span: Duration,
    start: Instant,
    /// Steps already released.
    released_steps: u32,
    /// Bytes released so far (sent or pending).
    released_bytes: u64,
    /// Released bytes not yet handed out as frames.
    pending: u64,
    sleep: Pin<Box<Sleep>>,
}

impl TargetBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self::full(Bytes::new())
    }

    /// A body of exactly these bytes.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        let chunk = if bytes.is_empty() { None } else { Some(bytes) };
        TargetBody {
            kind: Kind::Full(chunk),
        }
    }

    /// `len` filler bytes, sent as fast as the connection takes them.
    pub fn filler(len: u64) -> Self {
        TargetBody {
            kind: Kind::Fill {
                remaining: len,
                fail_at_end: false,
                grace: None,
            },
        }
    }

    /// `len` filler bytes and then, [`FAIL_GRACE`] later, an error (a body cut short on purpose).
    pub fn failing_after(len: u64) -> Self {
        TargetBody {
            kind: Kind::Fill {
                remaining: len,
                fail_at_end: true,
                grace: None,
            },
        }
    }

    /// `len` filler bytes released in about 10 ms steps spread over `span`, counted from
    /// `start`: the last byte is released at `start + span`. With a zero span (or fewer than
    /// two steps) it behaves like one chunk at `start + span`.
    pub fn drip(len: u64, span: Duration, start: Instant) -> Self {
        if len == 0 {
            return Self::empty();
        }
        let steps = (span.as_millis() / 10).clamp(1, u128::from(u32::MAX)) as u64;
        let chunks = steps.min(len) as u32;
        let first_due = start + span / chunks;
        TargetBody {
            kind: Kind::Drip(Box::new(Drip {
                total: len,
                chunks,
                span,
                start,
                released_steps: 0,
                released_bytes: 0,
                pending: 0,
                sleep: Box::pin(tokio::time::sleep_until(first_due)),
            })),
        }
    }
}

/// A frame of `len` (at most [`FRAME_BYTES`]) filler bytes.
fn fill_frame(len: u64) -> Frame<Bytes> {
    let len = usize::try_from(len).unwrap_or(FRAME_BYTES).min(FRAME_BYTES);
    Frame::data(Bytes::from_static(&FILL[..len]))
}

impl Body for TargetBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        match &mut this.kind {
            Kind::Full(chunk) => Poll::Ready(chunk.take().map(|b| Ok(Frame::data(b)))),
            Kind::Fill {
                remaining,
                fail_at_end,
                grace,
            } => {
                if *remaining > 0 {
                    let len = (*remaining).min(FRAME_BYTES as u64);
                    *remaining -= len;
                    Poll::Ready(Some(Ok(fill_frame(len))))
                } else if *fail_at_end {
                    let timer =
                        grace.get_or_insert_with(|| Box::pin(tokio::time::sleep(FAIL_GRACE)));
                    ready!(timer.as_mut().poll(cx));
                    *fail_at_end = false;
                    Poll::Ready(Some(Err(BodyError("body cut short on purpose"))))
                } else {
                    Poll::Ready(None)
                }
            }
            Kind::Drip(drip) => loop {
                if drip.pending > 0 {
                    let len = drip.pending.min(FRAME_BYTES as u64);
                    drip.pending -= len;
                    return Poll::Ready(Some(Ok(fill_frame(len))));
                }
                if drip.released_steps >= drip.chunks {
                    return Poll::Ready(None);
                }
                ready!(drip.sleep.as_mut().poll(cx));
                drip.released_steps += 1;
                let due = u128::from(drip.total) * u128::from(drip.released_steps)
                    / u128::from(drip.chunks);
                let due = u64::try_from(due).unwrap_or(drip.total);
                drip.pending = due - drip.released_bytes;
                drip.released_bytes = due;
                if drip.released_steps < drip.chunks {
                    let next = drip.start + drip.span * (drip.released_steps + 1) / drip.chunks;
                    drip.sleep.as_mut().reset(next);
                } else if let Ok(mut spans) = DRIP_SPANS.lock() {
                    let now = Instant::from_std(crate::clock::now());
                    spans.push(now - drip.start);
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Full(chunk) => chunk.is_none(),
            Kind::Fill {
                remaining,
                fail_at_end,
                ..
            } => *remaining == 0 && !*fail_at_end,
            Kind::Drip(drip) => drip.pending == 0 && drip.released_steps >= drip.chunks,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(chunk) => SizeHint::with_exact(chunk.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Fill {
                remaining,
                fail_at_end: false,
                ..
            } => SizeHint::with_exact(*remaining),
            Kind::Fill { remaining, .. } => {
                let mut hint = SizeHint::new();
                hint.set_lower(*remaining);
                hint
            }
            Kind::Drip(drip) => {
                SizeHint::with_exact(drip.total - drip.released_bytes + drip.pending)
            }
        }
    }
}
