//! The house's arrows point down: the probe engine imports nothing from the layers built on it
//! (the bench, the store, the server, the API, the CLI), the bench nothing from the server, the
//! API or the CLI, the server nothing from the CLI (and its configuration nothing from the API),
//! and the API's probe modules form no circle (`probes` -> `events` -> `progress`).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, and `dir.rs` beside it.
fn sources(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![root.join(format!("{dir}.rs"))];
    let mut folders = vec![root.join(dir)];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The `use` lines of `files` that import from any of `above`.
fn upward(files: &[PathBuf], above: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines().map(str::trim) {
            let imported = line
                .strip_prefix("use crate::")
                .or(line.strip_prefix("pub use crate::"));
            if let Some(path) = imported
                && above
                    .iter()
                    .any(|layer| path.starts_with(&format!("{layer}::")))
            {
                found.push(format!("{}: {line}", file.display()));
            }
        }
    }
    found
}

#[test]
fn each_layer_imports_only_from_below() {
    let probe = upward(
        &sources("probe"),
        &["bench", "store", "server", "api", "cli"],
    );
    assert_eq!(
        probe,
        Vec::<String>::new(),
        "the probe engine is the bottom layer"
    );
    let bench = upward(&sources("bench"), &["server", "api", "cli"]);
    assert_eq!(
        bench,
        Vec::<String>::new(),
        "the bench sits on the probe engine"
    );
    let server = upward(&sources("server"), &["cli"]);
    assert_eq!(server, Vec::<String>::new(), "the server is below the CLI");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server.rs");
    assert_eq!(
        upward(&[config], &["api"]),
        Vec::<String>::new(),
        "the server's configuration owns its types"
    );
}

#[test]
fn the_api_probe_modules_form_no_circle() {
    let read = |name: &str| {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("src/api/{name}.rs")),
        )
        .unwrap()
    };
    let progress = read("progress");
    let events = read("events");
    for module in ["probes", "events"] {
        assert!(
            !progress.contains(&format!("use super::{module}")),
            "progress is below {module}"
        );
    }
    assert!(
        !events.contains("use super::probes"),
        "events is below probes"
    );
}
