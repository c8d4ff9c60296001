//! The console's sessions, as a request's cookie names them.

use crate::core::clock::now_ms;
use crate::core::failure::Failure;
use crate::core::secret;
use crate::portfolio::db;
use crate::storage::Database;

/// A session in force, as a request's cookie names it.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// What every form of the session carries back.
    pub(crate) csrf_token: String,
    /// `operator` (a printed link) or `client:<id>`.
    pub(crate) signed_in_as: String,
    /// The SHA-256 of its token, to end it.
    pub(crate) token_hash: String,
}

/// The session of `token`, if it is in force.
pub(crate) async fn session(db: &Database, token: &str) -> Result<Option<Session>, Failure> {
    if token.is_empty() || token.len() > 100 {
        return Ok(None);
    }
    let token_hash = secret::sha256_hex(token);
    Ok(db::console::session(db, &token_hash, now_ms())
        .await?
        .map(|row| Session {
            csrf_token: row.csrf_token,
            signed_in_as: row.signed_in_as,
            token_hash,
        }))
}

/// A post being written in the console: not public until published.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Draft {
    pub(crate) slug: String,
    pub(crate) title: String,
    pub(crate) summary: String,
    /// Markdown.
    pub(crate) body: String,
    pub(crate) tags: Vec<String>,
    /// When it was last saved (Unix milliseconds).
    pub(crate) saved_at_ms: i64,
}

impl TryFrom<db::console::DraftRow> for Draft {
    type Error = Failure;

    fn try_from(row: db::console::DraftRow) -> Result<Self, Failure> {
        let tags = serde_json::from_str(&row.tags)
            .map_err(|e| Failure::fault("a draft's tags", format!("{}: {e}", row.slug)))?;
        Ok(Draft {
            slug: row.slug,
            title: row.title,
            summary: row.summary,
            body: row.body,
            tags,
            saved_at_ms: row.saved_at_ms,
        })
    }
}

/// Every draft, the last saved first.
pub(crate) async fn drafts(db: &Database) -> Result<Vec<Draft>, Failure> {
    db::console::drafts(db)
        .await?
        .into_iter()
        .map(Draft::try_from)
        .collect()
}

/// The draft of `slug`, if there is one.
pub(crate) async fn draft(db: &Database, slug: &str) -> Result<Option<Draft>, Failure> {
    db::console::draft(&mut *db.conn().await?, slug)
        .await?
        .map(Draft::try_from)
        .transpose()
}
