//! The SQL of credentials: API keys, OAuth clients and their tokens. Only a
//! hash of each secret is kept. Every change a cache must hear of (a key
//! made, changed or revoked; a client or token revoked) bumps the access
//! version in the same transaction, so that processes caching them (a
//! server beside an operator's CLI, or another replica) reload.

use chrono::{DateTime, Utc};
use sqlx::{AnyConnection, FromRow};

use super::model::{ApiKey, OAuthClient, Service, StoredToken};
pub(crate) use super::model::{StoredClient, StoredKey};
use crate::config::Scope;
use crate::storage::{Database, StoreError, time_from_ms};

// ---- API keys --------------------------------------------------------------

#[derive(Debug, FromRow)]
struct ApiKeyRow {
    id: String,
    service: String,
    name: String,
    secret_hash: String,
    scopes: String,
    created_at_ms: i64,
    expires_at_ms: Option<i64>,
    revoked_at_ms: Option<i64>,
    last_used_at_ms: Option<i64>,
    rotated_to: Option<String>,
}

const KEY_COLUMNS: &str = "id, service, name, secret_hash, scopes, created_at_ms, expires_at_ms, \
                           revoked_at_ms, last_used_at_ms, rotated_to";

impl TryFrom<ApiKeyRow> for StoredKey {
    type Error = StoreError;

    fn try_from(row: ApiKeyRow) -> Result<Self, StoreError> {
        Ok(StoredKey {
            key: ApiKey {
                service: service_from(&row.service)?,
                scopes: scopes_from(&row.scopes)?,
                id: row.id,
                name: row.name,
                created_at: time_from_ms(row.created_at_ms)?,
                expires_at: row.expires_at_ms.map(time_from_ms).transpose()?,
                revoked_at: row.revoked_at_ms.map(time_from_ms).transpose()?,
                last_used_at: row.last_used_at_ms.map(time_from_ms).transpose()?,
                rotated_to: row.rotated_to,
            },
            secret_hash: row.secret_hash,
        })
    }
}

fn service_from(text: &str) -> Result<Service, StoreError> {
    Service::parse(text).ok_or_else(|| StoreError::corrupt(format!("service {text:?}")))
}

/// Scopes stored as a JSON array of their names.
pub(crate) fn scopes_from(text: &str) -> Result<Vec<Scope>, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::corrupt(format!("scopes {text:?}: {e}")))
}

pub(crate) fn scopes_text(scopes: &[Scope]) -> Result<String, StoreError> {
    serde_json::to_string(scopes).map_err(StoreError::corrupt)
}

/// Every key, newest first; of one service, or of both.
pub(crate) async fn list_keys(
    db: &Database,
    service: Option<Service>,
) -> Result<Vec<StoredKey>, StoreError> {
    let rows: Vec<ApiKeyRow> = sqlx::query_as(&format!(
        "SELECT {KEY_COLUMNS} FROM api_keys WHERE ($1 = '' OR service = $1) \
         ORDER BY created_at_ms DESC, id"
    ))
    .bind(service.map_or("", Service::as_str))
    .fetch_all(db.pool())
    .await?;
    rows.into_iter().map(StoredKey::try_from).collect()
}

