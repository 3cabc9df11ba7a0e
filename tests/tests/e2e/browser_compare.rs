//! Comparing two results in headless Chromium against `h123 serve` and the target: two probes
//! made through the form (a 40 ms server delay, then none), the second compared with the first
//! through its "Compare with another result" field (a bad entry named, the page unchanged), the
//! comparison page's answer and table against `GET /api/v1/compare`, both results' bars on one
//! axis (against `shared`'s layout), the swap, an unknown id's problem page, the permalink in a
//! fresh profile, and the 390 px layout. Screenshots go to `docs/compare-*.png`.

use crate::browser::{
    Stage, assert_panels_on_axis, screenshots, submit_probe, timezone, until, workspace,
};
use fantoccini::actions::InputSource as _;
use fantoccini::{Client, Locator};
use h123_shared::api::ProbeComparison;
use h123_shared::compare::ComparisonKind;
use h123_shared::waterfall::fitted_span;
use h123_target::TargetConfig;
use serde_json::{Value, json};

/// One side's group on the page: its verdict, axis labels and bars per panel.
const SIDE: &str = r#"
const g = document.querySelector(`.vantage-group[data-side="${arguments[0]}"]`);
return {
  verdict: g.querySelector('.verdict-summary').textContent,
  ticks: [...g.querySelectorAll('.wf-panel:first-of-type .wf-ticks span')].map(t => t.textContent),
  panels: [...g.querySelectorAll('.wf-panel')].map(p => ({
    protocol: p.dataset.protocol,
    rows: [...p.querySelectorAll('.wf-row')].map(r => [...r.querySelectorAll('.bar rect.fill')].map(b =>
      [b.closest('.bar').dataset.phase, parseFloat(b.getAttribute('x')), parseFloat(b.getAttribute('width'))])),
  })),
};
"#;

/// The comparison as the API gives it, fetched by the page.
async fn api_comparison(client: &Client, a: &str, b: &str) -> ProbeComparison {
    let script = format!(
        "const done = arguments[0]; fetch('/api/v1/compare/{a}/{b}').then(r => r.text()).then(done);"
    );
    let text = client.execute_async(&script, vec![]).await.expect("fetch");
    serde_json::from_str(text.as_str().expect("text")).expect("comparison JSON")
}

/// Types `url` into the probe form and submits it, returning the finished probe's id.
async fn probe(client: &Client, base: &str, url: &str) -> String {
    crate::browser::open_home(client, base).await;
    until(client, "return !!document.getElementById('url');", 20).await;
    let field = client.find(Locator::Css("#url")).await.expect("url field");
    field.clear().await.unwrap();
    field.send_keys(url).await.unwrap();
    let id = submit_probe(client).await;
    until(
        client,
        "return !!document.querySelector('.status.done');",
        60,
    )
    .await;
    id
}

