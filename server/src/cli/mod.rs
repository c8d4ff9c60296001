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
pub fn print<T: Serialize>(
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

/// Fails with every problem of an operator's request, by field.
pub fn refuse(problems: &[(String, String)]) -> anyhow::Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = problems
        .iter()
        .map(|(field, problem)| format!("{field}: {problem}"))
        .collect();
    anyhow::bail!("{}", lines.join("; "))
}

/// An error of the service's (a 404, a 409, a 422) as the CLI tells it:
/// its message, and the problem of each field.
pub fn user_error(error: crate::error::Error) -> anyhow::Error {
    let fields = error
        .details()
        .get("fields")
        .and_then(serde_json::Value::as_object)
        .map(|fields| {
            fields
                .iter()
                .map(|(field, problem)| {
                    format!("{field}: {}", problem.as_str().unwrap_or_default())
                })
                .collect::<Vec<_>>()
                .join("; ")
        });
    let told = match fields {
        Some(fields) if !fields.is_empty() => fields,
        _ => error.message().to_owned(),
    };
    anyhow::anyhow!("{}", crate::text_policy::for_terminal(&told))
}
