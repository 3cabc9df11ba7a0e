//! Connection migration: an HTTP/3 connection moved to a new local port or
//! address in the middle of a response (`--migrate`), what became of it,
//! and what the same move costs HTTP/1.1 and HTTP/2, which cannot move a
//! connection and must open a new one.

use crate::format::{count, ms};
use crate::json::ReadJson;
use crate::schema::{Attempt, Micros, ProbeResult, Protocol, ProtocolRun};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// Where an HTTP/3 connection moves mid-response. The API and the CLI take
/// it as text: `port`, or a local IP address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Migrate {
    /// A new UDP port on the same address: to the server, a NAT rebinding.
    Port,
    /// A new local address, as given (brackets removed): to the server, a
    /// client that changed networks (a phone moving from Wi-Fi to
    /// cellular). The probe's plan checks that it is an IP address of its
    /// machine ([`Migrate::local_ip`]); the web UI never parses it.
    Address(String),
}

impl Migrate {
    /// The local address to move to: none for a new port, and an error
    /// naming the text when it is not an IP address.
    pub fn local_ip(&self) -> Result<Option<IpAddr>, String> {
        match self {
            Migrate::Port => Ok(None),
            Migrate::Address(text) => text.parse().map(Some).map_err(|_| {
                format!(
                    "`{text}` is neither `port` nor a local IP address to move the connection to"
                )
            }),
        }
    }

    /// `to a new UDP port`, `to the local address 127.0.0.2`.
    pub fn describe(&self) -> String {
        match self {
            Migrate::Port => "to a new UDP port (what a NAT rebinding looks like)".to_owned(),
            Migrate::Address(ip) => {
                format!("to the local address {ip} (what a change of network looks like)")
            }
        }
    }
}

impl fmt::Display for Migrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Migrate::Port => f.write_str("port"),
            Migrate::Address(ip) => f.write_str(ip),
        }
    }
}

impl FromStr for Migrate {
    type Err = String;

    /// `port`, or anything else as an address (checked by [`Migrate::local_ip`]).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("port") {
            return Ok(Migrate::Port);
        }
        let bare = text.trim_start_matches('[').trim_end_matches(']');
        match bare.is_empty() {
            true => Err("`migrate` needs `port` or a local IP address".to_owned()),
            false => Ok(Migrate::Address(bare.to_owned())),
        }
    }
}

impl Serialize for Migrate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Migrate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl ReadJson for Migrate {
    fn read_in(&mut self, value: &crate::json::Json<'_>) -> Result<(), crate::json::JsonError> {
        *self = value
            .str()?
            .parse()
            .map_err(crate::json::JsonError::custom)?;
        Ok(())
    }

    fn placeholder() -> Self {
        Migrate::Port
    }
}

/// What happened when an attempt's HTTP/3 connection moved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Migration {
    /// Where it was asked to move.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "port"))]
    pub to: Migrate,
    /// The local address before the move.
    pub from_addr: String,
    /// The local address after it.
    pub to_addr: String,
    /// Response body bytes read when it moved.
    pub after_bytes: u64,
    /// When it moved, on the attempt's clock.
    pub at_us: Micros,
    /// How long after the move the first datagram came back on the new
    /// path; none when nothing did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_after_us: Option<Micros>,
    /// PATH_CHALLENGE frames the server sent to check the new path.
    pub path_challenges: u64,
    /// PATH_RESPONSE frames the client answered them with.
    pub path_responses: u64,
    /// Whether the connection carried on after the move and the response
    /// completed on it.
    pub survived: bool,
}

impl Migration {
    /// One sentence: where it moved, when, and what became of it.
    pub fn describe(&self) -> String {
        let moved = format!(
            "moved from {} to {} after {} body bytes",
            self.from_addr,
            self.to_addr,
            count(self.after_bytes)
        );
        match (self.survived, self.answered_after_us) {
            (true, answered) => {
                let answer = answered
                    .map(|a| format!("the server answered on the new path after {}", ms(a)))
                    .unwrap_or_else(|| "the server answered on the new path".to_owned());
                let check = match self.path_challenges {
                    0 => "did not check it".to_owned(),
                    n => format!(
                        "checked it ({} PATH_CHALLENGE received, {} PATH_RESPONSE sent)",
                        count(n),
                        count(self.path_responses)
                    ),
                };
                format!("{moved}; {answer} and {check}; the connection survived")
            }
            (false, Some(answered)) => format!(
                "{moved}; the server answered on the new path after {}, but the response did not \
                 complete: the connection did not survive",
                ms(answered)
            ),
            (false, None) => format!(
                "{moved}; nothing came back on the new path: the connection did not survive \
                 (the server, or something in front of it, does not accept a moved connection)"
            ),
        }
    }
}

/// What opening a new connection and asking again cost in `run`: its first
/// successful new connection's connect, proxy, TLS, send and wait, which a
/// protocol that cannot migrate pays after a change of network (the body
/// then starts over).
pub fn reconnect_cost(run: &ProtocolRun) -> Option<Micros> {
    let first = run.attempts.iter().find(|a| {
        a.hop == 0 && a.failure.is_none() && a.connection.as_ref().is_some_and(|c| !c.reused)
    })?;
    let p = &first.phases;
    let total = [p.connect, p.proxy, p.tls, p.quic, p.send, p.wait]
        .into_iter()
        .flatten()
        .map(|s| s.duration().0)
        .sum();
    Some(Micros(total))
}

/// The moves of `run`'s attempts, in order.
pub fn moves(run: &ProtocolRun) -> impl Iterator<Item = (&Attempt, &Migration)> {
    run.attempts
        .iter()
        .filter_map(|a| a.migration.as_ref().map(|m| (a, m)))
}

/// The migration's lines for a result, as the page, the CLI and the SVG
/// show them; none when no move was asked for.
pub fn lines(result: &ProbeResult) -> Vec<String> {
    let Some(to) = &result.options.migrate else {
        return Vec::new();
    };
    let mut lines = vec![format!(
        "Connection migration: each new HTTP/3 connection moves {} in the middle of its first response",
        to.describe()
    )];
    for run in &result.runs {
        if run.protocol == Protocol::H3 {
            let moved: Vec<_> = moves(run).collect();
            if moved.is_empty() {
                lines.push("HTTP/3: no connection got as far as a response to move in".to_owned());
            }
            for (attempt, migration) in moved {
                lines.push(format!(
                    "HTTP/3 attempt {}: {}",
                    attempt.attempt,
                    migration.describe()
                ));
            }
        } else if let Some(cost) = reconnect_cost(run) {
            lines.push(format!(
                "{} cannot move a connection: after a change of network it opens a new one and \
                 asks again, {} here (connect, TLS, send and wait of its first new connection), \
                 and the body starts over",
                run.protocol.http_version(),
                ms(cost)
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests;
