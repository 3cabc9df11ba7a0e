//! The curl `-w` mapping: an attempt's phases as curl's cumulative timers, and the equivalent curl command.
//!
//! curl's timers are cumulative offsets from the start of the transfer, in
//! seconds, and a timer that was never reached reads 0. With `--format curl`
//! people can put h123's figures next to `curl -w` on the same target.
//!
//! Redirect chains map as curl maps them with `-L`: every timer but the total
//! is the sum of that timer over the hops (curl adds each transfer's figure),
//! `time_redirect` is the time before the final hop started, and `time_total`
//! the whole chain. Known difference: for HTTP/3 curl sets `time_connect` when the first QUIC
//! packet arrives from the server, which h123 does not record; here it falls
//! back to `time_namelookup`, as for any attempt without a TCP connect.

use crate::chain::Chain;
use crate::schema::{Attempt, ConnectionMode, Method, ProbeOptions, Protocol};
use crate::uri;
use serde::{Deserialize, Serialize};

/// curl's `-w` timers for one attempt, in seconds from the attempt's start.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CurlTimings {
    /// End of name lookup; 0 when there was none.
    pub time_namelookup: f64,
    /// End of TCP connect; `time_namelookup` without a connect, 0 on a reused connection.
    pub time_connect: f64,
    /// End of the TLS (or, for HTTP/3, QUIC) handshake; 0 without one or on a reused connection.
    pub time_appconnect: f64,
    /// Start of sending the request.
    pub time_pretransfer: f64,
    /// First response byte.
    pub time_starttransfer: f64,
    /// End of the attempt (the whole redirect chain).
    pub time_total: f64,
    /// Time before the final hop of a redirect chain started; 0 without redirects.
    pub time_redirect: f64,
}

impl CurlTimings {
    /// Maps an attempt's phases onto curl's timers.
    pub fn from_attempt(attempt: &Attempt) -> CurlTimings {
        let p = &attempt.phases;
        let end = |span: Option<crate::schema::Span>| span.map_or(0.0, |s| s.end_us.as_secs());
        let reused = attempt.connection.as_ref().is_some_and(|c| c.reused);
        let namelookup = end(p.dns);
        let (connect, appconnect) = if reused {
            (0.0, 0.0)
        } else {
            (
                p.connect.map_or(namelookup, |s| s.end_us.as_secs()),
                end(p.tls.or(p.quic)),
            )
        };
        CurlTimings {
            time_namelookup: namelookup,
            time_connect: connect,
            time_appconnect: appconnect,
            time_pretransfer: p.send.map_or(0.0, |s| s.start_us.as_secs()),
            time_starttransfer: end(p.wait),
            time_total: p.total.end_us.as_secs(),
            time_redirect: 0.0,
        }
    }

    /// Maps a whole redirect chain as curl `-L` reports it.
    pub fn from_chain(chain: &Chain) -> CurlTimings {
        let mut sum = CurlTimings::default();
        for (attempt, _) in &chain.hops {
            let hop = CurlTimings::from_attempt(attempt);
            sum.time_namelookup += hop.time_namelookup;
            sum.time_connect += hop.time_connect;
            sum.time_appconnect += hop.time_appconnect;
            sum.time_pretransfer += hop.time_pretransfer;
            sum.time_starttransfer += hop.time_starttransfer;
        }
        sum.time_total = chain.total().as_secs();
        sum.time_redirect = chain.redirect_time().unwrap_or_default().as_secs();
        sum
    }

