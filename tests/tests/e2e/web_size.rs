//! The web UI's download: each page's release wasm in `dist/`, gzipped as `scripts/build-web`
//! does (`gzip -9`), must stay within its budget.
//!
//! Issue 13's goal is at most 150 KB gzipped. One bundle for every page reached 499,000 bytes
//! (498,001 at its last figure). Every page is now its own bundle (`frontend/src/bin/`, picked by
//! `index.html`'s loader) and reads JSON with `shared::json` instead of serde's derive; every page
//! is drawn by the server and its bundle only adds behaviour, with no Leptos: the result page
//! (then `shared::markup::result`), the comparison page (then `shared::markup::compare_page`), the
//! bench page (then `shared::markup::bench`: 132,560 bytes as a Leptos page, 39,922 drawn by the
//! server) and
//! the home page (then `shared::markup::home`: 132,624 bytes as a Leptos app taking the drawn form
//! over, 66,654 with its forms adopted in place). With Leptos gone from the frontend library, the
//! other three lost what of it they carried without using it (some 5.5 KB each: result 73,584 to
//! 68,506, bench 39,906 to 34,308, compare 96,806 to 90,729). The comparison page's bundle then
//! lost its markup and record reader when a static host's page began fetching the drawing
//! (`GET /api/v1/compare/{a}/{b}/view`): 90,729 to 50,861; the home page's lost its forms'
//! markup the same way (`GET /api/v1/config/view`): 66,747 to 62,287. All four meet issue 37's goal of
//! 100 KB ([`GOAL_37`]). Each limit below is its bundle's figure at its last change, rounded up by about
//! 1 KB (a fresh clone's longer source paths add some 40 bytes): a ratchet that fails on any
//! growth past it, well before the goal. Lower it as a bundle shrinks. Issue 48 moves the pages to
//! Leptos islands: a page rendered with Leptos loads only the islands bundle (Trunk's), whose
//! JS glue is printed beside its wasm as every bundle's is. The comparison page was the first to
//! move whole: its bundle (51,900) is gone, and the islands bundle carries its behaviour
//! (37,660 to 82,522: a time on the reader's clock, an island with props, so serde's JSON
//! reader, about 17 KB; the waterfalls' hover, focus, keys and fitted axes, about 15 KB; drawing
//! a page a static host served from the API's view, about 10 KB). Reading the axis labels'
//! places without `f64`'s parser took the result page's bundle from 68,500 to 53,759. The bench
//! page followed: its bundle (35,300) is gone, and its islands (the copy button, the following
//! of a running bench) took the islands bundle to 89,462. Islands without props (each reads what
//! it needs from its drawing or the page's address) left serde's JSON reader out: 76,459.
//!
//! Needs `dist/` (scripts/build-web, scripts/build-islands); without it the test says so and
//! passes, unless `H123_BROWSER_TESTS=1` (set by scripts/test, which builds `dist/` first) makes
//! it required.

use std::path::Path;
use std::process::Command;

/// Each page's bundle (its binary's name, or the islands bundle's) and its limit, in bytes of
/// `gzip -9` output. The islands bundle is all a page rendered with Leptos loads (so far the page
/// for a path no page knows, `h123_frontend::pages::not_found`).
const LIMITS: [(&str, u64); 3] = [
    ("h123-home", 63_300),
    ("h123-result", 54_800),
    ("h123-islands", ISLANDS_LIMIT),
];

/// The islands bundle's limit: 76,459 bytes with the comparison page's, the bench page's and the
/// not-found page's islands, none with props (Leptos's floor here, one island without props:
/// 37,660), plus about 1 KB.
const ISLANDS_LIMIT: u64 = 77_300;

/// The goal for every bundle, in bytes gzipped.
const GOAL: u64 = 150_000;

/// Issue 37's goal, in bytes gzipped, which every bundle meets (and must keep).
const GOAL_37: (u64, [&str; 3]) = (100_000, ["h123-home", "h123-result", "h123-islands"]);

/// The size of `file` as `gzip -9` writes it, in bytes.
fn gzipped(file: &Path) -> u64 {
    let out = Command::new("gzip")
        .args(["-9", "-c"])
        .arg(file)
        .output()
        .expect("gzip runs");
    assert!(out.status.success());
    out.stdout.len() as u64
}

#[test]
fn each_pages_gzipped_wasm_stays_within_its_budget() {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dist");
    let wasm: Vec<_> = std::fs::read_dir(&dist)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "wasm"))
        .collect();
    if wasm.is_empty() {
        assert!(
            std::env::var("H123_BROWSER_TESTS").is_err(),
            "no dist/*.wasm: run scripts/build-web"
        );
        eprintln!("skipping the wasm size check: no dist/*.wasm (run scripts/build-web)");
        return;
    }
    assert_eq!(
        wasm.len(),
        LIMITS.len(),
        "one wasm per page bundle and the islands' in dist/: {wasm:?}"
    );
    let mut over = Vec::new();
    for (bundle, limit) in LIMITS {
        assert!(
            limit <= GOAL,
            "{bundle}'s limit {limit} is past the goal {GOAL}"
        );
        assert!(
            !GOAL_37.1.contains(&bundle) || limit <= GOAL_37.0,
            "{bundle}'s limit {limit} is past issue 37's goal {}",
            GOAL_37.0
        );
        // A page bundle's name carries a content hash (`h123-home-<hash>_bg.wasm`); the islands
        // bundle's is fixed (`h123-islands_bg.wasm`).
        let (hashed, fixed) = (format!("{bundle}-"), format!("{bundle}_bg.wasm"));
        let file = wasm
            .iter()
            .find(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.starts_with(&hashed) || name == fixed
            })
            .unwrap_or_else(|| {
                panic!("no wasm of {bundle} in dist/ (scripts/build-web, scripts/build-islands): {wasm:?}")
            });
        let size = gzipped(file);
        let raw = std::fs::metadata(file).unwrap().len();
        let glue = file.with_file_name(
            file.file_name()
                .unwrap()
                .to_string_lossy()
                .replace("_bg.wasm", ".js"),
        );
        eprintln!(
            "{bundle}: {raw} bytes, {size} bytes gzipped (limit {limit}, goal {GOAL}); JS glue {} bytes gzipped",
            gzipped(&glue)
        );
        if size > limit {
            over.push(format!("{bundle}: {size} bytes, over its limit of {limit}"));
        }
    }
    assert!(over.is_empty(), "gzipped wasm over budget: {over:?}");
}
