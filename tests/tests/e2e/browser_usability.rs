//! The web UI's usability in headless Chromium: the keyboard path past the waterfalls (one tab
//! stop, arrow keys up and down between rows and across between phases, a skip link to the
//! table), a tooltip beside the bar, a title per route, the URL field focused (and not red when
//! left empty) and its whitespace named, the verdict's figures named and the rule said once, one
//! reuse finding, and axis labels that do not overlap on a 390 px screen. The bench page's narrow layout is checked in `browser`.

use crate::browser::{Stage, api_record, free_port, submit_probe, until};
use fantoccini::{Client, Locator};
use h123_target::TargetConfig;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;

/// WebDriver's code for the Tab key.
const TAB: &str = "\u{E004}";
/// WebDriver's code for the right arrow key.
const ARROW_RIGHT: &str = "\u{E014}";
/// WebDriver's code for the down arrow key.
const ARROW_DOWN: &str = "\u{E015}";
/// WebDriver's code for the up arrow key.
const ARROW_UP: &str = "\u{E013}";
/// WebDriver's code for the Enter key.
const ENTER: &str = "\u{E007}";

/// Tabs from the top of the page to the waterfall table's summary: past the chart in a few.
const MAX_TABS_TO_TABLE: u64 = 12;

/// The document's title.
async fn title(client: &Client) -> String {
    let title = client.execute("return document.title;", vec![]).await;
    title
        .expect("title")
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Presses `key` on whatever has the focus.
async fn press(client: &Client, key: &str) {
    let focused = client.active_element().await.expect("active element");
    focused.send_keys(key).await.expect("key");
}

/// The URL field's note after `text` was pasted into the empty field.
async fn note_after_paste(client: &Client, text: &str) -> String {
    let script = "const f = document.getElementById('url'); f.value = ''; \
                  f.dispatchEvent(new Event('input', {bubbles: true})); \
                  const d = new DataTransfer(); d.setData('text/plain', arguments[0]); \
                  f.dispatchEvent(new ClipboardEvent('paste', {clipboardData: d, bubbles: true, cancelable: true}));";
    client
        .execute(script, vec![json!(text)])
        .await
        .expect("paste");
    // The page updates its note in its next reactive turn.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let note = client
        .execute(
            "return document.getElementById('url-reason').textContent;",
            vec![],
        )
        .await;
    note.expect("note").as_str().unwrap_or_default().to_string()
}

/// Per panel, the axis labels' left and right edges, in page pixels.
const LABEL_EDGES: &str = "return [...document.querySelectorAll('.wf-ticks')].map(t => \
    [...t.children].filter(s => !s.hidden).map(s => { const r = s.getBoundingClientRect(); return [r.left, r.right]; }));";

/// Whether no two labels of a panel overlap; returns the edges for the failure message.
fn labels_apart(edges: &Value) -> bool {
    edges.as_array().expect("panels").iter().all(|panel| {
        let labels = panel.as_array().expect("labels");
        labels.len() >= 2
            && labels.windows(2).all(|pair| {
                let right = pair[0][1].as_f64().unwrap();
                let next_left = pair[1][0].as_f64().unwrap();
                right <= next_left
            })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_titles_and_narrow_axes() {
    // The probe goes through the slow-TLS front too: a new connection there costs 200 ms more
    // than a reused one, a saving no busy machine's jitter hides.
    let slow_tls = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let config = TargetConfig {
        slow_tls_port: slow_tls.port(),
        ..TargetConfig::default()
    };
    let Some(stage) = Stage::start(config, &["--allow-target", &slow_tls.to_string()]).await else {
        return;
    };
    let (target, base) = (&stage.target, stage.base.clone());
    let client = stage.browser("profile").await;

    // Home: its own title, the URL field takes the keyboard at once.
    crate::browser::open_home(&client, &base).await;
    until(
        &client,
        "return document.activeElement && document.activeElement.id === 'url';",
        10,
    )
    .await;
    assert_eq!(title(&client).await, "HTTP timing waterfalls · h123");

    // Leaving the empty field the page focused is no mistake: no error before anything was typed.
    press(&client, TAB).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let quiet = client
        .execute(
            "const f = document.getElementById('url'), n = document.getElementById('url-reason'); \
             return [document.activeElement !== f, f.getAttribute('aria-invalid'), n.classList.contains('error')];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        quiet,
        json!([true, "false", false]),
        "the untouched field is not red"
    );

    // Whitespace inside a URL is named, never silently dropped; around it, it is trimmed.
    let wrapped = note_after_paste(&client, "https://example.com/very/long\npath").await;
    assert!(
        wrapped.contains("contains a line break after “…://example.com/very/long”"),
        "{wrapped}"
    );
    let spaced = note_after_paste(&client, "https://exa mple.com/").await;
    assert!(
        spaced.contains("contains a space after “https://exa”"),
        "{spaced}"
    );
    // A pasted URL with whitespace only around it is the browser's to paste: typed here.
    let url_field = client.find(Locator::Css("#url")).await.unwrap();
    url_field.clear().await.unwrap();
    url_field
        .send_keys("  https://example.com/  ")
        .await
        .unwrap();
    let padded = until(
        &client,
        "const t = document.getElementById('url-reason').textContent; \
         return t.startsWith('Ready') ? t : null;",
        5,
    )
    .await;
    assert_eq!(padded, "Ready to measure.");

    // A probe of three attempts per protocol: 9 rows of bars.
    url_field.clear().await.unwrap();
    url_field
        .send_keys(&target.slow_tls_url("/delay/20"))
        .await
        .unwrap();
    let id = submit_probe(&client).await;
    until(
        &client,
        "return !!document.querySelector('.status.done');",
        60,
    )
    .await;
    let record = api_record(&client, &id).await;
    let analysis = record.result.analysis.as_ref().expect("analysis");
    assert_eq!(
        title(&client).await,
        format!(
            "{}: {} · h123",
            record.options.url, analysis.verdict.summary
        ),
        "the result's title names its URL and verdict"
    );

    // The verdict's figures say whose they are; the significance rule is said once, under it.
    let summary = &analysis.verdict.summary;
    assert!(
        !summary.contains(" median is") || summary.contains("Over HTTP/1.1, HTTP/2 and HTTP/3 on "),
        "{summary}"
    );
    let rules = client
        .execute(
            "return [...document.querySelectorAll('.rule')].map(r => !!r.closest('.verdict'));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(rules, json!([true]), "the rule once, under the verdict");

    // One reuse finding for the three protocols, its figures per protocol.
    let reuse = client
        .execute(
            "return [...document.querySelectorAll('.finding[data-id=reuse_saving]')] \
             .map(f => f.querySelector('.finding-title').textContent);",
            vec![],
        )
        .await
        .unwrap();
    let reuse = reuse.as_array().expect("findings");
    assert_eq!(reuse.len(), 1, "one reuse finding: {reuse:?}");
    assert!(
        reuse[0].as_str().unwrap().contains(" on HTTP/2"),
        "{reuse:?}"
    );

    // The certificate's names, from its SAN extension.
    let names = client
        .execute(
            "const dt = [...document.querySelectorAll('.facts dt')].find(d => d.textContent === 'Names (SAN)'); \
             return dt ? dt.nextElementSibling.textContent : null;",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        names.as_str().is_some_and(|n| !n.is_empty()),
        "SAN names shown: {names}"
    );

    // The chart is one tab stop: from the top of the page, a few Tabs reach its table.
    let bars = client
        .execute(
            "const bars = [...document.querySelectorAll('.wf-panels .bar')]; \
             return [bars.length, bars.filter(b => b.getAttribute('tabindex') === '0').length];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(bars[1], 1, "one bar is the tab stop: {bars}");
    assert!(bars[0].as_u64().unwrap() > 20, "bars drawn: {bars}");
    client.goto(&format!("{base}/r/{id}")).await.unwrap();
    until(
        &client,
        "return !!document.querySelector('.status.done');",
        20,
    )
    .await;
    let mut tabs = 0;
    let on_table = "return document.activeElement.matches('.wf-table summary');";
    while client.execute(on_table, vec![]).await.unwrap() != json!(true) {
        assert!(
            tabs < 80,
            "the table was not reached in {tabs} Tabs: {:?}",
            client
                .execute(
                    "return document.activeElement.outerHTML.slice(0, 200);",
                    vec![]
                )
                .await
        );
        press(&client, TAB).await;
        tabs += 1;
    }
    eprintln!("Tabs from the top of the result page to the waterfall table: {tabs}");
    assert!(tabs <= MAX_TABS_TO_TABLE, "{tabs} Tabs to the table");

    // Inside the chart ArrowDown moves to the next row (every panel's rows in turn) and
    // ArrowRight to the next phase of the row; a tooltip shows beside the bar.
    client
        .execute(
            "document.querySelector('.wf-panels .bar[tabindex=\"0\"]').focus();",
            vec![],
        )
        .await
        .unwrap();
    let rows_before_h3 = client
        .execute(
            "return document.querySelectorAll('.wf-panel:not([data-protocol=h3]) .wf-row').length;",
            vec![],
        )
        .await
        .unwrap()
        .as_u64()
        .unwrap();
    let focused_row = "const rows = [...document.querySelectorAll('.wf-panels .wf-row')]; \
                       const bar = document.activeElement; \
                       return [rows.indexOf(bar.closest('.wf-row')), bar.closest('.wf-panel').dataset.protocol, \
                               document.querySelectorAll('.wf-panels .bar[tabindex=\"0\"]').length];";
    for row in 1..=rows_before_h3 {
        press(&client, ARROW_DOWN).await;
        let at = client.execute(focused_row, vec![]).await.unwrap();
        assert_eq!(at[0], json!(row), "ArrowDown moves one row: {at}");
        assert_eq!(at[2], json!(1), "one tab stop: {at}");
    }
    let at = client.execute(focused_row, vec![]).await.unwrap();
    assert_eq!(
        at[1], "h3",
        "HTTP/3's first row in {rows_before_h3} presses: {at}"
    );
    press(&client, ARROW_UP).await;
    let at = client.execute(focused_row, vec![]).await.unwrap();
    assert_eq!(
        at[0],
        json!(rows_before_h3 - 1),
        "ArrowUp moves back one row: {at}"
    );
    client
        .execute(
            "const b = document.querySelector('.wf-panels .bar[tabindex=\"0\"]'); b.setAttribute('tabindex', '-1'); \
             const first = document.querySelector('.wf-panels .bar'); first.setAttribute('tabindex', '0'); first.focus();",
            vec![],
        )
        .await
        .unwrap();
    press(&client, ARROW_RIGHT).await;
    let moved = client
        .execute(
            "const bars = [...document.querySelectorAll('.wf-panels .bar')]; \
             return [bars.indexOf(document.activeElement), \
                     bars.filter(b => b.getAttribute('tabindex') === '0').length];",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        moved,
        json!([1, 1]),
        "the second bar has the focus and the tab stop"
    );
    let tooltip = until(
        &client,
        "const t = document.querySelector('.wf-tooltip'); \
         if (!t || t.hidden || !t.textContent.includes('(from ')) return null; \
         const a = t.getBoundingClientRect(), b = document.activeElement.getBoundingClientRect(); \
         return [a.bottom - b.top, Math.max(a.left, b.left) - Math.min(a.right, b.right), t.textContent, \
                 document.querySelector('.wf-readout').textContent];",
        5,
    )
    .await;
    let above = tooltip[0].as_f64().unwrap();
    assert!(
        (-16.0..=0.0).contains(&above),
        "the tooltip sits just above the bar: {tooltip}"
    );
    assert!(
        tooltip[1].as_f64().unwrap() <= 0.0,
        "the tooltip overlaps the bar horizontally: {tooltip}"
    );
    assert_eq!(tooltip[2], tooltip[3], "the live region says the same");

    // The skip link opens the table and moves the keyboard there.
    client
        .execute("document.querySelector('.skip-link').focus();", vec![])
        .await
        .unwrap();
    press(&client, ENTER).await;
    until(
        &client,
        "return document.activeElement.matches('.wf-table[open] summary');",
        5,
    )
    .await;

    // At 390 px no two axis labels overlap ("80 ms120 ms").
    for width in [390, 1280] {
        client.set_window_size(width, 900).await.expect("resize");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let edges = client.execute(LABEL_EDGES, vec![]).await.unwrap();
        assert!(labels_apart(&edges), "{width} px: labels overlap: {edges}");
    }

    // Not found, and an unknown id: their own titles.
    client.goto(&format!("{base}/no/such/page")).await.unwrap();
    until(&client, "return !!document.querySelector('.problem');", 10).await;
    assert_eq!(title(&client).await, "Page not found · h123");
    client.goto(&format!("{base}/r/no-such-id")).await.unwrap();
    until(&client, "return !!document.querySelector('.problem');", 10).await;
    assert_eq!(title(&client).await, "No result with this id · h123");
    client.close().await.unwrap();
}
