//! Address families compared (`--all-addresses`): one family slower than
//! another beyond the noise (`address_family_slower`), or failing where
//! another works (`address_family_broken`), per protocol.

use super::*;
use crate::addresses::{AddressRow, handshake_metric, new_connection_values, rows};
use crate::chain::Chain;
use crate::format::ms;
use crate::schema::AddressFamily;
use crate::stats::Metric;
use crate::verdict::{SIGNIFICANCE_RULE, significant};

/// One family's attempts over one protocol, pooled over its addresses.
struct FamilyGroup<'a> {
    family: AddressFamily,
    addresses: Vec<String>,
    chains: Vec<Chain<'a>>,
}

impl FamilyGroup<'_> {
    fn named(&self) -> String {
        format!("{} ({})", self.family.name(), self.addresses.join(", "))
    }

    fn answered(&self) -> bool {
        self.chains.iter().any(Chain::answered)
    }
}

/// A sample's median, spread (when it has two values or more) and size.
struct Sample {
    median: Micros,
    spread: Option<Micros>,
    count: usize,
}

fn sample(mut values: Vec<Micros>) -> Option<Sample> {
    values.sort_unstable();
    let (first, last) = (*values.first()?, *values.last()?);
    Some(Sample {
        median: crate::stats::percentile(&values, 50),
        spread: (values.len() > 1).then(|| last.saturating_sub(first)),
        count: values.len(),
    })
}

/// The family findings of every run with other addresses, most severe first
/// within [`diagnose`]'s order. The same finding over several protocols is
/// reported once, naming them.
pub(super) fn families(result: &ProbeResult, out: &mut Vec<Finding>) {
    let mut found: Vec<Finding> = Vec::new();
    for run in &result.runs {
        let groups = groups(run);
        if groups.len() < 2 {
            continue;
        }
        for finding in broken(result, run, &groups)
            .into_iter()
            .chain(slower(result, run, &groups))
        {
            // "IPv6 (::1) is slower than IPv4 (127.0.0.1)" is one finding,
            // whatever the gap over each protocol.
            let key = |f: &Finding| f.title.split(" by ").next().unwrap_or_default().to_owned();
            match found
                .iter_mut()
                .find(|f| f.id == finding.id && key(f) == key(&finding))
            {
                Some(earlier) => {
                    earlier.evidence.detail.push(' ');
                    earlier.evidence.detail.push_str(&finding.evidence.detail);
                }
                None => found.push(finding),
            }
        }
    }
    for f in found.iter_mut().filter(|f| f.id == "address_family_slower") {
        f.evidence.detail.push(' ');
        f.evidence.detail.push_str(SIGNIFICANCE_RULE);
    }
    out.extend(found);
}

/// The run's attempts grouped by family, in the rows' order.
fn groups(run: &ProtocolRun) -> Vec<FamilyGroup<'_>> {
    let mut groups: Vec<FamilyGroup<'_>> = Vec::new();
    for row in rows(run) {
        let AddressRow {
            family, address, ..
        } = &row;
        if family.is_any() {
            continue;
        }
        let chains = crate::chain::chains_of(run.protocol, row.attempts);
        match groups.iter_mut().find(|g| g.family == *family) {
            Some(group) => {
                if !group.addresses.contains(address) {
                    group.addresses.push(address.clone());
                }
                group.chains.extend(chains);
            }
            None => groups.push(FamilyGroup {
                family: *family,
                addresses: vec![address.clone()],
                chains,
            }),
        }
    }
    groups
}

