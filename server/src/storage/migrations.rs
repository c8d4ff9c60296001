//! The database's migrations as an operator sees them: which are applied,
//! which pending (`migrate --dry-run`, `doctor`), on a database opened
//! without migrating it.

use std::collections::BTreeSet;

use anyhow::Context as _;

use super::{Backend, Database};

/// One connection to `url`, made and closed: whether the database answers,
/// with the reason it does not (a pool would retry until its timeout).
pub(crate) async fn reach(url: &str) -> anyhow::Result<()> {
    use sqlx::Connection as _;
    sqlx::any::install_default_drivers();
    // sqlx's error names its cause already: not repeated as a chain.
    let connection = sqlx::AnyConnection::connect(url).await.map_err(|e| {
        anyhow::anyhow!(
            "cannot connect to the database at {}: {e}",
            crate::config::redact_url(url)
        )
    })?;
    connection.close().await?;
    Ok(())
}

/// Connects (creating the SQLite file if needed) without migrating.
pub(crate) async fn open(url: &str, max_connections: Option<u32>) -> anyhow::Result<Database> {
    Database::open(url, max_connections).await
}

/// One migration of this server's.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Migration {
    pub(crate) version: i64,
    pub(crate) description: String,
}

/// Where a database stands against this server's migrations.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct MigrationStatus {
    #[serde(serialize_with = "backend_name")]
    pub(crate) backend: Backend,
    pub(crate) applied: Vec<Migration>,
    pub(crate) pending: Vec<Migration>,
    /// Applied by a newer server: this one refuses the database.
    pub(crate) unknown: Vec<i64>,
}

fn backend_name<S: serde::Serializer>(backend: &Backend, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(backend.name())
}

/// Which of this server's migrations the database has, which it lacks,
/// and any it has that this server does not know (a newer server's).
pub(crate) async fn status(db: &Database) -> anyhow::Result<MigrationStatus> {
    let exists_sql = match db.backend {
        Backend::Sqlite => {
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'"
        }
        Backend::Postgres => {
            "SELECT COUNT(*) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = '_sqlx_migrations'"
        }
    };
    let exists: i64 = sqlx::query_scalar(exists_sql)
        .fetch_one(&db.pool)
        .await
        .context("cannot read the database's migrations")?;
    let applied: BTreeSet<i64> = if exists > 0 {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success")
            .fetch_all(&db.pool)
            .await
            .context("cannot read the database's migrations")?
            .into_iter()
            .collect()
    } else {
        BTreeSet::new()
    };
    let known: Vec<Migration> = db
        .migrator()
        .iter()
        .filter(|m| m.migration_type.is_up_migration())
        .map(|m| Migration {
            version: m.version,
            description: m.description.to_string(),
        })
        .collect();
    let unknown = applied
        .iter()
        .filter(|v| !known.iter().any(|m| m.version == **v))
        .copied()
        .collect();
    let (applied, pending) = known
        .into_iter()
        .partition(|m| applied.contains(&m.version));
    Ok(MigrationStatus {
        backend: db.backend,
        applied,
        pending,
        unknown,
    })
}
