//! Whether the owner's browser measurement can be true beside the server's
//! own figures: a browser that reports a protocol the probe found
//! unavailable, or totals far below anything the server measured, posted
//! something a browser did not measure, and its comparison is not drawn as
//! a finding.

use super::BrowserRun;
use crate::chain::all_chains;
use crate::format::ms;
use crate::schema::{Micros, ProbeResult};

/// How many times faster than the server's fastest total a browser's median
/// may be before it is implausible: a browser much closer to the target
/// than the server is can be a few times faster, not ten.
pub const MAX_SPEEDUP: u64 = 10;

/// Why `run` cannot be what a browser measured beside `result`, if so.
pub fn implausible(run: &BrowserRun, result: &ProbeResult) -> Option<String> {
    for attempt in run.attempts.iter().filter(|a| a.error.is_none()) {
        let Some(protocol) = attempt.http() else {
            continue;
        };
        if !result.runs.iter().any(|r| r.protocol == protocol) {
            // Not measured by the probe: nothing to hold it to.
            continue;
        }
        if !all_chains(result).any(|c| c.protocol == protocol && c.succeeded()) {
            return Some(format!(
                "it reports {}, which the probe found unavailable at the target",
                protocol.http_version()
            ));
        }
    }
    let mut mine: Vec<Micros> = run
        .attempts
        .iter()
        .filter(|a| a.error.is_none())
        .map(|a| a.total_us)
        .collect();
    mine.sort();
    let median = *mine.get(mine.len() / 2)?;
    let fastest = all_chains(result)
        .filter(|c| c.succeeded())
        .map(|c| c.total())
        .min()?;
    (median.0.saturating_mul(MAX_SPEEDUP) < fastest.0).then(|| {
        format!(
            "its median total ({}) is over {MAX_SPEEDUP} times faster than the server's fastest ({})",
            ms(median),
            ms(fastest)
        )
    })
}
