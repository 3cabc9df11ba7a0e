//! Every type the web UI reads: a rich value written by serde_json reads back equal, and every
//! key in the text matters (leaving it out changes what is read, or fails).

use super::*;
use crate::api::{
    ApiError, ApiErrorBody, BenchCreated, BenchLinks, ProbeCreated, ProbeLinks, ProbeRecord,
    ProbeStatus,
};
use std::fmt::Debug;

/// One step of a path into a `serde_json::Value`.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path of every object member in `value`, parents before children.
fn members(value: &serde_json::Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                at.push(Step::Key(key.clone()));
                out.push(at.clone());
                members(item, at, out);
                at.pop();
            }
        }
        serde_json::Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                at.push(Step::Index(index));
                members(item, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// `value` without the member at `path`.
fn without(value: &serde_json::Value, path: &[Step]) -> serde_json::Value {
    let mut cut = value.clone();
    let (last, parents) = path.split_last().unwrap();
    let mut at = &mut cut;
    for step in parents {
        at = match step {
            Step::Key(key) => &mut at[key.as_str()],
            Step::Index(index) => &mut at[*index],
        };
    }
    let Step::Key(key) = last else {
        unreachable!("paths end at a member")
    };
    at.as_object_mut().unwrap().remove(key).unwrap();
    cut
}

/// `path` as dotted text: `result.runs.0.protocol`.
fn dotted(path: &[Step]) -> String {
    let steps: Vec<String> = path
        .iter()
        .map(|step| match step {
            Step::Key(key) => key.clone(),
            Step::Index(index) => index.to_string(),
        })
        .collect();
    steps.join(".")
}

/// `value` is rich, reads back equal from serde_json's text, and every member of that text is
/// read: with any one left out, the reader fails or reads something else.
fn round_trip<T: ReadJson + Serialize + PartialEq + Debug>(value: &T) {
    round_trip_within(value, &[]);
}

/// [`round_trip`], leaving the members inside `covered` (dotted paths of values another test
/// takes apart) in place, to keep the test quick.
fn round_trip_within<T: ReadJson + Serialize + PartialEq + Debug>(value: &T, covered: &[&str]) {
    assert_eq!(richness::gaps(value), Vec::<String>::new(), "not rich");
    let text = written(value);
    assert_eq!(&from_str::<T>(&text).unwrap(), value);
    let tree: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut paths = Vec::new();
    members(&tree, &mut Vec::new(), &mut paths);
    assert!(!paths.is_empty());
    for path in paths {
        let at = dotted(&path);
        if covered.iter().any(|c| at.starts_with(&format!("{c}."))) {
            continue;
        }
        let cut = without(&tree, &path).to_string();
        if let Ok(read) = from_str::<T>(&cut) {
            assert_ne!(&read, value, "leaving out `{at}` changed nothing");
        }
    }
}

#[test]
fn probe_records_read_back() {
    // Each vantage's result is the record's own result again, taken apart once.
    round_trip_within(
        &rich::record("abc"),
        &["vantages.0.result", "vantages.1.result"],
    );
}

#[test]
fn comparisons_read_back() {
    // Records are taken apart in `probe_records_read_back`.
    round_trip_within(&rich::comparison(), &["a", "b"]);
}

#[test]
fn bench_records_read_back() {
    round_trip(&rich::bench_record());
}

#[test]
fn created_answers_read_back() {
    round_trip(&ProbeCreated {
        id: "abc".into(),
        status: ProbeStatus::Running,
        links: ProbeLinks::for_id("abc"),
        owner_token: "secret".into(),
    });
    round_trip(&BenchCreated {
        id: "xyz".into(),
        status: ProbeStatus::Running,
        links: BenchLinks::for_id("xyz"),
        owner_token: "secret".into(),
    });
}

#[test]
fn lists_and_settings_read_back() {
    round_trip(&rich::probe_list());
    round_trip(&rich::vantage_list());
    round_trip(&rich::server_info());
}

#[test]
fn stream_events_read_back() {
    for event in rich::events() {
        round_trip(&event);
    }
    // Without a vantage (a probe from the server alone), the event reads as before.
    let plain = rich::events().remove(2).event;
    let read: crate::agent::VantageEvent = from_str(&written(&plain)).unwrap();
    assert_eq!((read.vantage, read.event), (None, plain));
}

#[test]
fn api_errors_read_back() {
    round_trip(&ApiError {
        error: ApiErrorBody {
            code: "rate_limited".into(),
            message: "Slow down: 3 probes a minute.".into(),
        },
    });
}

#[test]
fn a_broken_record_says_where() {
    let mut tree = serde_json::to_value(rich::record("abc")).unwrap();
    tree["result"]["runs"][0]["attempts"][0]["phases"] = serde_json::json!([1, 2]);
    let error = from_str::<ProbeRecord>(&tree.to_string()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "field `result.runs[0].attempts[0].phases`: expected an object"
    );
    assert_eq!(error.path(), "result.runs[0].attempts[0].phases");
}
