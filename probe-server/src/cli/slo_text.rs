//! The SLO section that ends `h123 probe`'s text report.

use h123_shared::slo::{Judgement, SloReport};
use std::fmt::Write as _;

/// Each gate judged on each protocol: met or breached, the figure and the threshold.
pub fn section(report: &SloReport) -> String {
    let total = report.checks.len();
    let mut out = match report.breached() {
        0 => format!("\nSLO: met ({total} of {total} checks)\n"),
        n => format!("\nSLO: breached ({n} of {total} checks)\n"),
    };
    for check in &report.checks {
        let mark = match check.judgement {
            Judgement::Breached => "BREACHED",
            other => other.label(),
        };
        let _ = writeln!(
            out,
            "  {mark:<12}  {:<8}  {}: {}",
            check.protocol.http_version(),
            check.gate,
            check.detail
        );
    }
    out
}
