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
}

impl TryFrom<EntryRow> for ContactEntry {
    type Error = StoreError;

    fn try_from(row: EntryRow) -> Result<Self, StoreError> {
        Ok(ContactEntry {
            received_at: time_from_text(&row.created_at)?,
            id: row.id,
            name: row.name,
            email: row.email,
            subject: row.subject,
            message: row.message,
        })
    }
}

/// One page of the submissions, newest first, and how many there are.
pub(crate) async fn page(
    db: &Database,
    window: &super::Window,
) -> Result<super::Page<ContactEntry>, StoreError> {
    let listing = super::Listing {
        table: "contact_submissions",
        columns: "id, name, email, subject, message, created_at",
        order_by: "id DESC",
        filtered_by: None,
        after: "id < {c}",
    };
    super::page::<EntryRow, _>(db, listing, None, window, |entry: &ContactEntry| {
        super::After::Id(entry.id)
    })
    .await
}
