//! A probe as JUnit XML for CI test reports (`-o junit`, `--junit FILE`).
//!
//! One `<testsuite>` per protocol, with the URL and the probe's settings as
//! properties; in it one `<testcase>` per attempt (a failure or an HTTP error
//! is a `<failure>`, a protocol that was not measured `<skipped/>`) and one
//! per SLO gate judged on that protocol. Times are in seconds. Every string
//! is escaped, so a hostile URL, redirect target or error message stays text.
//! A probe across vantages (`--from`) has a testsuite per vantage and
//! protocol ([`vantages_report`]).

use h123_shared::chain::{Chain, chains};
use h123_shared::format::{ms, status};
use h123_shared::slo::{Check, Judgement, SloReport};
use h123_shared::vantage::VantageRun;
use h123_shared::{Micros, ProbeResult, ProtocolRun};
use std::fmt::Write as _;

/// The result (and the judgement of its gates, when given) as a JUnit XML document.
pub fn report(result: &ProbeResult, slo: Option<&SloReport>) -> String {
    let suites: Vec<Suite> = result
        .runs
        .iter()
        .map(|run| suite(result, run, slo))
        .collect();
    document(&format!("h123 probe {}", result.options.url), &suites)
}

/// A probe of `url` measured from several vantages as a JUnit XML document:
/// a testsuite per vantage and protocol (`fra1 · HTTP/2`, with a `vantage`
/// property and classnames under `h123.fra1.h2`), and for a vantage left
/// without a (complete) result, a testsuite named after it whose one
/// testcase fails with the reason.
pub fn vantages_report(url: &str, runs: &[VantageRun]) -> String {
    let mut suites = Vec::new();
    for run in runs {
        let name = &run.vantage.name;
        for (result, protocol_run) in run
            .result
            .iter()
            .flat_map(|r| r.runs.iter().map(move |p| (r, p)))
        {
            let mut suite = suite(result, protocol_run, None);
            suite.name = format!("{name} · {}", suite.name);
            suite.properties.insert(0, ("vantage", name.clone()));
            for case in &mut suite.cases {
                case.classname =
                    format!("h123.{name}.{}", case.classname.trim_start_matches("h123."));
            }
            suites.push(suite);
        }
        if let Some(problem) = &run.problem {
            suites.push(Suite {
                name: name.clone(),
                properties: vec![("vantage", name.clone()), ("url", url.to_owned())],
                cases: vec![Case {
                    name: "result".to_owned(),
                    classname: format!("h123.{name}.vantage"),
                    time: None,
                    verdict: Verdict::Failed {
                        kind: "no_result".to_owned(),
                        message: problem.clone(),
                    },
                    output: String::new(),
                }],
                notes: Vec::new(),
                time: Micros(0),
            });
        }
    }
    let names: Vec<&str> = runs.iter().map(|r| r.vantage.name.as_str()).collect();
    document(
        &format!("h123 probe {url} from {}", names.join(", ")),
        &suites,
    )
}

