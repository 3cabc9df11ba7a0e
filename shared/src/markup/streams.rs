//! Requests at once (`streams`) as markup: per protocol a bar per request on one time axis, its
//! wait then its transfer, so where HTTP/2's streams wait for each other and HTTP/3's do not is
//! seen, not read; the figures as a table.

use super::escape;
use crate::ProbeResult;
use crate::format::ms;
use crate::streams::{StreamBar, bursts, layout, lines};
use std::fmt::Write as _;

/// Width of the bars' axis, in SVG units.
const AXIS: f64 = 1000.0;
/// Height of one request's row, and of its bar, in SVG units.
const ROW: f64 = 14.0;
const BAR: f64 = 10.0;

/// The section's inside, if the probe sent requests at once.
pub fn streams(result: &ProbeResult) -> Option<String> {
    let lines = lines(result);
    let (head, described) = lines.split_first()?;
    let (end, groups) = layout(result);
    let mut out = String::with_capacity(4096);
    let _ = write!(
        out,
        "<h2 id=\"streams-title\">Requests at once</h2><p class=\"hint\">{}. \
         A bar per request: its wait for the first byte, then its transfer; every protocol on one axis, \
         0 to {}.</p>",
        escape(head),
        ms(end)
    );
    for (line, (protocol, bars)) in described.iter().zip(&groups) {
        let height = ROW * bars.len() as f64;
        let _ = write!(
            out,
            "<h3 class=\"streams-line\">{}</h3><svg class=\"streams-chart\" data-protocol=\"{}\" viewBox=\"0 0 {AXIS} {height}\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}\">",
            escape(line),
            protocol.as_str(),
            escape(line)
        );
        for (i, bar) in bars.iter().enumerate() {
            draw(&mut out, bar, i as f64 * ROW);
        }
        out.push_str("</svg>");
    }
    table(&mut out, result);
    Some(out)
}

/// One request's bar at height `y`.
fn draw(out: &mut String, bar: &StreamBar, y: f64) {
    let first = bar.first_byte.unwrap_or(bar.done) * AXIS;
    let done = bar.done * AXIS;
    let class = if bar.ok { "stream" } else { "stream failed" };
    let _ = write!(
        out,
        "<g class=\"{class}\"><title>{}</title><rect class=\"fill phase-wait\" x=\"0\" y=\"{y:.1}\" width=\"{first:.1}\" height=\"{BAR}\"></rect><rect class=\"fill phase-receive\" x=\"{first:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{BAR}\"></rect></g>",
        escape(&bar.label),
        (done - first).max(0.0)
    );
}

/// The chart as a table: per protocol and request, its first byte and completion.
fn table(out: &mut String, result: &ProbeResult) {
    out.push_str(
        "<details class=\"chart-table\"><summary>Chart as a table</summary><div class=\"table-scroll\"><table class=\"streams-table\"><thead><tr><th scope=\"col\">Protocol</th><th scope=\"col\">Request</th><th scope=\"col\">First byte</th><th scope=\"col\">Done</th></tr></thead><tbody>",
    );
    for (run, burst) in bursts(result) {
        for (i, s) in burst.streams.iter().enumerate() {
            let outcome = s.problem().unwrap_or_else(|| ms(s.done_us));
            let _ = write!(
                out,
                "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td></tr>",
                run.protocol.http_version(),
                i + 1,
                s.first_byte_us.map_or_else(|| "–".to_owned(), ms),
                escape(&outcome)
            );
        }
    }
    out.push_str("</tbody></table></div></details>");
}
