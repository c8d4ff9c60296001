//! Publishing posts to a Mastodon-compatible social network
//! (`POST /api/v1/statuses`, bearer token, `Idempotency-Key`).
//!
//! Once per post: the first successful publication is recorded and every
//! later call reports it. With no network configured, publishing is a dry
//! run that says so and sends nothing; a later call with a network configured
//! publishes for real.

use std::time::Duration;

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::PortfolioState;
use super::auth::{Authenticated, SocialPublish};
use super::content::find_post;
use super::db;
use super::model::{Post, Publication, Slug};
use crate::config::MastodonConfig;
use crate::error::{Error, ErrorCode};
use crate::extract::JsonBody;

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
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) remote_id: Option<String>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) remote_url: Option<String>,
    /// The text that was (or, in a dry run, would have been) published.
    pub(crate) text: String,
}

/// What a Mastodon instance answers to a new status.
#[derive(Debug, Deserialize)]
struct MastodonStatus {
    id: String,
    url: Option<String>,
}

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

fn upstream_error(message: &'static str, status: Option<u16>) -> Error {
    let mut error = Error::new(ErrorCode::ServiceUnavailable, message);
    if let Some(status) = status {
        error = error.with_detail("upstream_status", status);
    }
    error
}

async fn publish_to_mastodon(
    client: &reqwest::Client,
    config: &MastodonConfig,
    slug: &str,
    text: &str,
) -> Result<MastodonStatus, Error> {
    let url = format!(
        "{}/api/v1/statuses",
        config.instance_url.trim_end_matches('/')
    );
    let response = client
        .post(&url)
        .timeout(Duration::from_secs(config.timeout_secs))
        .bearer_auth(&config.access_token)
        // The instance answers a repeat of this key with the status it made
        // the first time, so a retry after a lost answer posts nothing twice.
        .header("Idempotency-Key", format!("petstore-portfolio-post-{slug}"))
        .json(&serde_json::json!({"status": text, "visibility": config.visibility}))
        .send()
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, "the social network did not answer");
            upstream_error("the social network did not answer; try again later", None)
        })?;
    let status = response.status();
    if !status.is_success() {
        let message = match status.as_u16() {
            401 | 403 => "the social network refused the access token; the operator must fix it",
            422 => "the social network refused the status",
            _ => "the social network failed; try again later",
        };
        tracing::warn!(
            upstream_status = status.as_u16(),
            "the social network refused a status"
        );
        return Err(upstream_error(message, Some(status.as_u16())));
    }
    response.json::<MastodonStatus>().await.map_err(|_| {
        upstream_error(
            "the social network answered something else than a status",
            Some(status.as_u16()),
        )
    })
}

/// Publishes a post to the social network.
#[utoipa::path(
    post,
    path = "/api/social-publish",
    operation_id = "socialPublish",
    tag = "social",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((PublishRequest = "application/json"))),
    responses(
        (status = 200, description = "Published (now or before), or a dry run", body = PublishResult),
        (status = 404, description = "No such post"),
        (status = 503, description = "The social network failed or refused; details.upstream_status"),
    ),
    security(("api_key" = []), ("oauth" = ["social:publish"])),
)]
pub(crate) async fn social_publish(
    State(state): State<PortfolioState>,
    _caller: Authenticated<SocialPublish>,
    JsonBody(request): JsonBody<PublishRequest>,
) -> Result<axum::Json<PublishResult>, Error> {
    let slug = request.post_slug;
    let post = find_post(&mut *state.db.conn().await?, &slug).await?;
    let text = status_text(&post, &format!("{}/api/posts/{slug}", state.public_url));
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
    }) = db::publications::find(&state.db, &slug).await?
    {
        return Ok(axum::Json(result(
            PublicationStatus::Published,
            remote_id,
            remote_url,
            true,
        )));
    }
    let Some(mastodon) = &state.config.mastodon else {
        db::publications::record_dry_run(&state.db, &slug).await?;
        return Ok(axum::Json(result(
            PublicationStatus::DryRun,
            None,
            None,
            false,
        )));
    };
    let published = publish_to_mastodon(&state.http, mastodon, slug.as_str(), &text).await?;
    // Two racing calls both reach the instance (which folds them by the
    // idempotency key); the first record stands.
    db::publications::record_published(&state.db, &slug, &published.id, published.url.as_deref())
        .await?;
    Ok(axum::Json(result(
        PublicationStatus::Published,
        Some(published.id),
        published.url,
        false,
    )))
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
