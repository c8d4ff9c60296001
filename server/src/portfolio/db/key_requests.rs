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

/// Stores a new request from `requester` (a hash of the client's address),
/// in the caller's transaction.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    request: &KeyRequest,
    requester: &str,
) -> Result<(), StoreError> {
    sqlx::query(&format!(
        "INSERT INTO key_requests ({COLUMNS}, requester) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
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
    .bind(requester)
    .execute(conn)
    .await?;
    Ok(())
}

/// How many requests wait for the operator: in all, and from `requester`.
pub(crate) async fn count_pending(
    db: &Database,
    requester: &str,
) -> Result<(i64, i64), StoreError> {
    Ok(sqlx::query_as(
        "SELECT COUNT(*), COUNT(CASE WHEN requester = $1 THEN 1 END) FROM key_requests \
         WHERE status = 'pending'",
    )
    .bind(requester)
    .fetch_one(db.pool())
    .await?)
}

/// When to tell the site owner of a new request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OwnerNotice {
    /// Now: nothing was sent within the quiet period.
    Now,
    /// At this time (Unix milliseconds), when the quiet period ends: one
    /// email then for every request until it.
    FollowUpAt(i64),
    /// Not at all: a follow-up is already due, and covers this request.
    Covered,
}

/// Decides, in the caller's transaction, how the owner hears of a request
/// made at `now`: at most one email per `quiet_ms`, and none lost (every
/// request is told of by an email sent at or after it).
pub(crate) async fn owner_notice(
    conn: &mut AnyConnection,
    now: i64,
    quiet_ms: i64,
) -> Result<OwnerNotice, StoreError> {
    // The row is taken (a row lock on PostgreSQL) before it is read, so
    // that requests at once decide one after the other.
    sqlx::query(
        "INSERT INTO owner_notices (kind, last_sent_ms, follow_up_due) \
         VALUES ('key_requests', 0, 0) ON CONFLICT (kind) DO NOTHING",
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query("UPDATE owner_notices SET kind = kind WHERE kind = 'key_requests'")
        .execute(&mut *conn)
        .await?;
    let (last, follow_up_due): (i64, i32) = sqlx::query_as(
        "SELECT last_sent_ms, follow_up_due FROM owner_notices WHERE kind = 'key_requests'",
    )
    .fetch_one(&mut *conn)
    .await?;
    let (notice, last, follow_up_due) = if follow_up_due == 1 && now < last {
        return Ok(OwnerNotice::Covered);
    } else if now - last >= quiet_ms {
        (OwnerNotice::Now, now, 0)
    } else {
        (OwnerNotice::FollowUpAt(last + quiet_ms), last + quiet_ms, 1)
    };
    sqlx::query(
        "UPDATE owner_notices SET last_sent_ms = $1, follow_up_due = $2 WHERE kind = 'key_requests'",
    )
    .bind(last)
    .bind(follow_up_due)
    .execute(&mut *conn)
    .await?;
    Ok(notice)
}

/// One page of the requests (of one status, or all), oldest first, and how
/// many there are in all.
pub(crate) async fn list(
    db: &Database,
    status: Option<KeyRequestStatus>,
    window: &super::Window,
) -> Result<super::Page<KeyRequest>, StoreError> {
    let listing = super::Listing {
        table: "key_requests",
        columns: COLUMNS,
        order_by: "created_at_ms, id",
        filtered_by: Some("status"),
        // A request is never deleted, so the cursor's request is there to
        // say where it stood; an unknown one leaves nothing after it.
        after: "(created_at_ms, id) > (SELECT created_at_ms, id FROM key_requests WHERE id = {c})",
    };
    let status = status.map(KeyRequestStatus::as_str);
    super::page::<KeyRequestRow, _>(db, listing, status, window, |request: &KeyRequest| {
        super::After::Key(request.id.clone())
    })
    .await
}

/// One request, in the caller's transaction.
pub(crate) async fn get(
    conn: &mut AnyConnection,
    id: &str,
) -> Result<Option<KeyRequest>, StoreError> {
    let row: Option<KeyRequestRow> =
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM key_requests WHERE id = $1"))
            .bind(id)
            .fetch_optional(conn)
            .await?;
    row.map(KeyRequest::try_from).transpose()
}

/// Records the operator's decision on a pending request (and the key made
/// for it); false if it was not pending any more.
pub(crate) async fn decide(
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

#[cfg(test)]
mod tests {
    use super::*;

    /// At most one email a quiet period, and every request told of by an
    /// email sent at or after it.
    #[tokio::test]
    async fn the_owner_hears_once_a_period_and_of_every_request() {
        let db = Database::connect("sqlite::memory:").await.unwrap();
        let minute = 60_000;
        let at = async |t: i64| {
            let mut tx = db.begin_write().await.unwrap();
            let notice = owner_notice(tx.conn(), t * minute, 10 * minute)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            notice
        };
        assert_eq!(at(100).await, OwnerNotice::Now);
        assert_eq!(at(101).await, OwnerNotice::FollowUpAt(110 * minute));
        assert_eq!(at(105).await, OwnerNotice::Covered);
        assert_eq!(
            at(111).await,
            OwnerNotice::FollowUpAt(120 * minute),
            "after the follow-up went"
        );
        assert_eq!(at(131).await, OwnerNotice::Now, "a quiet period passed");
    }
}
