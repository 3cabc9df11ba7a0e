//! Connection, transport (TCP_INFO, QUIC path) and TLS facts per protocol, what happened with
//! HTTP/3, and the address table of `--all-addresses`.

use h123_shared::addresses::rows;
use h123_shared::chain::{ConnState, chains};
use h123_shared::format::ms;
use h123_shared::transport;
use h123_shared::{Attempt, H3Discovery, H3Via, Micros, ProbeResult, Protocol, ProtocolRun};
use leptos::prelude::*;

/// Label/value pairs describing a run's first connection.
fn run_facts(run: &ProtocolRun) -> Vec<(&'static str, String)> {
    let Some(a) = run
        .attempts
        .iter()
        .find(|a| a.connection.as_ref().is_some_and(|c| !c.reused))
        .or_else(|| run.attempts.first())
    else {
        return Vec::new();
    };
    let mut facts = Vec::new();
    if let Some(dns) = &a.dns {
        facts.push((
            "DNS",
            format!("{} ({})", dns.addresses.join(", "), dns.source),
        ));
    }
    if let Some(c) = &a.connection {
        facts.push(("Remote", c.remote_addr.clone()));
    }
    if let Some(tls) = &a.tls {
        facts.push(("TLS", format!("{} · {}", tls.version, tls.cipher)));
        facts.push(("ALPN", tls.alpn.clone().unwrap_or_else(|| "none".into())));
        facts.push((
            "Session",
            if tls.resumed {
                "resumed"
            } else {
                "full handshake"
            }
            .into(),
        ));
        facts.push((
            "Certificate",
            if tls.verified {
                "verified"
            } else {
                "not verified (insecure)"
            }
            .into(),
        ));
        if let Some(leaf) = tls.certificates.first() {
            // Many certificates name their hosts only in the SAN extension, with an empty subject.
            if !leaf.subject.is_empty() {
                facts.push(("Subject", leaf.subject.clone()));
            }
            if !leaf.sans.is_empty() {
                facts.push(("Names (SAN)", leaf.sans.join(", ")));
            }
            facts.push(("Issuer", leaf.issuer.clone()));
            facts.push(("Valid until", leaf.not_after.clone()));
            facts.push(("Key", leaf.key_type.clone()));
        }
    }
    // The kernel's TCP facts or QUIC's path statistics, per connection.
    let transport = transport::lines(run);
    let several = transport.len() > 1;
    for line in transport {
        let text = if several {
            format!("connection {}: {}", line.connection, line.text)
        } else {
            line.text
        };
        facts.push(("Transport", text));
    }
    let later: Vec<ConnState> = chains(run).iter().skip(1).map(|c| c.state()).collect();
    let resumed = later.iter().filter(|s| **s == ConnState::Resumed).count();
    if resumed > 0 {
        let zero_rtt = run
            .attempts
            .iter()
            .filter(|a| a.quic.as_ref().and_then(|q| q.zero_rtt_accepted) == Some(true))
            .count();
        facts.push((
            "Resumption",
            format!(
                "{resumed} of {} later connection(s) resumed the session{}",
                later.len(),
                if zero_rtt > 0 {
                    format!(", {zero_rtt} with 0-RTT")
                } else {
                    String::new()
                }
            ),
        ));
    }
    let chain = chains(run).into_iter().find(|c| std::ptr::eq(c.first(), a));
    let redirects = chain.as_ref().map_or(0, |c| c.redirects());
    if let Some(r) = chain
        .as_ref()
        .and_then(|c| c.response())
        .or(a.response.as_ref())
    {
        let via = if redirects > 0 {
            format!(" · final, after {redirects} redirect(s)")
        } else {
            String::new()
        };
        let cut = if r.truncated {
            ", cut at the size cap"
        } else {
            ""
        };
        facts.push((
            "Response",
            format!(
                "{} {} · {} body bytes{cut}{via}",
                r.http_version,
                h123_shared::format::status(r.status),
                r.body_bytes
            ),
        ));
    }
    if let Some(f) = &a.failure {
        facts.push((
            "Failure",
            format!("{} in {}: {}", kind(f), f.phase.as_str(), f.message),
        ));
    }
    facts
}

/// A failure kind as words.
fn kind(failure: &h123_shared::Failure) -> String {
    failure.kind.as_str().replace('_', " ")
}

/// The engine's HTTP/3 discovery, as label/value pairs.
fn discovery_facts(d: &H3Discovery) -> Vec<(&'static str, String)> {
    let mut ads: Vec<String> = d
        .alt_svc
        .iter()
        .map(|a| {
            let host = a.host.clone().unwrap_or_default();
            format!(
                "Alt-Svc {}={host}:{} (max age {} s)",
                a.protocol, a.port, a.max_age_s
            )
        })
        .collect();
    if let Some(r) = &d.https_record {
        ads.push(format!("HTTPS DNS record (alpn {})", r.alpn.join(",")));
    }
    let advertised = if ads.is_empty() {
        "not advertised".to_string()
    } else {
        ads.join("; ")
    };
    let endpoint = d.endpoint.clone().unwrap_or_default();
    let tried = match d.via {
        Some(H3Via::AltSvc) => format!("{endpoint}, from Alt-Svc"),
        Some(H3Via::HttpsRecord) => format!("{endpoint}, from the HTTPS record"),
        Some(H3Via::Direct) => format!("{endpoint}, directly"),
        None => "not tried".into(),
    };
    let mut facts = vec![
        ("Advertised", advertised),
        ("Tried", tried),
        ("Outcome", d.detail.clone()),
    ];
    if let Some(note) = &d.https_lookup {
        facts.push(("HTTPS record", note.clone()));
    }
    facts
}

