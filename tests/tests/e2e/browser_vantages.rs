//! The web UI across vantages, in headless Chromium: a real `h123 serve` with three agents
//! configured, two real `h123 agent` processes (one reaching the target through a relay that
//! adds 20 ms each way) and one never started. The form's vantage picker (health, the choice kept
//! across a reload), a probe over h1/h2/h3 from four vantages followed live (events landing in
//! their vantage's group), the matrix's cells and marks against `shared::vantage`, the vantage
//! that never took the probe saying so in its place, every waterfall on one axis, the permalink
//! in a fresh profile. A screenshot of the result goes to `docs/vantages-desktop-light.png`.
//! Needs what `browser` needs.

use crate::browser::{
    Killed, api_record, assert_panels_on_axis, browser, chromedriver, h123_binary, page_state,
    screenshots, serve_with, submit_probe, unavailable, until, workspace,
};
use fantoccini::{Client, Locator};
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::format::ms;
use h123_shared::vantage::{MATRIX_STATES, findings, matrix};
use h123_shared::waterfall::fitted_span;
use h123_target::relay::Relay;
use h123_target::{TargetConfig, TestTarget};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{Command, Stdio};
use std::time::Duration;

const NEAR_TOKEN: &str = "near-token-0123456789";
const FAR_TOKEN: &str = "far-token-0123456789";
const GONE_TOKEN: &str = "gone-token-0123456789";
/// Short, so the agent that never runs gives up its job quickly (and agents stay online:
/// they claim every half lease).
const LEASE_MS: &str = "3000";