/// The `<testsuites>` document named `name` around `suites`, with their totals.
fn document(name: &str, suites: &[Suite]) -> String {
    let count = |f: fn(&Case) -> bool| {
        suites
            .iter()
            .flat_map(|s| &s.cases)
            .filter(|c| f(c))
            .count()
    };
    let time = Micros(suites.iter().map(|s| s.time.0).sum());
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{}\">",
        escape(name),
        count(|_| true),
        count(Case::failed),
        seconds(time),
    );
    for suite in suites {
        suite.write(&mut xml);
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// One protocol's testsuite.
struct Suite {
    name: String,
    properties: Vec<(&'static str, String)>,
    cases: Vec<Case>,
    /// Notes on the run as a whole (stopped early, cut short).
    notes: Vec<String>,
    time: Micros,
}

/// One testcase.
struct Case {
    name: String,
    classname: String,
    time: Option<Micros>,
    verdict: Verdict,
    output: String,
}

/// How a testcase came out.
enum Verdict {
    Passed,
    Failed { kind: String, message: String },
    Skipped(String),
}

impl Case {
    fn failed(&self) -> bool {
        matches!(self.verdict, Verdict::Failed { .. })
    }

    fn skipped(&self) -> bool {
        matches!(self.verdict, Verdict::Skipped(_))
    }

    fn write(&self, xml: &mut String) {
        let _ = write!(
            xml,
            "    <testcase name=\"{}\" classname=\"{}\"",
            escape(&self.name),
            escape(&self.classname)
        );
        if let Some(time) = self.time {
            let _ = write!(xml, " time=\"{}\"", seconds(time));
        }
        xml.push_str(">\n");
        match &self.verdict {
            Verdict::Passed => {}
            Verdict::Failed { kind, message } => {
                let _ = writeln!(
                    xml,
                    "      <failure type=\"{}\" message=\"{}\">{}</failure>",
                    escape(kind),
                    escape(message),
                    escape(message)
                );
            }
            Verdict::Skipped(why) => {
                let _ = writeln!(xml, "      <skipped message=\"{}\"/>", escape(why));
            }
        }
        if !self.output.is_empty() {
            let _ = writeln!(
                xml,
                "      <system-out>{}</system-out>",
                escape(&self.output)
            );
        }
        xml.push_str("    </testcase>\n");
    }
}

impl Suite {
    fn write(&self, xml: &mut String) {
        let count = |f: fn(&Case) -> bool| self.cases.iter().filter(|c| f(c)).count();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{}\">",
            escape(&self.name),
            self.cases.len(),
            count(Case::failed),
            count(Case::skipped),
            seconds(self.time)
        );
        xml.push_str("    <properties>\n");
        for (name, value) in &self.properties {
            let _ = writeln!(
                xml,
                "      <property name=\"{name}\" value=\"{}\"/>",
                escape(value)
            );
        }
        xml.push_str("    </properties>\n");
        for case in &self.cases {
            case.write(xml);
        }
        if !self.notes.is_empty() {
            let _ = writeln!(
                xml,
                "    <system-out>{}</system-out>",
                escape(&self.notes.join("\n"))
            );
        }
        xml.push_str("  </testsuite>\n");
    }
}

/// A protocol's testsuite: its attempts, then its gates.
fn suite(result: &ProbeResult, run: &ProtocolRun, slo: Option<&SloReport>) -> Suite {
    let proto = run.protocol.as_str();
    let options = &result.options;
    let mut properties = vec![
        ("url", options.url.clone()),
        ("protocol", proto.to_owned()),
        ("method", options.method.as_str().to_owned()),
        ("mode", options.mode.as_str().to_owned()),
        ("repeat", options.repeat.to_string()),
        ("rounds", options.rounds.to_string()),
        ("started_at_unix_ms", result.started_at_unix_ms.to_string()),
        ("h123_version", env!("CARGO_PKG_VERSION").to_owned()),
    ];
    if let Some(d) = &run.discovery {
        properties.push(("h3_discovery", d.detail.clone()));
    }
    let chains = chains(run);
    let mut cases: Vec<Case> = chains
        .iter()
        .map(|chain| attempt_case(proto, chain))
        .collect();
    if let Some(why) = &run.skipped {
        cases.push(Case {
            name: "attempts".to_owned(),
            classname: format!("h123.{proto}.attempts"),
            time: None,
            verdict: Verdict::Skipped(why.clone()),
            output: String::new(),
        });
    }
    let checks = slo.into_iter().flat_map(|r| &r.checks);
    cases.extend(
        checks
            .filter(|c| c.protocol == run.protocol)
            .map(|c| gate_case(proto, c)),
    );
    let notes = [("stopped", &run.stopped), ("cut short", &run.cut_short)]
        .into_iter()
        .filter_map(|(what, why)| why.as_ref().map(|why| format!("{what}: {why}")))
        .collect();
    Suite {
        name: run.protocol.http_version().to_owned(),
        properties,
        cases,
        notes,
        time: Micros(chains.iter().map(|c| c.total().0).sum()),
    }
}

/// An attempt (its whole redirect chain) as a testcase.
fn attempt_case(proto: &str, chain: &Chain) -> Case {
    let verdict = match (chain.failure(), chain.status()) {
        (Some(f), _) => Verdict::Failed {
            kind: f.phase.as_str().to_owned(),
            message: format!(
                "failed in {} ({}): {}",
                f.phase.as_str(),
                f.kind.as_str(),
                f.message
            ),
        },
        (None, Some(code)) if code >= 400 => Verdict::Failed {
            kind: "http_status".to_owned(),
            message: format!("HTTP error: {}", status(code)),
        },
        (None, Some(_)) => Verdict::Passed,
        (None, None) => Verdict::Failed {
            kind: "no_response".to_owned(),
            message: "no response".to_owned(),
        },
    };
    let output = chain
        .hops
        .iter()
        .map(|(hop, _)| {
            let answer = hop
                .response
                .as_ref()
                .map_or_else(|| "no response".to_owned(), |r| status(r.status));
            let phases: Vec<String> = hop
                .phases
                .present()
                .map(|(phase, span)| format!("{} {}", phase.as_str(), ms(span.duration())))
                .collect();
            format!(
                "hop {}: {} -> {answer} ({})",
                hop.hop,
                hop.url,
                phases.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Case {
        name: format!("attempt {} ({})", chain.attempt(), chain.state().label()),
        classname: format!("h123.{proto}.attempts"),
        time: Some(chain.total()),
        verdict,
        output,
    }
}

/// An SLO gate judged on one protocol as a testcase.
fn gate_case(proto: &str, check: &Check) -> Case {
    let verdict = match check.judgement {
        Judgement::Met => Verdict::Passed,
        Judgement::Breached => Verdict::Failed {
            kind: "slo".to_owned(),
            message: format!("{} breached: {}", check.gate, check.detail),
        },
        Judgement::NotMeasured => Verdict::Skipped(check.detail.clone()),
    };
    Case {
        name: format!("slo {}", check.gate),
        classname: format!("h123.{proto}.slo"),
        time: check.measured_us,
        verdict,
        output: check.detail.clone(),
    }
}

/// Microseconds as seconds with six decimals, exactly.
fn seconds(us: Micros) -> String {
    format!("{}.{:06}", us.0 / 1_000_000, us.0 % 1_000_000)
}

/// Text for an XML attribute or element: markup characters and the
/// whitespace attribute normalisation would change become references, and
/// characters XML 1.0 cannot carry at all become U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => out.push('\u{fffd}'),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_hostile_text_as_text() {
        assert_eq!(
            escape("a<b>&\"c\"'d'"),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;"
        );
        assert_eq!(escape("]]></failure>"), "]]&gt;&lt;/failure&gt;");
        assert_eq!(escape("x\ty\r\nz"), "x&#9;y&#13;&#10;z");
        assert_eq!(
            escape("nul\u{0}bell\u{7}\u{ffff}é"),
            "nul\u{fffd}bell\u{fffd}\u{fffd}é"
        );
    }

    #[test]
    fn vantages_get_a_suite_per_protocol_and_a_missing_one_fails_with_its_reason() {
        use h123_shared::vantage::Vantage;
        let options = h123_shared::ProbeOptions {
            url: "https://e.test/".into(),
            ..h123_shared::ProbeOptions::default()
        };
        let mut measured = ProbeResult::empty(options, 0, Some(Vantage::named("fra1")));
        measured.runs = vec![ProtocolRun {
            emulated: None,
            streams: None,
            protocol: h123_shared::Protocol::H3,
            skipped: Some("not advertised".into()),
            not_offered: None,
            stopped: None,
            cut_short: None,
            discovery: None,
            other_addresses: Vec::new(),
            attempts: Vec::new(),
        }];
        let runs = [
            VantageRun {
                vantage: Vantage::named("fra1"),
                result: Some(measured),
                problem: None,
            },
            VantageRun {
                vantage: Vantage::named("sfo1"),
                result: None,
                problem: Some("agent sfo1 stopped answering <late>".into()),
            },
        ];
        let xml = vantages_report("https://e.test/", &runs);
        assert!(
            xml.contains(r#"<testsuites name="h123 probe https://e.test/ from fra1, sfo1" tests="2" failures="1""#),
            "{xml}"
        );
        assert!(
            xml.contains(
                r#"<testsuite name="fra1 · HTTP/3" tests="1" failures="0" errors="0" skipped="1""#
            ),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="vantage" value="fra1"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"classname="h123.fra1.h3.attempts""#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testsuite name="sfo1" tests="1" failures="1""#),
            "{xml}"
        );
        assert!(
            xml.contains(
                r#"<failure type="no_result" message="agent sfo1 stopped answering &lt;late&gt;">"#
            ),
            "{xml}"
        );
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds(Micros(0)), "0.000000");
        assert_eq!(seconds(Micros(12_345)), "0.012345");
        assert_eq!(seconds(Micros(61_000_001)), "61.000001");
    }
}
