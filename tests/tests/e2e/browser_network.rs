//! The network picker in headless Chromium against `h123 serve --allow-network`: figures typed
//! wrong are named under the field (its description, the field marked invalid) and nothing starts, a named profile shows where its figures
//! come from, custom figures start a probe whose page says which network it was measured through
//! and how each protocol met it (against the stored record); a server without the flag offers
//! no picker. The screenshot goes to `docs/network-desktop-light.png`.

use crate::browser::{Stage, api_record, screenshots, submit_probe, until, workspace};
use fantoccini::Locator;
use h123_shared::network::{NetworkProfile, lines};
use h123_target::TargetConfig;

/// Picks `value` in the network select, as a user's choice would.
const PICK: &str = "const s = document.getElementById('network'); s.value = arguments[0]; \
                    s.dispatchEvent(new Event('change', { bubbles: true }));";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_picker_starts_a_probe_through_an_emulated_network() {
    let Some(stage) = Stage::start(TargetConfig::default(), &["--allow-network"]).await else {
        return;
    };
    let client = stage.browser("picker").await;
    crate::browser::open_home(&client, &stage.base).await;
    until(&client, "return !!document.getElementById('network');", 20).await;

    client.execute(PICK, vec!["3g".into()]).await.unwrap();
    let note = until(
        &client,
        "const t = document.getElementById('network-note').textContent; return t.includes('WebPageTest') ? t : null;",
        5,
    )
    .await;
    assert!(note.as_str().unwrap().contains("300 ms RTT"), "{note}");

    client.execute(PICK, vec!["custom".into()]).await.unwrap();
    let figures = client
        .wait()
        .for_element(Locator::Css("#network-figures"))
        .await
        .expect("the figures field");
    figures.send_keys("rtt=fast").await.unwrap();
    let url = client.find(Locator::Css("#url")).await.unwrap();
    url.send_keys(&stage.target.https_url("/")).await.unwrap();
    let refused = until(
        &client,
        "const n = document.getElementById('network-note'); return n.classList.contains('error') ? n.textContent : null;",
        5,
    )
    .await;
    assert!(
        refused.as_str().unwrap().contains("not a duration"),
        "{refused}"
    );
    // The problem is the field's own: it is described by the note and marked invalid.
    assert_eq!(
        figures.attr("aria-describedby").await.unwrap().as_deref(),
        Some("network-note")
    );
    assert_eq!(
        figures.attr("aria-invalid").await.unwrap().as_deref(),
        Some("true")
    );
    client
        .find(Locator::Css("button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let path = client
        .execute("return location.pathname;", vec![])
        .await
        .unwrap();
    assert_eq!(path, "/", "refused figures start nothing");

    figures.clear().await.unwrap();
    figures
        .send_keys("rtt=60ms,loss=1%,down=20mbit")
        .await
        .unwrap();
    until(
        &client,
        "return document.getElementById('network-figures').getAttribute('aria-invalid') === 'false';",
        5,
    )
    .await;
    let id = submit_probe(&client).await;
    until(
        &client,
        "return document.querySelectorAll('.network-note p').length === 4 && !document.querySelector('.pending-note');",
        60,
    )
    .await;
    let record = api_record(&client, &id).await;
    assert_eq!(
        record.options.network,
        Some(NetworkProfile::parse("rtt=60ms,loss=1%,down=20mbit").unwrap())
    );
    let shown: Vec<String> = serde_json::from_value(
        client
            .execute(
                "return [...document.querySelectorAll('.network-note p')].map(p => p.textContent);",
                vec![],
            )
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        shown,
        lines(&record.result),
        "the page says what the record says"
    );
    assert!(
        shown[0].starts_with("Emulated network: rtt=60ms"),
        "{shown:?}"
    );
    screenshots(&client, "network").await;
    std::fs::copy(
        workspace().join("test-artifacts/network-desktop-light.png"),
        workspace().join("docs/network-desktop-light.png"),
    )
    .expect("docs screenshot");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_flag_offers_no_picker() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let client = stage.browser("closed").await;
    crate::browser::open_home(&client, &stage.base).await;
    until(&client, "return !!document.getElementById('url');", 20).await;
    // The server's config has answered once the recent list has.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        client.find(Locator::Css("#network")).await.is_err(),
        "no picker on a server that takes no network conditions"
    );
}
