//! Newsletter subscribers. Every change sets `updated_at`; the caller's
//! transaction also holds the email the change sends.

use sqlx::{AnyConnection, FromRow};

use crate::core::clock;
use crate::portfolio::model::{Subscriber, SubscriberEntry, SubscriberStatus};
use crate::storage::{Database, StoreError, time_from_text};

#[derive(Debug, FromRow)]
struct SubscriberRow {
    id: i64,
    email: String,
    status: String,
    unsubscribe_token: String,
    confirm_expires_ms: Option<i64>,
}

const SUBSCRIBER_COLUMNS: &str = "id, email, status, unsubscribe_token, confirm_expires_ms";

impl TryFrom<SubscriberRow> for Subscriber {
    type Error = StoreError;

    fn try_from(row: SubscriberRow) -> Result<Self, StoreError> {
        Ok(Subscriber {
            status: SubscriberStatus::parse(&row.status).ok_or_else(|| {
                StoreError::corrupt(format!("subscriber {}: status {:?}", row.id, row.status))
            })?,
            id: row.id,
            email: row.email,
            unsubscribe_token: row.unsubscribe_token,
            confirm_expires_ms: row.confirm_expires_ms,
        })
    }
}

async fn find_by(
    conn: &mut AnyConnection,
    column: &str,
    value: &str,
) -> Result<Option<Subscriber>, StoreError> {
    let row: Option<SubscriberRow> = sqlx::query_as(&format!(
        "SELECT {SUBSCRIBER_COLUMNS} FROM subscribers WHERE {column} = $1"
    ))
    .bind(value)
    .fetch_optional(conn)
    .await?;
    row.map(Subscriber::try_from).transpose()
}

/// The subscriber with this (lower-case) address.
pub(crate) async fn find_by_email(
    conn: &mut AnyConnection,
    email: &str,
) -> Result<Option<Subscriber>, StoreError> {
    find_by(conn, "email", email).await
}

/// When a subscription email last went to the mailbox `mailbox` (an
/// address without its `+tag`, [`crate::mail::address::mailbox_key`]): to
/// any subscriber of it.
pub(crate) async fn last_emailed_mailbox(
    conn: &mut AnyConnection,
    mailbox: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT MAX(last_emailed_at_ms) FROM subscribers WHERE mailbox = $1")
            .bind(mailbox)
            .fetch_one(conn)
            .await?,
    )
}

/// The subscriber a confirmation link was sent to.
pub(crate) async fn find_by_confirm_token(
    conn: &mut AnyConnection,
    token: &str,
) -> Result<Option<Subscriber>, StoreError> {
    find_by(conn, "confirm_token", token).await
}

/// A new address, pending until [`mark_subscribed`] or
/// [`await_confirmation`]; returns its id.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    email: &str,
    mailbox: &str,
    unsubscribe_token: &str,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO subscribers (email, status, unsubscribe_token, created_at, updated_at, \
         mailbox) VALUES ($1, $2, $3, $4, $4, $5) RETURNING id",
    )
    .bind(email)
    .bind(SubscriberStatus::Pending.as_str())
    .bind(unsubscribe_token)
    .bind(clock::now_timestamp())
    .bind(mailbox)
    .fetch_one(conn)
    .await?)
}

/// Pending, waiting for the link with `confirm_token` until `expires_ms`;
/// the confirmation email goes out now.
pub(crate) async fn await_confirmation(
    conn: &mut AnyConnection,
    id: i64,
    confirm_token: &str,
    expires_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE subscribers SET status = $1, confirm_token = $2, confirm_expires_ms = $3, \
         last_emailed_at_ms = $4, updated_at = $5 WHERE id = $6",
    )
    .bind(SubscriberStatus::Pending.as_str())
    .bind(confirm_token)
    .bind(expires_ms)
    .bind(clock::now_ms())
    .bind(clock::now_timestamp())
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Subscribed (any confirmation link is used up); the welcome email goes
/// out now.
pub(crate) async fn mark_subscribed(conn: &mut AnyConnection, id: i64) -> Result<(), StoreError> {
    set_status(
        conn,
        id,
        SubscriberStatus::Subscribed,
        Some(clock::now_ms()),
    )
    .await
}

/// The subscriber an unsubscribe link was sent to.
pub(crate) async fn find_by_unsubscribe_token(
    conn: &mut AnyConnection,
    token: &str,
) -> Result<Option<Subscriber>, StoreError> {
    find_by(conn, "unsubscribe_token", token).await
}

/// Subscribed or unsubscribed by the subscriber's own link (any
/// confirmation link is used up): no email goes out.
pub(crate) async fn set_by_link(
    conn: &mut AnyConnection,
    id: i64,
    status: SubscriberStatus,
) -> Result<(), StoreError> {
    set_status(conn, id, status, None).await
}

