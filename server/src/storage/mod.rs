//! The database: one sqlx `Any` pool that is either SQLite (the embedded
//! default) or PostgreSQL, with the migrations of the matching backend.
//!
//! This module holds what every storage module shares: the pool, write
//! transactions, migrations and [`StoreError`]. The SQL itself lives in each
//! service's storage module (`petstore::db`, `portfolio::db`,
//! `mail::outbox`), written once in SQL both backends accept (`$1`
//! placeholders, `RETURNING`, `ON CONFLICT`); the few places that must differ
//! (the write lock, the replicas' startup lock and change notices) are here.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use sqlx::any::{AnyArguments, AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::query::QueryScalar;
use sqlx::{Any, AnyConnection, AnyPool, Executor as _, Transaction};

use crate::config::redact_url;

pub(crate) mod backup;
pub(crate) mod batches;
pub(crate) mod change_feed;
pub(crate) mod changes;
pub(crate) mod error;
mod group_commit;
pub(crate) mod migrations;
pub(crate) mod read_cache;

pub(crate) use changes::{Changes, Generations, Keepers, Stored, Topic, TopicKind};
pub(crate) use error::StoreError;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// Counts, for the metrics, a statement about to take a connection from
/// `pool` when every connection is open and none is idle: it waits.
pub(crate) fn note_wait(pool: &AnyPool) {
    if pool.num_idle() == 0 && pool.size() >= pool.options().get_max_connections() {
        crate::telemetry::metrics::db_pool_waited();
    }
}

/// Which database engine is behind the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgresql",
        }
    }
}

#[derive(Clone)]
pub(crate) struct Database {
    pool: AnyPool,
    backend: Backend,
    /// SQLite lets one writer in at a time. Writers queue here in order
    /// (readers never do) instead of polling SQLite's lock, and writers that
    /// queue together commit together ([`group_commit`]). PostgreSQL needs
    /// none.
    sqlite_writers: Option<Arc<group_commit::GroupCommit>>,
    /// Write transactions committed through this handle (and its clones).
    commits: Arc<AtomicU64>,
    /// The generations of what the caches hold, moved on by each commit
    /// through this handle ([`changes`]) and, on PostgreSQL, by the other
    /// replicas' ([`change_feed`]).
    generations: Arc<Generations>,
    /// Who keeps in the caches what the writes store ([`Keepers`]).
    keepers: Arc<Keepers>,
    /// Names this process in the notices of its writes ([`change_feed`]).
    replica: u64,
    /// On PostgreSQL, once [`Database::follow_changes`] started it: the
    /// other replicas' writes, for the caches.
    feed: Arc<std::sync::OnceLock<Arc<change_feed::ChangeFeed>>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

/// Sends `statement` (no parameters: it goes unprepared) to `conn` without
/// waiting for its answer; the connection's next statement goes behind it
/// and is answered after it.
///
/// Waiting costs a round trip for every statement: on SQLite between
/// threads (sqlx runs a connection's statements on a thread of its own, one
/// after another in the order they are sent), on PostgreSQL over the
/// socket. Its future is polled once, which sends it, and dropped. On
/// PostgreSQL only after every statement before it on `conn` was waited
/// for, as at both callers: sqlx writes a statement out at its first poll
/// only once the connection has no answer left to read, and one sent
/// behind another that was not waited for would never go out.
///
/// Its outcome is not lost. Its answer may have come within that one poll:
/// an error there is returned (on PostgreSQL the `COMMIT` of a transaction
/// a statement failed in rolls it back and says so only in its command tag,
/// which sqlx does not read). Otherwise, on PostgreSQL, the next statement
/// first reads the answers still due, and an error among them is that
/// statement's error; on SQLite the callers check (see [`group_commit`]).
pub(crate) fn send_without_waiting(
    conn: &mut AnyConnection,
    statement: &str,
) -> Result<(), StoreError> {
    use futures::FutureExt as _;
    match conn.execute(statement).now_or_never() {
        Some(Err(err)) => Err(err.into()),
        Some(Ok(_)) | None => Ok(()),
    }
}

/// A pooled connection idle for this long is pinged before it is handed
/// out: one broken meanwhile (the database restarted) is replaced rather
/// than failing the statement.
const PING_IF_IDLE_FOR: Duration = Duration::from_secs(1);

/// A write transaction. Dropped without [`WriteTx::commit`], its work is
/// undone.
pub(crate) struct WriteTx {
    kind: WriteTxKind,
    /// What it changed, for the caches: everything, unless it says less.
    changes: Changes,
    /// Values it stored, for the caches to keep ([`Keepers`]).
    stored: Vec<Stored>,
}

enum WriteTxKind {
    /// SQLite: this writer's part of a batch that commits at once
    /// ([`group_commit`]); it holds the writers' turn.
    Batched(group_commit::Member),
    /// PostgreSQL: a transaction of its own.
    Own {
        tx: Transaction<'static, Any>,
        commits: Arc<AtomicU64>,
        generations: Arc<Generations>,
        replica: u64,
    },
}

impl WriteTx {
    pub(crate) fn conn(&mut self) -> &mut AnyConnection {
        match &mut self.kind {
            WriteTxKind::Batched(member) => member.conn(),
            WriteTxKind::Own { tx, .. } => tx,
        }
    }

