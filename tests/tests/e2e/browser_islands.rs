//! A page rendered by Leptos on the server with its islands hydrated in headless Chromium: the
//! page for a path no page knows (`h123_frontend::pages::not_found`) comes whole from the server
//! as a 404, loads the islands bundle (Trunk's build, `scripts/build-islands`) and no page
//! bundle, and its island (the way back) is hydrated: shown once there is a page to go back to,
//! and it goes there. Needs what `browser` needs, and the islands bundle in `dist/`.

use crate::browser::{Stage, open_home, until};
use h123_target::TargetConfig;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_not_found_page_is_rendered_by_leptos_and_its_island_hydrates() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let client = stage.browser("islands").await;
    open_home(&client, &stage.base).await;

    // As the server sends it: whole, marked for the islands, the island hidden until hydrated.
    let answer = client
        .execute_async(
            "const done = arguments[0]; fetch('/no/such/page').then(async r => done([r.status, await r.text()]));",
            vec![],
        )
        .await
        .expect("fetch");
    assert_eq!(answer[0], 404, "{answer}");
    let html = answer[1].as_str().expect("page");
    assert!(html.contains("<html data-islands"), "{html}");
    assert!(html.contains("<h1>Page not found</h1>"), "{html}");
    assert!(
        html.contains("<title>Page not found · h123</title>"),
        "{html}"
    );
    assert!(!html.contains("Loading h123…"), "drawn whole: {html}");
    assert!(
        html.contains("<leptos-island data-component=\"GoBack_"),
        "{html}"
    );

    client
        .goto(&format!("{}/no/such/page", stage.base))
        .await
        .unwrap();
    // Hydrated: the island's effect ran and showed the button (this tab has the home page
    // before it), and the loader marked the page ready.
    until(
        &client,
        "const b = document.querySelector('.problem leptos-island button'); \
         return !!b && !b.parentElement.hidden && performance.getEntriesByName('h123:app').length > 0;",
        30,
    )
    .await;
    let loaded: Value = client
        .execute(
            "return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)\
             .filter(p => p.endsWith('.wasm'));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        loaded,
        serde_json::json!(["/h123-islands_bg.wasm"]),
        "the islands bundle and no page bundle"
    );
    assert_eq!(
        client.title().await.unwrap(),
        "Page not found · h123",
        "the server's title stays"
    );
    assert_eq!(
        client
            .execute(
                "return document.querySelector('.problem h1').textContent;",
                vec![]
            )
            .await
            .unwrap(),
        "Page not found"
    );

    // The island's handler: back to the home page.
    client
        .execute(
            "document.querySelector('.problem leptos-island button').click();",
            vec![],
        )
        .await
        .unwrap();
    until(
        &client,
        "return location.pathname === '/' && !!document.querySelector('form.probe-form');",
        30,
    )
    .await;
    client.close().await.unwrap();
}
