//! Operator tasks: subcommands of the server binary that work on the same
//! database as a running server (`--data-dir` / `--database-url`, as for
//! `serve`). Each prints text for people, or JSON with `--json` for scripts.

pub mod clients;
pub mod key_requests;
pub mod keys;
pub mod outbox;

use std::io::Write as _;

use serde::Serialize;

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
        // Names, organisations and the like came from outside.
        for line in text() {
            writeln!(out, "{}", crate::text_policy::for_terminal(&line))?;
        }
    }
    Ok(())
}
