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
//! A restore needs the database to itself: every server holds a shared lock
//! on the lock file beside its database file ([`DatabaseLock`]: `<file>.lock`,
//! found from the file's real path, however the database was named) while
//! it runs, and a restore takes it exclusively or refuses.
//!
//! What a backup writes and what a restore puts in place must be a
//! database of this server's and nothing more ([`check`]): its migrations
//! are this version's (or an earlier version's, which the server then
//! migrates), and its schema (tables, indexes, triggers, views) is exactly
//! what those migrations make. A file handed to an operator with a table,
//! a trigger or a view of someone else's is refused, naming it.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::time::Duration;

use anyhow::{Context as _, bail, ensure};
use serde::Serialize;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions as _, Connection as _};

use super::SQLITE_MIGRATIONS;

/// A lock on the lock file beside a SQLite database, held until dropped.
#[derive(Debug)]
pub(crate) struct DatabaseLock {
    _file: File,
}

impl DatabaseLock {
    /// A server's lock: shared (the operator's other commands run beside
    /// a server; a restore does not). It waits for a restore under way.
    pub(crate) fn shared(database: &Path) -> anyhow::Result<DatabaseLock> {
        let (file, path) = open_lock_file(database)?;
        file.lock_shared()
            .with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(DatabaseLock { _file: file })
    }

    /// A restore's lock: the database to itself, or an error if a server
    /// holds it.
    pub(crate) fn exclusive(database: &Path) -> anyhow::Result<DatabaseLock> {
        let (file, path) = open_lock_file(database)?;
        match file.try_lock() {
            Ok(()) => Ok(DatabaseLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "a server is using the database {}: stop it first",
                database.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
    }
}

/// The lock file of `database` (`<file>.lock`, beside the file's real
/// path: a link or another spelling of the path names the same lock),
/// opened, and its path.
fn open_lock_file(database: &Path) -> anyhow::Result<(File, PathBuf)> {
    let real = match std::fs::canonicalize(database) {
        Ok(real) => real,
        // Not there yet (a restore into a new place): beside it in its
        // folder's real path.
        Err(_) => {
            let folder = database
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let name = database
                .file_name()
                .with_context(|| format!("{} names no file", database.display()))?;
            std::fs::canonicalize(folder)
                .with_context(|| format!("cannot find the folder {}", folder.display()))?
                .join(name)
        }
    };
    let path = with_suffix(&real, ".lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    Ok((file, path))
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
/// run, and nothing more: intact, its migrations this version's (or a
/// prefix of them), its schema exactly what they make. Returns its tables'
/// rows.
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
    let applied = applied_migrations(&mut conn).await.with_context(|| {
        format!(
            "{} is a SQLite database, but not one of this server's",
            file.display()
        )
    })?;
    let made =
        migrations_made_by(applied).map_err(|why| anyhow::anyhow!("{}: {why}", file.display()))?;
    let differences = differences(&schema_made_by(made).await?, &schema(&mut conn).await?);
    ensure!(
        differences.is_empty(),
        "{} is not a database this server makes; its schema differs from what its migrations \
         make: {}",
        file.display(),
        differences.join("; ")
    );
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         ORDER BY name",
    )
    .fetch_all(&mut conn)
    .await?;
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

/// A migration as a database records it: its version, its checksum, and
/// whether it ran to its end.
type Applied = (i64, Vec<u8>, bool);

/// The migrations a database records, oldest first.
async fn applied_migrations(conn: &mut SqliteConnection) -> anyhow::Result<Vec<Applied>> {
    Ok(
        sqlx::query_as("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version")
            .fetch_all(conn)
            .await?,
    )
}

/// How many of this version's migrations `applied` are: they must be the
/// first of them, whole, each as this version has it.
fn migrations_made_by(applied: Vec<Applied>) -> Result<usize, String> {
    let ours: Vec<_> = SQLITE_MIGRATIONS
        .iter()
        .filter(|m| !m.migration_type.is_down_migration())
        .collect();
    for (index, (version, checksum, success)) in applied.iter().enumerate() {
        let Some(migration) = ours.get(index) else {
            return Err(format!(
                "it comes from a newer version of the server (migration {version}): restore it \
                 with that version"
            ));
        };
        if migration.version != *version {
            return Err(if ours.iter().any(|m| m.version == *version) {
                format!("it lacks migration {} before {version}", migration.version)
            } else if *version > migration.version {
                format!(
                    "it comes from a newer version of the server (migration {version}): restore \
                     it with that version"
                )
            } else {
                format!("its migration {version} is none of this server's")
            });
        }
        if *migration.checksum != checksum[..] {
            return Err(format!(
                "its migration {version} differs from this server's"
            ));
        }
        if !success {
            return Err(format!("its migration {version} did not finish"));
        }
    }
    Ok(applied.len())
}

/// A schema object: (type, name) -> (the table it belongs to, its SQL).
type Schema = BTreeMap<(String, String), (String, Option<String>)>;

/// Every object of a database's schema but the migrations' own record, the
/// statistics SQLite keeps for its planner, and the two tables in which
/// Litestream (the documented replication) notes its place: tables alone,
/// which nothing reads; a trigger or index on them is an object like any.
async fn schema(conn: &mut SqliteConnection) -> anyhow::Result<Schema> {
    let rows: Vec<(String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT type, name, tbl_name, sql FROM sqlite_master \
         WHERE name NOT IN ('_sqlx_migrations', 'sqlite_autoindex__sqlx_migrations_1') \
         AND name NOT LIKE 'sqlite_stat%' \
         AND NOT (type = 'table' AND name IN ('_litestream_seq', '_litestream_lock'))",
    )
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(kind, name, table, sql)| ((kind, name), (table, sql)))
        .collect())
}

/// The schema the first `count` of this version's migrations make, in a
/// database of their own.
async fn schema_made_by(count: usize) -> anyhow::Result<Schema> {
    let mut fresh = SqliteConnectOptions::from_str("sqlite::memory:")?
        .connect()
        .await?;
    let ours = SQLITE_MIGRATIONS
        .iter()
        .filter(|m| !m.migration_type.is_down_migration());
    for migration in ours.take(count) {
        sqlx::raw_sql(&migration.sql)
            .execute(&mut fresh)
            .await
            .with_context(|| format!("cannot run migration {}", migration.version))?;
    }
    let made = schema(&mut fresh).await?;
    fresh.close().await?;
    Ok(made)
}

/// What `found` has that `expected` has not, lacks, or has otherwise, in
/// words.
fn differences(expected: &Schema, found: &Schema) -> Vec<String> {
    let mut differences = Vec::new();
    for ((kind, name), (table, sql)) in found {
        match expected.get(&(kind.clone(), name.clone())) {
            None => differences.push(format!("an extra {kind} {name:?} on {table:?}")),
            Some(made) if made != &(table.clone(), sql.clone()) => {
                differences.push(format!(
                    "the {kind} {name:?} is not as the migrations make it"
                ));
            }
            Some(_) => {}
        }
    }
    for (kind, name) in expected.keys() {
        if !found.contains_key(&(kind.clone(), name.clone())) {
            differences.push(format!("no {kind} {name:?}"));
        }
    }
    differences
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

/// Before migrations: `database` copied into `folder` as
/// `before-<first pending version>-<unix time in ms>.db`, then all but the
/// newest `keep` such copies removed. Returns the copy.
pub(crate) async fn before_migration(
    database: &Path,
    folder: &Path,
    pending: &[super::migrations::Migration],
    keep: usize,
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let first = pending.first().map_or(0, |m| m.version);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let copy = folder.join(format!("before-{first}-{now}.db"));
    backup(database, &copy).await?;
    // Names sort by time within a version, and versions only grow.
    let mut copies: Vec<(u128, PathBuf)> = std::fs::read_dir(folder)
        .with_context(|| format!("cannot read {}", folder.display()))?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let time = name
                .strip_prefix("before-")?
                .strip_suffix(".db")?
                .rsplit_once('-')?
                .1
                .parse()
                .ok()?;
            Some((time, entry.path()))
        })
        .collect();
    copies.sort();
    let excess = copies.len().saturating_sub(keep);
    for (_, old) in copies.into_iter().take(excess) {
        std::fs::remove_file(&old).with_context(|| format!("cannot remove {}", old.display()))?;
    }
    Ok(copy)
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
    use super::{SQLITE_MIGRATIONS, migrations_made_by, sqlite_file};

