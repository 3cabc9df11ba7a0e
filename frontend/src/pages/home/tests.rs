use super::*;
use crate::pages::render;
use h123_shared::api::{BenchBounds, ServerInfo};
use h123_shared::{ProbeOptions, Protocol};

fn bounds(network: bool) -> BenchBounds {
    BenchBounds {
        max_concurrency: 8,
        max_connections: 16,
        max_duration_ms: 30_000,
        max_requests: 100_000,
        max_rate: 1000,
        max_warmup_ms: 5_000,
        max_total_ms: 60_000,
        network,
    }
}

fn drawn(form: HomeForm) -> String {
    render(move || home_page(&form))
}

#[test]
fn the_form_has_the_defaults_and_the_servers_offer() {
    assert_eq!(ProbeOptions::default().protocols, Protocol::ALL.to_vec());
    let plain = drawn(HomeForm::default());
    assert!(plain.contains(r#"<form novalidate aria-labelledby="probe-title" data-drawn="server" data-network="false" data-public-only="false" class="probe-form">"#));
    assert!(plain.contains(r#"id="url""#) && plain.contains(" autofocus>"));
    assert_eq!(plain.matches(r#"name="protocol""#).count(), 3);
    assert_eq!(
        plain.matches(" checked>").count(),
        4,
        "three protocols and warm"
    );
    assert!(plain.contains(r#"id="rounds" type="number" min="1" max="10""#));
    assert!(!plain.contains(r#"id="network""#));
    assert!(!plain.contains("bench-form"));
    assert!(plain.contains("An http or https URL."));
    assert!(plain.contains(r#"<div class="recent-items">"#));
    let offered = drawn(HomeForm {
        network: true,
        public_only: true,
        bench: None,
    });
    assert!(offered.contains(r#"<select id="network" aria-describedby="network-note">"#));
    assert!(offered.contains(r#"<p id="network-note" class="field-note">"#));
    assert!(offered.contains("only measures public addresses"));
    assert!(offered.contains(r#"data-network="true" data-public-only="true""#));
}

#[test]
fn a_server_that_runs_benches_gets_its_form_between_the_probes_and_the_list() {
    let info = ServerInfo {
        version: "0".into(),
        bench_enabled: true,
        bench_limits: Some(bounds(false)),
        allowed_methods: Vec::new(),
        max_request_body: 0,
        network_enabled: false,
        public_targets_only: false,
        bench_targets: vec!["127.0.0.1:8443".into()],
    };
    let form = HomeForm::of(&info);
    assert_eq!(form.bench.as_ref().map(|b| b.1.len()), Some(1));
    let page = drawn(form);
    let (probe, bench, recent) = (
        page.find("probe-form").unwrap(),
        page.find("bench-form").unwrap(),
        page.find(r#"class="recent""#).unwrap(),
    );
    assert!(probe < bench && bench < recent);
    assert!(page.contains("one bench at a time: 127.0.0.1:8443.</p>"));
    assert!(page.contains(r#"placeholder="https://127.0.0.1:8443/""#));
    assert!(page.contains(r#"id="bench-concurrency" type="number" min="1" max="8" value="8""#));
    assert!(page.contains(r#"id="bench-duration" type="number" min="1" max="30" value="10""#));
    assert_eq!(page.matches(r#"name="bench-protocol""#).count(), 3);
    assert!(!page.contains("bench-network") && !page.contains("bench-sweep"));
    let json = serde_json::to_string(&bounds(false)).unwrap();
    assert!(page.contains(&format!(r#"data-bounds="{}""#, json.replace('"', "&quot;"))));
}

#[test]
fn a_bench_form_with_a_network_offers_the_picker_and_the_sweep() {
    let open = drawn(HomeForm {
        bench: Some((bounds(true), Vec::new())),
        ..HomeForm::default()
    });
    assert!(open.contains(r#"placeholder="https://""#));
    assert!(open.contains("the targets its operator allows, one bench at a time.</p>"));
    assert!(open.contains(r#"<select id="bench-network" aria-describedby="bench-network-note">"#));
    assert!(open.contains(r#"id="bench-network-figures""#));
    assert!(open.contains(r#"id="bench-sweep""#) && open.contains(SWEEP_NOTE));
}

#[test]
fn a_target_name_is_text_not_markup() {
    let hostile = drawn(HomeForm {
        bench: Some((bounds(false), vec![r#"x"><img src=x onerror=a()>"#.into()])),
        ..HomeForm::default()
    });
    assert!(!hostile.contains("<img"));
    assert!(hostile.contains("x&quot;&gt;&lt;img src=x onerror=a()&gt;"));
}
