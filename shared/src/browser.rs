//! The user's own browser as a vantage: what its Resource Timing entries show of requests it made
//! to the probed URL, checked, laid out on the server's time axis and compared with the server's
//! own measurement per protocol by the verdict's significance rule.
//!
//! A browser shows less than the probe: without `Timing-Allow-Origin` on the target only each
//! request's total is visible (no phases, no protocol, no connection state); it picks its own
//! protocol (through ALPN and Alt-Svc); it may reuse a connection it already had. A
//! [`BrowserAttempt`] says which of these it saw.

use crate::chain::{ConnState, all_chains};
use crate::format::ms;
use crate::json::ReadJson;
use crate::schema::{Micros, Phase, ProbeResult, Protocol};
use crate::stats::PhaseStats;
use crate::verdict::significant;
use crate::waterfall::Bar;
use serde::{Deserialize, Serialize};

/// Requests a browser measurement makes, and the most one may hold.
pub const ATTEMPTS: usize = 5;

/// Most attempts a stored browser measurement may hold.
pub const MAX_ATTEMPTS: usize = 10;

/// Longest user agent kept, in characters (longer ones are cut).
pub const MAX_USER_AGENT: usize = 256;

/// Longest error text kept for a failed request, in characters.
pub const MAX_ERROR: usize = 200;

/// Longest time an attempt may report (the fetch gives up sooner).
pub const MAX_TOTAL: Micros = Micros(120_000_000);

/// What the browser measured, as stored with the probe's record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrowserRun {
    /// The browser's `User-Agent`, as it sent it to the server (no address is kept).
    #[serde(default)]
    pub user_agent: String,
    /// When it measured, milliseconds since the Unix epoch (set by the server on arrival).
    #[serde(default)]
    pub measured_at_unix_ms: u64,
    /// Its requests, in order.
    pub attempts: Vec<BrowserAttempt>,
    /// How its totals compare with the server's (computed by the server on arrival).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<BrowserFinding>,
}

/// One request the browser made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrowserAttempt {
    /// Its `nextHopProtocol` (`http/1.1`, `h2`, `h3`), absent when the target hid it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// From the request's start to the body's last byte (or to the failure).
    pub total_us: Micros,
    /// Whether it ran on a connection the browser already had; absent when hidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused: Option<bool>,
    /// Its phases from the request's start, in timeline order; empty when hidden.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<BrowserPhase>,
    /// Why the request failed (the browser names no phase), absent when it completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One phase the browser showed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrowserPhase {
    /// Which phase: `dns`, `connect`, `tls`, `quic` (HTTP/3's handshake), `wait` (request
    /// start to first byte, the request's sending included) or `receive`.
    pub phase: Phase,
    /// Its start, from the request's start.
    pub start_us: Micros,
    /// Its end, from the request's start.
    pub end_us: Micros,
}

/// A `PerformanceResourceTiming` entry's marks, in milliseconds on the page's clock (zero where
/// the browser hid them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// `startTime`.
    pub start: f64,
    /// `domainLookupStart`.
    pub dns_start: f64,
    /// `domainLookupEnd`.
    pub dns_end: f64,
    /// `connectStart`.
    pub connect_start: f64,
    /// `secureConnectionStart`.
    pub secure_start: f64,
    /// `connectEnd`.
    pub connect_end: f64,
    /// `requestStart`.
    pub request_start: f64,
    /// `responseStart`.
    pub response_start: f64,
    /// `responseEnd`.
    pub response_end: f64,
    /// `nextHopProtocol` (empty when hidden).
    pub protocol: String,
}

