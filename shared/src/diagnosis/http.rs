//! HTTP answer rules: error statuses, redirects left unfollowed, and what followed redirects cost.

use super::*;
use crate::chain::{Chain, chains};
use crate::format::{ms, status};

/// 5xx and 4xx answers (`http_server_error`, `http_client_error`): an error when
/// every answer is one, a warning when some are.
pub(super) fn errors(result: &ProbeResult, out: &mut Vec<Finding>) {
    let answered: Vec<Chain> = result
        .runs
        .iter()
        .flat_map(chains)
        .filter(Chain::answered)
        .collect();
    for (id, range, what, next) in [
        (
            "http_server_error",
            500..600,
            "server error",
            "The server (or a proxy or load balancer in front of it) failed to answer: its error \
             logs say why. A 502 or 504 points at the upstream behind a proxy.",
        ),
        (
            "http_client_error",
            400..500,
            "client error",
            "The server refused this request: check the URL, the method and any headers it needs \
             (authorization, accept). Timing an error page measures the error path, not the page.",
        ),
    ] {
        let errors: Vec<&Chain> = answered
            .iter()
            .filter(|c| c.status().is_some_and(|s| range.contains(&s)))
            .collect();
        let Some(first) = errors.first() else {
            continue;
        };
        let all = errors.len() == answered.len();
        let mut codes: Vec<u16> = errors.iter().filter_map(|c| c.status()).collect();
        codes.sort_unstable();
        codes.dedup();
        let codes = crate::verdict::list(&codes.iter().map(|c| status(*c)).collect::<Vec<_>>());
        let severity = match (all, range.start) {
            (true, 500) => Severity::Critical,
            _ => Severity::Warning,
        };
        let title = if all {
            format!("Every answer was an HTTP {what} ({codes})")
        } else {
            format!("Some answers were HTTP {what}s ({codes})")
        };
        let which: Vec<String> = errors
            .iter()
            .map(|c| label(c.protocol, c.first()))
            .collect();
        out.push(finding(
            id,
            severity,
            title,
            Evidence {
                protocol: first.protocol,
                attempt: Some(first.attempt()),
                phase: None,
                duration: None,
                detail: format!(
                    "{} of {} answered attempt(s) got {codes} ({}) from {}.",
                    errors.len(),
                    answered.len(),
                    which.join(", "),
                    first.last().url
                ),
            },
            format!(
                "{next} See the answer with `curl -sS -o /dev/null -w '%{{http_code}}\\n' {}`.",
                shell_quote(&first.last().url)
            ),
        ));
    }
}