/// Gives subscriber `id` a status, using up any confirmation link; and
/// records when an email went out, if one did.
async fn set_status(
    conn: &mut AnyConnection,
    id: i64,
    status: SubscriberStatus,
    emailed_at_ms: Option<i64>,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE subscribers SET status = $1, confirm_token = NULL, confirm_expires_ms = NULL, \
         last_emailed_at_ms = COALESCE($2, last_emailed_at_ms), updated_at = $3 WHERE id = $4",
    )
    .bind(status.as_str())
    .bind(emailed_at_ms)
    .bind(clock::now_timestamp())
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// How many of the subscribed first asked on each day (UTC).
pub(crate) async fn subscribed_per_day(
    db: &Database,
) -> Result<std::collections::BTreeMap<chrono::NaiveDate, i64>, StoreError> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT substr(created_at, 1, 10), CAST(COUNT(*) AS BIGINT) FROM subscribers \
         WHERE status = 'subscribed' GROUP BY substr(created_at, 1, 10)",
    )
    .fetch_all(db.pool())
    .await?;
    rows.into_iter()
        .map(|(day, count)| {
            let day = day
                .parse()
                .map_err(|e| StoreError::corrupt(format!("subscriber day {day:?}: {e}")))?;
            Ok((day, count))
        })
        .collect()
}

/// At most `limit` of the subscribed, in the order they came, after
/// subscriber `after`.
pub(crate) async fn subscribed_after(
    conn: &mut AnyConnection,
    after: i64,
    limit: i64,
) -> Result<Vec<Subscriber>, StoreError> {
    let rows: Vec<SubscriberRow> = sqlx::query_as(&format!(
        "SELECT {SUBSCRIBER_COLUMNS} FROM subscribers WHERE status = $1 AND id > $2 \
         ORDER BY id LIMIT $3"
    ))
    .bind(SubscriberStatus::Subscribed.as_str())
    .bind(after)
    .bind(limit)
    .fetch_all(conn)
    .await?;
    rows.into_iter().map(Subscriber::try_from).collect()
}

#[derive(Debug, FromRow)]
struct EntryRow {
    id: i64,
    email: String,
    status: String,
    created_at: String,
    updated_at: String,
}

impl TryFrom<EntryRow> for SubscriberEntry {
    type Error = StoreError;

    fn try_from(row: EntryRow) -> Result<Self, StoreError> {
        Ok(SubscriberEntry {
            status: SubscriberStatus::parse(&row.status).ok_or_else(|| {
                StoreError::corrupt(format!("subscriber {}: status {:?}", row.id, row.status))
            })?,
            created_at: time_from_text(&row.created_at)?,
            updated_at: time_from_text(&row.updated_at)?,
            id: row.id,
            email: row.email,
        })
    }
}

/// One page of the subscribers (of one status, or all), in the order they
/// came, and how many there are in all.
pub(crate) async fn page(
    db: &Database,
    status: Option<SubscriberStatus>,
    window: &super::Window,
) -> Result<super::Page<SubscriberEntry>, StoreError> {
    let listing = super::Listing {
        table: "subscribers",
        columns: "id, email, status, created_at, updated_at",
        order_by: "id",
        filtered_by: Some("status"),
        after: "id > {c}",
    };
    let status = status.map(SubscriberStatus::as_str);
    super::page::<EntryRow, _>(db, listing, status, window, |entry: &SubscriberEntry| {
        super::After::Id(entry.id)
    })
    .await
}

/// The subscribers whose address contains `contains` (any case), in the
/// order they came: at most `limit` after the first `offset`, and how many
/// match in all.
pub(crate) async fn search(
    db: &Database,
    contains: &str,
    offset: i64,
    limit: i64,
) -> Result<(Vec<SubscriberEntry>, i64), StoreError> {
    // Addresses are stored in lower case; `%`, `_` and `\` match themselves.
    let pattern = format!(
        "%{}%",
        contains
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let mut conn = db.conn().await?;
    let total: i64 = sqlx::query_scalar(
        "SELECT CAST(COUNT(*) AS BIGINT) FROM subscribers WHERE email LIKE $1 ESCAPE '\\'",
    )
    .bind(&pattern)
    .fetch_one(&mut *conn)
    .await?;
    let rows: Vec<EntryRow> = sqlx::query_as(
        "SELECT id, email, status, created_at, updated_at FROM subscribers \
         WHERE email LIKE $1 ESCAPE '\\' ORDER BY id LIMIT $2 OFFSET $3",
    )
    .bind(&pattern)
    .bind(limit)
    .bind(offset)
    .fetch_all(&mut *conn)
    .await?;
    let entries = rows
        .into_iter()
        .map(SubscriberEntry::try_from)
        .collect::<Result<_, _>>()?;
    Ok((entries, total))
}

/// Deletes subscriber `id` (in the caller's transaction); its address, if
/// there was one.
pub(crate) async fn erase(conn: &mut AnyConnection, id: i64) -> Result<Option<String>, StoreError> {
    Ok(
        sqlx::query_scalar("DELETE FROM subscribers WHERE id = $1 RETURNING email")
            .bind(id)
            .fetch_optional(conn)
            .await?,
    )
}
