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