/// One key.
pub(crate) async fn get_key(db: &Database, id: &str) -> Result<Option<StoredKey>, StoreError> {
    let row: Option<ApiKeyRow> =
        sqlx::query_as(&format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1"))
            .bind(id)
            .fetch_optional(db.pool())
            .await?;
    row.map(StoredKey::try_from).transpose()
}

/// Stores a new key, in the caller's transaction.
pub(crate) async fn insert_key(
    conn: &mut AnyConnection,
    key: &StoredKey,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO api_keys (id, service, name, secret_hash, scopes, created_at_ms, expires_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(&key.key.id)
    .bind(key.key.service.as_str())
    .bind(&key.key.name)
    .bind(&key.secret_hash)
    .bind(scopes_text(&key.key.scopes)?)
    .bind(key.key.created_at.timestamp_millis())
    .bind(key.key.expires_at.map(|at| at.timestamp_millis()))
    .execute(&mut *conn)
    .await?;
    bump_version(conn).await
}

/// Stores a new key.
pub(crate) async fn create_key(db: &Database, key: &StoredKey) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    insert_key(tx.conn(), key).await?;
    tx.commit().await
}

/// Marks revoked at `at`, in one write that other processes are told of,
/// the rows of each `(table, column)` whose column is `id` and that are in
/// force; whether the first table had one.
async fn revoke(
    db: &Database,
    marks: &[(&str, &str)],
    id: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let mut first = None;
    for (table, column) in marks {
        let sql = format!(
            "UPDATE {table} SET revoked_at_ms = $1 WHERE {column} = $2 AND revoked_at_ms IS NULL"
        );
        let marked = sqlx::query(&sql)
            .bind(at.timestamp_millis())
            .bind(id)
            .execute(tx.conn())
            .await?;
        first.get_or_insert(marked.rows_affected() > 0);
    }
    bump_version(tx.conn()).await?;
    tx.commit().await?;
    Ok(first.unwrap_or(false))
}

/// Revokes a key at `at`; false if there is no such key or it is revoked
/// already.
pub(crate) async fn revoke_key(
    db: &Database,
    id: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    revoke(db, &[("api_keys", "id")], id, at).await
}

/// Replaces key `old` with `new`: the new key is stored, and the old one
/// stays valid until `old_valid_until` (or its own expiry, if sooner). False
/// if `old` is not a key in force at `now`, or was rotated already.
pub(crate) async fn rotate_key(
    db: &Database,
    old: &str,
    new: &StoredKey,
    old_valid_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let updated = sqlx::query(
        "UPDATE api_keys SET rotated_to = $1, \
         expires_at_ms = CASE WHEN expires_at_ms IS NULL OR expires_at_ms > $2 THEN $2 ELSE expires_at_ms END \
         WHERE id = $3 AND revoked_at_ms IS NULL AND rotated_to IS NULL \
         AND (expires_at_ms IS NULL OR expires_at_ms > $4)",
    )
    .bind(&new.key.id)
    .bind(old_valid_until.timestamp_millis())
    .bind(old)
    .bind(now.timestamp_millis())
    .execute(tx.conn())
    .await?;
    if updated.rows_affected() == 0 {
        return Ok(false);
    }
    insert_key(tx.conn(), new).await?;
    tx.commit().await?;
    Ok(true)
}

/// Records when keys were last used (a batch of `(id, at)`). Not a change
/// caches care about: the version stays.
pub(crate) async fn record_key_uses(
    db: &Database,
    uses: &[(String, i64)],
) -> Result<(), StoreError> {
    if uses.is_empty() {
        return Ok(());
    }
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    for (id, at) in uses {
        sqlx::query(
            "UPDATE api_keys SET last_used_at_ms = $1 WHERE id = $2 \
             AND (last_used_at_ms IS NULL OR last_used_at_ms < $1)",
        )
        .bind(at)
        .bind(id)
        .execute(tx.conn())
        .await?;
    }
    tx.commit().await
}

// ---- OAuth clients -----------------------------------------------------------

#[derive(Debug, FromRow)]
struct ClientRow {
    client_id: String,
    name: String,
    secret_hash: String,
    scopes: String,
    created_at_ms: i64,
    revoked_at_ms: Option<i64>,
}

const CLIENT_COLUMNS: &str = "client_id, name, secret_hash, scopes, created_at_ms, revoked_at_ms";

impl TryFrom<ClientRow> for StoredClient {
    type Error = StoreError;

    fn try_from(row: ClientRow) -> Result<Self, StoreError> {
        Ok(StoredClient {
            client: OAuthClient {
                scopes: scopes_from(&row.scopes)?,
                client_id: row.client_id,
                name: row.name,
                created_at: time_from_ms(row.created_at_ms)?,
                revoked_at: row.revoked_at_ms.map(time_from_ms).transpose()?,
            },
            secret_hash: row.secret_hash,
        })
    }
}

/// Every client, newest first.
pub(crate) async fn list_clients(db: &Database) -> Result<Vec<StoredClient>, StoreError> {
    let rows: Vec<ClientRow> = sqlx::query_as(&format!(
        "SELECT {CLIENT_COLUMNS} FROM oauth_clients ORDER BY created_at_ms DESC, client_id"
    ))
    .fetch_all(db.pool())
    .await?;
    rows.into_iter().map(StoredClient::try_from).collect()
}

/// One client.
pub(crate) async fn get_client(
    db: &Database,
    client_id: &str,
) -> Result<Option<StoredClient>, StoreError> {
    let row: Option<ClientRow> = sqlx::query_as(&format!(
        "SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1"
    ))
    .bind(client_id)
    .fetch_optional(db.pool())
    .await?;
    row.map(StoredClient::try_from).transpose()
}

/// Stores a new client.
pub(crate) async fn create_client(db: &Database, client: &StoredClient) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO oauth_clients (client_id, name, secret_hash, scopes, created_at_ms) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&client.client.client_id)
    .bind(&client.client.name)
    .bind(&client.secret_hash)
    .bind(scopes_text(&client.client.scopes)?)
    .bind(client.client.created_at.timestamp_millis())
    .execute(db.pool())
    .await?;
    Ok(())
}