impl BrowserAttempt {
    /// The attempt a Resource Timing entry describes.
    pub fn from_marks(m: &Marks) -> BrowserAttempt {
        let at = |t: f64| Micros(((t - m.start).max(0.0) * 1000.0).round() as u64);
        let total_us = at(m.response_end);
        // A hidden entry has no requestStart; a visible one always has.
        if m.request_start <= 0.0 {
            return BrowserAttempt {
                protocol: None,
                total_us,
                reused: None,
                phases: Vec::new(),
                error: None,
            };
        }
        let h3 = m.protocol.starts_with("h3");
        let mut phases: Vec<BrowserPhase> = Vec::new();
        // Each phase starts no earlier than the one before ends (a request sent in QUIC's 0-RTT
        // data starts before the handshake ends): phases never overlap.
        let mut push = |phase, from: f64, to: f64| {
            let floor = phases.last().map_or(Micros(0), |p| p.end_us);
            let (start_us, end_us) = (at(from).max(floor), at(to));
            if from > 0.0 && end_us > start_us {
                phases.push(BrowserPhase {
                    phase,
                    start_us,
                    end_us,
                });
            }
        };
        push(Phase::Dns, m.dns_start, m.dns_end);
        let handshake_ends = if m.secure_start > m.connect_start && !h3 {
            m.secure_start
        } else {
            m.connect_end
        };
        let connect = if h3 { Phase::Quic } else { Phase::Connect };
        push(connect, m.connect_start, handshake_ends);
        if !h3 && m.secure_start > m.connect_start {
            push(Phase::Tls, m.secure_start, m.connect_end);
        }
        push(Phase::Wait, m.request_start, m.response_start);
        push(Phase::Receive, m.response_start, m.response_end);
        BrowserAttempt {
            protocol: (!m.protocol.is_empty()).then(|| m.protocol.clone()),
            total_us,
            reused: Some(m.connect_end <= m.connect_start),
            phases,
            error: None,
        }
    }

    /// A request that failed after `elapsed_ms`, for `error`.
    pub fn failed(elapsed_ms: f64, error: &str) -> BrowserAttempt {
        BrowserAttempt {
            protocol: None,
            total_us: Micros((elapsed_ms.max(0.0) * 1000.0).round() as u64),
            reused: None,
            phases: Vec::new(),
            error: Some(error.chars().take(MAX_ERROR).collect()),
        }
    }

    /// Whether the browser showed its phases (the target sent `Timing-Allow-Origin`).
    pub fn visible(&self) -> bool {
        self.reused.is_some()
    }

    /// The protocol it used, when the browser named one h123 measures.
    pub fn http(&self) -> Option<Protocol> {
        match self.protocol.as_deref()? {
            "http/1.1" => Some(Protocol::H1),
            "h2" => Some(Protocol::H2),
            p if p.starts_with("h3") => Some(Protocol::H3),
            _ => None,
        }
    }

    /// New or reused, when the browser showed it.
    pub fn state(&self) -> Option<ConnState> {
        self.reused
            .map(|r| if r { ConnState::Reused } else { ConnState::New })
    }
}

impl BrowserRun {
    /// Checks a measurement as a client sent it: the attempts' count, times and phases, and the
    /// texts' length.
    ///
    /// # Errors
    /// A sentence naming the first thing wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.attempts.is_empty() || self.attempts.len() > MAX_ATTEMPTS {
            return Err(format!(
                "attempts must hold 1 to {MAX_ATTEMPTS} requests (got {})",
                self.attempts.len()
            ));
        }
        for (i, a) in self.attempts.iter().enumerate() {
            let n = i + 1;
            if a.total_us > MAX_TOTAL {
                return Err(format!("attempt {n}: total_us is over {}", ms(MAX_TOTAL)));
            }
            if a.protocol.as_ref().is_some_and(|p| {
                p.is_empty()
                    || p.len() > 16
                    || !p.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"/.-".contains(&b)
                    })
            }) {
                return Err(format!(
                    "attempt {n}: protocol must be a nextHopProtocol such as h2 (1 to 16 characters)"
                ));
            }
            if a.error
                .as_ref()
                .is_some_and(|e| e.chars().count() > MAX_ERROR)
            {
                return Err(format!("attempt {n}: error is over {MAX_ERROR} characters"));
            }
            if a.error.is_some() && (a.reused.is_some() || !a.phases.is_empty()) {
                return Err(format!(
                    "attempt {n}: a failed request has no phases or connection state"
                ));
            }
            if !a.phases.is_empty() && a.reused.is_none() {
                return Err(format!(
                    "attempt {n}: phases come with reused (the browser showed both or neither)"
                ));
            }
            let mut previous: Option<&BrowserPhase> = None;
            for p in &a.phases {
                if !matches!(
                    p.phase,
                    Phase::Dns
                        | Phase::Connect
                        | Phase::Tls
                        | Phase::Quic
                        | Phase::Wait
                        | Phase::Receive
                ) {
                    return Err(format!(
                        "attempt {n}: a browser shows no {} phase",
                        p.phase.as_str()
                    ));
                }
                if p.start_us > p.end_us || p.end_us > a.total_us {
                    return Err(format!(
                        "attempt {n}: the {} phase must start before it ends, within the total",
                        p.phase.as_str()
                    ));
                }
                if previous.is_some_and(|q| q.phase >= p.phase || q.end_us > p.start_us) {
                    return Err(format!(
                        "attempt {n}: phases must be in timeline order, each once, without overlap"
                    ));
                }
                previous = Some(p);
            }
        }
        Ok(())
    }

    /// The time the common axis must show for this run: its longest request that completed
    /// (zero when none did).
    pub fn span(&self) -> Micros {
        self.attempts
            .iter()
            .filter(|a| a.error.is_none())
            .map(|a| a.total_us)
            .max()
            .unwrap_or(Micros(0))
    }

    /// A short name for the browser, from its user agent (e.g. `Chrome 131`), else `a browser`.
    pub fn browser_name(&self) -> String {
        let ua = &self.user_agent;
        let named = |token: &str, name: &str| {
            let version = ua.split(token).nth(1)?.split('.').next()?;
            Some(format!("{name} {version}"))
        };
        named("Edg/", "Edge")
            .or_else(|| named("Firefox/", "Firefox"))
            .or_else(|| named("HeadlessChrome/", "Headless Chrome"))
            .or_else(|| named("Chrome/", "Chrome"))
            .or_else(|| ua.contains("Safari/").then(|| "Safari".to_owned()))
            .unwrap_or_else(|| "a browser".to_owned())
    }
}

