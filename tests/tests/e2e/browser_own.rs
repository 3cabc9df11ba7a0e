//! The user's own browser as a vantage, in headless Chromium (trusting the target's certificate)
//! against `h123 serve` and the target: a probe of a route that sends `Timing-Allow-Origin`,
//! started with "Also measure from this browser", measured from the browser once it finished
//! (phases, `h2`, a new then reused connection) and drawn as its own group on the server's axis
//! (bars against `shared::browser::rows`); a route without the header, measured through the
//! result page's button (totals only, said so); a visitor's fresh profile sees the measurement
//! and is offered none; the screenshot goes to `docs/browser-vantage-desktop-light.png`.

use crate::browser::{
    Stage, api_record, assert_panels_on_axis, browser_with, screenshots, submit_probe, until,
    workspace,
};
use fantoccini::{Client, Locator};
use h123_shared::api::ProbeRecord;
use h123_shared::browser::{ATTEMPTS, BrowserRun, rows};
use h123_shared::waterfall::{axis, fitted_span};
use h123_target::TargetConfig;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The browser's group as drawn.
const GROUP: &str = r#"
const g = document.querySelector('.browser-group');
if (!g) return null;
return {
  finding: (g.querySelector('.browser-finding') || {}).textContent || null,
  notes: g.querySelector('.browser-notes').textContent,
  rows: [...g.querySelectorAll('.wf-row')].map(r => ({
    hidden: r.classList.contains('hidden-timing'),
    opaque: r.querySelector('rect.opaque') ? parseFloat(r.querySelector('rect.opaque').getAttribute('width')) : null,
    bars: [...r.querySelectorAll('.bar rect.fill')].map(b =>
      [b.closest('.bar').dataset.phase, parseFloat(b.getAttribute('x')), parseFloat(b.getAttribute('width'))]),
  })),
};
"#;

/// The server's panels as drawn: per panel, per row, each bar's phase, x and width.
const PANELS: &str = r#"
return [...document.querySelectorAll('.waterfalls .wf-panel')].map(p => ({
  protocol: p.dataset.protocol,
  rows: [...p.querySelectorAll('.wf-row')].map(r => [...r.querySelectorAll('.bar rect.fill')].map(b =>
    [b.closest('.bar').dataset.phase, parseFloat(b.getAttribute('x')), parseFloat(b.getAttribute('width'))])),
}));
"#;

/// Waits until the page shows the browser's group, and returns the record it came from.
async fn measured(client: &Client, id: &str) -> (ProbeRecord, BrowserRun) {
    until(
        client,
        "return !!document.querySelector('.browser-group');",
        60,
    )
    .await;
    let record = api_record(client, id).await;
    let run = record.browser.clone().expect("the stored measurement");
    (record, run)
}

