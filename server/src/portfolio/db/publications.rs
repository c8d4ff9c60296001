//! Posts published to the social network: one row per post, so that
//! publishing again reports the existing status instead of posting twice.

use crate::core::clock;
use crate::portfolio::model::{Publication, Slug};
use crate::storage::{Database, StoreError};

/// The post's recorded publication, if any.
pub(crate) async fn find(db: &Database, post: &Slug) -> Result<Option<Publication>, StoreError> {
    let row: Option<(String, Option<String>, Option<String>)> = sqlx::query_as(
        "SELECT status, remote_id, remote_url FROM social_publications WHERE post_slug = $1",
    )
    .bind(post.as_str())
    .fetch_optional(db.pool())
    .await?;
    row.map(|(status, remote_id, remote_url)| match status.as_str() {
        "published" => Ok(Publication::Published {
            remote_id,
            remote_url,
        }),
        "dry_run" => Ok(Publication::DryRun),
        other => Err(StoreError::corrupt(format!(
            "publication of {post}: status {other:?}"
        ))),
    })
    .transpose()
}

/// Records a dry run, unless the post has a record already.
pub(crate) async fn record_dry_run(db: &Database, post: &Slug) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    sqlx::query(
        "INSERT INTO social_publications (post_slug, status, published_at) VALUES ($1, 'dry_run', $2) \
         ON CONFLICT (post_slug) DO NOTHING",
    )
    .bind(post.as_str())
    .bind(clock::now_timestamp())
    .execute(tx.conn())
    .await?;
    tx.commit().await
}

/// Records a publication; of two racing, the first stands (a dry run gives
/// way to it).
pub(crate) async fn record_published(
    db: &Database,
    post: &Slug,
    remote_id: &str,
    remote_url: Option<&str>,
) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    tx.changes_nothing_cached();
    sqlx::query(
        "INSERT INTO social_publications (post_slug, status, remote_id, remote_url, published_at) \
         VALUES ($1, 'published', $2, $3, $4) \
         ON CONFLICT (post_slug) DO UPDATE SET status = 'published', remote_id = excluded.remote_id, \
         remote_url = excluded.remote_url, published_at = excluded.published_at \
         WHERE social_publications.status = 'dry_run'",
    )
    .bind(post.as_str())
    .bind(remote_id)
    .bind(remote_url)
    .bind(clock::now_timestamp())
    .execute(tx.conn())
    .await?;
    tx.commit().await
}
