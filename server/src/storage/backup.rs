//! Backup and restore of the embedded SQLite database (the operator's
//! `backup` and `restore` subcommands).
//!
//! A backup is SQLite's `VACUUM INTO`: it reads the database in one read
//! transaction, so it is a consistent copy of one moment however much a
//! running server writes meanwhile (WAL lets the writers go on), and the
//! copy is compact. It is written beside its destination, checked with
//! `PRAGMA integrity_check`, made durable, and only then renamed into place:
//! a file at the destination is always a whole, checked backup.
//!
//! A restore needs the data directory to itself: every server holds a
//! shared lock on its lock file ([`DataDirLock`]) while it runs, and a
//! restore takes it exclusively or refuses.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use serde::Serialize;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions as _, Connection as _};

use super::SQLITE_MIGRATIONS;

/// The file in the data directory that servers lock while they run.
const LOCK_FILE: &str = "petstore-portfolio.lock";

/// A lock on a data directory's lock file, held until dropped.
#[derive(Debug)]
pub(crate) struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// A server's lock: shared (the operator's other commands run beside
    /// a server; a restore does not).
    pub(crate) fn shared(data_dir: &Path) -> anyhow::Result<DataDirLock> {
        let file = open_lock_file(data_dir)?;
        file.lock_shared()
            .with_context(|| format!("cannot lock {}", data_dir.join(LOCK_FILE).display()))?;
        Ok(DataDirLock { _file: file })
    }

    /// A restore's lock: the directory to itself, or an error if a server
    /// holds it.
    pub(crate) fn exclusive(data_dir: &Path) -> anyhow::Result<DataDirLock> {
        let file = open_lock_file(data_dir)?;
        match file.try_lock() {
            Ok(()) => Ok(DataDirLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "a server is using the data directory {}: stop it first",
                data_dir.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => Err(e)
                .with_context(|| format!("cannot lock {}", data_dir.join(LOCK_FILE).display())),
        }
    }
}

fn open_lock_file(data_dir: &Path) -> anyhow::Result<File> {
    let path = data_dir.join(LOCK_FILE);
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// The SQLite file of a database URL (`sqlite://PATH?...`), or an error
/// for any other database.
pub(crate) fn sqlite_file(database_url: &str) -> anyhow::Result<PathBuf> {
    let Some(rest) = database_url.strip_prefix("sqlite:") else {
        bail!(
            "backup and restore are for the embedded SQLite database; for PostgreSQL use \
             pg_dump and pg_restore (docs/deploy.md)"
        );
    };
    let path = rest.trim_start_matches("//");
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    ensure!(
        !path.is_empty() && !path.contains(":memory:"),
        "an in-memory database has nothing to back up"
    );
    Ok(PathBuf::from(path))
}

/// What a backup or a restore wrote: the file, its size, and its tables'
/// rows; its integrity was checked.
#[derive(Debug, Serialize)]
pub(crate) struct Written {
    pub(crate) file: PathBuf,
    pub(crate) bytes: u64,
    pub(crate) tables: Vec<(String, i64)>,
}

impl Written {
    /// For people: one line for the file, one per table.
    pub(crate) fn lines(&self, what: &str) -> Vec<String> {
        let mut lines = vec![format!(
            "{what} {} ({} bytes, integrity ok); rows by table:",
            self.file.display(),
            self.bytes
        )];
        lines.extend(
            self.tables
                .iter()
                .map(|(table, rows)| format!("  {table}\t{rows}")),
        );
        lines
    }
}

/// Opens an existing SQLite file (never creating one).
async fn open(file: &Path) -> anyhow::Result<SqliteConnection> {
    ensure!(file.is_file(), "{} is not a file", file.display());
    SqliteConnectOptions::from_str("sqlite:")?
        .filename(file)
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(30))
        .connect()
        .await
        .with_context(|| format!("cannot open {} as a SQLite database", file.display()))
}

