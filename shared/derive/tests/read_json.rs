//! The derive's attribute handling through the real derive: every input is read by both this
//! reader and serde_json, which must agree (the same value, or both an error).

use h123_shared::json::{self, ReadJson};
use serde::Deserialize;
use std::fmt::Debug;

/// Reads `text` with both readers: the value they agree on, or `None` when both refuse it.
fn agreed<T: ReadJson + for<'de> Deserialize<'de> + PartialEq + Debug>(text: &str) -> Option<T> {
    let ours = json::from_str::<T>(text);
    let serde = serde_json::from_str::<T>(text);
    match (ours, serde) {
        (Ok(ours), Ok(serde)) => {
            assert_eq!(ours, serde, "{text}");
            Some(ours)
        }
        (Err(_), Err(_)) => None,
        (ours, serde) => panic!("{text}: ours {ours:?}, serde {serde:?}"),
    }
}

/// A field type whose default is not zero, to tell whose default a missing field takes.
#[derive(Debug, PartialEq, Deserialize, ReadJson)]
#[serde(transparent)]
struct Seven(u32);

impl Default for Seven {
    fn default() -> Self {
        Seven(7)
    }
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
#[serde(rename_all = "UPPERCASE", deny_unknown_fields)]
struct Fields {
    required: u32,
    #[serde(rename = "renamed")]
    named_otherwise: String,
    optional: Option<u32>,
    #[serde(default)]
    defaulted: Seven,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    list: Vec<bool>,
    r#type: bool,
}

#[test]
fn fields_are_named_read_and_defaulted_as_serde_does() {
    let all = r#"{"REQUIRED": 1, "renamed": "x", "OPTIONAL": 2, "DEFAULTED": 3, "LIST": [true],
        "TYPE": false}"#;
    assert_eq!(
        agreed::<Fields>(all),
        Some(Fields {
            required: 1,
            named_otherwise: "x".into(),
            optional: Some(2),
            defaulted: Seven(3),
            list: vec![true],
            r#type: false,
        })
    );
    // Missing: an Option is None, a `default` its type's default.
    let least = agreed::<Fields>(r#"{"REQUIRED": 1, "renamed": "x", "TYPE": true}"#).unwrap();
    assert_eq!(
        (least.optional, least.defaulted, least.list),
        (None, Seven(7), vec![])
    );
    // Unknown fields are ignored by this reader; serde refuses them here (`deny_unknown_fields`
    // says nothing about reading the server's answers).
    let extra = r#"{"REQUIRED": 1, "renamed": "x", "TYPE": true, "EXTRA": {}}"#;
    assert!(json::from_str::<Fields>(extra).is_ok());
    for refused in [
        r#"{"renamed": "x", "TYPE": true}"#,
        r#"{"REQUIRED": 1, "NAMED_OTHERWISE": "x", "TYPE": true}"#,
        r#"{"required": 1, "renamed": "x", "TYPE": true}"#,
        r#"{"REQUIRED": null, "renamed": "x", "TYPE": true}"#,
        r#"{"REQUIRED": 1, "renamed": "x", "TYPE": true, "DEFAULTED": null}"#,
        r#"[1, "x", true]"#,
    ] {
        assert_eq!(agreed::<Fields>(refused), None, "{refused}");
    }
    let error = json::from_str::<Fields>(r#"{"renamed": "x", "TYPE": true}"#).unwrap_err();
    assert_eq!(error.to_string(), "field `REQUIRED`: missing");
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
#[serde(default)]
struct Defaults {
    from_container: u32,
    #[serde(default)]
    from_field: Seven,
    maybe: Option<u32>,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            from_container: 5,
            from_field: Seven(1),
            maybe: Some(9),
        }
    }
}

#[test]
fn a_container_default_gives_missing_fields_but_a_fields_own_default_wins() {
    assert_eq!(
        agreed::<Defaults>("{}"),
        Some(Defaults {
            from_container: 5,
            from_field: Seven(7),
            maybe: Some(9),
        })
    );
    let given = agreed::<Defaults>(r#"{"from_container": 1, "from_field": 2, "maybe": null}"#);
    assert_eq!(
        given,
        Some(Defaults {
            from_container: 1,
            from_field: Seven(2),
            maybe: None,
        })
    );
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
struct Inner {
    name: String,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
struct Outer {
    #[serde(flatten)]
    inner: Inner,
    online: bool,
}

#[test]
fn a_flattened_field_reads_from_the_same_object() {
    assert_eq!(
        agreed::<Outer>(r#"{"online": true, "name": "fra1", "tags": ["eu"]}"#),
        Some(Outer {
            inner: Inner {
                name: "fra1".into(),
                tags: vec!["eu".into()],
            },
            online: true,
        })
    );
    assert_eq!(
        agreed::<Outer>(r#"{"online": true, "name": "fra1"}"#).map(|o| o.inner.tags),
        Some(vec![])
    );
    assert_eq!(agreed::<Outer>(r#"{"online": true}"#), None);
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
#[serde(transparent)]
struct Named {
    inner: Option<u64>,
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
struct HoldsTransparent {
    micros: Seven,
    maybe: Named,
}

#[test]
fn transparent_structs_read_as_their_field_even_when_missing() {
    assert_eq!(agreed::<Seven>("12"), Some(Seven(12)));
    assert_eq!(agreed::<Named>("null"), Some(Named { inner: None }));
    assert_eq!(
        agreed::<Named>("18446744073709551615"),
        Some(Named {
            inner: Some(u64::MAX)
        })
    );
    // A missing transparent field is what its inner type's missing field is.
    assert_eq!(
        agreed::<HoldsTransparent>(r#"{"micros": 3}"#),
        Some(HoldsTransparent {
            micros: Seven(3),
            maybe: Named { inner: None },
        })
    );
    assert_eq!(agreed::<HoldsTransparent>(r#"{"maybe": 3}"#), None);
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
#[serde(rename_all = "lowercase")]
enum Unit {
    First,
    SecondOne,
    #[serde(rename = "3rd")]
    Third,
}

#[test]
fn unit_variants_are_strings() {
    assert_eq!(agreed::<Unit>(r#""first""#), Some(Unit::First));
    assert_eq!(agreed::<Unit>(r#""secondone""#), Some(Unit::SecondOne));
    assert_eq!(agreed::<Unit>(r#""3rd""#), Some(Unit::Third));
    for refused in [r#""third""#, r#""First""#, r#""second_one""#, "0", "null"] {
        assert_eq!(agreed::<Unit>(refused), None, "{refused}");
    }
}

#[derive(Debug, PartialEq, Deserialize, ReadJson)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Tagged {
    Plain,
    WithFields {
        count: u32,
        #[serde(rename = "label")]
        name: Option<String>,
        #[serde(default)]
        extra: Seven,
    },
    #[serde(rename = "boxed")]
    Boxed {
        inner: Box<Inner>,
    },
}

#[test]
fn internally_tagged_variants_read_by_their_tag() {
    assert_eq!(
        agreed::<Tagged>(r#"{"kind": "plain", "count": 1}"#),
        Some(Tagged::Plain)
    );
    assert_eq!(
        agreed::<Tagged>(r#"{"count": 2, "kind": "with_fields", "label": "x"}"#),
        Some(Tagged::WithFields {
            count: 2,
            name: Some("x".into()),
            extra: Seven(7),
        })
    );
    assert_eq!(
        agreed::<Tagged>(r#"{"kind": "boxed", "inner": {"name": "n"}}"#),
        Some(Tagged::Boxed {
            inner: Box::new(Inner {
                name: "n".into(),
                tags: vec![],
            })
        })
    );
    for refused in [
        r#"{"count": 2}"#,
        r#"{"kind": "with_fields"}"#,
        r#"{"kind": "WithFields", "count": 2}"#,
        r#"{"kind": "Boxed", "inner": {"name": "n"}}"#,
        r#"{"kind": 1}"#,
        r#""plain""#,
    ] {
        assert_eq!(agreed::<Tagged>(refused), None, "{refused}");
    }
    let error = json::from_str::<Tagged>(r#"{"kind": "boxed", "inner": {}}"#).unwrap_err();
    assert_eq!(error.to_string(), "field `inner.name`: missing");
}
