//! Requests at once in headless Chromium against `h123 serve`: the form's advanced option sends
//! eight requests at once per protocol after the attempts; the result page draws a bar per request
//! per protocol on one axis (the shared layout of the stored record: its wait, then its transfer)
//! and says per protocol what the record says. The screenshot goes to
//! `docs/streams-desktop-light.png`.

use crate::browser::{Stage, api_record, probe_with_option, screenshots, until};
use h123_shared::streams::{describe, layout};
use h123_target::TargetConfig;

/// Per chart: its protocol, its heading, and each bar's wait and transfer widths.
const STREAMS: &str = r#"
return [...document.querySelectorAll('svg.streams-chart')].map(svg => ({
  protocol: svg.dataset.protocol,
  line: svg.previousElementSibling.textContent,
  bars: [...svg.querySelectorAll('g.stream')].map(g => [...g.querySelectorAll('rect')]
    .map(r => Number(r.getAttribute('width')))),
}));
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_sends_requests_at_once_and_the_page_draws_each() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let client = stage.browser("streams").await;
    let id = probe_with_option(
        &client,
        &stage.base,
        &stage.target.https_url("/drip/20000/100"),
        "#streams",
    )
    .await;
    until(
        &client,
        "return document.querySelectorAll('svg.streams-chart').length === 3 \
         && !document.querySelector('.pending-note');",
        60,
    )
    .await;
    let record = api_record(&client, &id).await;
    assert_eq!(record.options.streams, Some(8));
    let drawn = client.execute(STREAMS, vec![]).await.unwrap();
    let (_, groups) = layout(&record.result);
    let charts = drawn.as_array().unwrap();
    assert_eq!(charts.len(), groups.len());
    for (chart, (protocol, bars)) in charts.iter().zip(&groups) {
        assert_eq!(chart["protocol"], protocol.as_str());
        let run = record
            .result
            .runs
            .iter()
            .find(|r| r.protocol == *protocol)
            .unwrap();
        let burst = run.streams.as_ref().unwrap();
        assert_eq!(chart["line"], describe(*protocol, burst).as_str());
        assert!(bars.iter().all(|b| b.ok), "{protocol}: {bars:?}");
        let widths = chart["bars"].as_array().unwrap();
        assert_eq!(widths.len(), 8, "{protocol}: a bar per request");
        for (drawn, bar) in widths.iter().zip(bars) {
            let first = bar.first_byte.unwrap() * 1000.0;
            let wait = drawn[0].as_f64().unwrap();
            let transfer = drawn[1].as_f64().unwrap();
            assert!(
                (wait - first).abs() < 0.06,
                "{protocol}: {drawn} vs {bar:?}"
            );
            assert!(
                (wait + transfer - bar.done * 1000.0).abs() < 0.11,
                "{protocol}: {drawn} vs {bar:?}"
            );
        }
    }
    screenshots(&client, "streams").await;
    client.close().await.unwrap();
}