/// The query of a permalink that opens it as the page measuring from the browser (the only page
/// whose policy lets it fetch the probe's URL).
pub const MEASURE_QUERY: &str = "measure=browser";

/// Whether `query` (without or with its `?`) asks for the page measuring from the browser.
pub fn asks_to_measure(query: &str) -> bool {
    query
        .trim_start_matches('?')
        .split('&')
        .any(|pair| pair == MEASURE_QUERY)
}

/// Most origins a page measuring from the browser may connect to.
pub const MAX_ORIGINS: usize = 8;

/// The origins (`https://host:port`) a browser fetching `record`'s URL reaches: the URL's own and
/// those of the redirects the server followed, in order, each once (at most [`MAX_ORIGINS`];
/// only `http` and `https`, and only hosts of plain name or address characters), for the page's
/// `connect-src`.
pub fn origins(record: &crate::api::ProbeRecord) -> Vec<String> {
    let hops = record
        .result
        .runs
        .iter()
        .flat_map(|r| r.attempts.iter().map(|a| a.url.as_str()));
    let mut out: Vec<String> = Vec::new();
    for url in std::iter::once(record.options.url.as_str()).chain(hops) {
        let Some(parts) = crate::uri::parse(url) else {
            continue;
        };
        let plain = parts
            .host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-:".contains(&b));
        if !matches!(parts.scheme.as_str(), "http" | "https") || !plain || parts.port == 0 {
            continue;
        }
        let host = if parts.host.contains(':') {
            format!("[{}]", parts.host)
        } else {
            parts.host.to_ascii_lowercase()
        };
        let origin = format!("{}://{host}:{}", parts.scheme, parts.port);
        if !out.contains(&origin) && out.len() < MAX_ORIGINS {
            out.push(origin);
        }
    }
    out
}

/// One browser request as a row on the common axis.
#[derive(Clone, Debug, PartialEq)]
pub struct BrowserRow {
    /// 1-based request number.
    pub attempt: u32,
    /// `#1`, `#2`, ...
    pub label: String,
    /// Its `nextHopProtocol`, when the browser showed it.
    pub protocol: Option<String>,
    /// What the row says to a screen reader and in its tooltip.
    pub description: String,
    /// Whether its phases were hidden (the row is one bar, the total).
    pub hidden: bool,
    /// Whether it ran on a reused connection.
    pub reused: bool,
    /// Whether the request failed.
    pub failed: bool,
    /// Its total.
    pub total_us: Micros,
    /// The total as a fraction of the axis (at most 1).
    pub width: f64,
    /// The phase bars, when visible.
    pub bars: Vec<Bar>,
}

