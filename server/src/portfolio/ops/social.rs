//! Publishing posts to the social network, once per post: the first
//! successful publication is recorded and every later call reports it. With
//! no network configured, publishing is a dry run that says so and sends
//! nothing; a later call with a network configured publishes for real.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Context;
use crate::config::MastodonConfig;
use crate::core::failure::Failure;
use crate::portfolio::db;
use crate::portfolio::model::{Post, Publication, Slug};
use crate::portfolio::ops::mastodon;

/// The status text: title, summary (shortened to fit) and link.
fn status_text(post: &Post, post_url: &str) -> String {
    let fixed = post.title.chars().count() + post_url.chars().count() + 4;
    let room = MAX_STATUS_CHARS.saturating_sub(fixed);
    let mut summary: String = post.summary.chars().take(room).collect();
    if summary.chars().count() < post.summary.chars().count() {
        summary.pop();
        summary.push('…');
    }
    format!("{}\n\n{summary}\n\n{post_url}", post.title)
}

/// Mastodon's limit on a status.
const MAX_STATUS_CHARS: usize = 500;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct PublishRequest {
    /// The post to publish.
    #[schema(value_type = String, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100)]
    pub(crate) post_slug: Slug,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PublicationStatus {
    Published,
    DryRun,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct PublishResult {
    pub(crate) post_slug: String,
    #[schema(inline)]
    pub(crate) status: PublicationStatus,
    /// True when nothing was sent because no social network is configured.
    pub(crate) dry_run: bool,
    /// True when an earlier call published the post; nothing was sent again.
    pub(crate) already_published: bool,
    /// The status on the social network.
    pub(crate) remote_id: Option<String>,
    pub(crate) remote_url: Option<String>,
    /// The text that was (or, in a dry run, would have been) published.
    pub(crate) text: String,
}

/// Publishes post `slug` (linking to it on the server at `public_url`), or
/// reports the publication made before.
pub(crate) async fn publish(
    ctx: Context<'_>,
    http: &reqwest::Client,
    network: Option<&MastodonConfig>,
    public_url: &str,
    slug: &Slug,
) -> Result<PublishResult, Failure> {
    let post = db::content::post(&mut *ctx.db.conn().await?, slug)
        .await?
        .ok_or_else(|| Failure::not_found(format!("no post {:?}", slug.as_str())))?;
    let text = status_text(&post, &format!("{public_url}/api/posts/{slug}"));
    let result = |status, remote_id, remote_url, already_published| PublishResult {
        post_slug: slug.to_string(),
        status,
        dry_run: status == PublicationStatus::DryRun,
        already_published,
        remote_id,
        remote_url,
        text: text.clone(),
    };
    if let Some(Publication::Published {
        remote_id,
        remote_url,
    }) = db::publications::find(ctx.db, slug).await?
    {
        return Ok(result(
            PublicationStatus::Published,
            remote_id,
            remote_url,
            true,
        ));
    }
    let Some(network) = network else {
        db::publications::record_dry_run(ctx.db, slug).await?;
        return Ok(result(PublicationStatus::DryRun, None, None, false));
    };
    let published = mastodon::publish_status(http, network, slug.as_str(), &text).await?;
    // Two racing calls both reach the instance (which folds them by the
    // idempotency key); the first record stands.
    db::publications::record_published(ctx.db, slug, &published.id, published.url.as_deref())
        .await?;
    Ok(result(
        PublicationStatus::Published,
        Some(published.id),
        published.url,
        false,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_summaries_are_shortened_to_fit() {
        let post = Post {
            slug: "s".into(),
            title: "Title".into(),
            summary: "x".repeat(1000),
            body: String::new(),
            tags: vec![],
            published_at: chrono::Utc::now(),
        };
        let text = status_text(&post, "https://example.test/api/posts/s");
        assert!(
            text.chars().count() <= MAX_STATUS_CHARS,
            "{}",
            text.chars().count()
        );
        assert!(text.ends_with("https://example.test/api/posts/s"));
        assert!(text.contains('…'));
    }
}
