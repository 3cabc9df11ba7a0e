//! Many requests at once (`streams`): after a protocol's attempts, N
//! requests for the same URL sent together, as N streams over one HTTP/2 or
//! HTTP/3 connection or over N HTTP/1.1 connections, each one's first byte
//! and completion timed from the moment they were sent. Under loss this is
//! where head-of-line blocking shows: a lost TCP segment holds every
//! HTTP/2 stream behind it, while QUIC holds only the stream whose packet
//! was lost.

use crate::format::ms;
use crate::json::ReadJson;
use crate::schema::{Failure, Micros, ProbeResult, Protocol, ProtocolRun};
use serde::{Deserialize, Serialize};

/// Most streams one probe may ask for (a server may allow fewer).
pub const MAX_STREAMS: u32 = 64;

/// One protocol's requests at once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StreamBurst {
    /// Connections they went over: 1 for HTTP/2 and HTTP/3, one per stream for HTTP/1.1.
    pub connections: u32,
    /// How long opening those connections took, before any request was sent.
    pub setup_us: Micros,
    /// Each request, in the order sent; times are offsets from the moment
    /// they were all sent.
    pub streams: Vec<StreamTiming>,
    /// Why nothing was sent (the connections could not be opened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

/// One request of a burst.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StreamTiming {
    /// When its response headers arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_us: Option<Micros>,
    /// When its last body byte arrived, or it failed.
    pub done_us: Micros,
    /// The response's status, once headers arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Body bytes received.
    pub body_bytes: u64,
    /// What went wrong, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

impl StreamTiming {
    /// Whether it completed with a status below 400.
    pub fn succeeded(&self) -> bool {
        self.failure.is_none() && self.status.is_some_and(|s| s < 400)
    }

    /// What went wrong, in words (`HTTP 503 at 12.0 ms`, `failed at 3.00 s:
    /// ...`); none when it completed below 400.
    pub fn problem(&self) -> Option<String> {
        match (&self.failure, self.status) {
            (Some(f), _) => Some(format!("failed at {}: {}", ms(self.done_us), f.message)),
            (None, Some(status)) if status >= 400 => {
                Some(format!("HTTP {status} at {}", ms(self.done_us)))
            }
            _ => None,
        }
    }
}

/// When a burst's successful streams completed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Spread {
    /// Streams that completed successfully.
    pub done: usize,
    /// Streams sent.
    pub sent: usize,
    /// The first to complete.
    pub first: Micros,
    /// A quarter had completed by then.
    pub p25: Micros,
    /// Half had.
    pub median: Micros,
    /// Three quarters had.
    pub p75: Micros,
    /// The last to complete.
    pub last: Micros,
}

/// The completion times of `burst`'s successful streams; none when none succeeded.
pub fn spread(burst: &StreamBurst) -> Option<Spread> {
    let mut done: Vec<u64> = burst
        .streams
        .iter()
        .filter(|s| s.succeeded())
        .map(|s| s.done_us.0)
        .collect();
    done.sort_unstable();
    let at = |q: f64| Micros(done[((done.len() - 1) as f64 * q).round() as usize]);
    (!done.is_empty()).then(|| Spread {
        done: done.len(),
        sent: burst.streams.len(),
        first: at(0.0),
        p25: at(0.25),
        median: at(0.5),
        p75: at(0.75),
        last: at(1.0),
    })
}

/// The runs of `result` that sent streams at once, in order.
pub fn bursts(result: &ProbeResult) -> impl Iterator<Item = (&ProtocolRun, &StreamBurst)> {
    result
        .runs
        .iter()
        .filter_map(|r| Some((r, r.streams.as_ref()?)))
}

