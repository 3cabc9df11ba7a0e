//! A probe's live view drawn once per change and shared by all its viewers: the first viewer
//! starts a drawer that folds the probe's progress and draws its page at most every
//! [`VIEW_INTERVAL`], each drawing encoded once as a Server-Sent Event; every viewer sends the
//! latest one it has not sent, so sixty viewers cost about what one does, and a slow reader
//! only skips drawings. The drawer stops when the probe finishes or its last viewer leaves.

use super::super::progress::{Progress, Source};
use super::VIEW_INTERVAL;
use super::fold::View;
use crate::probe::trace::unix_ms;
use crate::server::AppState;
use axum::body::Bytes;
use futures_util::stream::{self, BoxStream, Stream};
use futures_util::{FutureExt, StreamExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::watch;

/// Longest a viewer's stream stays silent: then it sends a comment, as the JSON stream does.
pub const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// One drawing, ready to send: its SSE frame, and whether it is the last (`done`).
#[derive(Debug)]
pub struct Frame {
    /// The whole event (`event: view` or `done`, the markup as `data:` lines, a blank line).
    pub bytes: Bytes,
    /// Whether the probe has finished: nothing follows this drawing.
    pub done: bool,
}

/// The drawers of the probes being viewed, by probe id.
#[derive(Debug, Default)]
pub struct Feeds {
    feeds: Mutex<HashMap<String, Weak<Feed>>>,
}

/// One probe's drawings, shared by its viewers (each holds the feed while it views).
#[derive(Debug)]
pub struct Feed {
    latest: watch::Receiver<Option<Arc<Frame>>>,
}

impl Feeds {
    /// Probe `id`'s feed: the one its viewers share, or a new one drawn from `source` (found
    /// by the caller, so an unknown probe is a 404 before any feed exists).
    pub fn join(&self, state: &AppState, id: &str, source: Source) -> Arc<Feed> {
        let mut feeds = self.lock();
        if let Some(feed) = feeds.get(id).and_then(Weak::upgrade)
            && feed.is_current()
        {
            return feed;
        }
        feeds.retain(|_, feed| feed.strong_count() > 0);
        let (sender, latest) = watch::channel(None);
        let feed = Arc::new(Feed { latest });
        feeds.insert(id.to_owned(), Arc::downgrade(&feed));
        tokio::spawn(draw(state.clone(), source, sender));
        feed
    }

    /// Probe `id`'s feed when viewers hold one that is still drawing or has drawn its end.
    pub fn get(&self, id: &str) -> Option<Arc<Feed>> {
        let feed = self.lock().get(id).and_then(Weak::upgrade)?;
        feed.is_current().then_some(feed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Weak<Feed>>> {
        self.feeds.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Feed {
    /// Whether its drawer still runs or drew the end (not dropped with its probe mid-way).
    fn is_current(&self) -> bool {
        self.latest.has_changed().is_ok() || self.latest.borrow().as_ref().is_some_and(|f| f.done)
    }

    /// One viewer's event stream: the latest drawing, each newer one as it comes (those drawn
    /// while the viewer was still sending one are skipped), a comment after [`KEEP_ALIVE`]
    /// without one, ending after `done`, or when the probe is dropped without finishing.
    pub fn view(self: Arc<Self>) -> impl Stream<Item = Bytes> + Send + 'static {
        let mut latest = self.latest.clone();
        // Not seen yet, so the drawing there now is sent first.
        latest.mark_changed();
        stream::unfold(Some((self, latest)), |viewing| async move {
            let (feed, mut latest) = viewing?;
            loop {
                match tokio::time::timeout(KEEP_ALIVE, latest.changed()).await {
                    Err(_) => return Some((Bytes::from_static(b":\n\n"), Some((feed, latest)))),
                    Ok(Err(_)) => return None,
                    Ok(Ok(())) => {}
                }
                let Some(frame) = latest.borrow_and_update().clone() else {
                    continue;
                };
                let next = (!frame.done).then_some((feed, latest));
                return Some((frame.bytes.clone(), next));
            }
        })
    }
}

/// Folds `source`'s progress and publishes a drawing per batch, at least [`VIEW_INTERVAL`]
/// apart, until the probe finishes (the `done` drawing) or nobody views it.
async fn draw(state: AppState, source: Source, sender: watch::Sender<Option<Arc<Frame>>>) {
    let mut view = View::new(source.record());
    let mut progress = if view.is_finished() {
        stream::empty().boxed()
    } else {
        source.follow(state, 0)
    };
    let mut drawn = false;
    loop {
        if !view.is_finished() {
            let next = async {
                if drawn {
                    tokio::time::sleep(VIEW_INTERVAL).await;
                }
                fold_ready(&mut view, &mut progress).await
            };
            tokio::select! {
                () = sender.closed() => return,
                folded = next => if !folded {
                    // The probe was dropped without finishing; its viewers' streams end.
                    return;
                },
            }
        }
        let done = view.is_finished();
        let frame = Frame {
            bytes: event(if done { "done" } else { "view" }, &view.markup(unix_ms())),
            done,
        };
        sender.send_replace(Some(Arc::new(frame)));
        if done {
            return;
        }
        drawn = true;
    }
}

/// Folds the next step of `progress` into `view`, then every one ready at once after it;
/// `false` when the progress ended first.
async fn fold_ready(view: &mut View, progress: &mut BoxStream<'static, Progress>) -> bool {
    let Some(first) = progress.next().await else {
        return false;
    };
    view.apply(first);
    while let Some(Some(next)) = progress.next().now_or_never() {
        view.apply(next);
    }
    true
}

/// A Server-Sent Event named `name` with `data`, as axum's `Event` writes one: a `data:` line
/// per line (a line ends at `\n` or `\r`), then a blank line.
pub fn event(name: &str, data: &str) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + name.len() + 32);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    let mut start = 0;
    for (i, byte) in data.bytes().enumerate() {
        if byte == b'\n' || byte == b'\r' {
            out.extend_from_slice(&data.as_bytes()[start..=i]);
            out.extend_from_slice(b"data: ");
            start = i + 1;
        }
    }
    out.extend_from_slice(&data.as_bytes()[start..]);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;
    use axum::response::sse::{Event, Sse};
    use http_body_util::BodyExt;

    /// The bytes axum's own SSE writes for one event.
    async fn axum_bytes(name: &str, data: &str) -> Bytes {
        let event = Event::default().event(name).data(data);
        let once = stream::iter([Ok::<_, std::convert::Infallible>(event)]);
        let body = Sse::new(once).into_response().into_body();
        body.collect().await.unwrap().to_bytes()
    }

    #[tokio::test]
    async fn an_event_is_written_as_axum_writes_it() {
        for data in ["<div>\n  <p>a</p>\n</div>", "one line", "cr\rlf\r\nend\n"] {
            assert_eq!(
                event("view", data),
                axum_bytes("view", data).await,
                "{data:?}"
            );
        }
    }
}