/// The rows of `run` on an axis ending at `axis_us` (the server's waterfall's, laid out on a
/// span covering [`BrowserRun::span`]).
pub fn rows(run: &BrowserRun, axis_us: Micros) -> Vec<BrowserRow> {
    let axis = axis_us.0.max(1) as f64;
    let pos = |t: Micros| (t.0 as f64 / axis).min(1.0);
    run.attempts
        .iter()
        .zip(1u32..)
        .map(|(a, n)| {
            let how = match (&a.error, a.state()) {
                (Some(error), _) => format!("failed: {error}"),
                (None, Some(state)) => format!(
                    "{}, {}",
                    a.protocol.as_deref().unwrap_or("protocol hidden"),
                    state.label()
                ),
                (None, None) => "timing hidden by the target".to_owned(),
            };
            BrowserRow {
                attempt: n,
                label: format!("#{n}"),
                protocol: a.protocol.clone(),
                description: format!(
                    "Request {n} from the owner's browser ({how}): total {}",
                    ms(a.total_us)
                ),
                hidden: !a.visible() && a.error.is_none(),
                reused: a.reused == Some(true),
                failed: a.error.is_some(),
                total_us: a.total_us,
                width: pos(a.total_us),
                bars: a
                    .phases
                    .iter()
                    .map(|p| Bar {
                        phase: p.phase,
                        hop: 0,
                        start_us: p.start_us,
                        end_us: p.end_us,
                        x: pos(p.start_us),
                        width: pos(p.end_us) - pos(p.start_us),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// How the browser's totals compare with the server's, per protocol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BrowserFinding {
    /// The answer in a sentence.
    pub summary: String,
    /// One sentence per protocol the server measured.
    pub lines: Vec<String>,
    /// The measurement cannot be what a browser measured beside the
    /// server's figures ([`plausible::implausible`]): the summary says why,
    /// and it is not drawn as a finding.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub implausible: bool,
}

/// The browser's requests that completed, with totals, in a connection state (any when `None`).
fn totals(run: &BrowserRun, state: Option<ConnState>) -> Vec<Micros> {
    run.attempts
        .iter()
        .filter(|a| a.error.is_none() && (state.is_none() || a.state() == state))
        .map(|a| a.total_us)
        .collect()
}

/// The server's successful totals over `protocol` on a connection in `state`.
fn server_totals(result: &ProbeResult, protocol: Protocol, state: ConnState) -> Vec<Micros> {
    all_chains(result)
        .filter(|c| c.protocol == protocol && c.succeeded() && same_kind(c.state(), state))
        .map(|c| c.total())
        .collect()
}

/// A resumed connection is a new one for this comparison: the browser tells no difference.
fn same_kind(a: ConnState, b: ConnState) -> bool {
    (a == ConnState::Reused) == (b == ConnState::Reused)
}

/// Compares the browser's totals with the server's per protocol, new connections with new ones
/// and reused with reused where the browser showed which it had; where it hid that, its median
/// is placed against the server's new and reused medians. A difference is called only by
/// [`significant`].
pub fn compare(run: &BrowserRun, result: &ProbeResult) -> BrowserFinding {
    if let Some(why) = plausible::implausible(run, result) {
        return BrowserFinding {
            summary: format!(
                "Not compared: the probe owner's browser measurement is implausible beside the server's figures ({why})."
            ),
            lines: Vec::new(),
            implausible: true,
        };
    }
    let Some(all_mine) = PhaseStats::from_values(totals(run, None)) else {
        return BrowserFinding {
            summary:
                "The probe owner's browser completed no request, so there is nothing to compare."
                    .to_owned(),
            lines: Vec::new(),
            implausible: false,
        };
    };
    let visible = run
        .attempts
        .iter()
        .any(|a| a.error.is_none() && a.visible());
    let mine_by_state = [ConnState::New, ConnState::Reused]
        .map(|state| PhaseStats::from_values(totals(run, Some(state))));
    let mut lines = Vec::new();
    // The protocols a difference was called on, and whether the browser was the slower.
    let mut called: Vec<(Protocol, bool)> = Vec::new();
    for protocol in result.runs.iter().map(|r| r.protocol) {
        let per_state = [ConnState::New, ConnState::Reused].map(|state| {
            (
                state,
                PhaseStats::from_values(server_totals(result, protocol, state)),
            )
        });
        if per_state.iter().all(|(_, s)| s.is_none()) {
            lines.push(format!(
                "{}: the server has no successful attempt to compare with.",
                protocol.http_version()
            ));
            continue;
        }
        let mut parts = Vec::new();
        if visible {
            for ((state, server), mine) in per_state.iter().zip(&mine_by_state) {
                let (Some(server), Some(mine)) = (server, mine) else {
                    continue;
                };
                let noise = [server.spread(), mine.spread()].into_iter().flatten().max();
                let gap = Micros(mine.median.0.abs_diff(server.median.0));
                let fewest = server.count.min(mine.count);
                let what = format!(
                    "on {} the owner's browser's median is {} (n={}), the server's {} (n={})",
                    state.phrase(),
                    ms(mine.median),
                    mine.count,
                    ms(server.median),
                    server.count
                );
                let faster = mine.median.min(server.median);
                if significant(gap, faster, noise, fewest) {
                    let who = if mine.median > server.median {
                        "slower"
                    } else {
                        "faster"
                    };
                    parts.push(format!(
                        "{what}: the owner's browser is {who} by {}",
                        ms(gap)
                    ));
                    called.push((protocol, mine.median > server.median));
                } else {
                    parts.push(format!("{what}: no difference beyond the noise"));
                }
            }
        }
        if parts.is_empty() {
            // The browser hid its connection state: place its median between the server's.
            let mine = all_mine;
            let new = per_state[0].1;
            let reused = per_state[1].1;
            let noise = [
                new.as_ref().and_then(PhaseStats::spread),
                reused.as_ref().and_then(PhaseStats::spread),
                mine.spread(),
            ]
            .into_iter()
            .flatten()
            .max();
            let slowest = new.or(reused).map(|s| s.median).unwrap_or_default();
            let fastest = reused.or(new).map(|s| s.median).unwrap_or_default();
            let figures = format!(
                "the owner's browser's median is {} (n={}), the server's {}",
                ms(mine.median),
                mine.count,
                [("new", new), ("reused", reused)]
                    .iter()
                    .filter_map(|(n, s)| s.map(|s| format!("{} on {n} connections", ms(s.median))))
                    .collect::<Vec<_>>()
                    .join(" and ")
            );
            let fewest = [new, reused]
                .into_iter()
                .flatten()
                .map(|s| s.count)
                .fold(mine.count, usize::min);
            if mine.median > slowest
                && significant(mine.median.saturating_sub(slowest), slowest, noise, fewest)
            {
                parts.push(format!(
                    "{figures}: the owner's browser is slower even than the server's new connections, by {}",
                    ms(mine.median.saturating_sub(slowest))
                ));
                called.push((protocol, true));
            } else if mine.median < fastest
                && significant(
                    fastest.saturating_sub(mine.median),
                    mine.median,
                    noise,
                    fewest,
                )
            {
                parts.push(format!(
                    "{figures}: the owner's browser is faster even than the server's reused connections, by {}",
                    ms(fastest.saturating_sub(mine.median))
                ));
                called.push((protocol, false));
            } else {
                parts.push(format!(
                    "{figures}: within what the server measured (its connection state is hidden)"
                ));
            }
        }
        lines.push(format!(
            "{}: {}.",
            protocol.http_version(),
            parts.join("; ")
        ));
    }
    let mut used: Vec<&str> = run
        .attempts
        .iter()
        .filter_map(|a| a.http().map(Protocol::http_version))
        .collect();
    used.dedup();
    BrowserFinding {
        summary: summary(&called, &used, visible),
        lines,
        implausible: false,
    }
}

/// The finding's answer, from the differences called and the protocols the browser `used`.
fn summary(called: &[(Protocol, bool)], used: &[&str], visible: bool) -> String {
    let hidden = if visible {
        ""
    } else {
        " (the target hides the browser's phases and connection state: it sends no Timing-Allow-Origin)"
    };
    if called.is_empty() {
        return format!(
            "The probe owner's browser's totals are within the noise of the server's{hidden}: what the probe \
             measured is what the owner gets from there."
        );
    }
    let over = if used.is_empty() {
        String::new()
    } else {
        format!(" (over {})", used.join(" and "))
    };
    let mut protocols: Vec<&str> = called.iter().map(|c| c.0.http_version()).collect();
    protocols.dedup();
    let vs = protocols.join(", ");
    let slower = called.iter().filter(|(_, slower)| *slower).count();
    let direction = if slower == called.len() {
        format!(
            "slower than the server's {vs}: the path from the owner to the target (or the browser's \
             own work) costs more than the server's"
        )
    } else if slower == 0 {
        format!(
            "faster than the server's {vs}: the owner is closer to the target than the probe server is"
        )
    } else {
        format!("faster than the server over some protocols and slower over others ({vs})")
    };
    format!("The probe owner's browser{over} is {direction}{hidden}.")
}

pub mod plausible;

#[cfg(test)]
mod tests;