/// Gives client `client_id` a new secret (its hash); false if there is no
/// such client in force. Its tokens stay as they are.
pub(crate) async fn replace_client_secret(
    db: &Database,
    client_id: &str,
    secret_hash: &str,
) -> Result<bool, StoreError> {
    let replaced = sqlx::query(
        "UPDATE oauth_clients SET secret_hash = $1 WHERE client_id = $2 AND revoked_at_ms IS NULL",
    )
    .bind(secret_hash)
    .bind(client_id)
    .execute(db.pool())
    .await?;
    Ok(replaced.rows_affected() == 1)
}

/// Revokes a client and every token it holds, at `at`; false if there is no
/// such client or it is revoked already.
pub(crate) async fn revoke_client(
    db: &Database,
    client_id: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let marks = [
        ("oauth_clients", "client_id"),
        ("oauth_tokens", "client_id"),
    ];
    revoke(db, &marks, client_id, at).await
}

// ---- bearer tokens -------------------------------------------------------------

#[derive(Debug, FromRow)]
struct TokenRow {
    id: String,
    secret_hash: String,
    client_id: String,
    scopes: String,
    created_at_ms: i64,
    expires_at_ms: i64,
    revoked_at_ms: Option<i64>,
}

impl TryFrom<TokenRow> for StoredToken {
    type Error = StoreError;

    fn try_from(row: TokenRow) -> Result<Self, StoreError> {
        Ok(StoredToken {
            scopes: scopes_from(&row.scopes)?,
            id: row.id,
            secret_hash: row.secret_hash,
            client_id: row.client_id,
            created_at_ms: row.created_at_ms,
            expires_at_ms: row.expires_at_ms,
            revoked_at_ms: row.revoked_at_ms,
        })
    }
}

/// Stores a token just issued.
pub(crate) async fn insert_token(db: &Database, token: &StoredToken) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO oauth_tokens (id, secret_hash, client_id, scopes, created_at_ms, expires_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&token.id)
    .bind(&token.secret_hash)
    .bind(&token.client_id)
    .bind(scopes_text(&token.scopes)?)
    .bind(token.created_at_ms)
    .bind(token.expires_at_ms)
    .execute(db.pool())
    .await?;
    Ok(())
}

/// One token (revoked as well when its client is).
pub(crate) async fn get_token(db: &Database, id: &str) -> Result<Option<StoredToken>, StoreError> {
    let row: Option<TokenRow> = sqlx::query_as(
        "SELECT t.id, t.secret_hash, t.client_id, t.scopes, t.created_at_ms, t.expires_at_ms, \
         COALESCE(t.revoked_at_ms, c.revoked_at_ms) AS revoked_at_ms \
         FROM oauth_tokens t JOIN oauth_clients c ON c.client_id = t.client_id WHERE t.id = $1",
    )
    .bind(id)
    .fetch_optional(db.pool())
    .await?;
    row.map(StoredToken::try_from).transpose()
}

/// Revokes a token at `at`; false if it was revoked already.
pub(crate) async fn revoke_token(
    db: &Database,
    id: &str,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    revoke(db, &[("oauth_tokens", "id")], id, at).await
}

/// Forgets tokens that expired before `before`; how many.
pub(crate) async fn delete_expired_tokens(db: &Database, before: i64) -> Result<u64, StoreError> {
    let deleted = sqlx::query("DELETE FROM oauth_tokens WHERE expires_at_ms < $1")
        .bind(before)
        .execute(db.pool())
        .await?;
    Ok(deleted.rows_affected())
}

// ---- the access version --------------------------------------------------------

/// Counts a change caches must hear of (in the caller's transaction).
pub(crate) async fn bump_version(conn: &mut AnyConnection) -> Result<(), StoreError> {
    sqlx::query("UPDATE access_version SET version = version + 1 WHERE id = 1")
        .execute(conn)
        .await?;
    Ok(())
}

/// How many such changes there have been.
pub(crate) async fn version(db: &Database) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT version FROM access_version WHERE id = 1")
            .fetch_one(db.pool())
            .await?,
    )
}
