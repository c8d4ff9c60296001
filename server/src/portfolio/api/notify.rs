//! Telling subscribers about a post: one email per subscribed address,
//! through the outbox, once per post.

use axum::extract::State;
use axum::http::StatusCode;

use crate::http::error::Error;
use crate::http::extract::JsonBody;
use crate::http::idempotency::Idempotent;
use crate::portfolio::api::auth::{Authenticated, SubscribersNotify};
use crate::portfolio::ops;
use crate::portfolio::ops::newsletter::{NotifyRequest, NotifyResult};
use crate::portfolio::state::PortfolioState;

/// Emails every subscriber about a post.
#[utoipa::path(
    post, path = "/api/notify-subscribers",
    tag = "newsletter",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((NotifyRequest = "application/json"))),
    responses(
        (status = 202, description = "Queued (or queued before)", body = NotifyResult),
        (status = 404, description = "No such post"),
    ),
    security(("api_key" = []), ("oauth" = ["subscribers:notify"])),
)]
pub(crate) async fn notify_subscribers(
    State(state): State<PortfolioState>,
    _caller: Authenticated<SubscribersNotify>,
    Idempotent(JsonBody(request)): Idempotent<JsonBody<NotifyRequest>>,
) -> Result<(StatusCode, axum::Json<NotifyResult>), Error> {
    let result =
        ops::newsletter::notify(state.ops(), &state.public_url, &request.post_slug).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(result)))
}
