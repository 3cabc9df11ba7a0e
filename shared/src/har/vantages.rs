//! HAR 1.2 export of a probe measured from several vantages.
//!
//! One page per vantage and protocol, in the record's order: id
//! `VANTAGE/PROTO` (e.g. `fra1/h2`), title `fra1 · HTTP/2 URL` (the label
//! in parentheses after the name when there is one). Entries are the
//! single-vantage export's ([`super::entry`]), with `pageref` pointing at
//! their vantage's page, `_vantage` naming it, and `connection` ids
//! prefixed by it, so two places' connection 1 stay two connections.
//!
//! The log carries, besides HAR's own fields, `_vantages` (per vantage, in
//! order: `vantage`, its `pages`, and its `outcome`, `verdict` and
//! `findings`, or the `problem` that left it without a result), `_matrix`
//! (the vantage x protocol matrix, [`crate::vantage::matrix`]) and
//! `_findings` (the cross-vantage findings, [`crate::vantage::findings`]).
//! `comment` lists protocols not measured and vantages without a result.

use super::{creator, entries, iso8601, skipped_notes};
use crate::schema::{ProbeResult, Protocol};
use crate::vantage::{Vantage, VantageRun, findings, matrix};
use serde_json::{Value, json};

/// The page id of `protocol` at `vantage`, e.g. `fra1/h2`.
pub fn page_id(vantage: &Vantage, protocol: Protocol) -> String {
    format!("{}/{}", vantage.name, protocol.as_str())
}

/// The page title of `protocol` at `vantage`, e.g. `fra1 · HTTP/2 https://example.com/`.
pub fn page_title(vantage: &Vantage, protocol: Protocol, url: &str) -> String {
    let place = match &vantage.label {
        Some(label) => format!("{} ({label})", vantage.name),
        None => vantage.name.clone(),
    };
    format!("{place} · {} {url}", protocol.http_version())
}

/// A record's runs, one per vantage, as one HAR 1.2 document (`{"log": {...}}`).
pub fn to_har(runs: &[VantageRun]) -> Value {
    let mut pages = Vec::new();
    let mut all_entries = Vec::new();
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    for run in runs {
        let vantage = &run.vantage;
        let mut part = json!({ "vantage": vantage });
        if let Some(result) = &run.result {
            let mine = vantage_pages(vantage, result);
            part["pages"] = json!(mine.iter().map(|p| p["id"].clone()).collect::<Vec<_>>());
            pages.extend(mine);
            all_entries.extend(entries(result).into_iter().map(|e| placed(vantage, e)));
            notes.extend(skipped_notes(result).map(|note| format!("{}: {note}", vantage.name)));
            let analysis = crate::analysis::of(result);
            part["outcome"] = json!(analysis.outcome);
            part["verdict"] = json!(analysis.verdict);
            part["findings"] = json!(analysis.findings);
        } else {
            part["pages"] = json!([]);
        }
        if let Some(problem) = &run.problem {
            notes.push(format!("{}: {problem}", vantage.name));
            part["problem"] = json!(problem);
        }
        parts.push(part);
    }
    let mut log = json!({
        "version": "1.2",
        "creator": creator(),
        "pages": pages,
        "entries": all_entries,
    });
    if !notes.is_empty() {
        log["comment"] = Value::String(notes.join("; "));
    }
    log["_vantages"] = Value::Array(parts);
    log["_matrix"] = json!(matrix(runs));
    log["_findings"] = json!(findings(runs));
    json!({ "log": log })
}

/// The pages of one vantage's result: one per protocol that made attempts.
fn vantage_pages(vantage: &Vantage, result: &ProbeResult) -> Vec<Value> {
    result
        .runs
        .iter()
        .filter(|run| !run.attempts.is_empty())
        .map(|run| {
            json!({
                "startedDateTime": iso8601(run.attempts[0].started_at_unix_ms),
                "id": page_id(vantage, run.protocol),
                "title": page_title(vantage, run.protocol, &result.options.url),
                "pageTimings": { "onContentLoad": -1, "onLoad": -1 },
                "_vantage": vantage.name,
            })
        })
        .collect()
}

