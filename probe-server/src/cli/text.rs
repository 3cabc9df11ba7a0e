//! Text output for people, in the spirit of httpstat: a bar per attempt, a
//! comparison table, connection and TLS facts, and the findings.

use h123_shared::diagnosis::{self, Severity};
use h123_shared::format::ms;
use h123_shared::stats::{self, Metric};
use h123_shared::waterfall::{self, Row};
use h123_shared::{Attempt, ConnectionMode, H3Via, Phase, ProbeResult, ProtocolRun};
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
        ConnectionMode::Warm => "first connection reused",
        ConnectionMode::Cold => "new connection each time",
        ConnectionMode::Resumed => "new connection each time, resuming the TLS session",
    };
    let _ = writeln!(
        out,
        "{} {} · {} request(s) per protocol, {mode}{}",
        o.method.as_str(),
        o.url,
        o.repeat,
        if o.insecure {
            " · certificate NOT verified (-k)"
        } else {
            ""
        }
    );
    let layout = waterfall::layout(result);
    for run in &result.runs {
        out.push('\n');
        write_run(&mut out, run, &layout.rows, color);
    }
    out.push('\n');
    write_legend(&mut out, color);
    write_comparison(&mut out, result);
    write_findings(&mut out, result, color);
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
    for attempt in &run.attempts {
        let row = rows.iter().find(|r| {
            r.protocol == run.protocol && r.attempt == attempt.attempt && r.hop == attempt.hop
        });
        let bar = row.map(|r| draw_bar(r, color)).unwrap_or_default();
        let hop = if attempt.hop > 0 {
            format!(" hop {}", attempt.hop)
        } else {
            String::new()
        };
        let zero_rtt = attempt.quic.as_ref().and_then(|q| q.zero_rtt_accepted) == Some(true);
        let resumed = attempt.tls.as_ref().is_some_and(|t| t.resumed);
        let conn = match &attempt.connection {
            Some(c) if c.reused => "reused",
            Some(_) if zero_rtt => "0-RTT",
            Some(_) if resumed => "resumed",
            Some(_) => "new",
            None => "-",
        };
        let status = attempt
            .response
            .as_ref()
            .map(|r| r.status.to_string())
            .unwrap_or_else(|| "---".to_owned());
        let _ = writeln!(
            out,
            "  #{:<2}{hop:<6} {conn:<7} {bar} {:>9}  {status}",
            attempt.attempt,
            ms(attempt.phases.total.duration()),
        );
        let _ = writeln!(out, "        {}", phase_line(attempt));
        if let Some(f) = &attempt.failure {
            let text = format!(
                "failed in {}: {} ({:?})",
                f.phase.as_str(),
                f.message,
                f.kind
            );
            let _ = writeln!(out, "        {}", paint(&text, "31", color));
        }
    }
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
                leaf.subject, leaf.key_type, leaf.not_after, leaf.issuer
            ));
        }
    }
    facts.join(" · ")
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
    let all = stats::result_stats(result);
    let measured: Vec<_> = all.into_iter().filter(|s| s.attempts > s.failed).collect();
    if measured.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nmedian per phase (successful attempts)");
    let mut header = format!("  {:<9}", "");
    for s in &measured {
        let _ = write!(header, " {:>24}", s.protocol.as_str());
    }
    let _ = writeln!(out, "{header}");
    for row in stats::compare(&measured) {
        if row.metric == Metric::Ttfb {
            continue;
        }
        let mut line = format!("  {:<9}", row.metric.as_str());
        for s in &measured {
            let cell = row.cells.iter().find(|c| c.protocol == s.protocol);
            let text = match cell {
                None => "-".to_owned(),
                Some(c) if c.protocol == row.fastest => format!("{} *", ms(c.median)),
                Some(c) => match c.diff_percent {
                    Some(pct) => format!("{} (+{:.0}%)", ms(c.median), pct),
                    None => ms(c.median),
                },
            };
            let _ = write!(line, " {text:>24}");
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "  * fastest; on loopback, protocol differences are small next to server time"
    );
}

fn write_findings(out: &mut String, result: &ProbeResult, color: bool) {
    let findings = diagnosis::diagnose(result);
    if findings.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nfindings");
    for f in findings {
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
        for attempt in &run.attempts {
            let _ = writeln!(
                out,
                "# {} attempt {} hop {}",
                run.protocol, attempt.attempt, attempt.hop
            );
            out.push_str(&h123_shared::curl::curl_format(attempt));
        }
    }
    out
}
