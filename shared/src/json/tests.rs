//! The reader against serde_json: the text, numbers and errors, and every type the web UI reads
//! written by serde and read back.

use super::*;
use serde::Serialize;

mod rich;
mod richness;
mod round_trip;

/// `text` read as a `T`, its error as words.
fn read<T: ReadJson>(text: &str) -> Result<T, String> {
    from_str(text).map_err(|e| e.to_string())
}

#[test]
fn strings_unescape_as_json_says() {
    let text = r#""q\" b\\ s\/ \b\f\n\r\t é \u00e9 \u65E5 \uD83D\uDE00 😀""#;
    let expected = "q\" b\\ s/ \u{8}\u{c}\n\r\t é é 日 😀 😀";
    assert_eq!(read::<String>(text).unwrap(), expected);
    assert_eq!(serde_json::from_str::<String>(text).unwrap(), expected);
    // No escape: borrowed from the text.
    assert!(matches!(
        parse(r#""plain""#).unwrap(),
        Json::String(Cow::Borrowed("plain"))
    ));
    assert_eq!(read::<String>(r#""""#).unwrap(), "");
}

#[test]
fn bad_strings_are_refused() {
    for (text, says) in [
        (r#""\uD800""#, "lone surrogate"),
        (r#""\uD800\u0041""#, "lone surrogate"),
        (r#""\uDC00""#, "lone surrogate"),
        (r#""\u12G4""#, "invalid \\u escape"),
        (r#""\x""#, "invalid escape"),
        ("\"a\nb\"", "control character"),
        (r#""open"#, "unterminated string"),
        (r#""ends in \"#, "unterminated string"),
        (r#""\u12"#, "invalid \\u escape"),
    ] {
        let error = read::<String>(text).unwrap_err();
        assert!(error.contains(says), "{text}: {error}");
        assert!(serde_json::from_str::<String>(text).is_err(), "{text}");
    }
}

#[test]
fn integers_are_read_exactly() {
    assert_eq!(read::<u64>("18446744073709551615").unwrap(), u64::MAX);
    assert_eq!(
        read::<u64>("9007199254740993").unwrap(),
        9_007_199_254_740_993
    );
    assert_eq!(read::<u16>("65535").unwrap(), u16::MAX);
    assert_eq!(read::<u32>("0").unwrap(), 0);
    assert_eq!(read::<usize>(" 7 ").unwrap(), 7);
    for (text, says) in [
        ("18446744073709551616", "out of range"),
        ("65536", "out of range"),
        ("-1", "expected an unsigned integer"),
        ("1.0", "expected an unsigned integer"),
        ("1e3", "expected an unsigned integer"),
        ("\"1\"", "expected a number"),
        ("null", "expected a number"),
    ] {
        let error = read::<u16>(text).unwrap_err();
        assert!(error.contains(says), "{text}: {error}");
        assert!(serde_json::from_str::<u16>(text).is_err(), "{text}");
    }
}

#[test]
fn floats_are_read_as_rust_reads_them() {
    // Within the promised range: the very same double.
    for text in [
        "0",
        "-0",
        "1",
        "-1.5e-3",
        "1E+2",
        "0.1",
        "0.30000000000000004",
        "123456.789e3",
        "1e-21",
        "9007199254740993",
        "18446744073709551616",
        "3.4e38",
        "99.9",
        "0.001",
        "2.5e-9",
    ] {
        let ours = read::<f64>(text).unwrap();
        assert_eq!(
            ours.to_bits(),
            text.parse::<f64>().unwrap().to_bits(),
            "{text}"
        );
    }
    // Beyond it (more than 19 digits, or far out): within a few ulps.
    for text in [
        "12345678901234567890123",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.2345678901234567e300",
        "2.2250738585072014e-308",
        "-4.9406564584124654e-300",
    ] {
        let (ours, rust) = (read::<f64>(text).unwrap(), text.parse::<f64>().unwrap());
        assert!(
            (ours - rust).abs() <= rust.abs() * 8.0 * f64::EPSILON,
            "{text}: {ours}"
        );
    }
    assert_eq!(read::<f64>("\"1\"").unwrap_err(), "expected a number");
    assert_eq!(read::<f64>("null").unwrap_err(), "expected a number");
    assert_eq!(read::<f64>("-1e400").unwrap_err(), "number out of range");
    assert!(serde_json::from_str::<f64>("-1e400").is_err());
    assert_eq!(read::<f64>("1e-400").unwrap(), 0.0);
}

/// A small deterministic generator (xorshift), so the float test needs no crate.
fn random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn floats_round_exactly_over_the_promised_range() {
    let mut state = 0x5eed_1234_abcd_ef01;
    let mut checked = 0;
    while checked < 100_000 {
        let x = f64::from_bits(random(&mut state) >> 1);
        if !(1e-13..1e46).contains(&x) {
            continue;
        }
        checked += 1;
        // serde_json's (ryu's) shortest text, and Rust's, in both notations.
        for text in [
            serde_json::to_string(&x).unwrap(),
            format!("{x:e}"),
            format!("{:?}", -x),
        ] {
            let ours = float(&text);
            assert_eq!(
                ours.to_bits(),
                text.parse::<f64>().unwrap().to_bits(),
                "{text}"
            );
        }
    }
    // Decimal texts of up to 19 digits, as a person or another writer might give them.
    for _ in 0..100_000 {
        let digits = random(&mut state) % 10_000_000_000_000_000_000 + 1;
        let exponent = (random(&mut state) % 61) as i64 - 30;
        let text = format!("{digits}e{exponent}");
        let value: f64 = text.parse().unwrap();
        if (1e-30..1e46).contains(&value) {
            assert_eq!(float(&text).to_bits(), value.to_bits(), "{text}");
        }
    }
}

#[test]
fn malformed_text_is_refused_with_its_place() {
    for (text, says) in [
        ("", "expected a value at byte 0"),
        ("{", "expected a string key at byte 1"),
        ("[1,]", "expected a value at byte 3"),
        (r#"{"a":1,}"#, "expected a string key at byte 7"),
        (r#"{"a" 1}"#, "expected `:` at byte 5"),
        ("{1:2}", "expected a string key at byte 1"),
        ("[1 2]", "expected `,` or `]` at byte 3"),
        (r#"{"a":1 "b":2}"#, "expected `,` or `}` at byte 7"),
        ("tru", "expected a value at byte 0"),
        ("nul", "expected a value at byte 0"),
        ("01", "trailing characters at byte 1"),
        ("1.", "invalid number at byte 2"),
        (".5", "expected a value at byte 0"),
        ("-", "invalid number at byte 1"),
        ("1e", "invalid number at byte 2"),
        ("1e+", "invalid number at byte 3"),
        ("1 2", "trailing characters at byte 2"),
        ("'a'", "expected a value at byte 0"),
    ] {
        assert_eq!(parse(text).unwrap_err().to_string(), says, "{text}");
        assert!(
            serde_json::from_str::<serde_json::Value>(text).is_err(),
            "{text}"
        );
    }
    let spaced = parse(" \t\n\r{ \"a\" : [ 1 , true , null ] } \n").unwrap();
    let members = spaced.object().unwrap();
    assert_eq!(members[0].0, "a");
    assert_eq!(
        members[0].1,
        Json::Array(vec![Json::Number("1"), Json::Bool(true), Json::Null])
    );
}

#[test]
fn nesting_is_limited_to_serde_jsons_depth() {
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(parse(&nested(MAX_DEPTH as usize)).is_ok());
    let error = parse(&nested(MAX_DEPTH as usize + 1)).unwrap_err();
    assert_eq!(error.to_string(), "nested too deep at byte 127");
    let objects = |depth| format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    assert!(parse(&objects(127)).is_ok());
    assert!(
        parse(&objects(128))
            .unwrap_err()
            .to_string()
            .contains("nested too deep")
    );
    for (text, ok) in [
        (nested(127), true),
        (nested(128), false),
        (objects(128), false),
    ] {
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), ok);
    }
}

#[test]
fn containers_read_their_items_and_say_which_failed() {
    assert_eq!(read::<Vec<u32>>("[1, 2, 3]").unwrap(), vec![1, 2, 3]);
    assert_eq!(read::<Vec<u32>>("[]").unwrap(), Vec::<u32>::new());
    assert_eq!(read::<Option<bool>>("null").unwrap(), None);
    assert_eq!(read::<Option<bool>>("true").unwrap(), Some(true));
    assert_eq!(read::<Box<u16>>("7").unwrap(), Box::new(7));
    let statuses: BTreeMap<u16, u64> = from_str(r#"{"404": 2, "200": 5}"#).unwrap();
    assert_eq!(statuses, BTreeMap::from([(200, 5), (404, 2)]));
    let kinds: BTreeMap<String, u64> = from_str(r#"{"timeout": 1}"#).unwrap();
    assert_eq!(kinds, BTreeMap::from([("timeout".to_owned(), 1)]));
    assert_eq!(
        read::<BTreeMap<u16, u64>>(r#"{"2x": 1}"#).unwrap_err(),
        "field `2x`: expected an unsigned integer"
    );
    assert_eq!(
        read::<Vec<Vec<u32>>>("[[1], [2, true]]").unwrap_err(),
        "field `[1][1]`: expected a number"
    );
    assert_eq!(read::<Vec<u32>>("{}").unwrap_err(), "expected an array");
    assert_eq!(read::<bool>("1").unwrap_err(), "expected true or false");
    assert_eq!(read::<String>("1").unwrap_err(), "expected a string");
}

/// The serde attributes on shared's types, read back through the real derive.
mod attributes {
    use super::*;
    use crate::api::{ProbeEvent, ProbeSummary, VantageInfo, VantageKind};
    use crate::schema::{Micros, Protocol};

    #[test]
    fn unit_variants_follow_rename_all() {
        assert_eq!(read::<Protocol>(r#""h3""#).unwrap(), Protocol::H3);
        assert_eq!(
            read::<crate::Method>(r#""OPTIONS""#).unwrap(),
            crate::Method::Options
        );
        assert_eq!(
            read::<crate::analysis::Outcome>(r#""done_with_errors""#).unwrap(),
            crate::analysis::Outcome::DoneWithErrors
        );
        assert_eq!(read::<Protocol>(r#""H3""#).unwrap_err(), "unknown variant");
        assert_eq!(read::<Protocol>("3").unwrap_err(), "expected a string");
    }

    #[test]
    fn rename_reads_the_given_name() {
        let links: crate::api::BenchLinks =
            from_str(r#"{"self": "/api/v1/benches/x", "permalink": "/b/x"}"#).unwrap();
        assert_eq!(links, crate::api::BenchLinks::for_id("x"));
        assert_eq!(
            read::<crate::api::BenchLinks>(r#"{"self_": "/api", "permalink": "/b/x"}"#)
                .unwrap_err(),
            "field `self`: missing"
        );
    }

    #[test]
    fn missing_fields_are_none_defaults_or_errors() {
        // An Option without `default` reads as None when missing, as serde reads it.
        let phases: crate::Phases =
            from_str(r#"{"total": {"start_us": 0, "end_us": 5}, "extra": [1]}"#).unwrap();
        assert_eq!(phases.dns, None);
        assert_eq!(phases.total.end_us, Micros(5));
        // A field marked `default` is its type's default.
        let summary: ProbeSummary = from_str(
            r#"{"id": "a", "url": "https://x", "protocols": ["h1"], "status": "done", "created_at_unix_ms": 9}"#,
        )
        .unwrap();
        assert_eq!(summary.visibility, crate::Visibility::Unlisted);
        // A list line from a server older than the verdict columns has neither.
        assert_eq!((summary.outcome, summary.verdict), (None, None));
        // Anything else missing is an error naming its field, inside its parents.
        let error = read::<crate::Phases>(r#"{"dns": null}"#).unwrap_err();
        assert_eq!(error, "field `total`: missing");
        let error = read::<crate::api::ProbeList>(r#"{"items": [{"id": "a"}]}"#).unwrap_err();
        assert_eq!(error, "field `items[0].url`: missing");
        let error = read::<crate::Phases>(r#"{"total": {"start_us": 0, "end_us": "5"}}"#);
        assert_eq!(
            error.unwrap_err(),
            "field `total.end_us`: expected a number"
        );
        // null is None for an Option, and wrong for anything else.
        let error = read::<crate::Phases>(r#"{"total": null}"#).unwrap_err();
        assert_eq!(error, "field `total`: expected an object");
        for text in [
            r#"{"dns": null}"#,
            r#"{"total": {"start_us": 0, "end_us": "5"}}"#,
            r#"{"total": null}"#,
        ] {
            assert!(
                serde_json::from_str::<crate::Phases>(text).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_container_default_fills_what_is_missing() {
        let options: crate::ProbeOptions =
            from_str(r#"{"url": "https://example.com/", "repeat": 9, "unknown": {"x": 1}}"#)
                .unwrap();
        let expected = crate::ProbeOptions {
            url: "https://example.com/".into(),
            repeat: 9,
            ..crate::ProbeOptions::default()
        };
        assert_eq!(options, expected);
        assert_eq!(
            options.protocols,
            Protocol::ALL.to_vec(),
            "the container's default"
        );
        assert_eq!(
            read::<crate::ProbeOptions>("{}").unwrap(),
            crate::ProbeOptions::default()
        );
    }

    #[test]
    fn transparent_reads_the_inner_value() {
        assert_eq!(read::<Micros>("12").unwrap(), Micros(12));
        assert_eq!(
            read::<Micros>("-12").unwrap_err(),
            "expected an unsigned integer"
        );
        let mut micros = Micros(1);
        assert!(micros.missing().is_err(), "a missing u64 is an error");
    }

    #[test]
    fn flattened_fields_read_from_the_same_object() {
        let text = r#"{"name": "fra1", "label": "Frankfurt", "tags": ["eu"], "kind": "agent",
            "version": "0.4.2", "online": true, "last_seen_ms_ago": 1200}"#;
        let info: VantageInfo = from_str(text).unwrap();
        assert_eq!(info, serde_json::from_str::<VantageInfo>(text).unwrap());
        assert_eq!(info.vantage.label.as_deref(), Some("Frankfurt"));
        assert_eq!(info.kind, VantageKind::Agent);
        let error = read::<VantageInfo>(r#"{"kind": "server", "online": true}"#).unwrap_err();
        assert_eq!(error, "field `name`: missing");
    }

    #[test]
    fn internally_tagged_events_read_by_their_tag() {
        let text = r#"{"reason": "no", "type": "stopped", "protocol": "h3"}"#;
        let event: ProbeEvent = from_str(text).unwrap();
        let expected = ProbeEvent::Stopped {
            protocol: Protocol::H3,
            reason: "no".into(),
        };
        assert_eq!(event, expected);
        assert_eq!(serde_json::from_str::<ProbeEvent>(text).unwrap(), expected);
        assert_eq!(
            read::<ProbeEvent>(r#"{"protocol": "h3", "reason": "no"}"#).unwrap_err(),
            "field `type`: missing"
        );
        assert_eq!(
            read::<ProbeEvent>(r#"{"type": "paused"}"#).unwrap_err(),
            "field `type`: unknown variant"
        );
        assert_eq!(
            read::<ProbeEvent>(r#"{"type": "skipped", "protocol": "h3"}"#).unwrap_err(),
            "field `reason`: missing"
        );
    }

    #[test]
    fn manual_readers_take_what_the_manual_deserializers_take() {
        use crate::migration::Migrate;
        use crate::network::NetworkProfile;
        use crate::sweep::Sweep;
        for text in [
            r#""rtt=50ms,loss=1%""#,
            r#"{"rtt_ms": 50, "loss_basis_points": 100}"#,
            r#"{"name": "cable"}"#,
        ] {
            let ours: NetworkProfile = from_str(text).unwrap();
            assert_eq!(
                ours,
                serde_json::from_str::<NetworkProfile>(text).unwrap(),
                "{text}"
            );
        }
        for text in [
            r#"{"name": "cable", "rtt_ms": 1}"#,
            r#"{"rtt_ms": 100000}"#,
            "3",
        ] {
            assert!(read::<NetworkProfile>(text).is_err(), "{text}");
            assert!(
                serde_json::from_str::<NetworkProfile>(text).is_err(),
                "{text}"
            );
        }
        for text in [
            r#""rtt=0,25,50ms""#,
            r#"{"axis": "loss", "steps": [0, 100]}"#,
        ] {
            let ours: Sweep = from_str(text).unwrap();
            assert_eq!(ours, serde_json::from_str::<Sweep>(text).unwrap(), "{text}");
        }
        let error = read::<Sweep>(r#"{"axis": "rtt", "steps": [50, 25]}"#).unwrap_err();
        assert!(error.contains("must grow"), "{error}");
        assert_eq!(read::<Migrate>(r#""port""#).unwrap(), Migrate::Port);
        assert_eq!(
            read::<Migrate>(r#""[::1]""#).unwrap(),
            Migrate::Address("::1".into())
        );
        assert!(
            read::<Migrate>(r#""""#)
                .unwrap_err()
                .contains("needs `port`")
        );
    }

    /// The richness check finds what a sparse value leaves out.
    #[test]
    fn the_richness_check_finds_gaps() {
        let sparse = crate::api::ProbeList {
            items: Vec::new(),
            next_before: None,
        };
        let gaps = richness::gaps(&sparse);
        assert!(gaps.contains(&"items (empty)".to_owned()), "{gaps:?}");
        assert!(
            gaps.contains(&"next_before (skipped)".to_owned()),
            "{gaps:?}"
        );
    }
}

/// `value` written by serde_json (for the round trips).
fn written<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap()
}
