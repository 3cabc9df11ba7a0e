//! Text output for people, in the spirit of httpstat: a bar per attempt, a
//! comparison table, connection and TLS facts, and the findings.

use h123_shared::analysis::{self, Analysis, Outcome};
use h123_shared::chain::chains;
use h123_shared::diagnosis::Severity;
use h123_shared::format::ms;
use h123_shared::waterfall::{self, Row};
use h123_shared::{Attempt, ConnectionMode, H3Via, Phase, ProbeResult, ProtocolRun};
use h123_shared::{table, transport};
use std::fmt::Write;

/// Characters of the widest bar (the longest attempt).
const BAR_WIDTH: usize = 48;

/// Whether to colour the output: not when NO_COLOR is set or stdout is not a terminal.
pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// How a phase is drawn: a letter without colour, a coloured block with it.
fn glyph(phase: Phase, color: bool) -> (char, &'static str) {
    let letter = phase.as_str().chars().next().unwrap_or('?');
    let ansi = match phase {
        Phase::Dns => "36",
        Phase::Connect => "33",
        Phase::Proxy => "96",
        Phase::Tls => "35",
        Phase::Quic => "95",
        Phase::Send => "32",
        Phase::Wait => "34",
        Phase::Receive => "37",
    };
    if color { ('█', ansi) } else { (letter, "") }
}