    /// Says that this transaction changed `topics` (and, with the other
    /// calls, nothing else a cache holds).
    pub(crate) fn changed(&mut self, topics: impl IntoIterator<Item = Topic>) {
        if matches!(self.changes, Changes::Everything) {
            self.changes = Changes::nothing_cached();
        }
        let topics: Vec<Topic> = topics.into_iter().collect();
        self.stored.retain(|value| !topics.contains(&value.topic));
        self.changes.add(topics);
    }

    /// Says that this transaction changed `topic` to `value`, which the
    /// caches may keep once it is committed (on SQLite: [`Keepers`]); a
    /// later change to `topic` in the same transaction forgets it.
    pub(crate) fn stored(&mut self, topic: Topic, value: Arc<dyn std::any::Any + Send + Sync>) {
        self.changed([topic]);
        self.stored.push(Stored { topic, value });
    }

    /// Says that this transaction changes nothing a cache holds.
    pub(crate) fn changes_nothing_cached(&mut self) {
        self.changed([]);
    }

    /// Commits, and returns once the commit is durable. What it changed is
    /// made stale in the caches before that, once what it wrote can be read
    /// (on PostgreSQL, in every replica's caches: [`change_feed`]).
    pub(crate) async fn commit(self) -> Result<(), StoreError> {
        match self.kind {
            WriteTxKind::Batched(member) => member.commit(self.changes, self.stored).await,
            WriteTxKind::Own {
                mut tx,
                commits,
                generations,
                replica,
            } => {
                let changes = self.changes;
                // In a task of its own: once the `COMMIT` may have gone
                // out, what it changed must reach this replica's caches
                // even if the writer is dropped (its client gone); this
                // replica does not apply its own notices.
                tokio::spawn(async move {
                    // In the transaction: the other replicas hear of it if
                    // and only if it commits, and before it is
                    // acknowledged. The notice goes out with the `COMMIT`,
                    // in its round trip; if it fails, so does the commit.
                    change_feed::send_notice(&mut tx, replica, &changes)?;
                    tx.commit().await?;
                    commits.fetch_add(1, Ordering::AcqRel);
                    generations.advance(&changes);
                    Ok(())
                })
                .await
                .map_err(|e| StoreError::Database(format!("a commit failed: {e}")))?
            }
        }
    }
}

impl Database {
    /// Closes the pool (a short-lived handle: a test's, a CLI's).
    pub(crate) async fn close(&self) {
        self.pool.close().await;
    }

    /// Connects, creating the SQLite file if needed, and runs the migrations.
    pub(crate) async fn connect(url: &str) -> anyhow::Result<Self> {
        Self::connect_with(url, None).await
    }

    /// [`connect`](Self::connect), keeping at most `max_connections` (none:
    /// 8 for SQLite, 16 for PostgreSQL).
    pub(crate) async fn connect_with(
        url: &str,
        max_connections: Option<u32>,
    ) -> anyhow::Result<Self> {
        let db = Self::open(url, max_connections).await?;
        db.migrate().await?;
        Ok(db)
    }