    /// The timers as (curl variable name, seconds), in curl's order.
    pub fn fields(&self) -> [(&'static str, f64); 7] {
        [
            ("time_namelookup", self.time_namelookup),
            ("time_connect", self.time_connect),
            ("time_appconnect", self.time_appconnect),
            ("time_pretransfer", self.time_pretransfer),
            ("time_starttransfer", self.time_starttransfer),
            ("time_redirect", self.time_redirect),
            ("time_total", self.time_total),
        ]
    }
}

/// The `-w` format string that makes curl print the lines [`curl_format`]
/// prints, so the two outputs can be diffed.
pub const WRITE_OUT: &str = "time_namelookup: %{time_namelookup}\\ntime_connect: %{time_connect}\\ntime_appconnect: %{time_appconnect}\\ntime_pretransfer: %{time_pretransfer}\\ntime_starttransfer: %{time_starttransfer}\\ntime_redirect: %{time_redirect}\\ntime_total: %{time_total}\\n";

/// An attempt's curl timers (its whole redirect chain) as `name: seconds`
/// lines with six decimals, as curl prints them (`time_namelookup: 0.000123`),
/// each ending in a newline.
pub fn curl_format(chain: &Chain) -> String {
    CurlTimings::from_chain(chain)
        .fields()
        .iter()
        .map(|(name, secs)| format!("{name}: {secs:.6}\n"))
        .collect()
}

/// What a chain requested: its URL, and with redirects where it ended.
pub fn chain_heading(chain: &Chain) -> String {
    match chain.redirects() {
        0 => chain.first().url.clone(),
        n => format!(
            "{} -> {} ({n} redirect{})",
            chain.first().url,
            chain.last().url,
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// The curl command line that makes the same requests as `options` do for
/// `protocol`, printing [`WRITE_OUT`] and discarding bodies.
///
/// HTTP/3 uses `--http3-only`, since h123 does not fall back to another
/// protocol either; HTTP/2 over `http://` uses prior knowledge. In warm mode
/// the URL is repeated `repeat` times, which makes curl reuse the connection as
/// h123 does; in cold mode it appears once (run the command `repeat` times).
/// Every argument that needs it is single-quoted for POSIX shells. A request
/// body is never kept, so the command says `--data-binary @-`: pipe the same
/// bytes into it (their `sha256` is in the options). A POST with a body
/// gets no `-X`, so that curl -L turns it into a GET after a 301, 302 or 303 as
/// h123 does (`-X POST` would make curl keep POST).
pub fn curl_command(options: &ProbeOptions, protocol: Protocol) -> String {
    let cleartext = uri::parse(&options.url).is_some_and(|u| u.scheme == "http");
    let mut args: Vec<String> = vec!["curl".into(), "-s".into()];
    args.push(
        match protocol {
            Protocol::H1 => "--http1.1",
            Protocol::H2 if cleartext => "--http2-prior-knowledge",
            Protocol::H2 => "--http2",
            Protocol::H3 => "--http3-only",
        }
        .into(),
    );
    match options.method {
        Method::Head => args.push("-I".into()),
        Method::Get => {}
        Method::Post if options.body.is_some() => {}
        other => args.extend(["-X".into(), other.as_str().into()]),
    }
    if let Some(body) = &options.body {
        // The body's bytes are never kept: the command reads them from standard input.
        if let Some(content_type) = &body.content_type {
            args.extend(["-H".into(), format!("content-type: {content_type}")]);
        }
        args.extend(["--data-binary".into(), "@-".into()]);
    }
    if options.insecure {
        args.push("-k".into());
    }
    if options.follow_redirects {
        args.extend([
            "-L".into(),
            "--max-redirs".into(),
            options.max_redirects.to_string(),
        ]);
    }
    for pin in &options.resolve {
        let addr = if pin.addr.contains(':') && !pin.addr.starts_with('[') {
            format!("[{}]", pin.addr)
        } else {
            pin.addr.clone()
        };
        args.extend([
            "--resolve".into(),
            format!("{}:{}:{addr}", pin.host, pin.port),
        ]);
    }
    if let Some(server) = &options.dns_server {
        args.extend(["--dns-servers".into(), server.clone()]);
    }
    for header in &options.headers {
        args.extend(["-H".into(), format!("{}: {}", header.name, header.value)]);
    }
    if options.timeout_ms > 0 {
        args.extend(["--max-time".into(), seconds(options.timeout_ms)]);
    }
    args.extend(["-w".into(), WRITE_OUT.into()]);
    let repeat = match options.mode {
        ConnectionMode::Warm => options.repeat.max(1),
        ConnectionMode::Cold | ConnectionMode::Resumed => 1,
    };
    for _ in 0..repeat {
        args.extend(["-o".into(), "/dev/null".into(), options.url.clone()]);
    }
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Quotes an argument for a POSIX shell: unchanged when it only holds safe
/// characters, otherwise in single quotes (an inner `'` becomes `'\''`).
pub fn shell_quote(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%_+=:,./-".contains(&b));
    if safe {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Milliseconds as curl's fractional seconds argument: `30`, `2.5`.
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{}", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{ConnectionInfo, Header, Micros, Phases, ResolveOverride, Span};

    fn span(start: u64, end: u64) -> Option<Span> {
        Some(Span {
            start_us: Micros(start),
            end_us: Micros(end),
        })
    }

    fn attempt(phases: Phases, reused: Option<bool>) -> Attempt {
        Attempt {
            phases,
            connection: reused.map(|reused| ConnectionInfo {
                id: 1,
                reused,
                was_idle: false,
                idle_us: None,
                request_index: 1,
                local_addr: None,
                remote_addr: "192.0.2.1:443".into(),
                proxy: None,
            }),
            ..Attempt::started(1, 0, "https://example.com/".into())
        }
    }

    fn https_phases() -> Phases {
        Phases {
            dns: span(0, 123),
            connect: span(130, 2_000),
            tls: span(2_000, 9_000),
            send: span(9_010, 9_050),
            wait: span(9_050, 50_000),
            receive: span(50_000, 60_000),
            total: span(0, 60_001).unwrap(),
            ..Phases::default()
        }
    }

    #[test]
    fn new_https_connection_maps_to_cumulative_timers() {
        let t = CurlTimings::from_attempt(&attempt(https_phases(), Some(false)));
        assert_eq!(t.time_namelookup, 0.000123);
        assert_eq!(t.time_connect, 0.002);
        assert_eq!(t.time_appconnect, 0.009);
        assert_eq!(t.time_pretransfer, 0.00901);
        assert_eq!(t.time_starttransfer, 0.05);
        assert_eq!(t.time_total, 0.060001);
        let run = crate::fixture::run(Protocol::H1, vec![attempt(https_phases(), Some(false))]);
        assert_eq!(
            curl_format(&crate::chain::chains(&run)[0]),
            "time_namelookup: 0.000123\ntime_connect: 0.002000\ntime_appconnect: 0.009000\n\
             time_pretransfer: 0.009010\ntime_starttransfer: 0.050000\ntime_redirect: 0.000000\n\
             time_total: 0.060001\n"
        );
    }

    #[test]
    fn a_redirect_chain_sums_timers_like_curl_dash_l() {
        let first = attempt(https_phases(), Some(false));
        let mut second = attempt(
            Phases {
                send: span(0, 10),
                wait: span(10, 1_000),
                receive: span(1_000, 2_000),
                total: span(0, 2_000).unwrap(),
                ..Phases::default()
            },
            Some(true),
        );
        second.hop = 1;
        second.chain_start_us = Some(Micros(60_100));
        let run = crate::fixture::run(Protocol::H1, vec![first, second]);
        let t = CurlTimings::from_chain(&crate::chain::chains(&run)[0]);
        assert_eq!(t.time_starttransfer, 0.05 + 0.001);
        assert_eq!(t.time_connect, 0.002, "the reused hop adds no connect");
        assert_eq!(t.time_redirect, 0.0601);
        assert_eq!(t.time_total, 0.0621);
    }

    #[test]
    fn missing_phases_read_like_curl() {
        // Plain http to an IP literal: no dns, no TLS.
        let phases = Phases {
            connect: span(5, 300),
            send: span(300, 310),
            wait: span(310, 1_000),
            receive: span(1_000, 1_100),
            total: span(0, 1_100).unwrap(),
            ..Phases::default()
        };
        let t = CurlTimings::from_attempt(&attempt(phases, None));
        assert_eq!(
            (t.time_namelookup, t.time_connect, t.time_appconnect),
            (0.0, 0.0003, 0.0)
        );

        // HTTP/3: QUIC end is appconnect; connect falls back to namelookup.
        let phases = Phases {
            dns: span(0, 50),
            quic: span(60, 4_000),
            send: span(4_000, 4_010),
            total: span(0, 9_000).unwrap(),
            ..Phases::default()
        };
        let t = CurlTimings::from_attempt(&attempt(phases, Some(false)));
        assert_eq!((t.time_connect, t.time_appconnect), (0.00005, 0.004));
        // Never reached: 0.
        assert_eq!(t.time_starttransfer, 0.0);
    }

    #[test]
    fn reused_connection_reports_zero_connect_and_appconnect() {
        let phases = Phases {
            send: span(3, 20),
            wait: span(20, 900),
            receive: span(900, 950),
            total: span(0, 950).unwrap(),
            ..Phases::default()
        };
        let t = CurlTimings::from_attempt(&attempt(phases, Some(true)));
        assert_eq!(
            (t.time_namelookup, t.time_connect, t.time_appconnect),
            (0.0, 0.0, 0.0)
        );
        assert_eq!(t.time_pretransfer, 0.000003);
        assert_eq!(t.time_starttransfer, 0.0009);
    }

    #[test]
    fn write_out_names_the_same_fields_in_the_same_order() {
        let names: Vec<&str> = CurlTimings::default()
            .fields()
            .iter()
            .map(|f| f.0)
            .collect();
        let from_format: Vec<&str> = WRITE_OUT
            .split("\\n")
            .filter(|l| !l.is_empty())
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(names, from_format);
        for name in names {
            assert!(WRITE_OUT.contains(&format!("%{{{name}}}")));
        }
    }

    #[test]
    fn command_for_default_options() {
        let options = ProbeOptions {
            url: "https://example.com/a?b=c&d".into(),
            repeat: 2,
            ..ProbeOptions::default()
        };
        let cmd = curl_command(&options, Protocol::H2);
        let url = "'https://example.com/a?b=c&d'";
        assert_eq!(
            cmd,
            format!(
                "curl -s --http2 --max-time 30 -w '{WRITE_OUT}' -o /dev/null {url} -o /dev/null {url}"
            )
        );
        assert!(curl_command(&options, Protocol::H1).contains(" --http1.1 "));
        assert!(curl_command(&options, Protocol::H3).contains(" --http3-only "));
    }

    #[test]
    fn command_carries_every_option() {
        let options = ProbeOptions {
            url: "http://example.com:8080/".into(),
            method: Method::Head,
            repeat: 5,
            mode: ConnectionMode::Cold,
            insecure: true,
            follow_redirects: true,
            max_redirects: 3,
            headers: vec![Header {
                name: "x-note".into(),
                value: "it's here".into(),
            }],
            resolve: vec![
                ResolveOverride {
                    host: "example.com".into(),
                    port: 8080,
                    addr: "192.0.2.7".into(),
                },
                ResolveOverride {
                    host: "example.com".into(),
                    port: 443,
                    addr: "2001:db8::1".into(),
                },
            ],
            dns_server: Some("192.0.2.53:5353".into()),
            timeout_ms: 2_500,
            ..ProbeOptions::default()
        };
        let cmd = curl_command(&options, Protocol::H2);
        assert!(
            cmd.starts_with("curl -s --http2-prior-knowledge -I -k -L --max-redirs 3 "),
            "{cmd}"
        );
        assert!(
            cmd.contains(" --resolve example.com:8080:192.0.2.7 "),
            "{cmd}"
        );
        assert!(
            cmd.contains(" --resolve 'example.com:443:[2001:db8::1]' "),
            "{cmd}"
        );
        assert!(cmd.contains(" --dns-servers 192.0.2.53:5353 "), "{cmd}");
        assert!(cmd.contains(r" -H 'x-note: it'\''s here' "), "{cmd}");
        assert!(cmd.contains(" --max-time 2.5 "), "{cmd}");
        // Cold mode: the URL once.
        assert_eq!(cmd.matches("http://example.com:8080/").count(), 1);
        assert!(
            cmd.ends_with(" -o /dev/null http://example.com:8080/"),
            "{cmd}"
        );
    }

    #[test]
    fn a_body_is_read_from_stdin_never_written_out() {
        let mut options = ProbeOptions {
            url: "https://example.com/up".into(),
            method: Method::Put,
            body: Some(crate::schema::RequestBody {
                content_type: Some("application/json".into()),
                size: Some(9),
                ..Default::default()
            }),
            ..ProbeOptions::default()
        };
        let cmd = curl_command(&options, Protocol::H1);
        assert!(
            cmd.contains(" -X PUT -H 'content-type: application/json' --data-binary @- "),
            "{cmd}"
        );
        options.method = Method::Post;
        let cmd = curl_command(&options, Protocol::H1);
        assert!(!cmd.contains(" -X "), "{cmd}");
        options.body = None;
        assert!(curl_command(&options, Protocol::H1).contains(" -X POST "));
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("plain-arg_1.0"), "plain-arg_1.0");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
