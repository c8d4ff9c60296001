//! The newsletter: subscribe (idempotent, the same answer for new and known
//! addresses), confirm (double opt-in), unsubscribe in one request (a link, or
//! RFC 8058's one-click POST).

use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::http::error::Error;
use crate::http::extract::{JsonBody, Query};
use crate::http::idempotency::Idempotent;
use crate::portfolio::ops;
use crate::portfolio::ops::newsletter::SubscribeRequest;
use crate::portfolio::state::PortfolioState;

/// The answer to a subscription: the same whether the address was new,
/// known, or unsubscribed, so that it reveals nothing about who subscribed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct SubscribeAccepted {
    #[schema(inline)]
    pub(crate) status: AcceptedStatus,
    pub(crate) message: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AcceptedStatus {
    Accepted,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct SubscriptionState {
    #[schema(inline)]
    pub(crate) status: SubscriptionStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SubscriptionStatus {
    Subscribed,
    Unsubscribed,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct TokenQuery {
    /// The token from the link in the email.
    #[param(min_length = 1, max_length = 100)]
    token: String,
}

/// The token of a newsletter link (`?token=`); 400 when it is missing.
pub(crate) struct LinkToken(String);

impl<S: Send + Sync> FromRequestParts<S> for LinkToken {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        let Query(TokenQuery { token }) = Query::from_request_parts(parts, state)
            .await
            .map_err(|_| Error::bad_request("the link has no token"))?;
        Ok(LinkToken(token))
    }
}

/// Subscribes to the newsletter; 422 for what is not an email address.
#[utoipa::path(
    post, path = "/api/newsletter",
    tag = "newsletter",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((SubscribeRequest = "application/json"))),
    responses(
        (status = 202, description = "Accepted; the same answer for every address", body = SubscribeAccepted),
    ),
)]
pub(crate) async fn subscribe_newsletter(
    State(state): State<PortfolioState>,
    Idempotent(JsonBody(request)): Idempotent<JsonBody<SubscribeRequest>>,
) -> Result<(StatusCode, axum::Json<SubscribeAccepted>), Error> {
    let newsletter = ops::newsletter::Newsletter {
        public_url: &state.public_url,
        settings: &state.config.newsletter,
    };
    ops::newsletter::subscribe(state.ops(), newsletter, &request).await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(SubscribeAccepted {
            status: AcceptedStatus::Accepted,
            message: "If this address can receive email, a message is on its way.".to_owned(),
        }),
    ))
}

/// Confirms a subscription (double opt-in).
#[utoipa::path(
    get, path = "/api/newsletter/confirm",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Subscribed", body = SubscriptionState),
        (status = 400, description = "The token is missing or has expired"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub(crate) async fn confirm_newsletter(
    State(state): State<PortfolioState>,
    LinkToken(token): LinkToken,
) -> Result<axum::Json<SubscriptionState>, Error> {
    ops::newsletter::confirm(state.ops(), &state.public_url, &token).await?;
    Ok(axum::Json(SubscriptionState {
        status: SubscriptionStatus::Subscribed,
    }))
}

/// Unsubscribes: the link in every newsletter email, and the one-click
/// POST (RFC 8058) mail clients send to the List-Unsubscribe URL with
/// `List-Unsubscribe=One-Click` (documented as `unsubscribeNewsletterOneClick`).
#[utoipa::path(
    get, path = "/api/newsletter/unsubscribe",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Unsubscribed (again, if it already was)", body = SubscriptionState),
        (status = 400, description = "The token is missing or malformed"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub(crate) async fn unsubscribe_newsletter(
    State(state): State<PortfolioState>,
    LinkToken(token): LinkToken,
) -> Result<axum::Json<SubscriptionState>, Error> {
    ops::newsletter::unsubscribe(state.ops(), &token).await?;
    Ok(axum::Json(SubscriptionState {
        status: SubscriptionStatus::Unsubscribed,
    }))
}
