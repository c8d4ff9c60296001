//! Contact-form submissions.

use chrono::{DateTime, Utc};
use sqlx::{AnyConnection, FromRow};

use crate::core::clock;
use crate::portfolio::model::{ContactEntry, ContactSubmission};
use crate::storage::{Database, StoreError, time_from_text};

/// Stores a submission received at `received_at`; returns its id.
pub(crate) async fn insert(
    conn: &mut AnyConnection,
    submission: &ContactSubmission,
    received_at: DateTime<Utc>,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO contact_submissions (name, email, subject, message, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&submission.name)
    .bind(&submission.email)
    .bind(&submission.subject)
    .bind(&submission.message)
    .bind(clock::timestamp(received_at))
    .fetch_one(conn)
    .await?)
}

#[derive(Debug, FromRow)]
struct EntryRow {
    id: i64,
    name: String,
    email: String,
    subject: Option<String>,
    message: Option<String>,
    created_at: String,
    handled_at: Option<String>,
}

impl TryFrom<EntryRow> for ContactEntry {
    type Error = StoreError;

    fn try_from(row: EntryRow) -> Result<Self, StoreError> {
        Ok(ContactEntry {
            received_at: time_from_text(&row.created_at)?,
            handled_at: row.handled_at.as_deref().map(time_from_text).transpose()?,
            id: row.id,
            name: row.name,
            email: row.email,
            subject: row.subject,
            message: row.message,
        })
    }
}

const COLUMNS: &str = "id, name, email, subject, message, created_at, handled_at";

/// Marks submission `id` handled at `at`, unless it was already (the first
/// time stays): the submission as it stands, or none if there is none.
pub(crate) async fn mark_handled(
    conn: &mut AnyConnection,
    id: i64,
    at: DateTime<Utc>,
) -> Result<Option<ContactEntry>, StoreError> {
    sqlx::query(
        "UPDATE contact_submissions SET handled_at = $1 WHERE id = $2 AND handled_at IS NULL",
    )
    .bind(clock::timestamp(at))
    .bind(id)
    .execute(&mut *conn)
    .await?;
    let row: Option<EntryRow> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM contact_submissions WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    row.map(ContactEntry::try_from).transpose()
}

/// One page of the submissions, newest first, and how many there are.
pub(crate) async fn page(
    db: &Database,
    window: &super::Window,
) -> Result<super::Page<ContactEntry>, StoreError> {
    let listing = super::Listing {
        table: "contact_submissions",
        columns: COLUMNS,
        order_by: "id DESC",
        filtered_by: None,
        after: "id < {c}",
    };
    super::page::<EntryRow, _>(db, listing, None, window, |entry: &ContactEntry| {
        super::After::Id(entry.id)
    })
    .await
}
