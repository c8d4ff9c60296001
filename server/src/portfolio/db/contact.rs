//! Contact-form submissions.

use sqlx::AnyConnection;

use crate::clock;
use crate::portfolio::model::ContactSubmission;
use crate::storage::StoreError;

/// Stores a submission; returns its id.
pub async fn insert(
    conn: &mut AnyConnection,
    submission: &ContactSubmission,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(
        "INSERT INTO contact_submissions (name, email, subject, message, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&submission.name)
    .bind(&submission.email)
    .bind(&submission.subject)
    .bind(&submission.message)
    .bind(clock::timestamp(submission.received_at))
    .fetch_one(conn)
    .await?)
}
