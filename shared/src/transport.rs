//! A run's transport facts in words, one line per connection: the kernel's
//! TCP facts (`TCP_INFO`) for h1 and h2, QUIC's path statistics for h3; the
//! CLI and the web UI show these same lines.

use crate::format::{byte_rate, count, ms};
use crate::schema::{Attempt, ProtocolRun, QuicInfo, TcpInfo};

/// The facts of one connection, as last seen by its attempts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportLine {
    /// The connection's id within its run.
    pub connection: u32,
    /// The attempts that used it, in order.
    pub attempts: Vec<u32>,
    /// `tcp: rtt 0.03 ms (±0.02 ms), cwnd 10, ...` or `quic: rtt ...`.
    pub text: String,
}

/// One line per connection of `run` that has transport facts, in the order
/// the connections were opened; each from the last attempt on it (the
/// counts are the connection's since it opened).
pub fn lines(run: &ProtocolRun) -> Vec<TransportLine> {
    let mut out: Vec<TransportLine> = Vec::new();
    for attempt in &run.attempts {
        let Some(connection) = attempt.connection.as_ref().map(|c| c.id) else {
            continue;
        };
        let Some(text) = attempt_text(attempt) else {
            continue;
        };
        match out.iter_mut().find(|l| l.connection == connection) {
            Some(line) => {
                if !line.attempts.contains(&attempt.attempt) {
                    line.attempts.push(attempt.attempt);
                }
                line.text = text;
            }
            None => out.push(TransportLine {
                connection,
                attempts: vec![attempt.attempt],
                text,
            }),
        }
    }
    out
}

/// The latest transport facts of one attempt in words, if it has any.
fn attempt_text(attempt: &Attempt) -> Option<String> {
    if let Some(snapshots) = &attempt.tcp_info {
        let latest = snapshots
            .at_end
            .as_ref()
            .or(snapshots.at_first_byte.as_ref())
            .or(snapshots.at_connect.as_ref())?;
        return Some(tcp_line(latest));
    }
    attempt.quic.as_ref().map(quic_line)
}

/// `tcp: rtt 0.03 ms (±0.02 ms), cwnd 10, mss 65483, retrans 0, delivery
/// 1.20 GB/s`; fields the kernel did not give are left out.
pub fn tcp_line(info: &TcpInfo) -> String {
    let mut parts = Vec::new();
    if let Some(rtt) = info.rtt_us {
        let var = info
            .rttvar_us
            .map(|v| format!(" (±{})", ms(v)))
            .unwrap_or_default();
        parts.push(format!("rtt {}{var}", ms(rtt)));
    }
    if let Some(cwnd) = info.snd_cwnd {
        parts.push(format!("cwnd {cwnd}"));
    }
    if let Some(mss) = info.snd_mss {
        parts.push(format!("mss {mss}"));
    }
    if let Some(retrans) = info.total_retrans {
        parts.push(format!("retrans {retrans}"));
    }
    if let Some(rate) = info.delivery_rate {
        parts.push(format!("delivery {}", byte_rate(rate as f64)));
    }
    format!("tcp: {}", parts.join(", "))
}

/// `quic: rtt 0.12 ms, cwnd 14,720 B, mtu 1200, lost 0 packets (0 B),
/// congestion events 0`; fields older records lack are left out.
pub fn quic_line(info: &QuicInfo) -> String {
    let mut parts = vec![format!("rtt {}", ms(info.rtt_us))];
    if let Some(cwnd) = info.cwnd_bytes {
        parts.push(format!("cwnd {} B", count(cwnd)));
    }
    if let Some(mtu) = info.current_mtu {
        parts.push(format!("mtu {mtu}"));
    }
    let lost_bytes = info
        .lost_bytes
        .map(|b| format!(" ({} B)", count(b)))
        .unwrap_or_default();
    parts.push(format!(
        "lost {} of {} packets{lost_bytes}",
        count(info.lost_packets),
        count(info.sent_packets)
    ));
    parts.push(format!("congestion events {}", info.congestion_events));
    format!("quic: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, reused, run};
    use crate::schema::{Micros, Protocol, TcpInfoSnapshots};

    fn tcp(rtt: u64, retrans: u32) -> TcpInfo {
        TcpInfo {
            rtt_us: Some(Micros(rtt)),
            rttvar_us: Some(Micros(20)),
            snd_cwnd: Some(10),
            snd_mss: Some(1448),
            total_retrans: Some(retrans),
            delivery_rate: Some(1_200_000_000),
            ..TcpInfo::default()
        }
    }

    #[test]
    fn a_tcp_line_says_rtt_cwnd_retransmits_and_delivery() {
        assert_eq!(
            tcp_line(&tcp(30, 0)),
            "tcp: rtt 0.03 ms (±0.02 ms), cwnd 10, mss 1448, retrans 0, delivery 1.20 GB/s"
        );
        assert_eq!(tcp_line(&TcpInfo::default()), "tcp: ");
    }

    #[test]
    fn a_quic_line_without_the_newer_fields_still_reads() {
        let old = QuicInfo {
            rtt_us: Micros(120),
            sent_packets: 14,
            lost_packets: 1,
            congestion_events: 0,
            ..QuicInfo::default()
        };
        assert_eq!(
            quic_line(&old),
            "quic: rtt 0.12 ms, lost 1 of 14 packets, congestion events 0"
        );
        let new = QuicInfo {
            cwnd_bytes: Some(14_720),
            current_mtu: Some(1200),
            lost_bytes: Some(1200),
            ..old
        };
        assert_eq!(
            quic_line(&new),
            "quic: rtt 0.12 ms, cwnd 14,720 B, mtu 1200, lost 1 of 14 packets (1,200 B), congestion events 0"
        );
    }

    #[test]
    fn one_line_per_connection_from_its_last_attempt() {
        let mut first = fresh(1, 100, 200, 300, 400);
        first.tcp_info = Some(TcpInfoSnapshots {
            at_end: Some(tcp(30, 0)),
            ..TcpInfoSnapshots::default()
        });
        let mut second = reused(2, 400);
        second.tcp_info = Some(TcpInfoSnapshots {
            at_end: Some(tcp(40, 2)),
            ..TcpInfoSnapshots::default()
        });
        let run = run(Protocol::H1, vec![first, second, reused(3, 400)]);
        let lines = lines(&run);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].attempts, vec![1, 2]);
        assert!(lines[0].text.contains("rtt 0.04 ms"), "{}", lines[0].text);
        assert!(lines[0].text.contains("retrans 2"), "{}", lines[0].text);
    }
}
