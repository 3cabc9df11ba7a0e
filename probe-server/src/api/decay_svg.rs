//! A sweep's decay chart as a standalone SVG picture (`h123 bench --sweep
//! ... -o svg` and `GET /api/v1/benches/{id}/decay.svg`): the bench page's
//! component (`h123_frontend::pages::bench::decay::picture`: the page's plot,
//! requests per second at each step on a log axis, one line per protocol in
//! the web UI's colours and dash patterns, the model's ceiling dashed where
//! one applies, under a title and a legend, the table as its text
//! alternative) drawn as a file.

use h123_frontend::pages::{bench::decay, render_picture};
use h123_shared::sweep::SweepResult;

/// The decay chart of `result`.
pub fn render(result: &SweepResult) -> String {
    render_picture(|| decay::picture(result))
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::bench::{BenchOptions, BenchResult, BenchRun, LatencySummary};
    use h123_shared::sweep::{Sweep, SweepStep};
    use h123_shared::{Micros, Protocol};

    #[test]
    fn the_picture_has_a_line_per_protocol_the_model_and_the_table() {
        let options = BenchOptions {
            url: "https://e.test/?a=<b>".into(),
            protocols: vec![Protocol::H1, Protocol::H2],
            ..BenchOptions::default()
        };
        let step = |value: u32, p50: u64| SweepStep {
            value,
            result: BenchResult {
                runs: [Protocol::H1, Protocol::H2]
                    .into_iter()
                    .map(|p| BenchRun {
                        elapsed_us: Micros(1_000_000),
                        requests: 16_000_000 / p50,
                        successes: 16_000_000 / p50,
                        latency: LatencySummary {
                            mean: Micros(p50),
                            p50: Micros(p50),
                            p99: Micros(p50),
                            ..LatencySummary::default()
                        },
                        ..BenchRun::new(p)
                    })
                    .collect(),
                ..BenchResult::new(options.clone(), 0)
            },
        };
        let result = SweepResult {
            sweep: Sweep::parse("rtt=0,50ms").unwrap(),
            steps: vec![step(0, 1_000), step(50, 51_000)],
            options,
        };
        let svg = render(&result);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches(r#"class="line measured "#).count(), 2, "{svg}");
        assert_eq!(svg.matches(r#"class="line model "#).count(), 2);
        assert!(svg.contains(">requests per second (log scale)<"));
        assert!(svg.contains("model: closed-loop ceiling"));
        assert!(svg.contains("?a=&lt;b&gt;"), "escaped");
        assert!(
            svg.contains("<desc>added rtt"),
            "the table is the text alternative"
        );
        assert!(svg.contains(">50 ms<"));
    }
}
