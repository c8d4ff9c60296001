//! Keeps the server's layers apart: SQL lives only in the storage modules.
//! A handler or a domain module that grows a query fails `cargo xtask check`
//! and `cargo test`, naming the file and line.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Where SQL may be written, relative to the workspace root: the shared
/// storage module and each service's storage (files or folders).
pub const STORAGE_MODULES: [&str; 6] = [
    "server/src/storage/",
    "server/src/access/db.rs",
    "server/src/petstore/db/",
    "server/src/portfolio/db/",
    "server/src/mail/outbox.rs",
    "server/src/idempotency/db.rs",
];

/// Words that start a SQL statement in a string literal.
const SQL_STARTS: [&str; 10] = [
    "SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE ", "ALTER ", "DROP ", "PRAGMA ", "BEGIN",
    "WITH ",
];

/// One place where SQL stands outside the storage modules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misplaced {
    pub file: String,
    pub line: usize,
    pub text: String,
}

impl std::fmt::Display for Misplaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: SQL outside the storage modules: {}",
            self.file, self.line, self.text
        )
    }
}

/// Every line of the server's code, outside the storage modules, that
/// calls sqlx's query functions or holds a string that starts a SQL
/// statement.
pub fn sql_outside_storage(root: &Path) -> anyhow::Result<Vec<Misplaced>> {
    let mut found = Vec::new();
    for file in rust_files(&root.join("server/src"))? {
        let relative = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .to_string_lossy()
            .replace('\\', "/");
        if STORAGE_MODULES.iter().any(|m| relative.starts_with(m)) {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        found.extend(sql_lines(&relative, &text));
    }
    Ok(found)
}

/// The lines of `text` that hold SQL.
pub fn sql_lines(file: &str, text: &str) -> Vec<Misplaced> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| holds_sql(line))
        .map(|(index, line)| Misplaced {
            file: file.to_owned(),
            line: index + 1,
            text: line.trim().to_owned(),
        })
        .collect()
}

fn holds_sql(line: &str) -> bool {
    let code = line.trim_start();
    if code.starts_with("//") {
        return false;
    }
    if code.contains("sqlx::query") || code.contains("sqlx::raw_sql") {
        return true;
    }
    code.split('"')
        .skip(1)
        .step_by(2)
        .any(|literal| SQL_STARTS.iter().any(|start| literal.starts_with(start)))
}

fn rust_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_writes_sql_only_in_its_storage_modules() {
        let misplaced = sql_outside_storage(&crate::codegen::workspace_root())
            .unwrap_or_else(|e| panic!("{e:#}"));
        let lines: Vec<String> = misplaced.iter().map(ToString::to_string).collect();
        assert!(lines.is_empty(), "{}", lines.join("\n"));
    }

    #[test]
    fn queries_and_sql_strings_are_found_and_prose_is_not() {
        let handler = r#"
            // A comment may say SELECT things.
            let note = "Selecting pets";
            let rows = sqlx::query_as::<_, Row>(&sql);
            let sql = "SELECT id FROM pets";
            let update = format!("UPDATE {table} SET x = 1");
        "#;
        let lines: Vec<usize> = sql_lines("h.rs", handler).iter().map(|m| m.line).collect();
        assert_eq!(lines, vec![4, 5, 6]);
    }
}