/// Starts `h123 agent` `name` for the server at `base`, resolving through `dns` and allowed
/// to dial only `target`.
fn agent(
    base: &str,
    name: &str,
    token: &str,
    ca: &std::path::Path,
    dns: SocketAddr,
    target: SocketAddr,
) -> Killed {
    let child = Command::new(h123_binary().expect("h123"))
        .args(["agent", "--server", base, "--name", name, "--token", token])
        .args([
            "--label",
            &format!("{name} label"),
            "--tags",
            "test,loopback",
        ])
        .arg("--cacert")
        .arg(ca)
        .args(["--dns-server", &dns.to_string()])
        .args([
            "--only-allowed-targets",
            "--allow-target",
            &target.to_string(),
        ])
        .env_remove("H123_AGENT_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("h123 agent starts");
    Killed(child)
}

/// The picker as drawn: per vantage, its name, whether it is ticked and offline, its health.
const PICKER: &str = r#"
return [...document.querySelectorAll('.vantage-picker label.vantage')].map(l => ({
  name: l.dataset.vantage, checked: l.querySelector('input').checked,
  offline: l.classList.contains('offline'), health: l.querySelector('.vantage-health').textContent,
}));
"#;

/// The matrix as drawn: per row (vantage and state), per protocol, the figures and the mark.
const MATRIX: &str = r#"
return [...document.querySelectorAll('.vantage-matrix tbody tr[data-state]')].map(tr => ({
  vantage: tr.dataset.vantage, state: tr.dataset.state,
  cells: [...tr.querySelectorAll('td')].map(td => ({
    protocol: td.dataset.protocol,
    total: td.querySelector('.total') ? td.querySelector('.total').textContent : null,
    ttfb: td.querySelector('.ttfb') ? td.querySelector('.ttfb').textContent : null,
    faster: td.classList.contains('fastest'),
  })),
}));
"#;

/// One group's waterfalls as drawn (the group named by `arguments[0]`): per panel, per row, bars.
const GROUP: &str = r#"
const g = document.querySelector(`.vantage-group[data-vantage="${arguments[0]}"]`);
return {
  problem: g.querySelector('.vantage-problem') ? g.querySelector('.vantage-problem').textContent : null,
  verdict: g.querySelector('.verdict-summary') ? g.querySelector('.verdict-summary').textContent : null,
  ticks: [...g.querySelectorAll('.wf-panel:first-of-type .wf-ticks span')].map(t => t.textContent),
  panels: [...g.querySelectorAll('.wf-panel')].map(p => ({
    protocol: p.dataset.protocol,
    rows: [...p.querySelectorAll('.wf-row')].map(r => [...r.querySelectorAll('.bar rect.fill')].map(b =>
      [b.closest('.bar').dataset.phase, parseFloat(b.getAttribute('x')), parseFloat(b.getAttribute('width'))])),
  })),
};
"#;

/// Waits until `GET /api/v1/vantages` (fetched by the page) shows `names` online.
async fn until_online(client: &Client, names: &[&str]) {
    let script =
        "const done = arguments[0]; fetch('/api/v1/vantages').then(r => r.json()).then(done);";
    for _ in 0..200 {
        let list = client
            .execute_async(script, vec![])
            .await
            .expect("vantages");
        let online = |name: &str| {
            list["items"].as_array().is_some_and(|items| {
                items
                    .iter()
                    .any(|v| v["name"] == name && v["online"] == true)
            })
        };
        if names.iter().all(|n| online(n)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("agents {names:?} never came online");
}

/// Checks the drawn matrix against `shared::vantage::matrix` of the record (computed here from
/// the results, where the page reads the stored verdicts); returns how many cells are marked.
fn assert_matrix(drawn: &Value, record: &ProbeRecord) -> usize {
    let rows = matrix(&record.vantages);
    let drawn = drawn.as_array().expect("rows");
    let with_cells: Vec<_> = rows.iter().filter(|r| !r.cells.is_empty()).collect();
    assert_eq!(
        drawn.len(),
        with_cells.len() * MATRIX_STATES.len(),
        "a row per vantage and state"
    );
    let mut marked = 0;
    for (d, (row, state)) in drawn.iter().zip(
        with_cells
            .iter()
            .flat_map(|r| MATRIX_STATES.map(|s| (*r, s))),
    ) {
        assert_eq!(d["vantage"], row.vantage.name.as_str());
        assert_eq!(d["state"], state.label());
        let cells = d["cells"].as_array().expect("cells");
        assert_eq!(cells.len(), record.options.protocols.len());
        for (c, protocol) in cells.iter().zip(&record.options.protocols) {
            assert_eq!(c["protocol"], protocol.as_str());
            let want = row
                .cells
                .iter()
                .find(|m| m.protocol == *protocol && m.state == state && m.count > 0);
            let who = format!(
                "{} {} {}",
                row.vantage.name,
                state.label(),
                protocol.as_str()
            );
            match want {
                None => assert_eq!(c["total"], Value::Null, "{who}: no figures"),
                Some(m) => {
                    assert_eq!(
                        c["total"],
                        ms(m.total.expect("total")).as_str(),
                        "{who}: total"
                    );
                    assert_eq!(
                        c["ttfb"],
                        format!("TTFB {}", ms(m.ttfb.expect("ttfb"))).as_str(),
                        "{who}: TTFB"
                    );
                    assert_eq!(c["faster"], m.faster, "{who}: the mark");
                    marked += usize::from(m.faster);
                }
            }
        }
    }
    marked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vantage_picker_matrix_and_groups_end_to_end() {
    if unavailable() {
        return;
    }
    // Each runs a server, chromedriver and Chromium (here agents too): alone, on two cores.
    let _turn = crate::support::SERIAL.lock().await;
    let target = TestTarget::start(TargetConfig::default())
        .await
        .expect("target");
    let relay = Relay::start(
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
        target.https_addr,
        Duration::from_millis(20),
        &["target.h123.test"],
    )
    .await
    .expect("relay");
    let tmp = tempfile::tempdir().expect("temp dir");
    let dns = target.dns_addr.to_string();
    let (near, far, gone) = (
        format!("near={NEAR_TOKEN}"),
        format!("far={FAR_TOKEN}"),
        format!("gone={GONE_TOKEN}"),
    );
    // The far agent dials the relay: the server's rules, which agents keep, allow it too.
    let relayed = relay.addr.to_string();
    let (_server, base) = serve_with(
        &target,
        tmp.path(),
        &[
            "--allow-target",
            &relayed,
            "--dns-server",
            &dns,
            "--agent",
            &near,
            "--agent",
            &far,
            "--agent",
            &gone,
            "--agent-lease-ms",
            LEASE_MS,
        ],
    )
    .await;
    let _near = agent(
        &base,
        "near",
        NEAR_TOKEN,
        target.ca_file(),
        target.dns_addr,
        target.https_addr,
    );
    let _far = agent(
        &base,
        "far",
        FAR_TOKEN,
        target.ca_file(),
        relay.dns_addr,
        relay.addr,
    );
    let (_driver, driver) = chromedriver().await;
    let client = browser(&driver, &tmp.path().join("profile-1")).await;

    // The picker: every vantage, the server's own first, then the agents by name, with health.
    crate::browser::open_home(&client, &base).await;
    until_online(&client, &["near", "far"]).await;
    client.refresh().await.expect("reload");
    let picker = until(
        &client,
        &format!("const p = (() => {{ {PICKER} }})(); return p.length ? p : null;"),
        10,
    )
    .await;
    let names: Vec<&str> = picker
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["server", "far", "gone", "near"], "{picker}");
    let checked: Vec<bool> = picker
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["checked"] == true)
        .collect();
    assert_eq!(
        checked,
        [true, false, false, false],
        "the server's own by default"
    );
    assert_eq!(picker[0]["health"], "online (this server)");
    assert!(
        picker[1]["health"]
            .as_str()
            .unwrap()
            .starts_with("online · last seen"),
        "{picker}"
    );
    assert_eq!(picker[2]["offline"], true);
    assert_eq!(picker[2]["health"], "offline · never connected");
    for name in ["far", "gone", "near"] {
        client
            .find(Locator::Css(&format!(
                ".vantage-picker label[data-vantage={name}] input"
            )))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }
    let note = client
        .find(Locator::Css(".vantage-note"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        note.starts_with("Offline: gone."),
        "an offline choice says so: {note}"
    );

    // The choice survives a reload.
    client.refresh().await.expect("reload");
    let kept = until(
        &client,
        &format!(
            "const p = (() => {{ {PICKER} }})(); return p.length ? p.map(v => v.checked) : null;"
        ),
        10,
    )
    .await;
    assert_eq!(
        kept,
        json!([true, true, true, true]),
        "kept across the reload"
    );

    // Run it over h1/h2/h3 and follow it live (300 ms a request: nine per vantage, one after
    // another, leave seconds to see it running).
    let url = format!(
        "https://target.h123.test:{}/delay/300",
        target.https_addr.port()
    );
    let field = client.find(Locator::Css("#url")).await.unwrap();
    field.send_keys(&url).await.unwrap();
    let id = submit_probe(&client).await;
    let live = until(
        &client,
        "const running = document.querySelector('.status.running');
         const rows = [...document.querySelectorAll('.vantage-group')].map(g => [g.dataset.vantage, g.querySelectorAll('.wf-row').length]);
         return running && rows.some(r => r[1] > 0) ? rows : null;",
        20,
    )
    .await;
    eprintln!("live: rows per vantage group while the probe ran: {live}");
    until(
        &client,
        "return !!document.querySelector('.status.done');",
        60,
    )
    .await;
    let record = api_record(&client, &id).await;
    assert_eq!(record.status, ProbeStatus::Done);
    let order: Vec<&str> = record
        .vantages
        .iter()
        .map(|r| r.vantage.name.as_str())
        .collect();
    assert_eq!(order, ["server", "far", "gone", "near"]);
    assert_eq!(record.options.protocols.len(), 3, "h1, h2 and h3");
    let gone_problem = record.vantages[2]
        .problem
        .clone()
        .expect("gone has a problem");
    assert!(
        gone_problem.starts_with("agent gone did not take the probe"),
        "{gone_problem}"
    );

    // The matrix: the cells and marks of shared's matrix, the failed vantage in its place.
    let drawn = until(
        &client,
        &format!("const m = (() => {{ {MATRIX} }})(); return m.length ? m : null;"),
        10,
    )
    .await;
    let marked = assert_matrix(&drawn, &record);
    let failed_row = client
        .find(Locator::Css(
            ".vantage-matrix tr.vantage-failed[data-vantage=gone] .vantage-problem",
        ))
        .await
        .expect("the failed vantage's row")
        .text()
        .await
        .unwrap();
    assert_eq!(failed_row, gone_problem);
    let across: Vec<String> = findings(&record.vantages)
        .into_iter()
        .map(|f| f.title)
        .collect();
    let drawn_across = client
        .execute("return [...document.querySelectorAll('.vantage-findings .finding-title')].map(t => t.textContent);", vec![])
        .await
        .unwrap();
    let drawn_across: Vec<String> = drawn_across
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        drawn_across.len(),
        across.len(),
        "{drawn_across:?} against {across:?}"
    );
    for (d, want) in drawn_across.iter().zip(&across) {
        assert!(d.ends_with(want.as_str()), "{d} shows {want}");
    }
    if across.is_empty() {
        assert!(
            client
                .find(Locator::Css(".vantage-findings-none"))
                .await
                .is_ok()
        );
    }
    eprintln!("matrix: {marked} cells marked faster; across vantages: {across:?}");

    // A group per vantage, in order; every waterfall on the axis common to all of them.
    let groups = client
        .execute(
            "return [...document.querySelectorAll('.vantage-group')].map(g => g.dataset.vantage);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(groups, json!(["server", "far", "gone", "near"]));
    let common = fitted_span(record.vantages.iter().filter_map(|r| r.result.as_ref()));
    let mut axes = Vec::new();
    for run in &record.vantages {
        let name = run.vantage.name.as_str();
        let g = client.execute(GROUP, vec![json!(name)]).await.unwrap();
        let Some(result) = &run.result else {
            assert_eq!(
                g["problem"],
                format!("No result from this vantage: {gone_problem}").as_str()
            );
            assert_eq!(g["panels"], json!([]), "{name}: nothing drawn");
            continue;
        };
        let analysis = result.analysis.as_ref().expect("analyzed");
        assert_eq!(
            g["verdict"],
            analysis.verdict.summary.as_str(),
            "{name}: its own verdict"
        );
        assert_panels_on_axis(&g["panels"], result, common, name);
        axes.push(g["ticks"].clone());
    }
    assert!(
        axes.windows(2).all(|w| w[0] == w[1]),
        "one time axis: {axes:?}"
    );
    eprintln!("common axis: {} ({axes:?})", ms(common));
    screenshots(&client, "vantages").await;
    let docs = workspace().join("docs/vantages-desktop-light.png");
    std::fs::copy(
        workspace().join("test-artifacts/vantages-desktop-light.png"),
        &docs,
    )
    .expect("docs screenshot");

    // The permalink, in a fresh profile, draws the same matrix.
    let fresh = browser(&driver, &tmp.path().join("profile-2")).await;
    fresh.goto(&format!("{base}/r/{id}")).await.unwrap();
    let again = until(
        &fresh,
        &format!("const m = (() => {{ {MATRIX} }})(); return m.length ? m : null;"),
        20,
    )
    .await;
    assert_eq!(
        again,
        drawn,
        "the permalink draws the same matrix\n{}",
        page_state(&fresh).await
    );
    fresh.close().await.unwrap();
    client.close().await.unwrap();
}
