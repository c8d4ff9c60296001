//! `backup --to FILE` and `restore --from FILE`: a consistent copy of the
//! embedded SQLite database while a server writes it, and that copy put
//! back in place of the database (with no server running on it).
//! PostgreSQL has `pg_dump` and `pg_restore` for this (docs/deploy.md).

use std::path::PathBuf;

use serde::Serialize;

use crate::config::Config;
use crate::storage::backup::{self, DatabaseLock};

/// Copies the database to `to` and prints what it wrote.
pub async fn backup(config: &Config, to: PathBuf, json: bool) -> anyhow::Result<()> {
    let database = backup::sqlite_file(&config.database_url())?;
    let written = backup::backup(&database, &to).await?;
    super::print(json, &written, || written.lines("backed up to"))
}

/// What `restore` did, for `--json`.
#[derive(Debug, Serialize)]
struct Restored {
    #[serde(flatten)]
    restored: backup::Written,
    /// Where the database it replaced is kept.
    replaced_kept_as: Option<PathBuf>,
}

/// Puts the backup `from` in place of the database, refusing while a
/// server uses the database.
pub async fn restore(config: &Config, from: PathBuf, json: bool) -> anyhow::Result<()> {
    let database = backup::sqlite_file(&config.database_url())?;
    std::fs::create_dir_all(&config.data_dir)?;
    let _lock = DatabaseLock::exclusive(&database)?;
    let (restored, replaced_kept_as) = backup::restore(&from, &database).await?;
    let done = Restored {
        restored,
        replaced_kept_as,
    };
    super::print(json, &done, || {
        let mut lines = done.restored.lines("restored into");
        if let Some(aside) = &done.replaced_kept_as {
            lines.push(format!(
                "the database it replaced is kept as {}",
                aside.display()
            ));
        }
        lines
    })
}
