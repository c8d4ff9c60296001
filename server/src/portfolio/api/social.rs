//! Publishing posts to a Mastodon-compatible social network: the handler.
//! What publishing does is [`ops::social`]; the call to the network,
//! [`crate::portfolio::ops::mastodon`].

use axum::extract::State;

use crate::http::error::Error;
use crate::http::extract::JsonBody;
use crate::http::idempotency::Idempotent;
use crate::portfolio::api::auth::{Authenticated, SocialPublish};
use crate::portfolio::ops;
use crate::portfolio::ops::social::{PublishRequest, PublishResult};
use crate::portfolio::state::PortfolioState;

/// Publishes a post to the social network. 503 when the network failed or
/// refused (`details.upstream_status`).
#[utoipa::path(
    post, path = "/api/social-publish",
    tag = "social",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((PublishRequest = "application/json"))),
    responses(
        (status = 200, description = "Published (now or before), or a dry run", body = PublishResult),
        (status = 404, description = "No such post"),
    ),
    security(("api_key" = []), ("oauth" = ["social:publish"])),
)]
pub(crate) async fn social_publish(
    State(state): State<PortfolioState>,
    _caller: Authenticated<SocialPublish>,
    Idempotent(JsonBody(request)): Idempotent<JsonBody<PublishRequest>>,
) -> Result<axum::Json<PublishResult>, Error> {
    let mastodon = state.config.mastodon.as_ref();
    let published = ops::social::publish(
        state.ops(),
        &state.http,
        mastodon,
        &state.public_url,
        &request.post_slug,
    )
    .await?;
    Ok(axum::Json(published))
}