/// A burst in words: `HTTP/2: 16 requests at once over 1 connection
/// finished between 21.0 and 250 ms (median 247 ms)`.
pub fn describe(protocol: Protocol, burst: &StreamBurst) -> String {
    let name = protocol.http_version();
    let over = match burst.connections {
        1 => "1 connection".to_owned(),
        n => format!("{n} connections"),
    };
    if let Some(f) = &burst.failure {
        return format!("{name}: requests at once not sent: {}", f.message);
    }
    let sent = burst.streams.len();
    let Some(s) = spread(burst) else {
        let why = burst
            .streams
            .iter()
            .find_map(|s| match (&s.failure, s.status) {
                (Some(f), _) => Some(f.message.clone()),
                (None, Some(status)) => Some(format!("HTTP {status}")),
                (None, None) => None,
            })
            .unwrap_or_default();
        return format!("{name}: none of {sent} requests at once over {over} succeeded: {why}");
    };
    let failed = match sent - s.done {
        0 => String::new(),
        n => format!("; {n} failed"),
    };
    let redirected = burst
        .streams
        .iter()
        .find_map(|s| s.status.filter(|st| (300..400).contains(st)))
        .map(|st| format!("; answered {st}, not followed"))
        .unwrap_or_default();
    format!(
        "{name}: {sent} requests at once over {over} finished between {} and {} (median {}){failed}{redirected}",
        ms(s.first),
        ms(s.last),
        ms(s.median)
    )
}

/// The requests at once of `result` in words: what was sent, then a line
/// per protocol; nothing when none were asked for.
pub fn lines(result: &ProbeResult) -> Vec<String> {
    let Some(count) = result.options.streams else {
        return Vec::new();
    };
    std::iter::once(format!(
        "Requests at once: {count} per protocol after its attempts, as streams over one connection \
         (HTTP/2, HTTP/3) or over {count} connections (HTTP/1.1), each timed from when all were sent"
    ))
    .chain(bursts(result).map(|(run, burst)| describe(run.protocol, burst)))
    .collect()
}

/// Whether `a`'s streams finished clearly sooner than `b`'s: the middle
/// halves of their completion times do not overlap (a's p75 before b's
/// p25), and the medians differ by more than 1 ms and 10% of the slower
/// (one burst each has no repeat to measure noise by, so a few percent of
/// scheduling is not called).
pub fn clearly_sooner(a: &Spread, b: &Spread) -> bool {
    let gap = b.median.0.saturating_sub(a.median.0);
    a.p75 < b.p25 && gap > 1_000 && gap * 10 > b.median.0
}

/// One row of the streams chart: a request's wait and transfer as fractions of the axis.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamBar {
    /// When headers arrived (a fraction of the axis), if they did.
    pub first_byte: Option<f64>,
    /// When it completed or failed.
    pub done: f64,
    /// Whether it succeeded.
    pub ok: bool,
    /// Its times in words, for a tooltip and the table.
    pub label: String,
}

/// The streams chart: every burst of `result` on one time axis, a bar per
/// request; the axis's end and the bars per protocol.
pub fn layout(result: &ProbeResult) -> (Micros, Vec<(Protocol, Vec<StreamBar>)>) {
    let end = bursts(result)
        .flat_map(|(_, b)| b.streams.iter().map(|s| s.done_us.0))
        .max()
        .unwrap_or(0)
        .max(1);
    let part = |us: Micros| us.0 as f64 / end as f64;
    let groups = bursts(result)
        .map(|(run, burst)| {
            let bars = burst
                .streams
                .iter()
                .enumerate()
                .map(|(i, s)| StreamBar {
                    first_byte: s.first_byte_us.map(part),
                    done: part(s.done_us),
                    ok: s.succeeded(),
                    label: format!(
                        "request {}: {}{}",
                        i + 1,
                        s.first_byte_us
                            .map(|f| format!("first byte {} · ", ms(f)))
                            .unwrap_or_default(),
                        s.problem()
                            .unwrap_or_else(|| format!("done {}", ms(s.done_us)))
                    ),
                })
                .collect();
            (run.protocol, bars)
        })
        .collect();
    (Micros(end), groups)
}

#[cfg(test)]
mod tests;