fn paint(text: &str, ansi: &str, color: bool) -> String {
    if color && !ansi.is_empty() {
        format!("\x1b[{ansi}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// The human report.
pub fn report(result: &ProbeResult, color: bool) -> String {
    let mut out = String::new();
    let o = &result.options;
    let mode = match o.mode {
        ConnectionMode::Warm => "each round's connection reused",
        ConnectionMode::Cold => "new connection each time",
        ConnectionMode::Resumed => "new connection each time, resuming the TLS session",
    };
    let _ = writeln!(
        out,
        "{} {} · {} round(s) of {} request(s) per protocol, {mode}{}",
        o.method.as_str(),
        o.url,
        o.rounds,
        o.repeat,
        if o.insecure {
            " · certificate NOT verified (-k)"
        } else {
            ""
        }
    );
    let network = h123_shared::network::lines(result);
    for line in network.iter().chain(&h123_shared::migration::lines(result)) {
        let _ = writeln!(out, "{line}");
    }
    write_streams(&mut out, result, color);
    let analysis = analysis::of(result);
    write_verdict(&mut out, &analysis, color);
    let layout = waterfall::layout(result);
    for run in &result.runs {
        out.push('\n');
        write_run(&mut out, run, &layout.rows, color);
    }
    out.push('\n');
    write_legend(&mut out, color);
    write_comparison(&mut out, result);
    write_findings(&mut out, &analysis, color);
    out
}

fn write_run(out: &mut String, run: &ProtocolRun, rows: &[Row], color: bool) {
    let _ = writeln!(out, "{}", paint(run.protocol.http_version(), "1", color));
    if let Some(d) = &run.discovery {
        let via = match d.via {
            Some(H3Via::AltSvc) => "Alt-Svc",
            Some(H3Via::HttpsRecord) => "HTTPS DNS record",
            Some(H3Via::Direct) => "direct attempt",
            None => "nothing",
        };
        let outcome = serde_json::to_value(d.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  discovery: via {via} · outcome {outcome} · {}",
            d.detail
        );
    }
    if let Some(reason) = &run.skipped {
        if run.discovery.is_none() {
            let _ = writeln!(out, "  skipped: {reason}");
        }
        return;
    }
    if let Some(first) = run.attempts.iter().find(|a| a.connection.is_some()) {
        let _ = writeln!(out, "  {}", connection_facts(first));
    }
    write_transport(out, run);
    for chain in chains(run) {
        let row = rows
            .iter()
            .find(|r| r.protocol == run.protocol && r.attempt == chain.attempt());
        let bar = row.map(|r| draw_bar(r, color)).unwrap_or_default();
        let conn = match &chain.first().connection {
            None => "-",
            Some(_) if row.is_some_and(|r| r.zero_rtt) => "0-RTT",
            Some(_) => chain.state().label().split(' ').next().unwrap_or("-"),
        };
        let status = chain
            .status()
            .map(|s| s.to_string())
            .unwrap_or_else(|| "---".to_owned());
        let _ = writeln!(
            out,
            "  #{:<2} {conn:<8} {bar} {:>9}  {status}",
            chain.attempt(),
            ms(chain.total()),
        );
        for &(attempt, start) in &chain.hops {
            if chain.redirects() > 0 {
                let _ = writeln!(
                    out,
                    "        hop {} at {}: {}",
                    attempt.hop,
                    ms(start),
                    attempt.url
                );
            }
            let _ = writeln!(out, "        {}", phase_line(attempt));
            if let Some(f) = &attempt.failure {
                let text = format!(
                    "failed in {}: {} ({})",
                    f.phase.as_str(),
                    f.message,
                    f.kind.as_str()
                );
                let _ = writeln!(out, "        {}", paint(&text, "31", color));
            }
        }
        if let Some(cost) = chain.redirect_time() {
            let _ = writeln!(
                out,
                "        {} redirect(s) took {} of the {} total",
                chain.redirects(),
                ms(cost),
                ms(chain.total())
            );
        }
    }
    if let Some(why) = &run.stopped {
        let _ = writeln!(out, "  stopped: {why}");
    }
    super::address_text::write_addresses(out, run);
}

fn draw_bar(row: &Row, color: bool) -> String {
    let parts = waterfall::text_bar(row, BAR_WIDTH);
    let used: usize = parts.iter().map(|(_, n)| n).sum();
    let mut bar = String::from("|");
    for (phase, n) in parts {
        let (ch, ansi) = glyph(phase, color);
        bar.push_str(&paint(&ch.to_string().repeat(n), ansi, color));
    }
    bar.push_str(&" ".repeat(BAR_WIDTH.saturating_sub(used)));
    bar.push('|');
    bar
}

fn phase_line(attempt: &Attempt) -> String {
    attempt
        .phases
        .present()
        .map(|(phase, span)| format!("{} {}", phase.as_str(), ms(span.duration())))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The kernel's TCP facts or QUIC's path statistics, a line per
/// connection (named when there are several).
fn write_transport(out: &mut String, run: &ProtocolRun) {
    let lines = transport::lines(run);
    let several = lines.len() > 1;
    for line in lines {
        if several {
            let _ = writeln!(out, "  conn {}: {}", line.connection, line.text);
        } else {
            let _ = writeln!(out, "  {}", line.text);
        }
    }
}

fn connection_facts(attempt: &Attempt) -> String {
    let mut facts = Vec::new();
    if let Some(c) = &attempt.connection {
        facts.push(format!("remote {}", c.remote_addr));
    }
    if let Some(dns) = &attempt.dns {
        facts.push(format!("dns {} ({})", dns.addresses.join(", "), dns.source));
    }
    if let Some(quic) = &attempt.quic {
        facts.push(format!("QUIC rtt {}", ms(quic.rtt_us)));
    }
    if let Some(tls) = &attempt.tls {
        facts.push(format!("{} {}", tls.version, tls.cipher));
        if let Some(alpn) = &tls.alpn {
            facts.push(format!("ALPN {alpn}"));
        }
        if tls.resumed {
            facts.push("session resumed".to_owned());
        }
        if let Some(leaf) = tls.certificates.first() {
            facts.push(format!(
                "cert {} ({}, until {}, issuer {})",
                leaf.holder(),
                leaf.key_type,
                leaf.not_after,
                leaf.issuer
            ));
        }
    }
    facts.join(" · ")
}

/// The requests at once: what was sent, then per protocol a bar per
/// request on one time axis (wait as the wait glyph, then the transfer).
fn write_streams(out: &mut String, result: &ProbeResult, color: bool) {
    let lines = h123_shared::streams::lines(result);
    let Some((head, described)) = lines.split_first() else {
        return;
    };
    let _ = writeln!(out, "{head}");
    let (end, groups) = h123_shared::streams::layout(result);
    let (wait, wait_ansi) = glyph(Phase::Wait, color);
    let (receive, receive_ansi) = glyph(Phase::Receive, color);
    let cells = |fraction: f64| (fraction * BAR_WIDTH as f64).round() as usize;
    for (line, (_, bars)) in described.iter().zip(&groups) {
        let _ = writeln!(out, "  {line}");
        for bar in bars {
            let first = cells(bar.first_byte.unwrap_or(bar.done));
            let done = cells(bar.done).max(first).max(1);
            let _ = writeln!(
                out,
                "    {}{}{}  {}",
                paint(&wait.to_string().repeat(first), wait_ansi, color),
                paint(
                    &receive.to_string().repeat(done - first),
                    receive_ansi,
                    color
                ),
                " ".repeat(BAR_WIDTH.saturating_sub(done)),
                bar.label
            );
        }
    }
    let _ = writeln!(out, "  (the bars span 0 to {})", ms(end));
}

fn write_legend(out: &mut String, color: bool) {
    let items: Vec<String> = Phase::ALL
        .iter()
        .map(|&p| {
            let (ch, ansi) = glyph(p, color);
            format!("{} {}", paint(&ch.to_string(), ansi, color), p.as_str())
        })
        .collect();
    let _ = writeln!(out, "legend: {}", items.join("  "));
}

fn write_comparison(out: &mut String, result: &ProbeResult) {
    let table = table::comparison_table(result);
    if table.sections.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nmedian per phase (successful attempts, by connection state)"
    );
    let mut header = format!("  {:<9}", "");
    for column in &table.columns {
        let _ = write!(header, " {:>22}", column.protocol.as_str());
    }
    let _ = writeln!(out, "{header}");
    for section in &table.sections {
        let _ = writeln!(out, "  {}", section.state.label());
        for row in &section.rows {
            let mut line = format!("  {:<9}", row.metric.as_str());
            for (cell, column) in row.cells.iter().zip(&table.columns) {
                let text = match (cell, &column.unmeasured) {
                    (None, Some(_)) => "n/a".to_owned(),
                    (None, None) => "-".to_owned(),
                    (Some(c), _) if c.fastest => format!("{} *", ms(c.median)),
                    (Some(c), _) => match c.diff_ms {
                        Some(d) => format!("{} (+{d:.2} ms)", ms(c.median)),
                        None => ms(c.median),
                    },
                };
                let _ = write!(line, " {text:>22}");
            }
            let _ = writeln!(out, "{line}");
        }
    }
    for column in &table.columns {
        if let Some(why) = &column.unmeasured {
            let _ = writeln!(out, "  n/a {}: {why}", column.protocol.as_str());
        }
    }
    let _ = writeln!(
        out,
        "  * faster beyond the noise; no mark means the difference is within it"
    );
}

fn write_findings(out: &mut String, analysis: &Analysis, color: bool) {
    if analysis.findings.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nfindings");
    for f in &analysis.findings {
        let (label, ansi) = match f.severity {
            Severity::Critical => ("critical", "31;1"),
            Severity::Warning => ("warning", "33"),
            Severity::Info => ("info", "36"),
        };
        let _ = writeln!(
            out,
            "  {} {}",
            paint(&format!("[{label}]"), ansi, color),
            f.title
        );
        let _ = writeln!(out, "      {}", f.evidence.detail);
        let _ = writeln!(out, "      next: {}", f.next_step);
    }
}

/// The outcome and the verdict, first thing after the request line.
fn write_verdict(out: &mut String, analysis: &Analysis, color: bool) {
    let ansi = match analysis.outcome {
        Outcome::Done => "32",
        Outcome::DoneWithErrors => "33",
        Outcome::Failed => "31;1",
    };
    // The headline starts with the label, which is painted.
    let label = analysis.outcome.label();
    let rest = analysis.headline.strip_prefix(label).unwrap_or_default();
    let _ = writeln!(out, "{}{rest}", paint(label, ansi, color));
    let _ = writeln!(
        out,
        "verdict: {}",
        paint(&analysis.verdict.summary, "1", color)
    );
}

/// The arm comparison: per protocol and arm, what attempts 2..N spent on
/// connection setup and in all.
pub fn arms_report(rows: &[h123_shared::arms::ArmRow]) -> String {
    let mut out = String::from(
        "connection arms: median of attempts 2..N (attempt 1 opens the first connection alike)\n",
    );
    let _ = writeln!(
        out,
        "  {:<6}{:<9}{:>10}{:>12}{:>10}{:>8}",
        "proto", "arm", "setup", "total", "resumed", "0-RTT"
    );
    let show = |v: Option<h123_shared::Micros>| v.map(ms).unwrap_or_else(|| "-".to_owned());
    for row in rows {
        let _ = writeln!(
            out,
            "  {:<6}{:<9}{:>10}{:>12}{:>7}/{:<2}{:>5}/{:<2}",
            row.protocol.as_str(),
            row.arm.as_str(),
            show(row.setup_median),
            show(row.total_median),
            row.resumed,
            row.attempts,
            row.zero_rtt,
            row.attempts,
        );
    }
    out.push_str(
        "  setup = connect + tls, or quic; warm reuses the connection, so its setup is 0\n",
    );
    out
}

/// curl `-w` figures per attempt, in curl's own variable names.
pub fn curl_report(result: &ProbeResult) -> String {
    let mut out = String::new();
    for run in &result.runs {
        for chain in chains(run) {
            let _ = writeln!(
                out,
                "# {} attempt {}: {}",
                run.protocol,
                chain.attempt(),
                h123_shared::curl::chain_heading(&chain)
            );
            out.push_str(&h123_shared::curl::curl_format(&chain));
        }
    }
    out
}

/// `h123 probe --from`: each vantage's report under its name, then the
/// vantage x protocol matrix (median totals; `*` where that vantage's verdict
/// calls the protocol faster beyond the noise) and the cross-vantage findings.
pub fn vantages_report(runs: &[h123_shared::vantage::VantageRun], color: bool) -> String {
    use h123_shared::chain::ConnState;
    let mut out = String::new();
    for run in runs {
        let _ = writeln!(out, "=== from {} ===", run.vantage.shown());
        match &run.result {
            Some(result) => out.push_str(&report(result, color)),
            None => {
                let why = run.problem.as_deref().unwrap_or("it did not run the probe");
                let _ = writeln!(out, "no result: {why}");
            }
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "=== across vantages: median total, new / reused connection (* faster beyond the noise) ==="
    );
    for row in h123_shared::vantage::matrix(runs) {
        let _ = write!(out, "{:<16}", row.vantage.shown());
        if let Some(problem) = &row.problem {
            let _ = writeln!(out, "  {problem}");
            continue;
        }
        let mut protocols: Vec<_> = row.cells.iter().map(|c| c.protocol).collect();
        protocols.dedup();
        for protocol in protocols {
            let cell = |state: ConnState| {
                row.cells
                    .iter()
                    .find(|c| c.protocol == protocol && c.state == state)
                    .map_or_else(
                        || "-".to_owned(),
                        |c| {
                            let total = c.total.map_or_else(|| "-".to_owned(), ms);
                            if c.faster { format!("{total}*") } else { total }
                        },
                    )
            };
            let _ = write!(
                out,
                "  {}: {} / {}",
                protocol.as_str(),
                cell(ConnState::New),
                cell(ConnState::Reused)
            );
        }
        out.push('\n');
    }
    for finding in h123_shared::vantage::findings(runs) {
        let _ = writeln!(out, "- {}", finding.title);
    }
    out
}
