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
    // 78/s to 4,000/s: the decades 10 to 10k, the top at the frame's top.
    let labels: Vec<&str> = drawn.y_ticks.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["10", "100", "1k", "10k"]);
    assert_eq!(drawn.y_ticks[0].at, frame.baseline());
    assert!((drawn.y_ticks[3].at - frame.top).abs() < 1e-9);
    assert_eq!(drawn.y_minor.len(), 6, "2 and 5 in each of three decades");
    let h1 = &drawn.lines[0];
    assert_eq!(
        h1.measured.matches('L').count(),
        2,
        "three points: {}",
        h1.measured
    );
    let height = |v: f64| frame.baseline() - frame.plot_height() * (v.log10() - 1.0) / 3.0;
    assert!(
        h1.measured
            .starts_with(&format!("M{:.1},{:.1}", frame.left, height(4_000.0)))
    );
    // Every step readable: 4,000/s and 78/s half the plot apart, 78/s well off the floor.
    let (fast, slow) = (h1.measured_marks[0].1, h1.measured_marks[2].1);
    assert!(slow - fast > 0.5 * frame.plot_height(), "{fast} {slow}");
    assert!(
        frame.baseline() - slow > 0.25 * frame.plot_height(),
        "{slow}"
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
        drawn.lines[0].measured_marks.len(),
        1,
        "marked, since a path of one point draws nothing"
    );
    assert_eq!(drawn.lines[0].measured_marks[0].0, frame.left);
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

#[test]
fn the_rate_axis_runs_in_decades_with_room_at_both_ends() {
    let axis = chart::LogAxis::fit([4_000.0, 281.0, 149.0, 77.0]);
    assert_eq!((axis.low, axis.high), (1, 4), "10/s to 10k/s");
    let ticks = axis.ticks();
    let values: Vec<f64> = ticks.iter().map(|t| t.0).collect();
    assert_eq!(
        values,
        [10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1e3, 2e3, 5e3, 1e4]
    );
    assert_eq!(
        ticks.iter().filter(|t| t.1).count(),
        4,
        "the decades are major"
    );
    assert_eq!(axis.fraction(10.0), 0.0);
    assert!((axis.fraction(100.0) - 1.0 / 3.0).abs() < 1e-12);
    assert!((axis.fraction(1e4) - 1.0).abs() < 1e-12);
    assert_eq!(axis.fraction(1e6), 1.0, "above the top: at the top");
    // A value at or below the floor, 0 included, sits on the floor.
    for low in [0.0, -1.0, 5.0, f64::NAN] {
        assert_eq!(axis.fraction(low), 0.0, "{low}");
    }
    // Room at both ends: 100 is not put on the floor, nor 9,000 at the top.
    assert_eq!(
        chart::LogAxis::fit([100.0, 9_000.0]),
        chart::LogAxis { low: 1, high: 5 }
    );
    assert_eq!(
        chart::LogAxis::fit([0.0]),
        chart::LogAxis { low: 0, high: 1 }
    );
    assert_eq!(
        chart::LogAxis::fit([0.5, 0.8]),
        chart::LogAxis { low: -1, high: 0 }
    );
    let labels: Vec<String> = (-1..=7).map(chart::decade_label).collect();
    assert_eq!(
        labels,
        ["0.1", "1", "10", "100", "1k", "10k", "100k", "1M", "10M"]
    );
}

#[test]
fn a_finished_sweep_names_the_relays_cost_and_the_plain_caveats_per_step() {
    let mut result = swept(
        "rtt=0,100ms",
        vec![
            (
                0,
                vec![
                    run(Protocol::H1, 3_161, 1_000),
                    run(Protocol::H3, 2_900, 1_300),
                ],
            ),
            (
                100,
                vec![
                    run(Protocol::H1, 77, 101_000),
                    run(Protocol::H3, 77, 101_000),
                ],
            ),
        ],
    );
    result.options.url = "https://127.0.0.1:8443/".into();
    let sweep = result.sweep.clone();
    for step in &mut result.steps {
        step.result.options.url = result.options.url.clone();
        step.result.options.network = Some(sweep.network(None, step.value));
        step.result.runs[0].emulated = Some(crate::network::EmulatedPath {
            emulation: crate::network::Emulation::Stream,
            up: Default::default(),
            down: Default::default(),
        });
    }
    let notes = caveats(&result);
    assert!(
        notes[0].starts_with("Step 0 ms goes through the emulator's relay")
            && notes[0].contains("(HTTP/1.1 3,161/s, HTTP/3 2,900/s)")
            && notes[0].contains("the relay's ceiling, not the target's"),
        "{notes:?}"
    );
    // Loopback has no latency at 0 ms only; warm connections at every step.
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("At 0 ms: Loopback has no latency")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("Connections were reused")),
        "{notes:?}"
    );
    assert_eq!(notes.len(), 3, "each caveat once: {notes:?}");
    let lines = network_lines(&result);
    assert_eq!(
        lines[0],
        "Emulated network: rtt=0,100ms, one step at a time, every protocol through the emulator at every step"
    );
    assert!(
        lines[1].starts_with("HTTP/1.1: a stream relay")
            && lines[1].contains("at 100 ms: nothing dropped"),
        "{lines:?}"
    );
}