    /// Connects (creating the SQLite file if needed) without migrating:
    /// for what reads the schema's state first (`migrate --dry-run`,
    /// `doctor`, the backup taken before migrations).
    pub(crate) async fn open(url: &str, max_connections: Option<u32>) -> anyhow::Result<Self> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            anyhow::bail!(
                "unsupported database URL (expected sqlite: or postgres://): {}",
                redact_url(url)
            );
        };
        let in_memory = backend == Backend::Sqlite && url.contains(":memory:");
        let options: AnyConnectOptions = url
            .parse()
            .with_context(|| format!("invalid database URL {}", redact_url(url)))?;
        let mut pool_options = AnyPoolOptions::new().acquire_timeout(Duration::from_secs(10));
        pool_options = match backend {
            // Every connection to `sqlite::memory:` is a database of its own: keep
            // exactly one, forever.
            Backend::Sqlite if in_memory => pool_options
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None),
            Backend::Sqlite => pool_options.max_connections(max_connections.unwrap_or(8).max(1)),
            Backend::Postgres => pool_options.max_connections(max_connections.unwrap_or(16).max(1)),
        };
        // sqlx pings every idle connection as it hands it out (by default):
        // a round trip to PostgreSQL, or a hop to SQLite's worker thread and
        // back, before each pooled statement. It pings each one as it comes
        // back, too (always), so a connection used a moment ago is known to
        // be alive: only one idle for a while is pinged first.
        pool_options = pool_options
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for >= PING_IF_IDLE_FOR {
                        sqlx::Connection::ping(conn).await?;
                    }
                    Ok(true)
                })
            });
        if backend == Backend::Sqlite {
            pool_options = pool_options.after_connect(|conn, _meta| {
                Box::pin(async move {
                    // `synchronous = FULL` (SQLite's default, said here
                    // because acknowledged writes rely on it): every commit
                    // is on disk before it returns, in WAL mode too.
                    // `cache_size`: 1 MiB of pages per connection rather
                    // than SQLite's 2 MiB: with 8 connections the default let
                    // the server's memory grow by 16 MiB as the file grew
                    // (against the memory target in BENCHMARKS.md); the operating system caches
                    // the file anyway.
                    conn.execute(
                        "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; \
                         PRAGMA synchronous = FULL; PRAGMA cache_size = -1024; \
                         PRAGMA temp_store = MEMORY;",
                    )
                    .await?;
                    Ok(())
                })
            });
        }
        let pool = pool_options
            .connect_with(options)
            .await
            .with_context(|| format!("cannot connect to the database at {}", redact_url(url)))?;
        if backend == Backend::Sqlite && !in_memory {
            // WAL lets readers go on while one connection writes.
            pool.execute("PRAGMA journal_mode = WAL")
                .await
                .context("cannot switch SQLite to WAL mode")?;
        }
        let commits = Arc::<AtomicU64>::default();
        let generations = Arc::<Generations>::default();
        let keepers = Arc::<Keepers>::default();
        Ok(Self {
            sqlite_writers: (backend == Backend::Sqlite).then(|| {
                group_commit::GroupCommit::new(
                    pool.clone(),
                    commits.clone(),
                    generations.clone(),
                    keepers.clone(),
                )
            }),
            pool,
            backend,
            commits,
            generations,
            keepers,
            replica: change_feed::replica_id(),
            feed: Arc::default(),
        })
    }

    pub(crate) fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        }
    }

    /// Applies the migrations the database lacks.
    pub(crate) async fn migrate(&self) -> anyhow::Result<()> {
        // On PostgreSQL sqlx holds an advisory lock while it migrates:
        // replicas that start at once take turns, and the later ones find
        // the schema done.
        self.migrator()
            .run(&self.pool)
            .await
            .map_err(|err| match err {
                sqlx::migrate::MigrateError::VersionMissing(version) => anyhow::anyhow!(
                    "the database's schema is newer than this server: migration {version} was \
                     applied to it by a newer version of the server, and this one does not know \
                     it; run that version (or a newer one) against this database"
                ),
                err => anyhow::Error::new(err).context("database migration failed"),
            })
    }

    /// On PostgreSQL, starts following the other replicas' writes (at
    /// `url`, this database's), so that the caches can be on
    /// ([`change_feed`]); a serving replica does, a CLI need not. Nothing
    /// on SQLite, which one process owns.
    pub(crate) fn follow_changes(&self, url: &str) {
        if self.backend == Backend::Postgres {
            self.feed.get_or_init(|| {
                change_feed::ChangeFeed::start(
                    url.to_owned(),
                    self.pool.clone(),
                    self.replica,
                    self.generations.clone(),
                )
            });
        }
    }

    /// Whether the caches can be on: SQLite, or PostgreSQL with the other
    /// replicas' writes followed.
    pub(crate) fn caches_possible(&self) -> bool {
        self.backend == Backend::Sqlite || self.feed.get().is_some()
    }

    /// Waits until every write acknowledged (by any replica) before this
    /// call has moved the generations on; an error when that cannot be
    /// known now (then a read must go to the database and keep nothing).
    pub(crate) async fn catch_up(&self) -> Result<(), StoreError> {
        match (self.backend, self.feed.get()) {
            (Backend::Sqlite, _) => Ok(()),
            (Backend::Postgres, Some(feed)) => feed.catch_up().await,
            (Backend::Postgres, None) => Err(StoreError::Unavailable(
                "the replicas' changes are not followed".to_owned(),
            )),
        }
    }

    /// The pool, for a statement about to run on it.
    pub(crate) fn pool(&self) -> &AnyPool {
        note_wait(&self.pool);
        &self.pool
    }

    /// A connection from the pool, for reads.
    pub(crate) async fn conn(&self) -> Result<PoolConnection<Any>, StoreError> {
        note_wait(&self.pool);
        Ok(self.pool.acquire().await?)
    }

    /// The pool's connections: (open, idle), for the metrics.
    pub(crate) fn pool_connections(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle())
    }

    /// Waits until no other replica is starting up, and holds the others
    /// off until [`StartupLock::release`]: for what only one may do, such as
    /// filling empty tables with the sample data on a first start (two at
    /// once would both find the tables empty, and one would fail to start on
    /// the other's rows). On PostgreSQL a session advisory lock, which the
    /// database releases by itself if the process dies; on SQLite nothing,
    /// since one process serves a file.
    pub(crate) async fn lock_for_startup(&self) -> Result<StartupLock, StoreError> {
        if self.backend == Backend::Sqlite {
            return Ok(StartupLock(None));
        }
        let mut conn = self.pool.acquire().await?;
        // The function returns `void`, which sqlx's `Any` cannot decode.
        sqlx::query("SELECT 1 FROM (SELECT pg_advisory_lock($1)) AS locked")
            .bind(STARTUP_LOCK)
            .execute(&mut *conn)
            .await?;
        Ok(StartupLock(Some(conn)))
    }

    /// Does the database answer? (For readiness.)
    pub(crate) async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query_scalar::<_, i32>("SELECT 1")
            .fetch_one(&self.pool)
            .await?;
        Ok(())
    }

    /// Starts a transaction that will write.
    ///
    /// On SQLite it waits for the writers' turn and is a savepoint in a
    /// batch that began with `BEGIN IMMEDIATE`, which takes SQLite's write
    /// lock at once. (A deferred transaction would take it only at its first
    /// write, after reading, and SQLite fails such an upgrade at once, with no
    /// waiting, while another connection holds the lock.)
    pub(crate) async fn begin_write(&self) -> Result<WriteTx, StoreError> {
        let kind = match &self.sqlite_writers {
            Some(writers) => WriteTxKind::Batched(writers.begin().await?),
            None => WriteTxKind::Own {
                tx: {
                    note_wait(&self.pool);
                    begin_in_a_task(&self.pool).await?
                },
                commits: self.commits.clone(),
                generations: self.generations.clone(),
                replica: self.replica,
            },
        };
        Ok(WriteTx {
            kind,
            changes: Changes::Everything,
            stored: Vec::new(),
        })
    }

    /// The generations of what the caches hold.
    pub(crate) fn generations(&self) -> &Generations {
        &self.generations
    }

    /// Who keeps in the caches what the writes store: a cache registers
    /// itself there for its topics' kind.
    pub(crate) fn keepers(&self) -> &Keepers {
        &self.keepers
    }

    /// How many write transactions (batches, on SQLite) this process has
    /// committed here (for the group commit's tests).
    #[cfg(test)]
    pub(crate) fn commits(&self) -> u64 {
        self.commits.load(Ordering::Acquire)
    }
}

