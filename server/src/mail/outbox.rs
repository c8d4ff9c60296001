//! The outbox's storage: an email is written here in the transaction of the
//! change that causes it ([`enqueue`]), then claimed, and marked sent, to be
//! retried, or failed by the worker. Times are Unix milliseconds.

use sqlx::{AnyConnection, FromRow};

use super::templates::OutgoingEmail;
use crate::core::clock::now_ms;
use crate::storage::{Database, StoreError, positional, row_placeholders};

/// An email in the outbox, claimed for one delivery attempt.
#[derive(Debug, Clone, FromRow)]
pub(crate) struct QueuedEmail {
    pub(crate) id: i64,
    pub(crate) recipient: String,
    pub(crate) subject: String,
    pub(crate) body: String,
    /// The HTML alternative of `body`; none for an email queued before
    /// emails had one.
    pub(crate) html_body: Option<String>,
    pub(crate) list_unsubscribe: Option<String>,
    /// The same across attempts, so that receivers can drop a repeat.
    pub(crate) message_id: String,
    /// Attempts before this one.
    pub(crate) attempts: i32,
    /// When it was queued (or requeued): its lifetime runs from here.
    #[sqlx(rename = "created_at_ms")]
    pub(crate) queued_at_ms: i64,
}

/// Writes an email into the outbox, in the caller's transaction.
pub(crate) async fn enqueue(
    conn: &mut AnyConnection,
    email: &OutgoingEmail,
) -> Result<(), StoreError> {
    enqueue_all(conn, std::slice::from_ref(email)).await
}

/// Writes an email into the outbox to leave at `due` (Unix milliseconds),
/// not before, in the caller's transaction.
pub(crate) async fn enqueue_at(
    conn: &mut AnyConnection,
    email: &OutgoingEmail,
    due: i64,
) -> Result<(), StoreError> {
    insert(conn, std::slice::from_ref(email), due).await
}

/// Writes emails into the outbox, in the caller's transaction: up to
/// [`EMAILS_PER_STATEMENT`] in one statement, since a statement's round trip,
/// not its rows, is what a transaction of 10,000 emails spends its time on.
pub(crate) async fn enqueue_all(
    conn: &mut AnyConnection,
    emails: &[OutgoingEmail],
) -> Result<(), StoreError> {
    insert(conn, emails, now_ms()).await
}

/// [`enqueue_all`], the emails due at `due`.
async fn insert(
    conn: &mut AnyConnection,
    emails: &[OutgoingEmail],
    due: i64,
) -> Result<(), StoreError> {
    const COLUMNS: usize = 11;
    let now = now_ms();
    for chunk in emails.chunks(EMAILS_PER_STATEMENT) {
        let rows = row_placeholders(chunk.len(), COLUMNS);
        let sql = format!(
            "INSERT INTO outbox (recipient, subject, body, html_body, list_unsubscribe, \
             message_id, status, attempts, next_attempt_at_ms, created_at_ms, holds_secret) \
             VALUES {rows}"
        );
        let sql = positional(conn, &sql);
        let mut query = sqlx::query(&sql);
        for email in chunk {
            let message_id = format!(
                "<{}@{}>",
                crate::core::secret::hex_nonce::<16>(),
                email.message_id_domain
            );
            query = query
                .bind(&email.to)
                .bind(&email.subject)
                .bind(&email.body)
                .bind(&email.html)
                .bind(&email.list_unsubscribe)
                .bind(message_id)
                .bind("pending")
                .bind(0_i32)
                .bind(due)
                .bind(now)
                .bind(i32::from(email.holds_secret));
        }
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

/// 11 parameters each: well under what a statement may have (SQLite's
/// 32,766; PostgreSQL's 65,535).
pub(crate) const EMAILS_PER_STATEMENT: usize = 500;

/// The ids of pending emails due now and not leased, oldest first.
pub(crate) async fn due(db: &Database, limit: i64) -> Result<Vec<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at_ms <= $1 \
         AND (lease_until_ms IS NULL OR lease_until_ms < $1) ORDER BY id LIMIT $2",
    )
    .bind(now_ms())
    .bind(limit)
    .fetch_all(db.pool())
    .await?)
}

/// Leases email `id` until `lease_until` if it is still pending and not
/// leased: of several workers (replicas), one wins. The email, if this one did.
pub(crate) async fn claim(
    db: &Database,
    id: i64,
    lease_until: i64,
) -> Result<Option<QueuedEmail>, StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let claimed = sqlx::query(
        "UPDATE outbox SET lease_until_ms = $1 WHERE id = $2 AND status = 'pending' \
         AND (lease_until_ms IS NULL OR lease_until_ms < $3)",
    )
    .bind(lease_until)
    .bind(id)
    .bind(now_ms())
    .execute(tx.conn())
    .await?;
    let email = if claimed.rows_affected() == 1 {
        sqlx::query_as(
            "SELECT id, recipient, subject, body, html_body, list_unsubscribe, message_id, \
             attempts, created_at_ms FROM outbox WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(tx.conn())
        .await?
    } else {
        None
    };
    tx.commit().await?;
    Ok(email)
}

/// Gives up this process's claim on email `id` (not delivered, nothing
/// recorded): it is due again at once.
pub(crate) async fn release(db: &Database, id: i64) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    sqlx::query("UPDATE outbox SET lease_until_ms = NULL WHERE id = $1 AND status = 'pending'")
        .bind(id)
        .execute(tx.conn())
        .await?;
    tx.commit().await?;
    Ok(())
}

