//! `h123 compare`'s text: the answer, what else differs between the probes, then per protocol
//! and connection state each metric's median in A and B and the difference where it is called.

use h123_shared::compare::{Comparison, SideFigures};
use h123_shared::format::ms;
use std::fmt::Write as _;

/// The comparison as text.
pub fn report(c: &Comparison) -> String {
    let mut out = format!("{}\n", c.summary);
    if !c.caveats.is_empty() {
        out.push('\n');
        for caveat in &c.caveats {
            let _ = writeln!(out, "  note: {caveat}");
        }
    }
    for group in &c.groups {
        let _ = writeln!(
            out,
            "\n{:<28} {:>12} {:>12}  difference",
            format!(
                "{} · {}",
                group.protocol.http_version(),
                group.state.label()
            ),
            "A",
            "B"
        );
        for row in &group.metrics {
            let _ = writeln!(
                out,
                "  {:<26} {:>12} {:>12}  {}",
                row.metric.as_str(),
                cell(row.a),
                cell(row.b),
                row.said()
            );
        }
    }
    let _ = writeln!(out, "\n{}", c.rule);
    out
}

/// A side's median and count, or a dash.
fn cell(f: Option<SideFigures>) -> String {
    f.map_or_else(
        || "–".to_owned(),
        |f| format!("{} ×{}", ms(f.median), f.count),
    )
}