/// An entry of the single-vantage export placed at `vantage`: its page,
/// its `_vantage`, its connection id prefixed with the vantage's name.
fn placed(vantage: &Vantage, mut entry: Value) -> Value {
    let protocol = entry["_protocol"]
        .as_str()
        .and_then(|p| p.parse::<Protocol>().ok());
    if let Some(protocol) = protocol {
        entry["pageref"] = json!(page_id(vantage, protocol));
    }
    entry["_vantage"] = json!(vantage.name);
    if let Some(connection) = entry["connection"].as_str() {
        entry["connection"] = json!(format!("{}-{connection}", vantage.name));
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, Phase};

    fn at(name: &str, label: Option<&str>, result: Option<ProbeResult>) -> VantageRun {
        VantageRun {
            vantage: Vantage {
                name: name.into(),
                label: label.map(Into::into),
                tags: vec!["eu".into()],
            },
            result,
            problem: None,
        }
    }

    /// h2 and h3 (h3 failed once) at `fra1`, h2 only with h3 skipped at `sfo1`,
    /// and `gone`, whose agent never ran the probe.
    fn runs() -> Vec<VantageRun> {
        let fra1 = result(vec![
            run(
                Protocol::H2,
                vec![fresh(1, 1_000, 2_000, 3_000, 4_000), reused(2, 4_000)],
            ),
            run(
                Protocol::H3,
                vec![failed(
                    attempt(1, &[(Phase::Quic, 3_000)], false),
                    Phase::Quic,
                    FailureKind::Timeout,
                )],
            ),
        ]);
        let mut h3 = run(Protocol::H3, Vec::new());
        h3.skipped = Some("not advertised".into());
        let sfo1 = result(vec![
            run(Protocol::H2, vec![fresh(1, 9_000, 9_000, 9_000, 40_000)]),
            h3,
        ]);
        let mut gone = at("gone", None, None);
        gone.problem = Some("agent gone did not take the probe within 30 s".into());
        vec![
            at("fra1", Some("Frankfurt, DE"), Some(fra1)),
            at("sfo1", None, Some(sfo1)),
            gone,
        ]
    }

    #[test]
    fn a_page_per_vantage_and_protocol_and_every_entry_points_at_its_own() {
        let runs = runs();
        let har = to_har(&runs);
        let log = &har["log"];
        assert_eq!(log["version"], "1.2");
        let pages = log["pages"].as_array().unwrap();
        let ids: Vec<&str> = pages.iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            ["fra1/h2", "fra1/h3", "sfo1/h2"],
            "no page without attempts"
        );
        assert_eq!(
            pages[0]["title"],
            "fra1 (Frankfurt, DE) · HTTP/2 https://example.com/path?q=1"
        );
        assert_eq!(
            pages[2]["title"],
            "sfo1 · HTTP/2 https://example.com/path?q=1"
        );
        assert_eq!(pages[2]["_vantage"], "sfo1");

        let entries = log["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 4);
        let placed: Vec<(&str, &str, &str)> = entries
            .iter()
            .map(|e| {
                (
                    e["pageref"].as_str().unwrap(),
                    e["_vantage"].as_str().unwrap(),
                    e["connection"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            placed,
            [
                ("fra1/h2", "fra1", "fra1-h2-1"),
                ("fra1/h2", "fra1", "fra1-h2-1"),
                ("fra1/h3", "fra1", "fra1-h3-1"),
                ("sfo1/h2", "sfo1", "sfo1-h2-1"),
            ]
        );
        for e in entries {
            assert!(ids.contains(&e["pageref"].as_str().unwrap()), "{e}");
        }
        // Apart from its place, an entry is the single-vantage export's.
        let mut alone =
            super::super::to_har(runs[0].result.as_ref().unwrap())["log"]["entries"][0].clone();
        alone["pageref"] = json!("fra1/h2");
        alone["_vantage"] = json!("fra1");
        alone["connection"] = json!("fra1-h2-1");
        assert_eq!(entries[0], alone);
    }

    #[test]
    fn each_vantage_keeps_its_analysis_and_a_missing_one_says_why() {
        let runs = runs();
        let log = &to_har(&runs)["log"];
        let parts = log["_vantages"].as_array().unwrap();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0]["vantage"]["label"], "Frankfurt, DE");
        assert_eq!(parts[0]["pages"], json!(["fra1/h2", "fra1/h3"]));
        assert_eq!(parts[0]["outcome"], "done_with_errors");
        assert!(parts[0]["verdict"]["summary"].is_string());
        assert!(parts[0].get("problem").is_none());
        assert_eq!(parts[1]["outcome"], "done");
        assert_eq!(parts[2]["vantage"]["name"], "gone");
        assert_eq!(parts[2]["pages"], json!([]));
        assert!(parts[2].get("outcome").is_none());
        assert_eq!(
            parts[2]["problem"],
            "agent gone did not take the probe within 30 s"
        );
        assert_eq!(
            log["comment"],
            "sfo1: h3 skipped: not advertised; gone: agent gone did not take the probe within 30 s"
        );
        let matrix = log["_matrix"].as_array().unwrap();
        assert_eq!(matrix.len(), 3);
        assert_eq!(matrix[2]["problem"], parts[2]["problem"]);
        assert!(log["_findings"].is_array());
        assert!(
            log.get("_outcome").is_none(),
            "no single outcome for many places"
        );
    }
}
