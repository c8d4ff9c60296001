//! `migrate [--dry-run]`: the database's migrations seen, or applied
//! apart from a start (a SQLite database is backed up first, as a start
//! does).

use serde::Serialize;

use crate::config::{Config, redact_url};
use crate::storage::migrations::{self, Migration, MigrationStatus};

/// What `migrate` did or would do, for `--json`.
#[derive(Debug, Serialize)]
struct Migrated {
    database: String,
    #[serde(flatten)]
    status: MigrationStatus,
    /// The migrations this run applied (none with `--dry-run`).
    applied_now: Vec<Migration>,
    dry_run: bool,
}

pub async fn run(config: &Config, dry_run: bool, json: bool) -> anyhow::Result<()> {
    if config.database_url().starts_with("sqlite:") {
        std::fs::create_dir_all(&config.data_dir)?;
    }
    let db = migrations::open(&config.database_url(), Some(2)).await?;
    let status = migrations::status(&db).await?;
    anyhow::ensure!(
        status.unknown.is_empty(),
        "the database's schema is newer than this server: it has migration(s) {:?}, which \
         this server does not know; run that version (or a newer one) against it",
        status.unknown
    );
    let applied_now = if dry_run {
        Vec::new()
    } else {
        crate::app::migrate(config, &db).await?
    };
    db.close().await;
    let done = Migrated {
        database: redact_url(&config.database_url()),
        status,
        applied_now,
        dry_run,
    };
    super::print(json, &done, || lines(&done))
}

fn lines(done: &Migrated) -> Vec<String> {
    let status = &done.status;
    let mut lines = vec![format!(
        "{} ({}): {} migration(s) applied, {} pending",
        done.database,
        status.backend.name(),
        status.applied.len(),
        status.pending.len()
    )];
    if let Some(last) = status.applied.last() {
        lines.push(format!("at {} {}", last.version, last.description));
    }
    let verb = if done.dry_run { "pending" } else { "applied" };
    lines.extend(
        status
            .pending
            .iter()
            .map(|m| format!("{verb}\t{}\t{}", m.version, m.description)),
    );
    if done.dry_run && !status.pending.is_empty() {
        lines.push("nothing was changed (--dry-run)".to_owned());
    }
    lines
}
