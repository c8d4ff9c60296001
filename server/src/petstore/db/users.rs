//! Users (with their password hashes) and login sessions (only a token's
//! SHA-256 is stored).

use sqlx::{AnyConnection, FromRow};

use super::{IdTable, free_or_new_id};
use crate::access::db::bump_version;
use crate::access::model::CachedSession;
use crate::petstore::model::{StoredUser, User};
use crate::storage::{Database, StoreError};

#[derive(Debug, FromRow)]
struct UserRow {
    id: i64,
    username: String,
    first_name: Option<String>,
    last_name: Option<String>,
    email: Option<String>,
    password_hash: Option<String>,
    phone: Option<String>,
    user_status: Option<i32>,
}

impl From<UserRow> for StoredUser {
    fn from(row: UserRow) -> Self {
        StoredUser {
            id: row.id,
            user: User {
                id: Some(row.id),
                username: row.username,
                first_name: row.first_name,
                last_name: row.last_name,
                email: row.email,
                password: None,
                phone: row.phone,
                user_status: row.user_status,
            },
            password_hash: row.password_hash,
        }
    }
}

/// The user named `username`.
pub(crate) async fn get(db: &Database, username: &str) -> Result<Option<StoredUser>, StoreError> {
    let row: Option<UserRow> = sqlx::query_as(
        "SELECT id, username, first_name, last_name, email, password_hash, phone, user_status \
         FROM users WHERE username = $1",
    )
    .bind(username)
    .fetch_optional(db.pool())
    .await?;
    Ok(row.map(StoredUser::from))
}

/// Inserts a user (its password already hashed) with the id it asks for
/// when no user has it, or one the server chooses; returns the id. A taken
/// username is [`StoreError::Conflict`].
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    requested: Option<i64>,
    user: &User,
    password_hash: Option<&str>,
) -> Result<i64, StoreError> {
    let id = free_or_new_id(conn, IdTable::Users, requested).await?;
    sqlx::query(
        "INSERT INTO users (id, username, first_name, last_name, email, password_hash, phone, user_status) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(id)
    .bind(&user.username)
    .bind(&user.first_name)
    .bind(&user.last_name)
    .bind(&user.email)
    .bind(password_hash)
    .bind(&user.phone)
    .bind(user.user_status)
    .execute(&mut *conn)
    .await?;
    Ok(id)
}

/// Replaces the user with id `id` (a new username included); without a
/// new hash the password stays, with one the user's sessions but `keep`
/// end. False if there is no such user. Other processes are told (the
/// access version), so that they forget the user's sessions and remembered
/// passwords.
pub(crate) async fn replace(
    conn: &mut AnyConnection,
    id: i64,
    user: &User,
    new_password_hash: Option<&str>,
    keep: Option<&str>,
) -> Result<bool, StoreError> {
    let updated: Option<i64> = sqlx::query_scalar(
        "UPDATE users SET username = $1, first_name = $2, last_name = $3, email = $4, \
         password_hash = COALESCE($5, password_hash), phone = $6, user_status = $7 \
         WHERE id = $8 RETURNING id",
    )
    .bind(&user.username)
    .bind(&user.first_name)
    .bind(&user.last_name)
    .bind(&user.email)
    .bind(new_password_hash)
    .bind(&user.phone)
    .bind(user.user_status)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    if updated.is_none() {
        return Ok(false);
    }
    if new_password_hash.is_some() {
        sqlx::query("DELETE FROM user_sessions WHERE user_id = $1 AND token_hash <> $2")
            .bind(id)
            .bind(keep.unwrap_or_default())
            .execute(&mut *conn)
            .await?;
    }
    bump_version(conn).await?;
    Ok(true)
}

/// Deletes the user with id `id` (its sessions go with it, and other
/// processes are told); false if there is none.
pub(crate) async fn delete(conn: &mut AnyConnection, id: i64) -> Result<bool, StoreError> {
    let deleted = sqlx::query("DELETE FROM users WHERE id = $1")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    if deleted.rows_affected() == 0 {
        return Ok(false);
    }
    bump_version(conn).await?;
    Ok(true)
}

/// Starts a session for user `user_id` until `expires_at` (Unix seconds);
/// expired sessions are swept at the same time.
pub(crate) async fn create_session(
    db: &Database,
    session: &NewSession<'_>,
    now: i64,
) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    sqlx::query("DELETE FROM user_sessions WHERE expires_at < $1")
        .bind(now)
        .execute(tx.conn())
        .await?;
    sqlx::query(
        "INSERT INTO user_sessions (token_hash, user_id, expires_at, scopes) VALUES ($1, $2, $3, $4)",
    )
    .bind(session.token_hash)
    .bind(session.user_id)
    .bind(session.expires_at)
    .bind(session.scopes)
    .execute(tx.conn())
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A session to store: its token's hash, its user, when it ends (Unix
/// seconds) and its scopes (space-separated; none: both, as `loginUser`'s).
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewSession<'a> {
    pub(crate) token_hash: &'a str,
    pub(crate) user_id: i64,
    pub(crate) expires_at: i64,
    pub(crate) scopes: Option<&'a str>,
}

/// The session whose token hashes to `token_hash`, if it is in force at
/// `now` (Unix seconds).
pub(crate) async fn session(
    db: &Database,
    token_hash: &str,
    now: i64,
) -> Result<Option<CachedSession>, StoreError> {
    let row: Option<(i64, Option<String>, i64)> = sqlx::query_as(
        "SELECT user_id, scopes, expires_at FROM user_sessions \
         WHERE token_hash = $1 AND expires_at >= $2",
    )
    .bind(token_hash)
    .bind(now)
    .fetch_optional(db.pool())
    .await?;
    Ok(row.map(|(user_id, scopes, expires_at)| CachedSession {
        user_id,
        scopes,
        expires_at,
    }))
}

/// Ends the session whose token hashes to `token_hash`, if there is one
/// (and tells other processes, which may have it cached).
pub(crate) async fn end_session(db: &Database, token_hash: &str) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let ended = sqlx::query("DELETE FROM user_sessions WHERE token_hash = $1")
        .bind(token_hash)
        .execute(tx.conn())
        .await?;
    if ended.rows_affected() > 0 {
        bump_version(tx.conn()).await?;
    }
    tx.commit().await?;
    Ok(())
}
