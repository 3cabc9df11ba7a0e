//! Decay curves in headless Chromium against `h123 serve --enable-bench --allow-network`: the
//! bench form checks a sweep as it is typed and says how long it will run, the bench page
//! counts the steps while it runs and draws the decay chart (the shared geometry of the stored
//! record: a measured line and the model's line per protocol, every step on the axis, rates on
//! a log axis that keeps each step readable, the model's lines visible), its table says what
//! the record says, the finished sweep says how its network was applied and its caveats, the
//! picture downloads, and at 390 px the page does not scroll sideways. The screenshot goes to `docs/decay-page-desktop-light.png`.

use crate::browser::{Stage, assert_fits_a_phone, screenshots, submit_bench, until};
use fantoccini::{Client, Locator};
use h123_shared::api::BenchRecord;
use h123_shared::sweep::{chart::chart, curve, protocols};
use h123_target::TargetConfig;

/// The drawn decay chart: its axis labels, lines (class, protocol, path) and table cells.
const DECAY: &str = r#"
const svg = document.querySelector('.decay-chart');
return { label: svg.getAttribute('aria-label'),
  ticks: [...svg.querySelectorAll('text.tick[text-anchor=middle]')].map(t => t.textContent),
  measured: [...svg.querySelectorAll('path.measured')].map(p => [p.dataset.protocol, p.getAttribute('d')]),
  model: [...svg.querySelectorAll('path.model')].map(p => [p.dataset.protocol, p.getAttribute('d')]),
  marks: [svg.querySelectorAll('circle.mark.measured').length, svg.querySelectorAll('circle.mark.model').length],
  rows: [...document.querySelectorAll('.decay-table tbody tr')]
    .map(tr => [...tr.children].map(c => c.textContent)),
  download: document.querySelector('.decay a[download]').getAttribute('href'),
  yTicks: [...svg.querySelectorAll('text.tick[text-anchor=end]')].map(t => t.textContent),
  yTitle: svg.querySelector('text.y-title').textContent,
  points: [...svg.querySelectorAll('circle.mark.measured')]
    .map(c => [[...c.classList].find(k => k.startsWith('proto-')), +c.getAttribute('cy')]),
  modelStyle: [...svg.querySelectorAll('path.model')].map(p => {
    const s = getComputedStyle(p), m = getComputedStyle(svg.querySelector('path.measured[data-protocol=' + p.dataset.protocol + ']'));
    return [s.stroke, parseFloat(s.strokeWidth), parseFloat(s.opacity), s.strokeDasharray, m.stroke, p.getBoundingClientRect().width];
  }),
  caveats: [...document.querySelectorAll('.caveats li')].map(li => li.textContent),
  network: [...document.querySelectorAll('aside[aria-label="Emulated network"] p')].map(p => p.textContent) };
"#;

/// The sweep field's note and whether it shows an error, and the form's own note.
const NOTES: &str = "const s = document.getElementById('bench-sweep-note'); \
    return [s.textContent, s.classList.contains('error'), document.getElementById('bench-note').textContent];";

async fn type_into(client: &Client, field: &str, value: &str) {
    let input = client.find(Locator::Css(field)).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys(value).await.unwrap();
}