/// Begins a PostgreSQL transaction in a task of its own, so that it always
/// ends whoever asked for it (a request dropped when its client left).
/// sqlx sends `BEGIN` and counts the transaction open only once the answer
/// is read; dropped in between, it left the connection inside a transaction
/// that it did not know of and so never rolled back. Back in the pool, that
/// connection ran the next statements in it (PostgreSQL warned "there is
/// already a transaction in progress" at the next `BEGIN`, seen at the end
/// of load runs, when wrk's clients go). A transaction begun here that
/// nobody takes is dropped, and so rolled back.
async fn begin_in_a_task(pool: &AnyPool) -> Result<Transaction<'static, Any>, StoreError> {
    let pool = pool.clone();
    tokio::spawn(async move { pool.begin().await })
        .await
        .map_err(|e| StoreError::Database(format!("beginning a transaction failed: {e}")))?
        .map_err(StoreError::from)
}

/// `$1, $2, ...` for a list of `count` values: sqlx's `QueryBuilder` writes
/// `?` for the `Any` driver, which PostgreSQL does not accept.
pub(crate) fn placeholders(count: usize) -> String {
    placeholders_from(1, count)
}

/// [`placeholders`] from `$first` on, after the statement's other values.
pub(crate) fn placeholders_from(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|n| format!("${n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `conn` is a SQLite connection (else PostgreSQL's), for the few
/// statements the two write differently.
pub(crate) fn on_sqlite(conn: &AnyConnection) -> bool {
    conn.backend_name() == "SQLite"
}

/// `sql` as the connection's database reads it fastest: on SQLite, its
/// `$1, $2, ...` become plain `?`s when they appear once each, in order
/// (the statements built with [`placeholders`] and [`row_placeholders`]);
/// otherwise, and on PostgreSQL, it is `sql` as written.
///
/// SQLite takes `$1` for a *named* parameter: it looks each one up among the
/// names before it when it parses the statement, and sqlx asks each one's
/// name when it binds, so a statement of `n` of them costs `n²` steps
/// twice. At a batch of new pets with tags (a few hundred values) that was
/// a tenth of the server's time; plain `?`s are bound by position.
pub(crate) fn positional<'a>(conn: &AnyConnection, sql: &'a str) -> Cow<'a, str> {
    if !on_sqlite(conn) {
        return Cow::Borrowed(sql);
    }
    numbered_to_positional(sql).map_or(Cow::Borrowed(sql), Cow::Owned)
}