/// Checks the drawn group and the server's panels against `shared` on the common axis.
async fn assert_on_one_axis(client: &Client, record: &ProbeRecord, run: &BrowserRun) -> Value {
    let common = fitted_span([&record.result]).max(run.span());
    assert_panels_on_axis(
        &client.execute(PANELS, vec![]).await.unwrap(),
        &record.result,
        common,
        "server",
    );
    let group = client.execute(GROUP, vec![]).await.unwrap();
    let expected = rows(run, axis(common).0);
    let drawn = group["rows"].as_array().expect("rows");
    assert_eq!(drawn.len(), expected.len());
    for (d, row) in drawn.iter().zip(&expected) {
        assert_eq!(d["hidden"], row.hidden, "{}", row.description);
        let bars = d["bars"].as_array().expect("bars");
        assert_eq!(bars.len(), row.bars.len(), "{}", row.description);
        for (b, bar) in bars.iter().zip(&row.bars) {
            assert_eq!(b[0], bar.phase.as_str());
            assert!((b[1].as_f64().unwrap() - bar.x * 100.0).abs() < 1e-3);
            assert!((b[2].as_f64().unwrap() - bar.width * 100.0).abs() < 1e-3);
        }
        if row.hidden {
            assert!((d["opaque"].as_f64().unwrap() - row.width * 100.0).abs() < 1e-3);
        }
    }
    let finding = run.finding.as_ref().expect("the server's finding");
    assert_eq!(group["finding"], finding.summary.as_str());
    group
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_measures_beside_the_server() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let (target, base) = (&stage.target, stage.base.clone());
    // The browser trusts the target's certificate by its key, as a user's would by its CA.
    let pin = h123_shared::base64::encode(&Sha256::digest(&target.ca.leaf_spki_der));
    let trust = [format!("--ignore-certificate-errors-spki-list={pin}")];
    let client = browser_with(&stage.driver, &stage.tmp.path().join("owner"), &trust).await;

    // With Timing-Allow-Origin, chosen on the form: the page measures once the probe finished.
    crate::browser::open_home(&client, &base).await;
    until(&client, "return !!document.getElementById('url');", 20).await;
    let field = client.find(Locator::Css("#url")).await.expect("url field");
    field.send_keys(&target.https_url("/tao/30")).await.unwrap();
    client
        .execute(
            "document.querySelector('details').open = true; document.getElementById('browser-too').click();",
            vec![],
        )
        .await
        .unwrap();
    let id = submit_probe(&client).await;
    let (record, run) = measured(&client, &id).await;
    assert_eq!(run.attempts.len(), ATTEMPTS);
    assert!(run.user_agent.contains("Chrome"), "{}", run.user_agent);
    for (i, a) in run.attempts.iter().enumerate() {
        assert_eq!(a.error, None, "request {}", i + 1);
        assert_eq!(
            a.protocol.as_deref(),
            Some("h2"),
            "QUIC is off in this browser"
        );
        assert!(a.visible(), "the target allows timing");
        assert!(
            a.total_us.0 >= 30_000,
            "the server waits 30 ms: {:?}",
            a.total_us
        );
    }
    assert_eq!(
        run.attempts[0].reused,
        Some(false),
        "the first request opens a connection"
    );
    let phases: Vec<&str> = run.attempts[0]
        .phases
        .iter()
        .map(|p| p.phase.as_str())
        .collect();
    assert!(phases.contains(&"connect"), "{phases:?}");
    // Chrome shows TLS apart (secureConnectionStart) when the connection was opened for this
    // request. On a busy machine it sometimes hands the request a connection it had already
    // begun (seen in two CI runs: connect, wait, receive), whose TLS it reports inside
    // connect; the page then draws one connect bar, which is what the browser said.
    if !phases.contains(&"tls") {
        eprintln!("the browser reported no TLS mark for its first connection: {phases:?}");
    }
    assert!(
        run.attempts[1..].iter().all(|a| a.reused == Some(true)),
        "later ones reuse it"
    );
    let group = assert_on_one_axis(&client, &record, &run).await;
    assert!(!group["notes"].as_str().unwrap().contains("Only totals"));
    let path = client
        .execute("return location.pathname + location.search;", vec![])
        .await
        .unwrap();
    assert_eq!(
        path,
        format!("/r/{id}").as_str(),
        "the measuring query is dropped"
    );
    assert!(
        client.find(Locator::Css(".measure-here")).await.is_err(),
        "measured once: no offer"
    );
    screenshots(&client, "browser-vantage").await;
    std::fs::copy(
        workspace().join("test-artifacts/browser-vantage-desktop-light.png"),
        workspace().join("docs/browser-vantage-desktop-light.png"),
    )
    .expect("docs screenshot");

    // Without it, through the result page's button: totals only, and the page says why.
    crate::browser::open_home(&client, &base).await;
    until(&client, "return !!document.getElementById('url');", 20).await;
    let field = client.find(Locator::Css("#url")).await.expect("url field");
    field
        .send_keys(&target.https_url("/delay/30"))
        .await
        .unwrap();
    let hidden_id = submit_probe(&client).await;
    until(
        &client,
        "return !!document.querySelector('.measure-here button');",
        60,
    )
    .await;
    client
        .find(Locator::Css(".measure-here button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let (record, run) = measured(&client, &hidden_id).await;
    for a in &run.attempts {
        assert!(
            !a.visible() && a.protocol.is_none() && a.phases.is_empty(),
            "{a:?}"
        );
        assert!(a.total_us.0 >= 30_000, "{:?}", a.total_us);
    }
    let group = assert_on_one_axis(&client, &record, &run).await;
    assert!(
        group["notes"]
            .as_str()
            .unwrap()
            .contains("Timing-Allow-Origin"),
        "{group}"
    );

    // A visitor's browser shows the measurement and offers none.
    let visitor = stage.browser("visitor").await;
    visitor.goto(&format!("{base}/r/{id}")).await.unwrap();
    until(
        &visitor,
        "return !!document.querySelector('.browser-group');",
        20,
    )
    .await;
    assert!(visitor.find(Locator::Css(".measure-here")).await.is_err());
    visitor.close().await.unwrap();
    client.close().await.unwrap();
}
