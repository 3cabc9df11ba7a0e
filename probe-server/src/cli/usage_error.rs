//! The command line's own mistakes in one line, as h123's other errors are:
//! clap's message, its list (missing arguments, possible values) and tips
//! joined, the usage block left out, the `--help` to try kept. Help and
//! version output are clap's, untouched.

use clap::error::ErrorKind;

/// Parses the command line: the arguments, or the exit code after saying
/// what is wrong in one line (help and version printed as clap prints them).
///
/// # Errors
/// The exit code to end with: 2 for a usage error, 0 after help or version.
pub fn parse<P: clap::Parser>() -> Result<P, std::process::ExitCode> {
    P::try_parse().map_err(|error| match error.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            std::process::ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
        }
        _ => {
            eprintln!("{}", one_line(&error.render().to_string()));
            std::process::ExitCode::from(2)
        }
    })
}

/// Clap's rendered error (`error: ...`, an indented list, `tip: ...`,
/// `Usage: ...`, `For more information, try '...'.`) as one line:
/// `h123: MESSAGE LIST (tip: ...; try '...')`.
pub fn one_line(rendered: &str) -> String {
    let mut message = String::new();
    let mut notes: Vec<String> = Vec::new();
    let mut more = None;
    let mut in_usage = false;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("For more information, try ") {
            more = Some(format!("try {}", rest.trim_end_matches('.')));
        } else if line.starts_with("Usage:") {
            in_usage = true;
        } else if let Some(tip) = line.strip_prefix("tip: ") {
            notes.push(format!("tip: {tip}"));
        } else if in_usage {
            continue;
        } else if message.is_empty() {
            message = line.strip_prefix("error: ").unwrap_or(line).to_owned();
        } else {
            let sep = if message.ends_with(':') { " " } else { ", " };
            message.push_str(sep);
            message.push_str(line);
        }
    }
    notes.extend(more);
    if notes.is_empty() {
        format!("h123: {message}")
    } else {
        format!("h123: {message} ({})", notes.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser as _;

    fn said(args: &[&str]) -> String {
        let error = Cli::try_parse_from(args).expect_err("a usage error");
        let rendered = error.render().to_string();
        assert!(
            rendered.lines().count() >= 2,
            "clap's own is several lines: {rendered}"
        );
        one_line(&rendered)
    }

    #[test]
    fn clap_errors_read_as_one_line() {
        let cases = [
            (
                vec!["h123", "probe", "--nope", "https://example.com/"],
                "h123: unexpected argument '--nope' found",
            ),
            (
                vec!["h123", "probe", "--repeat", "x", "https://example.com/"],
                "h123: invalid value 'x' for '--repeat",
            ),
            (
                vec!["h123", "agent", "--server", "http://a"],
                "h123: the following required arguments were not provided: --token <TOKEN>",
            ),
            (vec!["h123", "prob"], "h123: unrecognized subcommand 'prob'"),
        ];
        for (args, start) in cases {
            let line = said(&args);
            assert_eq!(line.lines().count(), 1, "{line}");
            assert!(line.starts_with(start), "{args:?}: {line}");
            assert!(line.contains("--help'"), "{line}");
            assert!(!line.contains("Usage:"), "{line}");
        }
        assert!(said(&["h123", "prob"]).contains("tip: a similar subcommand exists: 'probe'"));
    }

    #[test]
    fn help_and_version_stay_clap_s() {
        for args in [["h123", "--help"], ["h123", "--version"]] {
            let error = Cli::try_parse_from(args).expect_err("not a run");
            assert!(matches!(
                error.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ));
        }
    }
}
