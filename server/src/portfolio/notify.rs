//! Telling subscribers about a post: one email per subscribed address,
//! through the outbox, once per post.

use axum::extract::State;
use axum::http::StatusCode;

use super::PortfolioState;
use super::auth::{Authenticated, SubscribersNotify};
use super::ops;
use super::ops::newsletter::{NotifyRequest, NotifyResult};
use crate::error::Error;
use crate::extract::JsonBody;

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
pub(crate) async fn notify_subscribers(
    State(state): State<PortfolioState>,
    _caller: Authenticated<SubscribersNotify>,
    JsonBody(request): JsonBody<NotifyRequest>,
) -> Result<(StatusCode, axum::Json<NotifyResult>), Error> {
    let result =
        ops::newsletter::notify(state.ops(), &state.public_url, &request.post_slug).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(result)))
}
