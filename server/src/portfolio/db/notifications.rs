//! Which posts subscribers were told about: once per post.

use sqlx::AnyConnection;

use crate::core::clock;
use crate::portfolio::model::Slug;
use crate::storage::StoreError;

/// How many emails the post's notification queued, if it was sent.
pub(crate) async fn queued_for(
    conn: &mut AnyConnection,
    post: &Slug,
) -> Result<Option<i64>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT queued FROM post_notifications WHERE post_slug = $1")
            .bind(post.as_str())
            .fetch_optional(conn)
            .await?,
    )
}

/// Records that subscribers were told about the post.
pub(crate) async fn record(
    conn: &mut AnyConnection,
    post: &Slug,
    queued: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO post_notifications (post_slug, queued, created_at) VALUES ($1, $2, $3)",
    )
    .bind(post.as_str())
    .bind(queued)
    .bind(clock::now_timestamp())
    .execute(conn)
    .await?;
    Ok(())
}
