//! The owner's console: its one-time sign-in links and its sessions, by the
//! SHA-256 of their tokens. Times are Unix milliseconds.

use sqlx::{AnyConnection, FromRow};

use crate::storage::{Database, StoreError};

/// Keeps a sign-in link until `expires_at_ms`.
pub(crate) async fn insert_link(
    conn: &mut AnyConnection,
    token_hash: &str,
    expires_at_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query("INSERT INTO console_sign_in_links (token_hash, expires_at_ms) VALUES ($1, $2)")
        .bind(token_hash)
        .bind(expires_at_ms)
        .execute(conn)
        .await?;
    Ok(())
}

/// Uses up the link at `now_ms`: true if it was unused and had not expired
/// (of two at once, one wins).
pub(crate) async fn use_link(
    conn: &mut AnyConnection,
    token_hash: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let used = sqlx::query(
        "UPDATE console_sign_in_links SET used_at_ms = $1 \
         WHERE token_hash = $2 AND used_at_ms IS NULL AND expires_at_ms > $1",
    )
    .bind(now_ms)
    .bind(token_hash)
    .execute(conn)
    .await?;
    Ok(used.rows_affected() == 1)
}

/// A console session as stored.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct SessionRow {
    pub(crate) csrf_token: String,
    pub(crate) signed_in_as: String,
    pub(crate) expires_at_ms: i64,
}

pub(crate) async fn insert_session(
    conn: &mut AnyConnection,
    token_hash: &str,
    session: &SessionRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO console_sessions (token_hash, csrf_token, signed_in_as, expires_at_ms) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(token_hash)
    .bind(&session.csrf_token)
    .bind(&session.signed_in_as)
    .bind(session.expires_at_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// The session of this token, if it has not ended at `now_ms`.
pub(crate) async fn session(
    db: &Database,
    token_hash: &str,
    now_ms: i64,
) -> Result<Option<SessionRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT csrf_token, signed_in_as, expires_at_ms FROM console_sessions \
         WHERE token_hash = $1 AND expires_at_ms > $2",
    )
    .bind(token_hash)
    .bind(now_ms)
    .fetch_optional(db.pool())
    .await?)
}

/// Ends the session of this token, and every session and link that ended
/// before `now_ms`.
pub(crate) async fn end_session(
    conn: &mut AnyConnection,
    token_hash: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM console_sessions WHERE token_hash = $1 OR expires_at_ms <= $2")
        .bind(token_hash)
        .bind(now_ms)
        .execute(&mut *conn)
        .await?;
    sqlx::query("DELETE FROM console_sign_in_links WHERE expires_at_ms <= $1")
        .bind(now_ms)
        .execute(conn)
        .await?;
    Ok(())
}

/// A draft of a post, as stored.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct DraftRow {
    pub(crate) slug: String,
    pub(crate) title: String,
    pub(crate) summary: String,
    pub(crate) body: String,
    /// A JSON array of strings.
    pub(crate) tags: String,
    pub(crate) saved_at_ms: i64,
}

/// Keeps `draft`, in place of the draft of its slug if there is one.
pub(crate) async fn save_draft(
    conn: &mut AnyConnection,
    draft: &DraftRow,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO post_drafts (slug, title, summary, body, tags, saved_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (slug) DO UPDATE SET \
         title = excluded.title, summary = excluded.summary, body = excluded.body, \
         tags = excluded.tags, saved_at_ms = excluded.saved_at_ms",
    )
    .bind(&draft.slug)
    .bind(&draft.title)
    .bind(&draft.summary)
    .bind(&draft.body)
    .bind(&draft.tags)
    .bind(draft.saved_at_ms)
    .execute(conn)
    .await?;
    Ok(())
}

/// Every draft, the last saved first.
pub(crate) async fn drafts(db: &Database) -> Result<Vec<DraftRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT slug, title, summary, body, tags, saved_at_ms FROM post_drafts \
         ORDER BY saved_at_ms DESC, slug",
    )
    .fetch_all(db.pool())
    .await?)
}

/// The draft of `slug`, if there is one.
pub(crate) async fn draft(
    conn: &mut AnyConnection,
    slug: &str,
) -> Result<Option<DraftRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT slug, title, summary, body, tags, saved_at_ms FROM post_drafts WHERE slug = $1",
    )
    .bind(slug)
    .fetch_optional(conn)
    .await?)
}

/// Drops the draft of `slug`.
pub(crate) async fn delete_draft(conn: &mut AnyConnection, slug: &str) -> Result<(), StoreError> {
    sqlx::query("DELETE FROM post_drafts WHERE slug = $1")
        .bind(slug)
        .execute(conn)
        .await?;
    Ok(())
}