/// `sql` with `$1, $2, ...` (outside quotes) as `?`, if each appears once
/// and in order; `None` if not, or if there are none.
fn numbered_to_positional(sql: &str) -> Option<String> {
    let mut out = String::with_capacity(sql.len());
    let mut next = 1_u64;
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        let starts_number = chars.peek().is_some_and(char::is_ascii_digit);
        if c != '$' || quoted || !starts_number {
            out.push(c);
            continue;
        }
        let mut number = 0_u64;
        while let Some(d) = chars.next_if(char::is_ascii_digit) {
            number = number
                .checked_mul(10)?
                .checked_add(u64::from(d) - u64::from('0'))?;
        }
        if number != next {
            return None;
        }
        next += 1;
        out.push('?');
    }
    (next > 1).then_some(out)
}

/// The key of the replicas' startup lock (`pg_advisory_lock`): "petstore"
/// in ASCII, a number no other user of the database is likely to take.
const STARTUP_LOCK: i64 = 0x7065_7473_746f_7265;

/// Held while this replica starts up; see [`Database::lock_for_startup`].
pub(crate) struct StartupLock(Option<PoolConnection<Any>>);

impl StartupLock {
    /// Lets the next replica in.
    pub(crate) async fn release(mut self) -> Result<(), StoreError> {
        if let Some(mut conn) = self.0.take() {
            sqlx::query("SELECT 1 FROM (SELECT pg_advisory_unlock($1)) AS unlocked")
                .bind(STARTUP_LOCK)
                .execute(&mut *conn)
                .await?;
        }
        Ok(())
    }
}

impl Drop for StartupLock {
    /// Not released (the start failed): the connection is closed rather than
    /// returned to the pool, and the database releases the lock with it.
    fn drop(&mut self) {
        if let Some(conn) = self.0.take() {
            drop(conn.detach());
        }
    }
}

/// The rows of a multi-row `VALUES`: `($1, $2), ($3, $4)` for 2 rows of 2
/// columns; the parameters are bound row after row.
pub(crate) fn row_placeholders(rows: usize, columns: usize) -> String {
    (0..rows)
        .map(|row| {
            let row = (row * columns + 1..=(row + 1) * columns)
                .map(|n| format!("${n}"))
                .collect::<Vec<_>>()
                .join(", ");
            format!("({row})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs a multi-row `INSERT ... ON CONFLICT (id) DO NOTHING RETURNING id`
/// and returns the ids that went in: the rows whose id was taken meanwhile
/// are the caller's to store again. Not kept prepared: a statement of its
/// own for every number of rows would push the connection's usual
/// statements out of its cache.
pub(crate) async fn inserted_ids<'q>(
    conn: &mut AnyConnection,
    insert: QueryScalar<'q, Any, i64, AnyArguments<'q>>,
) -> Result<BTreeSet<i64>, StoreError> {
    Ok(insert
        .persistent(false)
        .fetch_all(conn)
        .await?
        .into_iter()
        .collect())
}

/// Polls `future` (waking nobody) for `micros` microseconds, or until it
/// is done, then drops it: a request cut off at that point of its work,
/// for unit tests.
#[cfg(test)]
pub(crate) fn poll_then_drop(future: impl Future, micros: u64) {
    let started = std::time::Instant::now();
    let mut future = std::pin::pin!(future);
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    while started.elapsed() < Duration::from_micros(micros) {
        if future.as_mut().poll(&mut cx).is_ready() {
            return;
        }
    }
}

/// A fresh SQLite database in a folder of its own, for unit tests.
#[cfg(test)]
pub(crate) async fn temporary_sqlite() -> (tempfile::TempDir, Database) {
    temporary_sqlite_with(None).await
}

/// [`temporary_sqlite`] with a pool of at most `max_connections`.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) async fn temporary_sqlite_with(
    max_connections: Option<u32>,
) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("db.sqlite").display()
    );
    let db = Database::connect_with(&url, max_connections).await.unwrap();
    (dir, db)
}