/// `address_family_broken`: a family whose every attempt failed while another's worked.
fn broken(result: &ProbeResult, run: &ProtocolRun, groups: &[FamilyGroup<'_>]) -> Vec<Finding> {
    let Some(working) = groups.iter().find(|g| g.answered()) else {
        return Vec::new();
    };
    groups
        .iter()
        .filter(|g| !g.answered() && !g.chains.is_empty())
        .filter_map(|g| {
            let failure = g.chains.iter().find_map(|c| c.failure())?;
            let url = shell_quote(&result.options.url);
            let host = target(&result.options.url).host;
            let flag = if working.family == AddressFamily::V4 {
                "-4"
            } else {
                "-6"
            };
            Some(finding(
                "address_family_broken",
                Severity::Warning,
                format!(
                    "{} is broken: every attempt to {} failed in {} ({})",
                    g.family.name(),
                    g.addresses.join(", "),
                    failure.phase.as_str(),
                    failure.kind.as_str()
                ),
                Evidence {
                    protocol: run.protocol,
                    attempt: None,
                    phase: Some(failure.phase),
                    duration: None,
                    detail: format!(
                        "Over {}, {} of {} attempts to {} failed (first: {}), while {} answered. \
                         Clients that try {} first wait for it before falling back.",
                        run.protocol.http_version(),
                        g.chains.iter().filter(|c| c.failure().is_some()).count(),
                        g.chains.len(),
                        g.named(),
                        failure.message,
                        working.named(),
                        g.family.name()
                    ),
                },
                format!(
                    "Fix {0} on the server (does it listen on {0}? `curl {1} -v {url}`) or remove \
                     the {2} record (`dig +short {2} {host}`); meanwhile measure the working family \
                     alone with `h123 probe {flag} {url}`.",
                    g.family.name(),
                    if g.family == AddressFamily::V6 { "-6" } else { "-4" },
                    g.family.record()
                ),
            ))
        })
        .collect()
}

/// `address_family_slower`: the slowest family's new connections beyond the
/// noise of the fastest's, at connect, the handshake or the total.
fn slower(result: &ProbeResult, run: &ProtocolRun, groups: &[FamilyGroup<'_>]) -> Option<Finding> {
    let metrics = [
        Metric::Connect,
        handshake_metric(run.protocol),
        Metric::Total,
    ];
    let mut called: Vec<(Metric, Micros, Sample, Sample)> = Vec::new();
    let (mut fast_group, mut slow_group) = (None, None);
    for metric in metrics {
        let mut samples: Vec<(&FamilyGroup<'_>, Sample)> = groups
            .iter()
            .filter_map(|g| Some((g, sample(new_connection_values(&g.chains, metric))?)))
            .collect();
        if samples.len() < 2 {
            continue;
        }
        samples.sort_by_key(|(_, s)| s.median);
        let (slow_g, slow) = samples.pop()?;
        let (fast_g, fast) = samples.swap_remove(0);
        let noise = [&fast, &slow].iter().filter_map(|s| s.spread).max();
        let gap = slow.median.saturating_sub(fast.median);
        if !significant(gap, fast.median, noise, fast.count.min(slow.count)) {
            continue;
        }
        // One direction per finding: the first called metric sets it.
        if slow_group.is_some_and(|g: &FamilyGroup<'_>| g.family != slow_g.family) {
            continue;
        }
        fast_group.get_or_insert(fast_g);
        slow_group.get_or_insert(slow_g);
        called.push((metric, gap, fast, slow));
    }
    let (fast_g, slow_g) = (fast_group?, slow_group?);
    let (head_metric, head_gap, _, head_slow) = called
        .iter()
        .find(|(m, ..)| *m != Metric::Total)
        .unwrap_or(&called[0]);
    let figures: Vec<String> = called
        .iter()
        .map(|(m, gap, fast, slow)| {
            format!(
                "{} {} against {} (+{}, over {} and {} attempts)",
                label_of(*m),
                ms(slow.median),
                ms(fast.median),
                ms(*gap),
                slow.count,
                fast.count
            )
        })
        .collect();
    let url = shell_quote(&result.options.url);
    let host = target(&result.options.url).host;
    let flag = if fast_g.family == AddressFamily::V4 {
        "-4"
    } else {
        "-6"
    };
    Some(finding(
        "address_family_slower",
        Severity::Warning,
        format!(
            "{} is slower than {} by {} at {} over {} attempts",
            slow_g.named(),
            fast_g.named(),
            ms(*head_gap),
            label_of(*head_metric),
            head_slow.count
        ),
        Evidence {
            protocol: run.protocol,
            attempt: None,
            phase: head_metric.phase(),
            duration: Some(*head_gap),
            detail: format!(
                "Over {}, new connections' medians: {}.",
                run.protocol.http_version(),
                figures.join("; ")
            ),
        },
        format!(
            "{} Look at the {} path to {} (`mtr {}`; a proxy, tunnel or load balancer in front of \
             that family only?), or publish only the fast family's {} record; `h123 probe {flag} {url}` \
             measures the fast family alone.",
            if slow_g.family == AddressFamily::V6 {
                "Most clients try IPv6 first (Happy Eyeballs, RFC 8305), so they pay this on every new connection."
            } else {
                "Clients that reach the host over IPv4 pay this on every new connection."
            },
            slow_g.family.name(),
            host,
            slow_g.addresses[0],
            fast_g.family.record()
        ),
    ))
}

fn label_of(metric: Metric) -> &'static str {
    match metric {
        Metric::Connect => "connect",
        Metric::Tls => "TLS",
        Metric::Quic => "QUIC",
        _ => "total",
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::fixture::{failed, fresh, result, reused, run};
    use crate::schema::{AddressRun, FailureKind};

    fn to(mut a: Attempt, addr: &str) -> Attempt {
        a.connection.as_mut().unwrap().remote_addr = addr.into();
        a
    }

    /// Cold attempts (new connections) with these TLS times (µs).
    fn cold(addr: &str, tls: &[u64]) -> Vec<Attempt> {
        tls.iter()
            .enumerate()
            .map(|(i, t)| to(fresh(i as u32 + 1, 1_000, 300, *t, 2_000), addr))
            .collect()
    }

    fn with_other(main: Vec<Attempt>, address: &str, attempts: Vec<Attempt>) -> ProbeResult {
        let mut r = run(Protocol::H2, main);
        r.other_addresses.push(AddressRun {
            address: address.into(),
            family: AddressFamily::of(address.parse().unwrap()),
            stopped: None,
            cut_short: None,
            attempts,
        });
        result(vec![r])
    }

    #[test]
    fn a_slower_family_beyond_the_spread_is_called() {
        let r = with_other(
            cold("127.0.0.1:443", &[2_000, 2_300, 2_100, 2_200]),
            "::1",
            cold("[::1]:443", &[102_000, 101_500, 102_400, 101_800]),
        );
        let findings = diagnose(&r);
        let f = find(&findings, "address_family_slower");
        assert!(
            f.title
                .starts_with("IPv6 (::1) is slower than IPv4 (127.0.0.1) by 99"),
            "{}",
            f.title
        );
        assert!(f.title.ends_with("at TLS over 4 attempts"), "{}", f.title);
        assert_eq!(f.evidence.phase, Some(Phase::Tls));
        assert!(f.evidence.detail.contains("total"), "{}", f.evidence.detail);
        assert!(f.next_step.contains("h123 probe -4"), "{}", f.next_step);
        assert!(!ids(&findings).contains(&"address_family_broken"));
    }

    #[test]
    fn no_finding_when_the_difference_is_inside_the_spread() {
        // Medians 1.2 ms apart, but each family spreads over 5 ms.
        let r = with_other(
            cold("127.0.0.1:443", &[2_000, 3_000, 7_000, 2_500]),
            "::1",
            cold("[::1]:443", &[3_700, 2_100, 7_100, 3_900]),
        );
        assert!(
            !ids(&diagnose(&r))
                .iter()
                .any(|id| id.starts_with("address_family"))
        );
        // Tight, but under the 0.5 ms floor.
        let r = with_other(
            cold("127.0.0.1:443", &[2_000, 2_010, 2_020, 2_030]),
            "::1",
            cold("[::1]:443", &[2_400, 2_410, 2_420, 2_430]),
        );
        assert!(
            !ids(&diagnose(&r))
                .iter()
                .any(|id| id.starts_with("address_family"))
        );
    }

    #[test]
    fn fewer_than_four_new_connections_call_nothing_and_four_beyond_the_spread_do() {
        let slower = |r: &ProbeResult| ids(&diagnose(r)).contains(&"address_family_slower");
        // One new connection a family borrows nothing from the reused ones' spread.
        let warm = |addr: &str, tls: u64| {
            vec![
                to(fresh(1, 1_000, 300, tls, 2_000), addr),
                to(reused(2, 2_000), addr),
                to(reused(3, 2_600), addr),
            ]
        };
        let r = with_other(
            warm("127.0.0.1:443", 2_000),
            "::1",
            warm("[::1]:443", 52_000),
        );
        assert!(!slower(&r));
        // With no repeats there is no spread at all: nothing is called.
        let r = with_other(
            cold("127.0.0.1:443", &[2_000]),
            "::1",
            cold("[::1]:443", &[52_000]),
        );
        assert!(!slower(&r));
        // Three a family, 50 ms apart and spread over 0.3 ms: still nothing.
        let r = with_other(
            cold("127.0.0.1:443", &[2_000, 2_300, 2_100]),
            "::1",
            cold("[::1]:443", &[52_000, 52_300, 52_100]),
        );
        assert!(!slower(&r));
        // A fourth each: called.
        let r = with_other(
            cold("127.0.0.1:443", &[2_000, 2_300, 2_100, 2_200]),
            "::1",
            cold("[::1]:443", &[52_000, 52_300, 52_100, 52_200]),
        );
        let f = find(&diagnose(&r), "address_family_slower").clone();
        assert!(
            f.title.contains("by 50.0 ms at TLS over 4 attempts"),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_family_that_always_fails_is_broken() {
        let refused = |n| {
            let mut a = failed(
                to(fresh(n, 1_000, 300, 0, 0), "[::1]:443"),
                Phase::Connect,
                FailureKind::Refused,
            );
            a.response = None;
            a.connection = None;
            a.phases.tls = None;
            a
        };
        let r = with_other(
            cold("127.0.0.1:443", &[2_000, 2_100]),
            "::1",
            vec![refused(1), refused(2)],
        );
        let findings = diagnose(&r);
        let f = find(&findings, "address_family_broken");
        assert_eq!(
            f.title,
            "IPv6 is broken: every attempt to ::1 failed in connect (refused)"
        );
        assert!(f.next_step.contains("h123 probe -4"), "{}", f.next_step);
        assert!(!ids(&findings).contains(&"address_family_slower"));
        // One family only: nothing to compare.
        let r = with_other(
            cold("127.0.0.1:443", &[2_000, 2_100]),
            "127.0.0.2",
            cold("127.0.0.2:443", &[90_000, 91_000]),
        );
        assert!(
            !ids(&diagnose(&r))
                .iter()
                .any(|id| id.starts_with("address_family"))
        );
    }
}