    /// This version's migrations as a database records them.
    fn ours() -> Vec<super::Applied> {
        SQLITE_MIGRATIONS
            .iter()
            .map(|m| (m.version, m.checksum.to_vec(), true))
            .collect()
    }

    #[test]
    fn a_database_may_hold_this_versions_migrations_or_their_first_ones() {
        let all = ours();
        assert_eq!(migrations_made_by(all.clone()), Ok(all.len()));
        assert_eq!(migrations_made_by(all[..3].to_vec()), Ok(3));
        assert_eq!(migrations_made_by(Vec::new()), Ok(0));
    }

    #[test]
    fn a_newer_changed_missing_or_unfinished_migration_is_refused() {
        let all = ours();
        let mut newer = all.clone();
        newer.push((99_999_999_999_999, vec![0], true));
        assert!(
            migrations_made_by(newer)
                .unwrap_err()
                .contains("newer version")
        );
        let mut changed = all.clone();
        changed[2].1 = vec![1, 2, 3];
        assert!(migrations_made_by(changed).unwrap_err().contains("differs"));
        let mut gap = all.clone();
        gap.remove(1);
        assert!(
            migrations_made_by(gap)
                .unwrap_err()
                .contains("lacks migration")
        );
        let mut unfinished = all;
        unfinished[0].2 = false;
        assert!(
            migrations_made_by(unfinished)
                .unwrap_err()
                .contains("did not finish")
        );
    }

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