/// How HTTP/3 was found and how trying it went: the engine's discovery when
/// the result has it, else what the responses and the h3 run show.
fn h3_status(result: &ProbeResult) -> Vec<(&'static str, String)> {
    if let Some(d) = result
        .runs
        .iter()
        .find(|r| r.protocol == Protocol::H3)
        .and_then(|r| r.discovery.as_ref())
    {
        return discovery_facts(d);
    }
    let advertised = result
        .runs
        .iter()
        .filter(|r| r.protocol != Protocol::H3)
        .flat_map(|r| &r.attempts)
        .filter_map(|a| a.response.as_ref()?.header("alt-svc"))
        .find(|v| v.contains("h3"));
    let mut facts = vec![(
        "Advertised",
        match advertised {
            Some(v) => format!("yes, Alt-Svc: {v}"),
            None => "no Alt-Svc h3 in the HTTP/1.1 or HTTP/2 responses".into(),
        },
    )];
    let run = result.runs.iter().find(|r| r.protocol == Protocol::H3);
    let outcome = match run {
        None => "not tried (HTTP/3 was not selected)".to_string(),
        Some(r) => match (&r.skipped, r.attempts.first()) {
            (Some(reason), _) => format!("not tried: {reason}"),
            (None, None) => "no attempt yet".into(),
            (None, Some(a)) => attempt_outcome(a),
        },
    };
    facts.push(("Outcome", outcome));
    facts
}

/// Whether an HTTP/3 attempt worked, in words.
fn attempt_outcome(a: &Attempt) -> String {
    match &a.failure {
        Some(f) => format!(
            "tried directly, failed in {}: {}",
            f.phase.as_str(),
            f.message
        ),
        None => format!(
            "tried directly, worked ({} total)",
            ms(a.phases.total.duration())
        ),
    }
}

/// A definition list of facts.
fn fact_list(facts: Vec<(&'static str, String)>) -> impl IntoView + use<> {
    let items = facts
        .into_iter()
        .map(|(label, value)| view! { <dt>{label}</dt><dd>{value}</dd> })
        .collect_view();
    view! { <dl class="facts">{items}</dl> }
}

/// The cards: one per protocol that ran, then HTTP/3 discovery.
pub fn facts(result: &ProbeResult) -> impl IntoView + use<> {
    let cards = result
        .runs
        .iter()
        .filter(|run| !run.attempts.is_empty())
        .map(|run| {
            view! {
                <article class="card">
                    <h3>{run.protocol.http_version()}</h3>
                    {fact_list(run_facts(run))}
                    {address_table(run)}
                </article>
            }
        })
        .collect_view();
    view! {
        <h2 id="facts-title">"Connection facts"</h2>
        <div class="fact-cards">
            {cards}
            <article class="card h3-status">
                <h3>"HTTP/3 discovery"</h3>
                {fact_list(h3_status(result))}
            </article>
        </div>
    }
}

/// One row's cells: address, family, connect, handshake, ttfb, total, failed.
fn cells(run: &ProtocolRun) -> Vec<[String; 7]> {
    let cell = |v: Option<Micros>| v.map_or_else(|| "–".to_owned(), ms);
    rows(run)
        .iter()
        .map(|row| {
            let f = row.figures(run.protocol);
            let failed = match &f.first_failure {
                Some(first) => format!(
                    "{} of {} ({} in {})",
                    f.failures,
                    f.chains,
                    first.kind.as_str(),
                    first.phase.as_str()
                ),
                None => format!("0 of {}", f.chains),
            };
            [
                row.shown(),
                row.family.name().to_owned(),
                cell(f.connect),
                cell(f.handshake),
                cell(f.ttfb),
                cell(f.total),
                failed,
            ]
        })
        .collect()
}

/// The address table of `run`; nothing when it probed one address.
fn address_table(run: &ProtocolRun) -> Option<impl IntoView + use<>> {
    let rows = cells(run);
    if rows.is_empty() {
        return None;
    }
    let handshake = if run.protocol == Protocol::H3 {
        "QUIC"
    } else {
        "TLS"
    };
    let body = rows
        .into_iter()
        .map(|[address, cells @ ..]| {
            let cells = cells
                .into_iter()
                .map(|cell| view! { <td>{cell}</td> })
                .collect_view();
            view! { <tr><th scope="row">{address}</th>{cells}</tr> }
        })
        .collect_view();
    Some(view! {
        <div class="table-scroll addresses">
            <table>
                <caption>{format!("Addresses (medians; connect and {handshake} over new connections)")}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Address"</th>
                        <th scope="col">"Family"</th>
                        <th scope="col">"Connect"</th>
                        <th scope="col">{handshake}</th>
                        <th scope="col">"TTFB"</th>
                        <th scope="col">"Total"</th>
                        <th scope="col">"Failed"</th>
                    </tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    })
}
