//! A long phase shows it is alive, in headless Chromium: HTTP/3 advertised on a UDP port that never
//! answers, so its first attempt waits out its QUIC budget (10 s here) in `quic`. While it waits, the row's
//! elapsed time grows between two reads, its bar widens on the common axis, and the note under the
//! panel says what it waits on and when it gives up; the page fits a phone. The screenshot goes to
//! `docs/long-phase-desktop-light.png`.

use crate::browser::{
    Stage, assert_fits_a_phone, create_probe_from_page, page_state, screenshot, until, within,
    workspace,
};
use fantoccini::Locator;
use h123_target::{H3Mode, TargetConfig};
use serde_json::Value;
use std::time::Duration;

/// The live quic row's elapsed time (ms, from its total's text), its bar's width (%), and the
/// waiting note's text.
const READ: &str = "const row = document.querySelector('.wf-panel[data-protocol=h3] .wf-row.live[data-open=quic]'); \
    if (!row) return null; \
    const t = row.querySelector('.wf-total').textContent; \
    const m = t.match(/([0-9.]+) (ms|s)/); \
    const bars = row.querySelectorAll('.bar[data-phase=quic] rect'); \
    const w = bars.length ? parseFloat(bars[bars.length - 1].getAttribute('width')) : -1; \
    const note = row.closest('.wf-panel').querySelector('.wf-waiting'); \
    return m ? [parseFloat(m[1]) * (m[2] === 's' ? 1000 : 1), w, note ? note.textContent : ''] : null;";

/// One read of the live row, or a failure naming the page's state.
async fn read(client: &fantoccini::Client) -> (f64, f64, String) {
    let v: Value = client.execute(READ, vec![]).await.expect("read the row");
    let a = v.as_array().cloned().unwrap_or_default();
    assert_eq!(a.len(), 3, "a live quic row: {v}");
    (
        a[0].as_f64().unwrap(),
        a[1].as_f64().unwrap(),
        a[2].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phase_waiting_on_a_silent_udp_port_ticks_and_says_its_limit() {
    let config = TargetConfig {
        h3: H3Mode::BlockUdp,
        ..TargetConfig::default()
    };
    let Some(stage) = Stage::start(config, &[]).await else {
        return;
    };
    let client = stage.browser("long").await;
    crate::browser::open_home(&client, &stage.base).await;
    // A QUIC budget of 10 s (the default, 2 s on loopback, is too short to
    // watch), from the API as the form has no field for it.
    let options = serde_json::json!({
        "url": stage.target.https_url("/"),
        "quic_timeout_ms": 10_000,
    });
    let id = create_probe_from_page(&client, options).await;
    client
        .goto(&format!("{}/r/{id}", stage.base))
        .await
        .expect("the result page");
    if within(
        &client,
        &format!("return (function () {{ {READ} }})() !== null;"),
        40,
    )
    .await
    .is_none()
    {
        panic!("no live quic row: {}", page_state(&client).await);
    }
    let (first, first_width, note) = read(&client).await;
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let (second, second_width, _) = read(&client).await;
    assert!(
        second >= first + 800.0,
        "the elapsed time moves on: {first} then {second} ms"
    );
    assert!(
        second_width > first_width,
        "the bar grows: {first_width}% then {second_width}%"
    );
    assert!(
        note.contains(&format!(
            "waiting for a QUIC answer over UDP from {} (advertised by Alt-Svc)",
            stage.target.https_addr
        )) && note.ends_with("giving up after 10 s"),
        "{note}"
    );
    client.set_window_size(1280, 900).await.expect("resize");
    screenshot(&client, "long-phase-desktop-light").await;
    std::fs::copy(
        workspace().join("test-artifacts/long-phase-desktop-light.png"),
        workspace().join("docs/long-phase-desktop-light.png"),
    )
    .expect("docs screenshot");
    assert_fits_a_phone(&client).await;
    let (third, _, _) = read(&client).await;
    assert!(third > second, "still ticking at 390 px: {third} ms");
    screenshot(&client, "long-phase-390px-light").await;
    until(
        &client,
        "return document.querySelector('#result[data-status=done]') !== null;",
        40,
    )
    .await;
    assert!(
        client
            .find(Locator::Css(".wf-row.live, .wf-waiting"))
            .await
            .is_err(),
        "a finished page has no running row or waiting note"
    );
}
