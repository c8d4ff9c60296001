//! Operator tasks: subcommands of the server binary that work on the same
//! database as a running server (`--data-dir` / `--database-url`, as for
//! `serve`). Each prints text for people, or JSON with `--json` for scripts.

pub mod backup;
pub mod clients;
pub mod console;
pub mod content;
pub mod doctor;
pub mod healthcheck;
pub mod key_requests;
pub mod keys;
pub mod migrate;
pub mod outbox;

use std::io::Write as _;

use serde::Serialize;

/// The address the server is reached at, for the links of the emails an
/// operator's command queues: `public_url`, or `http://localhost` when the
/// configuration names none (a server sets it from its socket).
pub(crate) fn public_url(config: &crate::config::Config) -> &str {
    config
        .public_url
        .as_deref()
        .map_or("http://localhost", |url| url.trim_end_matches('/'))
}

/// A command's failure it has printed itself (the doctor's report): the
/// process exits non-zero and prints nothing more.
#[derive(Debug)]
pub struct Reported;

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("reported above")
    }
}

impl std::error::Error for Reported {}

/// Prints `value` as JSON (with `--json`) or as the lines `text` gives.
pub(crate) fn print<T: Serialize>(
    json: bool,
    value: &T,
    text: impl FnOnce() -> Vec<String>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(value)?)?;
    } else {
        for line in text() {
            writeln!(out, "{}", for_terminal(&line))?;
        }
    }
    Ok(())
}

/// The error a subcommand ended with, as one line safe to print: what it
/// names (an id, a name) may have come from outside.
pub fn error_line(error: &anyhow::Error) -> String {
    crate::core::text_policy::for_terminal(&format!("{error:#}")).into_owned()
}

/// A line made safe to print: names, organisations and the like came from
/// outside, so every control character in them is shown as an escape; the
/// tabs between a listing's columns are ours and stay tabs. (The text policy
/// keeps tabs out of one-line fields; a multi-line one is printed with
/// `{:?}`, which escapes its own.)
fn for_terminal(line: &str) -> String {
    line.split('\t')
        .map(crate::core::text_policy::for_terminal)
        .collect::<Vec<_>>()
        .join("\t")
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_naming_text_from_outside_prints_it_escaped() {
        let error = anyhow::anyhow!("no request from \u{1b}]0;owned\u{7}");
        assert_eq!(
            super::error_line(&error),
            "no request from \\u{1b}]0;owned\\u{7}"
        );
    }

    #[test]
    fn columns_stay_tabs_and_what_came_from_outside_is_escaped() {
        let line = "kr_1\tAda\u{1b}[2J\tAcme\r\nkr_fake";
        assert_eq!(
            super::for_terminal(line),
            "kr_1\tAda\\u{1b}[2J\tAcme\\u{d}\\u{a}kr_fake"
        );
    }
}