/// How a delivery attempt is recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record {
    Sent,
    /// Try again at this time (Unix milliseconds); the error is kept.
    RetryAt(i64, String),
    /// Given up; the error is kept.
    Failed(String),
}

/// Records the attempt on email `id` (its `attempts`-th) and releases the lease.
pub(crate) async fn record(
    db: &Database,
    id: i64,
    attempts: i32,
    record: &Record,
) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let query = match record {
        // A body that held a secret is forgotten once delivered.
        Record::Sent => sqlx::query(
            "UPDATE outbox SET status = 'sent', attempts = $1, sent_at_ms = $2, \
             lease_until_ms = NULL, last_error = NULL, \
             body = CASE WHEN holds_secret = 1 THEN '(removed once delivered: it held a secret)' \
             ELSE body END, \
             html_body = CASE WHEN holds_secret = 1 THEN NULL ELSE html_body END WHERE id = $3",
        )
        .bind(attempts)
        .bind(now_ms()),
        Record::RetryAt(at, error) => sqlx::query(
            "UPDATE outbox SET attempts = $1, next_attempt_at_ms = $2, lease_until_ms = NULL, \
             last_error = $3 WHERE id = $4",
        )
        .bind(attempts)
        .bind(*at)
        .bind(error.as_str()),
        Record::Failed(error) => sqlx::query(
            "UPDATE outbox SET status = 'failed', attempts = $1, lease_until_ms = NULL, \
             last_error = $2 WHERE id = $3",
        )
        .bind(attempts)
        .bind(error.as_str()),
    };
    query.bind(id).execute(tx.conn()).await?;
    tx.commit().await
}

/// What readiness shows of the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Backlog {
    pub(crate) pending: i64,
    pub(crate) failed: i64,
    /// When the oldest pending email was due (Unix milliseconds).
    pub(crate) oldest_due_ms: Option<i64>,
}

pub(crate) async fn backlog(db: &Database) -> Result<Backlog, StoreError> {
    let (pending, failed, oldest_due_ms): (i64, i64, Option<i64>) = sqlx::query_as(
        "SELECT \
           (SELECT COUNT(*) FROM outbox WHERE status = 'pending'), \
           (SELECT COUNT(*) FROM outbox WHERE status = 'failed'), \
           (SELECT MIN(next_attempt_at_ms) FROM outbox WHERE status = 'pending')",
    )
    .fetch_one(db.pool())
    .await?;
    Ok(Backlog {
        pending,
        failed,
        oldest_due_ms,
    })
}

/// An email as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, FromRow, serde::Serialize)]
pub(crate) struct OutboxEntry {
    pub(crate) id: i64,
    pub(crate) recipient: String,
    pub(crate) subject: String,
    /// `pending`, `sent` or `failed`.
    pub(crate) status: String,
    pub(crate) attempts: i32,
    pub(crate) last_error: Option<String>,
    /// When it was queued or last requeued (Unix milliseconds).
    #[sqlx(rename = "created_at_ms")]
    pub(crate) queued_at_ms: i64,
    pub(crate) sent_at_ms: Option<i64>,
}

/// The emails of the outbox (only the failed ones if asked), newest first,
/// at most `limit`.
pub(crate) async fn list(
    db: &Database,
    only_failed: bool,
    limit: i64,
) -> Result<Vec<OutboxEntry>, StoreError> {
    let filter = if only_failed {
        "WHERE status = 'failed' "
    } else {
        ""
    };
    Ok(sqlx::query_as(&format!(
        "SELECT id, recipient, subject, status, attempts, last_error, created_at_ms, sent_at_ms \
         FROM outbox {filter}ORDER BY id DESC LIMIT $1"
    ))
    .bind(limit)
    .fetch_all(db.pool())
    .await?)
}

/// Puts failed emails back in the queue (these ids, or every failed one),
/// due now and with a new lifetime; returns the ids requeued. The error that
/// failed them stays until the next attempt.
pub(crate) async fn requeue(db: &Database, ids: &[i64]) -> Result<Vec<i64>, StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    let failed: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM outbox WHERE status = 'failed' ORDER BY id")
            .fetch_all(tx.conn())
            .await?;
    let chosen: Vec<i64> = failed
        .into_iter()
        .filter(|id| ids.is_empty() || ids.contains(id))
        .collect();
    let now = now_ms();
    for id in &chosen {
        sqlx::query(
            "UPDATE outbox SET status = 'pending', next_attempt_at_ms = $1, created_at_ms = $1, \
             lease_until_ms = NULL WHERE id = $2 AND status = 'failed'",
        )
        .bind(now)
        .bind(id)
        .execute(tx.conn())
        .await?;
    }
    tx.commit().await?;
    Ok(chosen)
}

/// Deletes every email to `recipient` (an address erased on request), in
/// the caller's transaction; how many.
pub(crate) async fn forget_recipient(
    conn: &mut AnyConnection,
    recipient: &str,
) -> Result<u64, StoreError> {
    let deleted = sqlx::query("DELETE FROM outbox WHERE recipient = $1")
        .bind(recipient)
        .execute(conn)
        .await?;
    Ok(deleted.rows_affected())
}
