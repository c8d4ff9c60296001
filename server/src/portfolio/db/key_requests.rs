//! Requests for API keys, and the operator's decisions on them. Times are
//! Unix milliseconds.

use chrono::{DateTime, Utc};
use sqlx::{AnyConnection, FromRow};

use crate::portfolio::model::{KeyRequest, KeyRequestStatus};
use crate::storage::{Database, StoreError, time_from_ms};

#[derive(Debug, FromRow)]
struct KeyRequestRow {
    id: String,
    name: String,
    organisation: String,
    intended_use: String,
    expected_volume: String,
    technical_contact: String,
    status: String,
    key_id: Option<String>,
    created_at_ms: i64,
    decided_at_ms: Option<i64>,
}

const COLUMNS: &str = "id, name, organisation, intended_use, expected_volume, technical_contact, \
                       status, key_id, created_at_ms, decided_at_ms";

impl TryFrom<KeyRequestRow> for KeyRequest {
    type Error = StoreError;

    fn try_from(row: KeyRequestRow) -> Result<Self, StoreError> {
        Ok(KeyRequest {
            status: KeyRequestStatus::parse(&row.status).ok_or_else(|| {
                StoreError::corrupt(format!("key request status {:?}", row.status))
            })?,
            created_at: time_from_ms(row.created_at_ms)?,
            decided_at: row.decided_at_ms.map(time_from_ms).transpose()?,
            id: row.id,
            name: row.name,
            organisation: row.organisation,
            intended_use: row.intended_use,
            expected_volume: row.expected_volume,
            technical_contact: row.technical_contact,
            key_id: row.key_id,
        })
    }
}

/// Stores a new request, in the caller's transaction.
pub async fn insert(conn: &mut AnyConnection, request: &KeyRequest) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO key_requests ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    ))
    .bind(&request.id)
    .bind(&request.name)
    .bind(&request.organisation)
    .bind(&request.intended_use)
    .bind(&request.expected_volume)
    .bind(&request.technical_contact)
    .bind(request.status.as_str())
    .bind(&request.key_id)
    .bind(request.created_at.timestamp_millis())
    .bind(request.decided_at.map(|at| at.timestamp_millis()))
    .execute(conn)
    .await?;
    Ok(())
}

/// How many requests wait for the operator.
pub async fn count_pending(db: &Database) -> Result<i64, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT COUNT(*) FROM key_requests WHERE status = 'pending'")
            .fetch_one(db.pool())
            .await?,
    )
}

/// One page of the requests (of one status, or all), oldest first, and how
/// many there are in all.
pub async fn list(
    db: &Database,
    status: Option<KeyRequestStatus>,
    offset: i64,
    limit: i64,
) -> Result<(Vec<KeyRequest>, i64), StoreError> {
    let status = status.map_or("", KeyRequestStatus::as_str);
    let rows: Vec<KeyRequestRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM key_requests WHERE ($1 = '' OR status = $1) \
         ORDER BY created_at_ms, id LIMIT $2 OFFSET $3"
    ))
    .bind(status)
    .bind(limit)
    .bind(offset)
    .fetch_all(db.pool())
    .await?;
    let total: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM key_requests WHERE ($1 = '' OR status = $1)")
            .bind(status)
            .fetch_one(db.pool())
            .await?;
    let requests = rows
        .into_iter()
        .map(KeyRequest::try_from)
        .collect::<Result<_, _>>()?;
    Ok((requests, total))
}

/// One request, in the caller's transaction.
pub async fn get(conn: &mut AnyConnection, id: &str) -> Result<Option<KeyRequest>, StoreError> {
    let row: Option<KeyRequestRow> =
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM key_requests WHERE id = $1"))
            .bind(id)
            .fetch_optional(conn)
            .await?;
    row.map(KeyRequest::try_from).transpose()
}

/// Records the operator's decision on a pending request (and the key made
/// for it); false if it was not pending any more.
pub async fn decide(
    conn: &mut AnyConnection,
    id: &str,
    status: KeyRequestStatus,
    key_id: Option<&str>,
    at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let decided = sqlx::query(
        "UPDATE key_requests SET status = $1, key_id = $2, decided_at_ms = $3 \
         WHERE id = $4 AND status = 'pending'",
    )
    .bind(status.as_str())
    .bind(key_id)
    .bind(at.timestamp_millis())
    .bind(id)
    .execute(conn)
    .await?;
    Ok(decided.rows_affected() == 1)
}
