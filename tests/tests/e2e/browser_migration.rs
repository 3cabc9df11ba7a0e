//! Connection migration in headless Chromium against `h123 serve`: the form's advanced option
//! starts a probe whose HTTP/3 connections move to a new port mid-response; the result page says
//! what became of the move and what a new connection costs HTTP/1.1 and HTTP/2 (against the
//! stored record), and the waterfall marks where the connection moved. The screenshot goes to
//! `docs/migration-desktop-light.png`.

use crate::browser::{Stage, api_record, probe_with_option, screenshots, until, workspace};
use h123_shared::Protocol;
use h123_shared::migration::{Migrate, lines};
use h123_target::TargetConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_moves_http3_connections_and_the_page_shows_what_became_of_them() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let client = stage.browser("migration").await;
    let id = probe_with_option(
        &client,
        &stage.base,
        &stage.target.https_url("/drip/100000/200"),
        "#migrate",
    )
    .await;
    until(
        &client,
        "return document.querySelectorAll('aside[aria-label=\"Connection migration\"] p').length >= 4 \
         && !!document.querySelector('.wf-track .moved') && !document.querySelector('.pending-note');",
        60,
    )
    .await;
    let record = api_record(&client, &id).await;
    assert_eq!(record.options.migrate, Some(Migrate::Port));
    let h3 = record
        .result
        .runs
        .iter()
        .find(|r| r.protocol == Protocol::H3)
        .unwrap();
    assert!(h3.attempts[0].migration.as_ref().unwrap().survived);
    let shown: Vec<String> = serde_json::from_value(
        client
            .execute(
                "return [...document.querySelectorAll('aside[aria-label=\"Connection migration\"] p')].map(p => p.textContent);",
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
    let marked = client
        .execute(
            "return document.querySelectorAll('.wf-track .moved').length;",
            vec![],
        )
        .await
        .unwrap();
    let moved = h3.attempts.iter().filter(|a| a.migration.is_some()).count();
    assert_eq!(moved, 4, "each round's new connection moved");
    assert_eq!(marked, moved, "a mark per moved connection");
    screenshots(&client, "migration").await;
    std::fs::copy(
        workspace().join("test-artifacts/migration-desktop-light.png"),
        workspace().join("docs/migration-desktop-light.png"),
    )
    .expect("docs screenshot");
}
