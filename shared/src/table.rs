//! The protocol comparison table: per metric, each protocol's median and p95, the fastest marked, and the gaps.
//!
//! Built on [`stats::result_stats`] and [`stats::compare`], so the web UI shows
//! the same figures as the CLI. The p95 column only makes sense with more than
//! one value, and "fastest" only with more than one protocol.

use crate::schema::{Micros, ProbeResult, Protocol};
use crate::stats::{self, Metric};
use serde::{Deserialize, Serialize};

/// The whole table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonTable {
    /// Column order: the protocols that produced statistics, in run order.
    pub protocols: Vec<Protocol>,
    /// Whether any cell has more than one value (then p95 is worth showing).
    pub show_p95: bool,
    /// One row per metric that any protocol has, in [`Metric::ALL`] order.
    pub rows: Vec<TableRow>,
}

/// One metric across protocols.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    /// The metric.
    pub metric: Metric,
    /// One entry per column of [`ComparisonTable::protocols`]; `None` where
    /// that protocol has no value (e.g. no TLS over HTTP/3).
    pub cells: Vec<Option<TableCell>>,
}

/// One protocol's figures for a metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableCell {
    /// Number of values.
    pub count: usize,
    /// Median.
    pub median: Micros,
    /// 95th percentile, when there is more than one value.
    pub p95: Option<Micros>,
    /// Whether this is the lowest median of a row with two or more protocols.
    pub fastest: bool,
    /// Milliseconds slower than the fastest median.
    pub diff_ms: f64,
    /// Percent slower than the fastest median, when that is not zero.
    pub diff_percent: Option<f64>,
}

/// Builds the comparison table of a result.
pub fn comparison_table(result: &ProbeResult) -> ComparisonTable {
    let stats = stats::result_stats(result);
    let protocols: Vec<Protocol> = stats
        .iter()
        .filter(|s| !s.metrics.is_empty())
        .map(|s| s.protocol)
        .collect();
    let rows: Vec<TableRow> = stats::compare(&stats)
        .into_iter()
        .map(|row| {
            let several = row.cells.len() > 1;
            let cells = protocols
                .iter()
                .map(|&protocol| {
                    let cell = row.cells.iter().find(|c| c.protocol == protocol)?;
                    let sample = stats
                        .iter()
                        .find(|s| s.protocol == protocol)?
                        .get(row.metric)?;
                    Some(TableCell {
                        count: sample.count,
                        median: cell.median,
                        p95: (sample.count > 1).then_some(sample.p95),
                        fastest: several && row.fastest == protocol,
                        diff_ms: cell.diff_ms,
                        diff_percent: cell.diff_percent,
                    })
                })
                .collect();
            TableRow {
                metric: row.metric,
                cells,
            }
        })
        .collect();
    let show_p95 = rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.p95.is_some());
    ComparisonTable {
        protocols,
        show_p95,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{fresh, result, reused, run};

    #[test]
    fn columns_cells_fastest_and_p95() {
        let r = result(vec![
            run(
                Protocol::H1,
                vec![fresh(1, 100, 200, 300, 4_000), reused(2, 2_000)],
            ),
            run(
                Protocol::H2,
                vec![fresh(1, 100, 200, 900, 1_000), reused(2, 1_000)],
            ),
            run(Protocol::H3, Vec::new()),
        ]);
        let t = comparison_table(&r);
        assert_eq!(t.protocols, vec![Protocol::H1, Protocol::H2]);
        assert!(t.show_p95);

        let wait = t.rows.iter().find(|r| r.metric == Metric::Wait).unwrap();
        let h1 = wait.cells[0].as_ref().unwrap();
        let h2 = wait.cells[1].as_ref().unwrap();
        assert_eq!(
            (h1.count, h1.median, h1.p95),
            (2, Micros(2_000), Some(Micros(4_000)))
        );
        assert!(!h1.fastest && h2.fastest);
        assert_eq!((h1.diff_ms, h1.diff_percent), (1.0, Some(100.0)));

        // One value each: no p95; TLS is fastest on h1.
        let tls = t.rows.iter().find(|r| r.metric == Metric::Tls).unwrap();
        let h1_tls = tls.cells[0].as_ref().unwrap();
        assert_eq!(h1_tls.p95, None);
        assert!(h1_tls.fastest);
        assert_eq!(tls.cells[1].as_ref().unwrap().diff_ms, 0.6);
    }

    #[test]
    fn a_single_protocol_has_no_fastest_and_missing_cells_are_none() {
        let t = comparison_table(&result(vec![
            run(Protocol::H1, vec![fresh(1, 100, 200, 300, 400)]),
            run(Protocol::H2, vec![reused(1, 400)]),
        ]));
        assert!(!t.show_p95);
        let dns = t.rows.iter().find(|r| r.metric == Metric::Dns).unwrap();
        assert!(!dns.cells[0].as_ref().unwrap().fastest);
        assert_eq!(dns.cells[1], None);

        let empty = comparison_table(&result(Vec::new()));
        assert!(empty.protocols.is_empty() && empty.rows.is_empty());
    }
}
