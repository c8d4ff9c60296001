//! Telling subscribers about a post: one email per subscribed address,
//! through the outbox, once per post.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::PortfolioState;
use super::auth::{Authenticated, SubscribersNotify};
use super::content::find_post;
use super::db;
use super::model::Slug;
use crate::error::Error;
use crate::extract::JsonBody;
use crate::mail::{outbox, templates};

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct NotifyRequest {
    /// The post to announce.
    #[schema(value_type = String, pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100)]
    pub post_slug: Slug,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct NotifyResult {
    pub post_slug: String,
    /// How many emails were queued for this post (by this call or the first).
    #[schema(minimum = 0)]
    pub queued: i64,
    /// True when an earlier call notified the subscribers already; nothing
    /// was queued again.
    pub already_notified: bool,
}

/// Emails every subscriber about a post.
#[utoipa::path(
    post,
    path = "/api/notify-subscribers",
    operation_id = "notifySubscribers",
    tag = "newsletter",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((NotifyRequest = "application/json"))),
    responses(
        (status = 202, description = "Queued (or queued before)", body = NotifyResult),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid API key or bearer token"),
        (status = 403, description = "The key lacks subscribers:notify"),
        (status = 404, description = "No such post"),
        (status = 409, description = "A request with this Idempotency-Key is still being processed; retry after Retry-After"),
        (status = 422, description = "A field breaks its rule, or this Idempotency-Key was used with a different request"),
    ),
    security(("api_key" = []), ("oauth" = ["subscribers:notify"])),
)]
pub async fn notify_subscribers(
    State(state): State<PortfolioState>,
    _caller: Authenticated<SubscribersNotify>,
    JsonBody(request): JsonBody<NotifyRequest>,
) -> Result<(StatusCode, axum::Json<NotifyResult>), Error> {
    let slug = request.post_slug;
    let mut tx = state.db.begin_write().await?;
    let post = find_post(tx.conn(), &slug).await?;
    let answer = |queued, already_notified| {
        (
            StatusCode::ACCEPTED,
            axum::Json(NotifyResult {
                post_slug: slug.to_string(),
                queued,
                already_notified,
            }),
        )
    };
    if let Some(queued) = db::notifications::queued_for(tx.conn(), &slug).await? {
        return Ok(answer(queued, true));
    }
    let subscribers = db::subscribers::subscribed(tx.conn()).await?;
    let url = format!("{}/api/posts/{slug}", state.public_url);
    let notice = templates::PostNotice {
        title: &post.title,
        summary: &post.summary,
        url: &url,
    };
    // Written a chunk at a time: 10,000 emails held at once would take
    // tens of MiB.
    for chunk in subscribers.chunks(outbox::EMAILS_PER_STATEMENT) {
        let emails: Vec<_> = chunk
            .iter()
            .map(|subscriber| {
                templates::new_post(
                    &state.public_url,
                    notice,
                    &subscriber.email,
                    &subscriber.unsubscribe_token,
                )
            })
            .collect();
        outbox::enqueue_all(tx.conn(), &emails).await?;
    }
    let queued = i64::try_from(subscribers.len()).unwrap_or(i64::MAX);
    db::notifications::record(tx.conn(), &slug, queued).await?;
    tx.commit().await?;
    state.mailer.wake();
    Ok(answer(queued, false))
}
