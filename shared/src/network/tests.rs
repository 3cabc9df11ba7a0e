use super::*;

#[test]
fn a_name_gives_its_figures() {
    let p = NetworkProfile::parse("3G").unwrap();
    assert_eq!(p.name.as_deref(), Some("3g"));
    assert_eq!(
        (p.rtt_ms, p.down_kbit, p.up_kbit),
        (300, Some(1_600), Some(768))
    );
    assert_eq!(p.to_string(), "3g (rtt=300ms,down=1600kbit,up=768kbit)");
    for named in NAMED_PROFILES {
        assert_eq!(named.profile().check(), Ok(()), "{}", named.name);
    }
}

#[test]
fn figures_parse_in_any_units_and_print_back() {
    let p =
        NetworkProfile::parse("rtt=100ms, jitter=10ms, loss=2%, down=10mbit, up=512kbit").unwrap();
    assert_eq!(p.name, None);
    assert_eq!((p.rtt_ms, p.jitter_ms), (100, 10));
    assert_eq!(p.loss_basis_points, 200);
    assert_eq!((p.down_kbit, p.up_kbit), (Some(10_000), Some(512)));
    let text = p.figures();
    assert_eq!(text, "rtt=100ms,jitter=10ms,loss=2%,down=10mbit,up=512kbit");
    assert_eq!(NetworkProfile::parse(&text).unwrap(), p);
    let p = NetworkProfile::parse("rtt=0.2s,down=1gbit,up=2mbps").unwrap();
    assert_eq!(
        (p.rtt_ms, p.down_kbit, p.up_kbit),
        (200, Some(1_000_000), Some(2_000))
    );
    assert_eq!(
        NetworkProfile::parse("loss=0.5").unwrap().loss_basis_points,
        50
    );
    let fine = NetworkProfile::parse("loss=0.25%,rtt=1.5s,down=1.5mbit").unwrap();
    assert_eq!(
        (fine.loss_basis_points, fine.rtt_ms, fine.down_kbit),
        (25, 1_500, Some(1_500))
    );
    assert_eq!(fine.figures(), "rtt=1500ms,loss=0.25%,down=1500kbit");
    assert_eq!(
        NetworkProfile::parse("loss=2.5%").unwrap().figures(),
        "rtt=0ms,loss=2.5%"
    );
}

#[test]
fn bad_figures_are_named() {
    for (text, says) in [
        ("dialup", "unknown network profile `dialup`"),
        ("rtt=fast", "`fast` is not a duration"),
        ("rtt=100ms,speed=3", "unknown network figure `speed`"),
        ("loss=60%", "loss must be between 0% and 50%"),
        ("loss=-1%", "is not a percentage"),
        (
            "rtt=10ms,jitter=20ms",
            "jitter must be at most half the rtt",
        ),
        ("rtt=9000ms", "rtt must be at most 5000 ms"),
        ("down=0mbit", "is not a rate"),
        ("loss=0.125%", "is not a percentage"),
        ("rtt=1.5ms", "is not a duration"),
        ("rtt=.", "is not a duration"),
        ("down=1e3kbit", "is not a rate"),
        ("down=1kbit", "down must be between 16 kbit/s"),
        ("rtt", "unknown network profile"),
        ("rtt=1ms,up", "`up` is not key=value"),
    ] {
        let err = NetworkProfile::parse(text).unwrap_err();
        assert!(err.contains(says), "{text}: {err}");
    }
}

#[test]
fn the_api_takes_text_fields_or_a_name_alone() {
    let from_text: NetworkProfile = serde_json::from_str(r#""rtt=50ms,loss=1%""#).unwrap();
    assert_eq!((from_text.rtt_ms, from_text.loss_basis_points), (50, 100));
    let from_fields: NetworkProfile =
        serde_json::from_str(r#"{"rtt_ms":50,"loss_basis_points":100}"#).unwrap();
    assert_eq!(from_fields, from_text);
    let named: NetworkProfile = serde_json::from_str(r#"{"name":"cable"}"#).unwrap();
    assert_eq!(named, NetworkProfile::named("cable").unwrap());
    let round: NetworkProfile =
        serde_json::from_str(&serde_json::to_string(&named).unwrap()).unwrap();
    assert_eq!(round, named, "a stored profile reads back");
    let forged = serde_json::from_str::<NetworkProfile>(r#"{"name":"cable","rtt_ms":1}"#);
    assert!(
        forged
            .unwrap_err()
            .to_string()
            .contains("not a named profile")
    );
    let out_of_range = serde_json::from_str::<NetworkProfile>(r#"{"rtt_ms":100000}"#);
    assert!(
        out_of_range
            .unwrap_err()
            .to_string()
            .contains("rtt must be at most")
    );
}

#[test]
fn counts_add_up() {
    let c = LinkCounts {
        delivered: 97,
        lost: 2,
        queue_drops: 1,
        bytes: 0,
    };
    assert_eq!(c.offered(), 100);
}

#[test]
fn the_lines_name_the_profile_and_each_protocols_emulation() {
    let mut result = crate::fixture::result(vec![
        crate::fixture::run(crate::Protocol::H2, vec![]),
        crate::fixture::run(crate::Protocol::H3, vec![]),
    ]);
    assert!(
        lines(&result).is_empty(),
        "the real path alone says nothing"
    );
    result.options.network = NetworkProfile::named("3g");
    result.runs[0].emulated = Some(EmulatedPath {
        emulation: Emulation::Stream,
        up: LinkCounts {
            delivered: 10,
            ..LinkCounts::default()
        },
        down: LinkCounts {
            delivered: 40,
            ..LinkCounts::default()
        },
    });
    result.runs[1].emulated = Some(EmulatedPath {
        emulation: Emulation::Datagrams,
        up: LinkCounts {
            delivered: 30,
            lost: 1,
            ..LinkCounts::default()
        },
        down: LinkCounts {
            delivered: 90,
            lost: 6,
            queue_drops: 4,
            bytes: 0,
        },
    });
    assert_eq!(
        lines(&result),
        vec![
            "Emulated network: 3g (rtt=300ms,down=1600kbit,up=768kbit)".to_owned(),
            "HTTP/2: a stream relay: the byte stream delayed and paced, no loss (TCP loss needs packet access); nothing dropped (40 packets down, 10 up)".to_owned(),
            "HTTP/3: every datagram delayed, paced and dropped on its own; dropped 10 of 100 down (4 at a full queue), 1 of 31 up".to_owned(),
        ]
    );
}
