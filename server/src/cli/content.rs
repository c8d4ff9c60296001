//! `petstore-portfolio content import`: loads the content file into the
//! database, adding and changing what differs and removing nothing, and
//! says what it did (or, with `--dry-run`, what it would do).

use std::path::PathBuf;

use clap::Subcommand;

use crate::config::Config;
use crate::portfolio::ops::content;

#[derive(Debug, Subcommand)]
pub enum ContentCommand {
    /// Load the content file (`--file`, or `portfolio.content_file`) into
    /// the database: what it adds and changes; nothing it lacks is removed.
    /// A running server on PostgreSQL sees it at once; on SQLite, after a
    /// SIGHUP (which loads the file itself too) or a restart.
    Import {
        /// The content file (default: `portfolio.content_file`).
        #[arg(long)]
        file: Option<PathBuf>,
        /// Only say what would change.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(config: &Config, command: ContentCommand) -> anyhow::Result<()> {
    let ContentCommand::Import {
        file,
        dry_run,
        json,
    } = command;
    let file = file.or_else(|| config.portfolio.content_file.clone());
    let Some(file) = file else {
        anyhow::bail!("no content file: give --file, or set portfolio.content_file");
    };
    let db = crate::app::open_database(config).await?;
    let diff = content::import(&db, Some(&file), dry_run).await?;
    super::print(json, &diff, || {
        let mut lines = diff.lines();
        lines.push(match (diff.is_empty(), dry_run) {
            (true, _) => format!("{} has no change for the database", file.display()),
            (false, true) => "nothing was written (--dry-run)".to_owned(),
            (false, false) => format!("loaded {}", file.display()),
        });
        if !dry_run && !diff.is_empty() && config.database_url().starts_with("sqlite:") {
            lines.push(
                "A server running on this SQLite database serves it after a SIGHUP \
                 (kill -HUP <pid>) or a restart."
                    .to_owned(),
            );
        }
        lines
    })
}
