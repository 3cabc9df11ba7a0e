//! The connection-arm comparison: what a new connection, a reused one and a
//! resumed one cost, per protocol, from one probe per arm.

use crate::schema::{ConnectionMode, Micros, Phase, ProbeResult, Protocol};
use crate::stats::percentile;
use serde::{Deserialize, Serialize};

/// One protocol under one arm.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmRow {
    /// The protocol.
    pub protocol: Protocol,
    /// The arm: how attempts 2..N got their connection.
    pub arm: ConnectionMode,
    /// Successful attempts 2..N (the ones the arm is about).
    pub attempts: usize,
    /// Median connection setup of attempts 2..N: connect + tls, or quic; zero when reused.
    pub setup_median: Option<Micros>,
    /// Median total of attempts 2..N.
    pub total_median: Option<Micros>,
    /// Attempts 2..N whose TLS session was resumed.
    pub resumed: usize,
    /// Attempts 2..N whose 0-RTT data the server accepted (HTTP/3).
    pub zero_rtt: usize,
}

/// One row per protocol and arm, protocols in their order, arms in the order given.
/// Attempt 1 is left out: it opens the first connection under every arm alike.
pub fn arm_table(results: &[ProbeResult]) -> Vec<ArmRow> {
    let mut rows = Vec::new();
    for protocol in Protocol::ALL {
        for result in results {
            let Some(run) = result.runs.iter().find(|r| r.protocol == protocol) else {
                continue;
            };
            let later: Vec<_> = run
                .attempts
                .iter()
                .filter(|a| a.attempt > 1 && a.hop == 0 && a.failure.is_none())
                // A warm round's first attempt opens a new connection: not a later one.
                .filter(|a| {
                    result.options.mode != ConnectionMode::Warm
                        || !result.options.opens_connection(a.attempt)
                })
                .collect();
            let median = |mut values: Vec<Micros>| {
                values.sort();
                (!values.is_empty()).then(|| percentile(&values, 50))
            };
            let setup = |a: &&crate::schema::Attempt| {
                [Phase::Connect, Phase::Tls, Phase::Quic]
                    .iter()
                    .filter_map(|p| a.phases.get(*p))
                    .map(|s| s.duration().0)
                    .sum::<u64>()
            };
            rows.push(ArmRow {
                protocol,
                arm: result.options.mode,
                attempts: later.len(),
                setup_median: median(later.iter().map(|a| Micros(setup(a))).collect()),
                total_median: median(later.iter().map(|a| a.phases.total.duration()).collect()),
                resumed: later
                    .iter()
                    .filter(|a| a.tls.as_ref().is_some_and(|t| t.resumed))
                    .count(),
                zero_rtt: later
                    .iter()
                    .filter(|a| a.quic.as_ref().and_then(|q| q.zero_rtt_accepted) == Some(true))
                    .count(),
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn result(mode: ConnectionMode, attempts: Vec<crate::schema::Attempt>) -> ProbeResult {
        let mut r = fixture::result(vec![fixture::run(Protocol::H2, attempts)]);
        r.options.mode = mode;
        r
    }

    #[test]
    fn rows_compare_setup_of_later_attempts_per_arm() {
        let cold = result(
            ConnectionMode::Cold,
            vec![
                fixture::fresh(1, 100, 200, 900, 50),
                fixture::fresh(2, 100, 200, 800, 50),
                fixture::fresh(3, 100, 200, 1000, 50),
            ],
        );
        let warm = result(
            ConnectionMode::Warm,
            vec![fixture::fresh(1, 100, 200, 900, 50), fixture::reused(2, 50)],
        );
        let rows = arm_table(&[cold, warm]);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].arm, rows[0].attempts), (ConnectionMode::Cold, 2));
        assert_eq!(
            rows[0].setup_median,
            Some(Micros(1000)),
            "connect 200 + tls 800"
        );
        assert_eq!(
            (rows[1].arm, rows[1].setup_median),
            (ConnectionMode::Warm, Some(Micros(0)))
        );
        assert!(rows[1].total_median < rows[0].total_median);
    }

    #[test]
    fn single_attempts_and_missing_protocols_give_empty_rows() {
        let r = result(ConnectionMode::Resumed, vec![fixture::fresh(1, 1, 1, 1, 1)]);
        let rows = arm_table(&[r]);
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].attempts, rows[0].setup_median), (0, None));
    }
}