/// Enters `text` in the result page's "Compare with" field and submits it.
async fn compare_with(client: &Client, text: &str) {
    let field = client
        .find(Locator::Css("#compare-with"))
        .await
        .expect("compare field");
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
    client
        .find(Locator::Css(".compare-with button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Checks both sides' bars against `shared`'s layout on the axis common to both results.
async fn assert_one_axis(client: &Client, both: &ProbeComparison) {
    let common = fitted_span([&both.a.result, &both.b.result]);
    let mut axes = Vec::new();
    for (side, record) in [("a", &both.a), ("b", &both.b)] {
        let g = client.execute(SIDE, vec![json!(side)]).await.unwrap();
        let verdict = &record.result.analysis.as_ref().expect("analyzed").verdict;
        assert_eq!(g["verdict"], verdict.summary.as_str(), "{side}");
        assert_panels_on_axis(&g["panels"], &record.result, common, side);
        axes.push(g["ticks"].clone());
    }
    assert_eq!(axes[0], axes[1], "one time axis");
}

/// The comparison page is an islands page: only the islands bundle loads, and once hydrated its
/// charts answer the keyboard (ArrowRight to the next phase, its tooltip and readout saying its
/// times) and the pointer, and the skip link opens the table.
async fn assert_islands_hydrated(client: &Client) {
    let loaded = client
        .execute(
            "return [document.documentElement.hasAttribute('data-islands'), \
             performance.getEntriesByType('resource').map(e => new URL(e.name).pathname).filter(p => p.endsWith('.wasm'))];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(loaded, json!([true, ["/h123-islands_bg.wasm"]]));
    until(
        client,
        "return performance.getEntriesByName('h123:app').length > 0;",
        20,
    )
    .await;
    client
        .execute(
            "document.querySelector('.vantage-group[data-side=b] .wf-panels .bar').focus();",
            vec![],
        )
        .await
        .unwrap();
    let focused = client.active_element().await.expect("active element");
    focused.send_keys("\u{E014}").await.expect("ArrowRight");
    let said = until(
        client,
        "const s = document.querySelector('.vantage-group[data-side=b] .waterfalls'); \
         const t = s.querySelector('.wf-tooltip'), r = s.querySelector('.wf-readout'); \
         const bars = [...s.querySelectorAll('.wf-panels .bar')]; \
         return !t.hidden && t.textContent.includes('(from ') \
           ? [bars.indexOf(document.activeElement), t.textContent === r.textContent, \
              bars.filter(b => b.getAttribute('tabindex') === '0').length] : null;",
        5,
    )
    .await;
    assert_eq!(
        said,
        json!([1, true, 1]),
        "the second bar, told, one tab stop"
    );
    // Focus leaves: the tooltip hides and the readout says the hint again.
    client
        .execute("document.activeElement.blur();", vec![])
        .await
        .unwrap();
    until(
        client,
        "const s = document.querySelector('.vantage-group[data-side=b] .waterfalls'); \
         return s.querySelector('.wf-tooltip').hidden && !s.querySelector('.wf-readout').textContent.includes('(from ');",
        5,
    )
    .await;
    // The pointer over a bar of side A (its widest phase, in view) tells its times.
    let wait = ".vantage-group[data-side=a] .wf-panels .bar.phase-wait";
    client
        .execute(
            &format!("document.querySelector('{wait}').scrollIntoView({{block: 'center'}});"),
            vec![],
        )
        .await
        .unwrap();
    let bar = client.find(Locator::Css(wait)).await.unwrap();
    client
        .perform_actions(
            fantoccini::actions::MouseActions::new("mouse".to_owned()).then(
                fantoccini::actions::PointerAction::MoveToElement {
                    element: bar,
                    duration: None,
                    x: 0.0,
                    y: 0.0,
                },
            ),
        )
        .await
        .unwrap();
    until(
        client,
        "const r = document.querySelector('.vantage-group[data-side=a] .wf-readout'); \
         return r.textContent.includes('(from ');",
        5,
    )
    .await;
    // The skip link opens its section's table and puts the keyboard on it.
    client
        .execute(
            "document.querySelector('.vantage-group[data-side=a] .skip-link').click();",
            vec![],
        )
        .await
        .unwrap();
    let table = client
        .execute(
            "const d = document.querySelector('.vantage-group[data-side=a] .wf-table'); \
             return [d.open, document.activeElement === d.querySelector('summary')];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(table, json!([true, true]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_results_compared_on_one_page() {
    let Some(stage) = Stage::start(TargetConfig::default(), &[]).await else {
        return;
    };
    let (target, base) = (&stage.target, stage.base.clone());
    let client = stage.browser("profile").await;

    let before = probe(&client, &base, &target.https_url("/delay/40")).await;
    let after = probe(&client, &base, &target.https_url("/delay/0")).await;

    // A bad entry is named and the page stays.
    compare_with(&client, "https://h123.example/b/notaresult1").await;
    let problem = until(
        &client,
        "const p = document.querySelector('.compare-with .field-problem'); \
         return p && p.textContent ? p.textContent : null;",
        5,
    )
    .await;
    assert!(problem.as_str().unwrap().contains("permalink"), "{problem}");
    let path = client
        .execute("return location.pathname;", vec![])
        .await
        .unwrap();
    assert_eq!(path, format!("/r/{after}").as_str());
    assert_eq!(
        client
            .find(Locator::Css("#compare-with"))
            .await
            .unwrap()
            .attr("aria-invalid")
            .await
            .unwrap()
            .as_deref(),
        Some("true")
    );

    // The earlier result's permalink, pasted: it becomes A, this one B.
    compare_with(&client, &format!("{base}/r/{before}")).await;
    until(
        &client,
        &format!("return location.pathname === '/compare/{before}/{after}';"),
        10,
    )
    .await;
    until(
        &client,
        "return !!document.querySelector('#compare-title');",
        20,
    )
    .await;
    let both = api_comparison(&client, &before, &after).await;
    assert_eq!(
        both.comparison.kind,
        ComparisonKind::Differs,
        "{}",
        both.comparison.summary
    );
    let shown = until(
        &client,
        "const s = document.querySelector('[aria-labelledby=compare-title] .verdict-summary'); \
         return s ? s.textContent : null;",
        5,
    )
    .await;
    assert_eq!(shown, both.comparison.summary.as_str());
    assert!(shown.as_str().unwrap().starts_with("B is faster than A"));
    let title = client
        .execute("return document.title;", vec![])
        .await
        .unwrap();
    assert_eq!(
        title,
        format!("Comparison: {} · h123", both.comparison.summary).as_str()
    );
    // The table: a group heading per protocol and state, a row per metric, "faster by" where called.
    let table: Value = client
        .execute(
            "return [...document.querySelectorAll('.diff-table tbody tr')].map(r => r.textContent);",
            vec![],
        )
        .await
        .unwrap();
    let rows: Vec<&str> = table
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let groups = both.comparison.groups.len();
    let metrics: usize = both.comparison.groups.iter().map(|g| g.metrics.len()).sum();
    assert_eq!(rows.len(), groups + metrics, "{rows:?}");
    assert!(
        rows.iter()
            .any(|r| r.starts_with("HTTP/2 · new connection")),
        "{rows:?}"
    );
    let called = both
        .comparison
        .groups
        .iter()
        .flat_map(|g| &g.metrics)
        .filter(|m| m.faster.is_some())
        .count();
    assert_eq!(
        rows.iter().filter(|r| r.contains(" faster by ")).count(),
        called,
        "{rows:?}"
    );
    // What each row says is the API's, with the floor beside the noise where nothing is called.
    let said: Value = client
        .execute(
            "return [...document.querySelectorAll('.diff-table tbody tr:not(.state) td:last-child')]              .map(c => c.textContent);",
            vec![],
        )
        .await
        .unwrap();
    let expected: Vec<String> = both
        .comparison
        .groups
        .iter()
        .flat_map(|g| &g.metrics)
        .map(|m| m.said())
        .collect();
    assert_eq!(said, json!(expected));
    assert!(
        expected
            .iter()
            .any(|s| s.starts_with("under the ") || s.starts_with("within noise (")),
        "some row is not called: {expected:?}"
    );
    assert!(
        expected
            .iter()
            .filter(|s| s.starts_with("under the ") || s.starts_with("within noise ("))
            .all(|s| s.contains(" floor") && s.contains("noise")),
        "{expected:?}"
    );
    // The rule once, under the answer it applies to; neither side's verdict repeats it.
    let rules = client
        .execute(
            "return [...document.querySelectorAll('.rule')].map(r => !!r.closest('[aria-labelledby=compare-title]'));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(rules, json!([true]), "the rule once, under the answer");
    assert_one_axis(&client, &both).await;
    screenshots(&client, "compare").await;
    for name in ["compare-desktop-light.png", "compare-390px-light.png"] {
        std::fs::copy(
            workspace().join("test-artifacts").join(name),
            workspace().join("docs").join(name),
        )
        .expect("docs screenshot");
    }
    assert_islands_hydrated(&client).await;

    // At 390 px nothing but the table's own scroll box is wider than the screen.
    client.set_window_size(390, 900).await.unwrap();
    let overflow = client
        .execute(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(overflow, 0, "the page scrolls sideways at 390 px");
    client.set_window_size(1280, 900).await.unwrap();

    // Swapped, A is the faster.
    client
        .find(Locator::LinkText("Swap A and B"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        &client,
        "const s = document.querySelector('[aria-labelledby=compare-title] .verdict-summary'); \
         return s && s.textContent.startsWith('A is faster than B');",
        20,
    )
    .await;

    // The permalink in a fresh profile shows the same answer, its times on the reader's clock
    // (drawn in UTC, rewritten by the island `LocalTime`).
    let fresh = stage.browser("profile-2").await;
    timezone(&fresh, "Asia/Kolkata").await;
    fresh
        .goto(&format!("{base}/compare/{before}/{after}"))
        .await
        .unwrap();
    let again = until(
        &fresh,
        "const s = document.querySelector('[aria-labelledby=compare-title] .verdict-summary'); \
         return s ? s.textContent : null;",
        20,
    )
    .await;
    assert_eq!(again, both.comparison.summary.as_str());
    let times = until(
        &fresh,
        "const t = [...document.querySelectorAll('time[data-unix-ms]')].map(t => t.textContent); \
         return t.length && t.every(t => t.endsWith(' UTC+5:30')) ? t : null;",
        10,
    )
    .await;
    assert_eq!(
        times.as_array().map(Vec::len),
        Some(2),
        "a time per side: {times}"
    );

    // An unknown id: the problem page, with its title.
    fresh
        .goto(&format!("{base}/compare/{before}/zzzzzzzzzzzz"))
        .await
        .unwrap();
    let heading = until(
        &fresh,
        "const h = document.querySelector('.problem h1'); return h ? h.textContent : null;",
        20,
    )
    .await;
    assert_eq!(heading, "No result with this id");
    fresh.close().await.unwrap();
    client.close().await.unwrap();
}
