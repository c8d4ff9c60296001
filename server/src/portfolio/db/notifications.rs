//! Which posts subscribers were told about: once per post. A notification
//! queues its emails a chunk of subscribers at a time and notes after each
//! chunk the last subscriber queued (`resume_after`, NULL once done), so that
//! one interrupted goes on where it stopped.

use sqlx::AnyConnection;

use crate::core::clock;
use crate::portfolio::model::Slug;
use crate::storage::StoreError;

/// Where the post's notification stands: how many emails it queued, and
/// the last subscriber queued while it is under way (`None` once done).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) queued: i64,
    pub(crate) resume_after: Option<i64>,
}

/// The post's notification, if one was begun.
pub(crate) async fn progress(
    conn: &mut AnyConnection,
    post: &Slug,
) -> Result<Option<Progress>, StoreError> {
    let row: Option<(i64, Option<i64>)> =
        sqlx::query_as("SELECT queued, resume_after FROM post_notifications WHERE post_slug = $1")
            .bind(post.as_str())
            .fetch_optional(conn)
            .await?;
    Ok(row.map(|(queued, resume_after)| Progress {
        queued,
        resume_after,
    }))
}

/// Begins the post's notification (nothing queued yet), unless one was
/// begun already.
pub(crate) async fn begin(conn: &mut AnyConnection, post: &Slug) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO post_notifications (post_slug, queued, created_at, resume_after) \
         VALUES ($1, 0, $2, 0) ON CONFLICT (post_slug) DO NOTHING",
    )
    .bind(post.as_str())
    .bind(clock::now_timestamp())
    .execute(conn)
    .await?;
    Ok(())
}

/// The post's notification, held in the caller's transaction until it
/// commits: on PostgreSQL the row is locked (an update that changes
/// nothing), so that two calls for one post take its chunks in turn; SQLite
/// has one writer at a time anyway.
pub(crate) async fn hold(
    conn: &mut AnyConnection,
    post: &Slug,
) -> Result<Option<Progress>, StoreError> {
    let row: Option<(i64, Option<i64>)> = sqlx::query_as(
        "UPDATE post_notifications SET queued = queued WHERE post_slug = $1 \
         RETURNING queued, resume_after",
    )
    .bind(post.as_str())
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(queued, resume_after)| Progress {
        queued,
        resume_after,
    }))
}

/// Notes where the post's notification stands.
pub(crate) async fn advance(
    conn: &mut AnyConnection,
    post: &Slug,
    progress: Progress,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE post_notifications SET queued = $2, resume_after = $3 WHERE post_slug = $1",
    )
    .bind(post.as_str())
    .bind(progress.queued)
    .bind(progress.resume_after)
    .execute(conn)
    .await?;
    Ok(())
}
