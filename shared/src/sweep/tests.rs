use super::*;
use crate::bench::LatencySummary;

#[test]
fn sweeps_read_rtt_or_loss_steps_in_their_units() {
    let rtt = Sweep::parse("rtt=0,25,50,100,200ms").unwrap();
    assert_eq!(rtt.axis, SweepAxis::Rtt);
    assert_eq!(rtt.steps, vec![0, 25, 50, 100, 200]);
    let loss = Sweep::parse("loss=0,0.5,1,2,5%").unwrap();
    assert_eq!(loss.steps, vec![0, 50, 100, 200, 500]);
    assert_eq!(loss.label(50), "0.5%");
    assert_eq!(rtt.label(25), "25 ms");
    let mixed = Sweep::parse("rtt=0,0.5s").unwrap();
    assert_eq!(mixed.steps, vec![0, 500]);
    for (bad, says) in [
        ("rtt", "is not a sweep"),
        ("jitter=0,5ms", "cannot sweep `jitter`"),
        ("rtt=50ms", "2 to 10 steps"),
        ("rtt=50,25ms", "must grow"),
        ("loss=0,60%", "loss must be between"),
        ("rtt=0,fast", "not a duration"),
    ] {
        let e = Sweep::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn each_step_sets_its_figure_on_the_base_network() {
    let sweep = Sweep::parse("loss=0,2%").unwrap();
    let base = NetworkProfile::named("4g").unwrap();
    let step = sweep.network(Some(&base), 200);
    assert_eq!((step.rtt_ms, step.loss_basis_points), (170, 200));
    assert_eq!(step.name, None, "no longer the named profile");
    let plain = Sweep::parse("rtt=0,40ms").unwrap().network(None, 40);
    assert_eq!(plain.figures(), "rtt=40ms");
}

fn run(protocol: Protocol, per_sec: u64, p50_us: u64) -> BenchRun {
    BenchRun {
        elapsed_us: Micros(1_000_000),
        requests: per_sec,
        successes: per_sec,
        latency: LatencySummary {
            count: per_sec,
            mean: Micros(p50_us),
            p50: Micros(p50_us),
            p99: Micros(p50_us * 2),
            ..LatencySummary::default()
        },
        ..BenchRun::new(protocol)
    }
}

fn swept(axis: &str, steps: Vec<(u32, Vec<BenchRun>)>) -> SweepResult {
    let options = BenchOptions {
        protocols: vec![Protocol::H1, Protocol::H3],
        concurrency: 4,
        ..BenchOptions::default()
    };
    SweepResult {
        sweep: Sweep::parse(axis).unwrap(),
        steps: steps
            .into_iter()
            .map(|(value, runs)| SweepStep {
                value,
                result: BenchResult {
                    runs,
                    ..BenchResult::new(options.clone(), 0)
                },
            })
            .collect(),
        options,
    }
}

#[test]
fn an_rtt_curve_carries_the_closed_loop_model() {
    let result = swept(
        "rtt=0,40ms",
        vec![
            (
                0,
                vec![
                    run(Protocol::H1, 4_000, 1_000),
                    run(Protocol::H3, 3_000, 1_300),
                ],
            ),
            (
                40,
                vec![run(Protocol::H1, 97, 41_000), BenchRun::new(Protocol::H3)],
            ),
        ],
    );
    let h1 = curve(&result, Protocol::H1);
    // 4 in flight, each 1 ms + 40 ms: at most 97.6 requests per second.
    let model = h1[1].expected_per_sec.unwrap();
    assert!((model - 4.0 / 0.041).abs() < 1e-9, "{model}");
    assert_eq!(
        h1[0].expected_per_sec, None,
        "the first step is the model's base"
    );
    assert_eq!(h1[1].p50, Micros(41_000));
    let h3 = curve(&result, Protocol::H3);
    assert_eq!(h3[1].failure.as_deref(), Some("no request succeeded"));
    let table = table(&result);
    println!("{table}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("added rtt") && lines[0].contains("HTTP/3"));
    assert!(lines[2].starts_with("40 ms"), "{table}");
    assert!(
        lines[2].contains("97.0/s (model 97.6) · p50 41.0 ms · p99 82.0 ms"),
        "{table}"
    );
    assert!(lines[2].contains("failed: no request succeeded"), "{table}");
}

#[test]
fn a_loss_curve_has_no_model() {
    let result = swept(
        "loss=0,5%",
        vec![
            (
                0,
                vec![
                    run(Protocol::H1, 4_000, 1_000),
                    run(Protocol::H3, 3_000, 1_300),
                ],
            ),
            (
                500,
                vec![
                    run(Protocol::H1, 900, 4_000),
                    run(Protocol::H3, 1_800, 2_100),
                ],
            ),
        ],
    );
    assert!(
        curve(&result, Protocol::H1)
            .iter()
            .all(|p| p.expected_per_sec.is_none())
    );
    assert!(table(&result).lines().nth(2).unwrap().starts_with("5%"));
}

#[test]
fn the_decay_chart_puts_steps_across_and_rates_up() {
    let result = swept(
        "rtt=0,25,50ms",
        vec![
            (
                0,
                vec![
                    run(Protocol::H1, 4_000, 1_000),
                    run(Protocol::H3, 3_000, 1_300),
                ],
            ),
            (
                25,
                vec![
                    run(Protocol::H1, 150, 26_000),
                    run(Protocol::H3, 150, 26_000),
                ],
            ),
            (
                50,
                vec![run(Protocol::H1, 78, 51_000), BenchRun::new(Protocol::H3)],
            ),
        ],
    );
    let frame = crate::bench_chart::Frame::default();
    let drawn = chart::chart(&result, frame);
    let labels: Vec<&str> = drawn.x_ticks.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["0 ms", "25 ms", "50 ms"]);
    assert_eq!(drawn.x_ticks[0].at, frame.left);
    assert_eq!(drawn.x_ticks[2].at, frame.width - frame.right);
    let top = drawn.y_ticks.last().unwrap();
    assert!(
        top.label == "4,000" && (top.at - frame.top).abs() < 1e-9,
        "{top:?}"
    );
    let h1 = &drawn.lines[0];
    assert_eq!(
        h1.measured.matches('L').count(),
        2,
        "three points: {}",
        h1.measured
    );
    assert!(
        h1.measured
            .starts_with(&format!("M{:.1},{:.1}", frame.left, frame.top))
    );
    assert_eq!(
        h1.model.matches('L').count(),
        1,
        "the model from the second step on"
    );
    let h3 = &drawn.lines[1];
    assert_eq!(
        h3.measured.matches('L').count(),
        1,
        "no point where nothing succeeded"
    );
    assert_eq!(h3.dash, Some("2 3"));
}

#[test]
fn a_running_sweeps_chart_keeps_every_planned_step_on_its_axis() {
    let result = swept(
        "rtt=0,25,50,100ms",
        vec![(0, vec![run(Protocol::H1, 4_000, 1_000)])],
    );
    let frame = crate::bench_chart::Frame::default();
    let drawn = chart::chart(&result, frame);
    let labels: Vec<&str> = drawn.x_ticks.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["0 ms", "25 ms", "50 ms", "100 ms"]);
    assert_eq!(drawn.x_ticks[3].at, frame.width - frame.right);
    assert!(
        drawn.lines[0].measured.starts_with('M') && !drawn.lines[0].measured.contains('L'),
        "one point so far: {}",
        drawn.lines[0].measured
    );
    assert_eq!(
        drawn.lines[0].measured_marks,
        [(frame.left, frame.top)],
        "marked, since a path of one point draws nothing"
    );
    assert!(drawn.lines[0].model_marks.is_empty());
}

#[test]
fn a_sweep_reads_back_from_its_text_or_its_fields() {
    for text in ["rtt=0,25,50ms", "loss=0,0.5,2%"] {
        let sweep = Sweep::parse(text).unwrap();
        assert_eq!(sweep.to_string(), text);
        let from_text: Sweep = serde_json::from_value(serde_json::json!(text)).unwrap();
        let from_fields: Sweep =
            serde_json::from_value(serde_json::to_value(&sweep).unwrap()).unwrap();
        assert_eq!((&from_text, &from_fields), (&sweep, &sweep));
    }
    let refused =
        |v: serde_json::Value| serde_json::from_value::<Sweep>(v).unwrap_err().to_string();
    assert!(refused(serde_json::json!({"axis": "rtt", "steps": [50, 10]})).contains("must grow"));
    assert!(refused(serde_json::json!({"axis": "loss", "steps": [0, 9000]})).contains("loss"));
    assert!(refused(serde_json::json!({"axis": "rtt", "steps": [0]})).contains("2 to 10 steps"));
    assert!(refused(serde_json::json!({"axis": "jitter", "steps": [0, 1]})).contains("jitter"));
}
