//! The README and the guides in `docs/` say only what exists: every `h123` command line in their
//! code blocks names real subcommands and flags, every link and anchor leads somewhere, and the
//! API guide's route table is the server's route table, no more and no less.

use clap::CommandFactory;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The README and every guide, as (path from the workspace, text).
fn pages() -> Vec<(String, String)> {
    let mut names = vec!["README.md".to_owned()];
    let mut guides: Vec<String> = std::fs::read_dir(workspace().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    guides.sort();
    names.extend(guides);
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(workspace().join(&name)).expect("readable page");
            (name, text)
        })
        .collect()
}

/// The command lines in a page's code blocks: a line naming `h123`, with its continuation lines
/// (a shell line ending in `\`, or a synopsis line starting with `[`) joined to it.
fn command_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_block = false;
    let mut continues = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continues = false;
            continue;
        }
        if !in_block {
            continue;
        }
        let trimmed = line.trim();
        let continuation = continues || (trimmed.starts_with('[') && !lines.is_empty());
        if continuation && let Some(last) = lines.last_mut() {
            let last: &mut String = last;
            last.push(' ');
            last.push_str(trimmed.trim_end_matches('\\'));
        } else if trimmed.contains("h123 ") && !trimmed.starts_with('#') {
            lines.push(trimmed.trim_end_matches('\\').to_owned());
        } else {
            continues = false;
            continue;
        }
        continues = trimmed.ends_with('\\');
    }
    lines
}

/// The part of a shell line that belongs to the `h123` command in it, from its subcommand on:
/// up to a pipe into another command, `&&`, `;` or a comment.
fn h123_words(line: &str) -> Option<Vec<String>> {
    let start = line
        .match_indices("h123 ")
        .find(|(i, _)| *i == 0 || matches!(line.as_bytes()[i - 1], b' ' | b'/' | b'('))?
        .0;
    let rest = &line[start + "h123 ".len()..];
    let mut end = rest.len();
    for stop in [" && ", "; ", " # ", " > ", " 2>"] {
        if let Some(i) = rest.find(stop) {
            end = end.min(i);
        }
    }
    // A pipe into another program (`| jq`), not a synopsis's alternatives (`[-4 | -6]`).
    for (i, _) in rest.match_indices(" | ") {
        if rest[i + 3..].starts_with(|c: char| c.is_ascii_lowercase()) {
            end = end.min(i);
        }
    }
    let words = rest[..end]
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, '[' | ']' | '(' | ')' | '"' | '\'')))
        .filter(|w| *w != "--")
        .map(str::to_owned)
        .collect();
    Some(words)
}

/// The long flags a list of words names (`--proto`, `--slo=...`, `[--cold`).
fn long_flags(words: &[String]) -> BTreeSet<String> {
    words
        .iter()
        .filter_map(|w| w.strip_prefix("--"))
        .map(|f| {
            f.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .filter(|f| f.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .collect()
}

/// The long flags `command` passes down to its subcommands.
fn global_flags(command: &clap::Command) -> Vec<String> {
    command
        .get_arguments()
        .filter(|a| a.is_global_set())
        .filter_map(|a| a.get_long().map(str::to_owned))
        .collect()
}

#[test]
fn every_documented_command_line_names_real_subcommands_and_flags() {
    let root = h123::cli::Cli::command();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (page, text) in pages() {
        for line in command_lines(&text) {
            // `h123` in a configuration file (`upstream h123 {`) is no command line.
            let Some(words) = h123_words(&line).filter(|w| {
                w.first()
                    .is_some_and(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
            }) else {
                continue;
            };
            // Descend through the subcommands the line names; a parent's global flags hold below.
            let mut command = &root;
            let mut named = Vec::new();
            let mut known: BTreeSet<String> = ["help", "version"].map(str::to_owned).into();
            for word in &words {
                match command.find_subcommand(word) {
                    Some(sub) => {
                        known.extend(global_flags(command));
                        named.push(word.clone());
                        command = sub;
                    }
                    None => break,
                }
            }
            if named.is_empty() {
                wrong.push(format!("{page}: `{line}` names no h123 subcommand"));
                continue;
            }
            known.extend(
                command
                    .get_arguments()
                    .filter_map(|a| a.get_long().map(str::to_owned)),
            );
            for flag in long_flags(&words) {
                if !known.contains(&flag) {
                    wrong.push(format!(
                        "{page}: `h123 {}` has no --{flag} (in `{line}`)",
                        named.join(" ")
                    ));
                }
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 20, "only {checked} command lines found");
}

/// GitHub's anchor for a heading.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut in_block = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if !in_block && line.starts_with('#') {
            found.insert(anchor(line));
        }
    }
    found
}

/// A page's relative links (`](target)`), without web addresses.
fn links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')')?];
            (!target.starts_with("http://") && !target.starts_with("https://"))
                .then(|| target.to_owned())
        })
        .collect()
}

#[test]
fn every_link_and_anchor_in_the_readme_and_the_guides_leads_somewhere() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        let dir = workspace().join(&page).parent().unwrap().to_path_buf();
        for link in links(&text) {
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                workspace().join(&page)
            } else {
                dir.join(file)
            };
            if !target.exists() {
                wrong.push(format!("{page}: {link} leads to no file"));
                continue;
            }
            if !fragment.is_empty() {
                let text = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&text).contains(fragment) {
                    wrong.push(format!("{page}: {link} names no heading there"));
                }
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 20, "only {checked} links found");
}

#[test]
fn the_api_guide_lists_every_route_the_server_mounts_and_no_other() {
    let text = std::fs::read_to_string(workspace().join("docs/api.md")).unwrap();
    let documented: BTreeSet<(String, String)> = text
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let (method, path) = (cells.get(1)?, cells.get(2)?);
            let path = path.strip_prefix('`')?.strip_suffix('`')?;
            method
                .chars()
                .all(|c| c.is_ascii_uppercase())
                .then(|| (method.to_string(), path.to_owned()))
        })
        .collect();
    let mounted: BTreeSet<(String, String)> = h123::api::route_class::table()
        .iter()
        // The catch-alls for unknown API paths are not routes anyone calls.
        .filter(|r| !(r.path == "/api" || r.path.starts_with("/api/{*")))
        .map(|r| (r.method.to_string(), r.path.to_owned()))
        .collect();
    let missing: Vec<_> = mounted.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&mounted).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "undocumented routes: {missing:?}; documented routes the server does not mount: {extra:?}"
    );
}