/// Checks that `file` is a whole database of ours that this version can
/// run; returns its tables' rows.
pub(crate) async fn check(file: &Path) -> anyhow::Result<Written> {
    let mut conn = open(file).await?;
    let verdict: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .with_context(|| format!("{} is not a readable SQLite database", file.display()))?;
    ensure!(
        verdict == ["ok"],
        "{} is damaged: {}",
        file.display(),
        verdict.join("; ")
    );
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         ORDER BY name",
    )
    .fetch_all(&mut conn)
    .await?;
    ensure!(
        tables.iter().any(|t| t == "_sqlx_migrations") && tables.iter().any(|t| t == "pets"),
        "{} is a SQLite database, but not one of this server's",
        file.display()
    );
    let newest: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations")
        .fetch_one(&mut conn)
        .await?;
    let known = SQLITE_MIGRATIONS.iter().map(|m| m.version).max();
    ensure!(
        newest <= known,
        "{} comes from a newer version of the server (migration {}): restore it with that version",
        file.display(),
        newest.unwrap_or_default()
    );
    let mut counted = Vec::new();
    for table in tables {
        // The names come from the file's own catalogue; quoted all the same.
        let rows: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM \"{}\"",
            table.replace('"', "\"\"")
        ))
        .fetch_one(&mut conn)
        .await?;
        counted.push((table, rows));
    }
    conn.close().await?;
    Ok(Written {
        bytes: std::fs::metadata(file)?.len(),
        file: file.to_owned(),
        tables: counted,
    })
}

/// Copies the database `from` (which a server may be writing) to `to`,
/// consistently, and checks the copy. `to` must not exist.
pub(crate) async fn backup(from: &Path, to: &Path) -> anyhow::Result<Written> {
    ensure!(
        !to.exists(),
        "{} exists: choose a new file for the backup",
        to.display()
    );
    let partial = with_suffix(to, ".partial");
    let _ = std::fs::remove_file(&partial);
    let mut conn = open(from).await?;
    let target = partial
        .to_str()
        .context("the backup's path is not UTF-8, which SQLite needs")?;
    sqlx::query("VACUUM INTO $1")
        .bind(target)
        .execute(&mut conn)
        .await
        .with_context(|| format!("cannot write {}", partial.display()))?;
    conn.close().await?;
    let checked = match check(&partial).await {
        Ok(checked) => checked,
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            return Err(e.context("the backup did not pass its check, and was removed"));
        }
    };
    File::open(&partial)?.sync_all()?;
    std::fs::rename(&partial, to)
        .with_context(|| format!("cannot rename {} to {}", partial.display(), to.display()))?;
    sync_dir(to)?;
    Ok(Written {
        file: to.to_owned(),
        ..checked
    })
}

/// Puts the backup `from` in place of the database `to`, after checking it.
/// The database it replaces (with its `-wal`) is kept beside it under a
/// `.replaced-<unix time>` name, which is returned; its `-shm` is removed
/// (stale, it would be read against the restored file).
pub(crate) async fn restore(from: &Path, to: &Path) -> anyhow::Result<(Written, Option<PathBuf>)> {
    let checked = check(from).await?;
    let restoring = with_suffix(to, ".restoring");
    std::fs::copy(from, &restoring)
        .with_context(|| format!("cannot copy {} to {}", from.display(), restoring.display()))?;
    File::open(&restoring)?.sync_all()?;
    let replaced = if to.exists() {
        let aside = with_suffix(to, &format!(".replaced-{}", chrono::Utc::now().timestamp()));
        std::fs::rename(to, &aside)?;
        let wal = with_suffix(to, "-wal");
        if wal.exists() {
            std::fs::rename(&wal, with_suffix(&aside, "-wal"))?;
        }
        Some(aside)
    } else {
        None
    };
    let shm = with_suffix(to, "-shm");
    if shm.exists() {
        std::fs::remove_file(&shm)?;
    }
    std::fs::rename(&restoring, to)?;
    sync_dir(to)?;
    Ok((
        Written {
            file: to.to_owned(),
            ..checked
        },
        replaced,
    ))
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Makes a rename in `path`'s directory durable.
fn sync_dir(path: &Path) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::sqlite_file;

    #[test]
    fn the_sqlite_file_is_read_from_the_url() {
        assert_eq!(
            sqlite_file("sqlite:///srv/pets/petstore-portfolio.db?mode=rwc").unwrap(),
            std::path::Path::new("/srv/pets/petstore-portfolio.db")
        );
        assert_eq!(
            sqlite_file("sqlite://data/x.db").unwrap(),
            std::path::Path::new("data/x.db")
        );
        assert!(sqlite_file("sqlite::memory:").is_err());
        assert!(sqlite_file("postgres://db/app").is_err());
    }
}