/// A fresh database of its own on the PostgreSQL server that
/// `POSTGRES_TEST_URL` names (its maintenance database), for unit tests of
/// what only PostgreSQL does; dropped with the guard. Without the URL: a
/// loud note, or under CI (which sets it) a panic.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub(crate) async fn temporary_postgres(test: &str) -> Option<(TemporaryPostgres, Database)> {
    use std::io::Write as _;
    let Some(server) = std::env::var("POSTGRES_TEST_URL")
        .ok()
        .filter(|url| !url.is_empty())
    else {
        assert!(
            std::env::var("CI").is_err(),
            "POSTGRES_TEST_URL is not set under CI: {test}"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED on PostgreSQL: {test} (set POSTGRES_TEST_URL to run it)"
        );
        return None;
    };
    let name = format!("pps_unit_{}_{:x}", std::process::id(), fastrand::u64(..));
    let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&server)
        .await
        .unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut admin)
        .await
        .unwrap();
    let (base, _) = server
        .rsplit_once('/')
        .expect("POSTGRES_TEST_URL names a database");
    let url = format!("{base}/{name}");
    let db = Database::connect(&url).await.unwrap();
    Some((TemporaryPostgres { server, name, url }, db))
}

/// Drops [`temporary_postgres`]'s database.
#[cfg(test)]
pub(crate) struct TemporaryPostgres {
    server: String,
    name: String,
    /// The database's URL.
    pub(crate) url: String,
}

#[cfg(test)]
impl Drop for TemporaryPostgres {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        // Drop cannot await: on a thread of its own, with a runtime of its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&server).await?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut admin)
                    .await?;
                Ok::<_, sqlx::Error>(())
            })?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        })
        .join();
    }
}

/// A time stored as Unix milliseconds (an `*_at_ms` column).
pub(crate) fn time_from_ms(ms: i64) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
    chrono::DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| StoreError::corrupt(format!("time {ms}")))
}