/// A redirect answer that was not followed (`redirect_not_followed`), or the
/// time followed redirects cost (`redirect_cost`).
pub(super) fn redirects(result: &ProbeResult, out: &mut Vec<Finding>) {
    let all: Vec<Chain> = result.runs.iter().flat_map(chains).collect();
    let unfollowed = all.iter().find_map(|c| {
        let r = c.response().filter(|r| (300..400).contains(&r.status))?;
        c.answered().then_some((c, r.status, r.header("location")?))
    });
    if let Some((c, code, location)) = unfollowed {
        out.push(finding(
            "redirect_not_followed",
            Severity::Warning,
            format!("The URL redirects ({}) and the redirect was not followed", status(code)),
            Evidence {
                protocol: c.protocol,
                attempt: Some(c.attempt()),
                phase: None,
                duration: Some(c.total()),
                detail: format!(
                    "{} answered {} pointing to {location}: these times measure the redirect, not the page.",
                    label(c.protocol, c.first()),
                    status(code)
                ),
            },
            format!(
                "Follow redirects (the form's \"Follow redirects\" option, `h123 probe -L`) to time \
                 the whole chain, or probe {location} directly."
            ),
        ));
        return;
    }
    let followed: Vec<&Chain> = all.iter().filter(|c| c.redirects() > 0).collect();
    let Some(worst) = followed
        .iter()
        .max_by_key(|c| c.redirect_time().unwrap_or_default())
    else {
        return;
    };
    let cost = worst.redirect_time().unwrap_or_default();
    let hops = worst.redirects();
    out.push(finding(
        "redirect_cost",
        Severity::Info,
        format!(
            "{hops} redirect{} cost {} before the final answer",
            if hops == 1 { "" } else { "s" },
            ms(cost)
        ),
        Evidence {
            protocol: worst.protocol,
            attempt: Some(worst.attempt()),
            phase: None,
            duration: Some(cost),
            detail: format!(
                "{} went from {} to {} in {hops} hop(s): {} of its {} total went to the redirects.",
                label(worst.protocol, worst.first()),
                worst.first().url,
                worst.last().url,
                ms(cost),
                ms(worst.total())
            ),
        },
        format!(
            "Link to the final URL ({}) where you can; each redirect costs at least a round trip, and \
             one to another host a new connection. See the chain with `curl -sIL {}`.",
            worst.last().url,
            shell_quote(&worst.first().url)
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::fixture::{fresh, result, reused, run};

    fn answer(mut a: Attempt, code: u16, location: Option<&str>) -> Attempt {
        a.response.as_mut().unwrap().status = code;
        if let Some(l) = location {
            header(&mut a, "location", l);
        }
        a
    }

    #[test]
    fn a_502_everywhere_is_critical_and_nothing_else_is_said() {
        let f = diagnose(&result(vec![
            run(
                Protocol::H1,
                vec![
                    answer(fresh(1, 0, 1_000, 1_000, 300_000), 502, None),
                    answer(reused(2, 300_000), 502, None),
                ],
            ),
            run(
                Protocol::H2,
                vec![answer(fresh(1, 0, 1_000, 1_000, 300_000), 502, None)],
            ),
        ]));
        assert_eq!(ids(&f), vec!["http_server_error"]);
        assert_eq!(f[0].severity, Severity::Critical);
        assert_eq!(
            f[0].title,
            "Every answer was an HTTP server error (502 Bad Gateway)"
        );
        assert!(
            f[0].evidence
                .detail
                .starts_with("3 of 3 answered attempt(s)")
        );
    }

    #[test]
    fn a_404_is_a_warning_beside_the_other_findings() {
        let f = diagnose(&result(vec![run(
            Protocol::H1,
            vec![
                fresh(1, 0, 1_000, 1_000, 1_000),
                answer(reused(2, 1_000), 404, None),
                answer(reused(3, 1_000), 404, None),
            ],
        )]));
        // One new connection is no sample for a reuse saving.
        assert_eq!(ids(&f), vec!["http_client_error"]);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(
            f[0].title,
            "Some answers were HTTP client errors (404 Not Found)"
        );
    }

    #[test]
    fn an_unfollowed_redirect_says_where_it_points() {
        let f = diagnose(&result(vec![run(
            Protocol::H2,
            vec![answer(
                fresh(1, 0, 1_000, 1_000, 1_000),
                302,
                Some("https://example.com/next"),
            )],
        )]));
        let r = find(&f, "redirect_not_followed");
        assert_eq!(
            r.title,
            "The URL redirects (302 Found) and the redirect was not followed"
        );
        assert!(r.evidence.detail.contains("https://example.com/next"));
        assert!(r.next_step.contains("h123 probe -L"));
    }

    #[test]
    fn followed_redirects_report_their_cost() {
        let mut hop1 = answer(reused(1, 10_000), 301, Some("/b"));
        hop1.hop = 1;
        hop1.url = "https://example.com/a".into();
        let mut hop2 = reused(1, 5_000);
        hop2.hop = 2;
        hop2.url = "https://example.com/b".into();
        let f = diagnose(&result(vec![run(
            Protocol::H1,
            vec![
                answer(fresh(1, 0, 1_000, 1_000, 20_000), 302, Some("/a")),
                hop1,
                hop2,
            ],
        )]));
        let r = find(&f, "redirect_cost");
        // Hop 0: 1000 + 1000 + 50 + 20000 + 500; hop 1: 50 + 10000 + 500.
        assert_eq!(r.evidence.duration, Some(Micros(22_550 + 10_550)));
        assert_eq!(r.title, "2 redirects cost 33.1 ms before the final answer");
        assert!(r.next_step.contains("https://example.com/b"));
        assert!(ids(&f).iter().all(|id| *id != "redirect_not_followed"));
    }
}
