//! Connection migration explained: what a user on a phone that switches
//! networks would see of each protocol (`h3_migration_survived`,
//! `h3_migration_failed`).

use super::*;
use crate::format::ms;
use crate::migration::{moves, reconnect_cost};

/// One finding for the HTTP/3 moves of a result that asked for them: a
/// warning when a move lost its connection, else what moving cost.
pub(super) fn migration(result: &ProbeResult, out: &mut Vec<Finding>) {
    if result.options.migrate.is_none() {
        return;
    }
    let Some(h3) = result.runs.iter().find(|r| r.protocol == Protocol::H3) else {
        return;
    };
    let Some((attempt, moved)) = moves(h3)
        .find(|(_, m)| !m.survived)
        .or_else(|| moves(h3).next())
    else {
        return;
    };
    let reconnects: Vec<String> = result
        .runs
        .iter()
        .filter(|r| r.protocol != Protocol::H3)
        .filter_map(|r| {
            Some(format!(
                "{} on {}",
                ms(reconnect_cost(r)?),
                r.protocol.http_version()
            ))
        })
        .collect();
    let reconnect = match reconnects.is_empty() {
        true => "a new connection and the request again".to_owned(),
        false => format!(
            "a new connection and the request again ({} here), and the body starts over",
            connection::join_and(&reconnects)
        ),
    };
    let evidence = Evidence {
        protocol: Protocol::H3,
        attempt: Some(attempt.attempt),
        phase: Some(Phase::Receive),
        duration: moved.answered_after_us,
        detail: format!("HTTP/3 attempt {}: {}.", attempt.attempt, moved.describe()),
    };
    if moved.survived {
        let pause = moved
            .answered_after_us
            .map(|a| format!(" after a pause of {}", ms(a)))
            .unwrap_or_default();
        out.push(finding(
            "h3_migration_survived",
            Severity::Info,
            format!("HTTP/3 kept its connection through a move{pause}"),
            evidence,
            format!(
                "On a phone that moves from Wi-Fi to cellular, an HTTP/3 download carries on{pause} \
                 (about a round trip on the new network). HTTP/1.1 and HTTP/2 cannot move a \
                 connection: they need {reconnect}."
            ),
        ));
    } else {
        out.push(finding(
            "h3_migration_failed",
            Severity::Warning,
            "HTTP/3 lost its connection when the client moved".into(),
            evidence,
            format!(
                "A phone that moves from Wi-Fi to cellular loses this download over HTTP/3 as over \
                 HTTP/1.1 and HTTP/2, and needs {reconnect}. Let the server accept QUIC connection \
                 migration (RFC 9000, section 9; quinn's `ServerConfig::migration`, on by default), \
                 and have any load balancer in front of it route QUIC by connection ID, not by the \
                 client's address and port."
            ),
        ));
    }
}