/// A time kept as text (RFC 3339, [`crate::core::clock::timestamp`]); anything
/// else is a corrupt row.
pub(crate) fn time_from_text(text: &str) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
    crate::core::clock::parse_timestamp(text)
        .map_err(|e| StoreError::corrupt(format!("time {text:?}: {e}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{
        Database, PING_IF_IDLE_FOR, StoreError, numbered_to_positional, positional,
        row_placeholders, temporary_postgres, temporary_sqlite, temporary_sqlite_with,
    };

    /// Waits (at most 10 s, then panics) until a connection is back in
    /// `db`'s pool.
    async fn until_a_connection_is_idle(db: &Database) {
        tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while db.pool().num_idle() < 1 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("no connection came back to the pool");
    }

    /// A pooled connection is not pinged before each use (a round trip
    /// each), but one idle for [`PING_IF_IDLE_FOR`] is: if its server
    /// process ended meanwhile (the database restarted), the pool replaces
    /// it and the statement still runs.
    #[tokio::test]
    async fn a_connection_that_died_while_idle_is_replaced() {
        let Some((database, _db)) =
            temporary_postgres("a_connection_that_died_while_idle_is_replaced").await
        else {
            return;
        };
        let db = Database::connect_with(&database.url, Some(1))
            .await
            .unwrap();
        let backend_pid = || async {
            sqlx::query_scalar::<_, i32>("SELECT pg_backend_pid()")
                .fetch_one(db.pool())
                .await
        };
        let first = backend_pid().await.unwrap();
        // sqlx pings the connection as it comes back to the pool: once it
        // is back, only the ping before handing it out can find it dead.
        until_a_connection_is_idle(&db).await;
        let mut other = <sqlx::PgConnection as sqlx::Connection>::connect(&database.url)
            .await
            .unwrap();
        let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(first)
            .fetch_one(&mut other)
            .await
            .unwrap();
        assert!(ended);
        tokio::time::sleep(PING_IF_IDLE_FOR + std::time::Duration::from_millis(100)).await;
        let second = backend_pid().await.unwrap();
        assert_ne!(first, second);
    }

    /// On PostgreSQL a write's notice is sent without waiting, to go out
    /// with its `COMMIT`: it does go out, once, and only then is the write
    /// acknowledged.
    #[tokio::test]
    async fn a_write_sends_its_notice_with_its_commit() {
        let Some((database, db)) =
            temporary_postgres("a_write_sends_its_notice_with_its_commit").await
        else {
            return;
        };
        let mut listener = sqlx::postgres::PgListener::connect(&database.url)
            .await
            .unwrap();
        listener.listen(super::change_feed::CHANNEL).await.unwrap();
        let mut tx = db.begin_write().await.unwrap();
        sqlx::query("INSERT INTO id_sequences (name, last_id) VALUES ('w1', 0)")
            .execute(tx.conn())
            .await
            .unwrap();
        tx.changed([super::Topic::of(super::TopicKind::new(b'p'), 5)]);
        tx.commit().await.unwrap();
        let notice = tokio::time::timeout(std::time::Duration::from_secs(10), listener.recv())
            .await
            .expect("the notice never came")
            .unwrap();
        assert!(
            notice.payload().ends_with(" p5"),
            "the notice says what changed: {}",
            notice.payload()
        );
        let written: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM id_sequences WHERE name = 'w1'")
                .fetch_one(db.pool())
                .await
                .unwrap();
        assert_eq!(written, 1);
    }

    /// A statement sent without waiting is not forgotten: on PostgreSQL,
    /// if it fails, the `COMMIT` after it fails too and nothing of the
    /// transaction stays (as a notice that PostgreSQL refused would).
    #[tokio::test]
    async fn a_statement_sent_without_waiting_that_fails_fails_the_commit() {
        let Some((_database, db)) =
            temporary_postgres("a_statement_sent_without_waiting_that_fails_fails_the_commit")
                .await
        else {
            return;
        };
        // The transaction itself, as a write's commit has it once its
        // notice is sent (a second statement sent without waiting would
        // wait for the first's answer, and never be sent).
        let super::WriteTxKind::Own { mut tx, .. } = db.begin_write().await.unwrap().kind else {
            panic!("on PostgreSQL a write has a transaction of its own");
        };
        sqlx::query("INSERT INTO id_sequences (name, last_id) VALUES ('w1', 0)")
            .execute(&mut *tx)
            .await
            .unwrap();
        // PostgreSQL refuses a payload over 8,000 bytes.
        let sent = super::send_without_waiting(
            &mut tx,
            &format!(
                "SELECT 1 FROM (SELECT pg_notify('other', '{}')) AS sent",
                "x".repeat(9_000)
            ),
        );
        // Refused at once if the answer came within the one poll, else at
        // the commit.
        match sent {
            Err(_) => drop(tx),
            Ok(()) => assert!(tx.commit().await.is_err()),
        }
        let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM id_sequences WHERE name = 'w1'")
            .fetch_one(db.pool())
            .await
            .unwrap();
        assert_eq!(kept, 0);
        // The connection it used went back to the pool in working order.
        let mut tx = db.begin_write().await.unwrap();
        sqlx::query("INSERT INTO id_sequences (name, last_id) VALUES ('w2', 0)")
            .execute(tx.conn())
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    /// A PostgreSQL write dropped at any point of its `BEGIN` (its request
    /// gone) leaves no transaction open on the pooled connection: the next
    /// statement there runs in a transaction of its own.
    // Worker threads drive the socket while the test polls the `BEGIN`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_dropped_while_it_begins_leaves_no_transaction_open_on_postgres() {
        const CUTS: u64 = 1000;
        let Some((database, _db)) = temporary_postgres(
            "a_write_dropped_while_it_begins_leaves_no_transaction_open_on_postgres",
        )
        .await
        else {
            return;
        };
        // One connection: each cut and each check use the same one.
        let db = Database::connect_with(&database.url, Some(1))
            .await
            .unwrap();
        // Cut short after 0, 2, 4, ... microseconds of polling: the cuts
        // fall before, while and after the `BEGIN` is answered.
        for cut in (0..CUTS).step_by(2) {
            super::poll_then_drop(db.begin_write(), cut);
            // Two statements on the pool (its one connection) run in a
            // transaction each, unless one was left open on it.
            let transaction = || async {
                tokio::time::timeout(
                    std::time::Duration::from_secs(10),
                    sqlx::query_scalar::<_, i64>("SELECT txid_current()").fetch_one(db.pool()),
                )
                .await
                .unwrap_or_else(|_| panic!("after a cut at {cut} us, no statement runs"))
                .unwrap()
            };
            let (first, second) = (transaction().await, transaction().await);
            assert_ne!(
                first, second,
                "after a cut at {cut} us the connection was left in a transaction"
            );
        }
    }

    /// A PostgreSQL write dropped at any point of its commit (its request
    /// gone) either leaves nothing or is committed and has moved on what it
    /// changed in this replica's caches (which do not apply their own
    /// replica's notices).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_dropped_while_it_commits_still_reaches_the_caches_on_postgres() {
        const CUTS: u64 = 600;
        let Some((database, _db)) = temporary_postgres(
            "a_write_dropped_while_it_commits_still_reaches_the_caches_on_postgres",
        )
        .await
        else {
            return;
        };
        let db = Database::connect_with(&database.url, Some(1))
            .await
            .unwrap();
        for cut in (0..CUTS).step_by(3) {
            let topic = super::Topic::of(super::TopicKind::new(b'p'), i64::try_from(cut).unwrap());
            let before = db.generations().ticket([topic]);
            let name = format!("c{cut}");
            let mut tx = db.begin_write().await.unwrap();
            sqlx::query("INSERT INTO id_sequences (name, last_id) VALUES ($1, 0)")
                .bind(&name)
                .execute(tx.conn())
                .await
                .unwrap();
            tx.changed([topic]);
            super::poll_then_drop(tx.commit(), cut);
            // Settled once the one connection is back in the pool.
            until_a_connection_is_idle(&db).await;
            let committed: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM id_sequences WHERE name = $1")
                    .bind(&name)
                    .fetch_one(db.pool())
                    .await
                    .unwrap();
            if committed == 1 {
                let moved = tokio::time::timeout(std::time::Duration::from_secs(1), async {
                    while db.generations().ticket([topic]) == before {
                        tokio::task::yield_now().await;
                    }
                })
                .await;
                assert!(
                    moved.is_ok(),
                    "after a cut at {cut} us the write was committed but the caches never heard of it"
                );
            }
        }
    }

    #[test]
    fn numbered_parameters_in_order_become_positional() {
        assert_eq!(
            numbered_to_positional("UPDATE t SET a = $1 WHERE b = $2 AND c IN ($3, $4)").as_deref(),
            Some("UPDATE t SET a = ? WHERE b = ? AND c IN (?, ?)")
        );
        assert_eq!(
            numbered_to_positional(&format!("VALUES {}", row_placeholders(6, 2))).as_deref(),
            Some("VALUES (?, ?), (?, ?), (?, ?), (?, ?), (?, ?), (?, ?)")
        );
        // In quotes (a JSON path, a literal) a `$` is left alone.
        assert_eq!(
            numbered_to_positional("SELECT '$1', json_extract(x, '$.a') FROM t WHERE id = $1")
                .as_deref(),
            Some("SELECT '$1', json_extract(x, '$.a') FROM t WHERE id = ?")
        );
        // Out of order, used twice, or none: kept as written (still right).
        for kept in [
            "SELECT $2, $1",
            "SELECT $1 WHERE a = $1",
            "SELECT 1",
            "SELECT $1, $3",
        ] {
            assert_eq!(numbered_to_positional(kept), None, "{kept}");
        }
    }

    /// On SQLite the rewritten statement binds each value where `$n` was.
    #[tokio::test]
    async fn positional_statements_bind_their_values_in_order() {
        let (_dir, db) = temporary_sqlite().await;
        let mut conn = db.pool().acquire().await.unwrap();
        let sql = format!(
            "SELECT column1, column2 FROM (VALUES {}) ORDER BY column1",
            row_placeholders(3, 2)
        );
        let sql = positional(&conn, &sql);
        assert!(!sql.contains('$'), "{sql}");
        let mut query = sqlx::query_as::<_, (i64, String)>(&sql);
        for n in [3_i64, 1, 2] {
            query = query.bind(n).bind(format!("v{n}"));
        }
        let rows = query.fetch_all(&mut *conn).await.unwrap();
        assert_eq!(
            rows,
            [
                (1, "v1".to_owned()),
                (2, "v2".to_owned()),
                (3, "v3".to_owned())
            ]
        );
    }

    /// `database_max_connections` sizes the pool (replicas share the
    /// database server's connections).
    #[tokio::test]
    async fn the_pool_keeps_at_most_the_connections_configured() {
        let (_dir, db) = temporary_sqlite_with(Some(3)).await;
        assert_eq!(db.pool().options().get_max_connections(), 3);
        let (_dir, db) = temporary_sqlite().await;
        assert_eq!(db.pool().options().get_max_connections(), 8);
    }

    #[test]
    fn a_database_out_of_reach_is_unavailable_not_a_fault() {
        for err in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
        ] {
            let mapped = StoreError::from(err);
            assert!(matches!(mapped, StoreError::Unavailable(_)), "{mapped:?}");
        }
        assert!(matches!(
            StoreError::from(sqlx::Error::RowNotFound),
            StoreError::NotFound
        ));
        assert!(matches!(
            StoreError::from(sqlx::Error::Protocol("odd".into())),
            StoreError::Database(_)
        ));
    }
}
