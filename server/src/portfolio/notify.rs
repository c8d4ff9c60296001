//! Telling subscribers about a post: one email per subscribed address,
//! through the outbox, once per post.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use chrono::{SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::auth::Scope;
use super::content::{is_slug, load_post};
use super::error::PortfolioError;
use super::newsletter::unsubscribe_url;
use super::{JsonBody, PortfolioState};
use crate::mail::{self, OutgoingEmail};

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct NotifyRequest {
    /// The post to announce.
    #[schema(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 100)]
    pub post_slug: String,
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
    request_body(content((NotifyRequest = "application/json"))),
    responses(
        (status = 202, description = "Queued (or queued before)", body = NotifyResult),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid API key"),
        (status = 403, description = "The key lacks subscribers:notify"),
        (status = 404, description = "No such post"),
    ),
    security(("api_key" = [])),
)]
pub async fn notify_subscribers(
    State(state): State<PortfolioState>,
    headers: HeaderMap,
    JsonBody(request): JsonBody<NotifyRequest>,
) -> Result<(StatusCode, axum::Json<NotifyResult>), PortfolioError> {
    state.keys.authorize(&headers, Scope::SubscribersNotify)?;
    let slug = request.post_slug;
    if !is_slug(&slug) {
        return Err(PortfolioError::bad_request(format!(
            "{slug:?} is not a slug"
        )));
    }
    let mut tx = state.db.begin_write().await?;
    let post = load_post(tx.conn(), &slug)
        .await?
        .ok_or_else(|| PortfolioError::not_found(format!("no post {slug:?}")))?;
    let earlier: Option<i64> =
        sqlx::query_scalar("SELECT queued FROM post_notifications WHERE post_slug = $1")
            .bind(&slug)
            .fetch_optional(tx.conn())
            .await?;
    if let Some(queued) = earlier {
        return Ok((
            StatusCode::ACCEPTED,
            axum::Json(NotifyResult {
                post_slug: slug,
                queued,
                already_notified: true,
            }),
        ));
    }
    let subscribers: Vec<(String, String)> = sqlx::query_as(
        "SELECT email, unsubscribe_token FROM subscribers WHERE status = 'subscribed' ORDER BY id",
    )
    .fetch_all(tx.conn())
    .await?;
    let post_url = format!("{}/api/posts/{slug}", state.public_url);
    for (email, token) in &subscribers {
        let unsubscribe = unsubscribe_url(&state.public_url, token);
        let message = OutgoingEmail {
            to: email.clone(),
            subject: format!("New post: {}", post.title),
            body: format!(
                "{}\n\n{}\n\nRead it: {post_url}\n\nTo unsubscribe, open this link:\n{unsubscribe}\n",
                post.title, post.summary
            ),
            list_unsubscribe: Some(unsubscribe),
        };
        mail::enqueue(tx.conn(), &message).await?;
    }
    let queued = i64::try_from(subscribers.len()).unwrap_or(i64::MAX);
    sqlx::query(
        "INSERT INTO post_notifications (post_slug, queued, created_at) VALUES ($1, $2, $3)",
    )
    .bind(&slug)
    .bind(queued)
    .bind(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true))
    .execute(tx.conn())
    .await?;
    tx.commit().await?;
    state.mailer.wake();
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(NotifyResult {
            post_slug: slug,
            queued,
            already_notified: false,
        }),
    ))
}

/// Deprecated alias of `POST /api/notify-subscribers`, at the path the catalogue lists.
#[utoipa::path(
    post,
    path = "/notify-subscribers",
    operation_id = "notifySubscribersAlias",
    tag = "newsletter",
    request_body(content((NotifyRequest = "application/json"))),
    responses(
        (status = 202, description = "Queued (or queued before)", body = NotifyResult),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid API key"),
        (status = 403, description = "The key lacks subscribers:notify"),
        (status = 404, description = "No such post"),
    ),
    security(("api_key" = [])),
)]
pub async fn notify_subscribers_alias(
    state: State<PortfolioState>,
    headers: HeaderMap,
    body: JsonBody<NotifyRequest>,
) -> Result<(StatusCode, axum::Json<NotifyResult>), PortfolioError> {
    notify_subscribers(state, headers, body).await
}