async fn fetch_text(client: &Client, path: &str) -> String {
    let script =
        format!("const done = arguments[0]; fetch('{path}').then(r => r.text()).then(done);");
    let text = client.execute_async(&script, vec![]).await.expect("fetch");
    text.as_str().expect("text").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_from_the_form_draws_its_decay_chart_step_by_step() {
    let flags = [
        "--enable-bench",
        "--bench-target",
        "127.0.0.1",
        "--allow-network",
    ];
    let Some(stage) = Stage::start(TargetConfig::default(), &flags).await else {
        return;
    };
    let client = stage.browser("decay").await;
    crate::browser::open_home(&client, &stage.base).await;
    client
        .wait()
        .for_element(Locator::Css("#bench-sweep"))
        .await
        .expect("the sweep field, since this server allows network conditions");
    type_into(
        &client,
        "#bench-url",
        &stage.target.https_url("/bytes/2000"),
    )
    .await;
    type_into(&client, "#bench-duration", "1").await;
    type_into(&client, "#bench-concurrency", "4").await;

    // A sweep that does not grow is refused as it is typed.
    type_into(&client, "#bench-sweep", "rtt=40,0ms").await;
    let notes = client.execute(NOTES, vec![]).await.unwrap();
    assert!(notes[0].as_str().unwrap().contains("must grow"), "{notes}");
    assert_eq!(notes[1], true, "{notes}");
    type_into(&client, "#bench-sweep", "rtt=0,40ms").await;
    let notes = client.execute(NOTES, vec![]).await.unwrap();
    assert_eq!(notes[1], false, "{notes}");
    assert_eq!(
        notes[2], "Ready: about 6 s in all.",
        "3 protocols × 2 steps × 1 s"
    );

    let id = submit_bench(&client).await;
    let progress = until(
        &client,
        "const p = document.querySelector('.progress-text'); \
         return p && p.textContent.startsWith('Step') ? p.textContent : null;",
        20,
    )
    .await;
    assert!(
        progress.as_str().unwrap().contains(" of 2 ("),
        "the steps are counted: {progress}"
    );
    until(
        &client,
        "return !!document.querySelector('.status.done') && !!document.querySelector('.decay-chart');",
        60,
    )
    .await;

    // The chart is the shared geometry of the stored record.
    let record: BenchRecord =
        serde_json::from_str(&fetch_text(&client, &format!("/api/v1/benches/{id}")).await)
            .expect("bench JSON");
    let sweep = record.sweep_result().expect("a sweep");
    assert_eq!(sweep.steps.len(), 2);
    let drawn = client.execute(DECAY, vec![]).await.unwrap();
    assert_eq!(drawn["ticks"], serde_json::json!(["0 ms", "40 ms"]));
    let expected = chart(&sweep, Default::default());
    let lines = |key: &str| -> Vec<(String, String)> {
        serde_json::from_value(drawn[key].clone()).expect("lines")
    };
    let measured: Vec<(String, String)> = expected
        .lines
        .iter()
        .map(|l| (l.protocol.as_str().to_owned(), l.measured.clone()))
        .collect();
    assert_eq!(lines("measured"), measured, "the shared geometry, drawn");
    for (line, (protocol, model)) in expected.lines.iter().zip(lines("model")) {
        assert_eq!(protocol, line.protocol.as_str());
        assert_eq!(model, line.model, "{protocol}: the model's ceiling");
        assert!(model.starts_with('M'), "{protocol}: a model at 40 ms");
    }
    let marks = |m: fn(&h123_shared::sweep::chart::DecayLine) -> usize| -> usize {
        expected.lines.iter().map(m).sum()
    };
    assert_eq!(
        drawn["marks"],
        serde_json::json!([
            marks(|l| l.measured_marks.len()),
            marks(|l| l.model_marks.len())
        ]),
        "every point marked"
    );
    assert_eq!(drawn["marks"], serde_json::json!([6, 3]), "{drawn}");
    let rows: Vec<Vec<String>> = serde_json::from_value(drawn["rows"].clone()).unwrap();
    let curves: Vec<_> = protocols(&sweep)
        .into_iter()
        .map(|p| curve(&sweep, p))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let mut want = vec![sweep.sweep.label(sweep.steps[i].value)];
        want.extend(curves.iter().map(|points| points[i].text()));
        assert_eq!(row, &want, "the table says what the record says");
    }
    assert!(
        rows[1][1].starts_with(|c: char| c.is_ascii_digit()) && !rows[1][1].contains("failed"),
        "{rows:?}"
    );

    // The rate axis is logarithmic, and says so: decades, and each step's point
    // readable (0 ms and 40 ms a readable fraction of the plot apart, none on the floor).
    assert_eq!(drawn["yTitle"], "requests per second (log scale)");
    let y_ticks: Vec<String> = serde_json::from_value(drawn["yTicks"].clone()).unwrap();
    let decades: Vec<String> = (expected.axis.low..=expected.axis.high)
        .map(h123_shared::sweep::chart::decade_label)
        .collect();
    assert_eq!(y_ticks, decades, "labelled decades");
    assert!(y_ticks.len() >= 2, "{y_ticks:?}");
    let frame = expected.frame;
    let points: Vec<(String, f64)> = serde_json::from_value(drawn["points"].clone()).unwrap();
    for (protocol, y) in &points {
        assert!(
            frame.baseline() - y > 0.1 * frame.plot_height(),
            "{protocol} at {y}: above the floor by a visible margin"
        );
    }
    for protocol in protocols(&sweep) {
        let ys: Vec<f64> = points
            .iter()
            .filter(|(p, _)| *p == format!("proto-{}", protocol.as_str()))
            .map(|(_, y)| *y)
            .collect();
        assert_eq!(ys.len(), 2, "{protocol:?}: {points:?}");
        let rates: Vec<f64> = curve(&sweep, protocol)
            .iter()
            .map(|p| p.requests_per_sec)
            .collect();
        let decades = (rates[0] / rates[1]).log10();
        let apart = (ys[1] - ys[0]) / frame.plot_height();
        let want = decades / f64::from(expected.axis.high - expected.axis.low);
        assert!(
            (apart - want).abs() < 0.01,
            "{protocol:?}: {rates:?}/s are {apart:.3} of the plot apart, log scale says {want:.3}"
        );
        assert!(apart > 0.15, "{protocol:?}: {apart:.3} of the plot apart");
    }
    // The model's lines are drawn and stand out: not the measured line's colour,
    // at least 1.5 wide, opaque, dashed, and as wide as the steps they span.
    let styles: Vec<(String, f64, f64, String, String, f64)> =
        serde_json::from_value(drawn["modelStyle"].clone()).unwrap();
    assert_eq!(styles.len(), 3, "{styles:?}");
    for (stroke, width, opacity, dashes, measured, span) in &styles {
        assert!(stroke != "none" && stroke != measured, "{styles:?}");
        assert!(*width >= 1.5 && *opacity >= 0.9, "{styles:?}");
        assert!(dashes != "none", "{styles:?}");
        assert!(*span == 0.0 || *span > 1.0, "{styles:?}");
    }

    // A finished sweep says how the network was applied, and its caveats: the
    // relay's own cost first, then the plain bench's.
    let network: Vec<String> = serde_json::from_value(drawn["network"].clone()).unwrap();
    assert_eq!(network, h123_shared::sweep::network_lines(&sweep));
    assert!(
        network[0].starts_with("Emulated network: rtt=0,40ms") && network.len() == 4,
        "{network:?}"
    );
    let caveats: Vec<String> = serde_json::from_value(drawn["caveats"].clone()).unwrap();
    assert_eq!(caveats, h123_shared::sweep::caveats(&sweep));
    assert!(
        caveats[0].starts_with("Step 0 ms goes through the emulator's relay")
            && caveats[0].contains("the relay's ceiling, not the target's"),
        "{caveats:?}"
    );
    assert!(
        caveats.iter().any(|c| c.starts_with("At 0 ms: Loopback")),
        "{caveats:?}"
    );

    // The picture downloads: one measured line per protocol, on the same log axis.
    let href = drawn["download"].as_str().unwrap();
    assert_eq!(href, format!("/api/v1/benches/{id}/decay.svg"));
    let svg = fetch_text(&client, href).await;
    assert_eq!(svg.matches(r#"class="line measured "#).count(), 3);
    assert_eq!(svg.matches(r#"class="line model "#).count(), 3);
    assert!(svg.contains(">requests per second (log scale)<"));

    screenshots(&client, "decay").await;
    assert_fits_a_phone(&client).await;
    client.close().await.unwrap();
}
