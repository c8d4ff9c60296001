//! The newsletter: subscribe (idempotent, the same answer for new and known
//! addresses), confirm (double opt-in), unsubscribe in one request (a link, or
//! RFC 8058's one-click POST).

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use sqlx::AnyConnection;
use utoipa::{IntoParams, IntoResponses, ToSchema};

use super::PortfolioState;
use super::db;
use super::fields::Fields;
use super::model::{Subscriber, SubscriberStatus};
use crate::clock::now_ms;
use crate::error::Error;
use crate::extract::{JsonBody, Query};
use crate::mail::{outbox, templates};
use crate::secret;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SubscribeRequest {
    #[schema(required = true, nullable = false, format = Email, max_length = 254)]
    pub email: Option<String>,
}

/// The answer to a subscription: the same whether the address was new,
/// known, or unsubscribed, so that it reveals nothing about who subscribed.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SubscribeAccepted {
    #[schema(inline)]
    pub status: AcceptedStatus,
    pub message: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AcceptedStatus {
    Accepted,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SubscriptionState {
    #[schema(inline)]
    pub status: SubscriptionStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SubscriptionStatus {
    Subscribed,
    Unsubscribed,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TokenQuery {
    /// The token from the link in the email.
    #[param(min_length = 1, max_length = 100)]
    token: String,
}

/// Sends the email a (re)subscription calls for, in the caller's
/// transaction: the welcome email (single opt-in), or a confirmation link
/// (double opt-in).
async fn send_subscription_email(
    state: &PortfolioState,
    conn: &mut AnyConnection,
    subscriber: &Subscriber,
) -> Result<(), Error> {
    let settings = &state.config.newsletter;
    let email = if settings.double_opt_in {
        let confirm_token = secret::token::<24>();
        let ttl_ms = i64::try_from(settings.confirmation_ttl_hours).unwrap_or(48) * 3_600_000;
        db::subscribers::await_confirmation(conn, subscriber.id, &confirm_token, now_ms() + ttl_ms)
            .await?;
        templates::confirmation(&state.public_url, &subscriber.email, &confirm_token)
    } else {
        db::subscribers::mark_subscribed(conn, subscriber.id).await?;
        templates::welcome(
            &state.public_url,
            &subscriber.email,
            &subscriber.unsubscribe_token,
        )
    };
    outbox::enqueue(conn, &email).await?;
    Ok(())
}

/// Subscribes to the newsletter.
#[utoipa::path(
    post,
    path = "/api/newsletter",
    operation_id = "subscribeNewsletter",
    tag = "newsletter",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((SubscribeRequest = "application/json"))),
    responses(
        (status = 202, description = "Accepted; the same answer for every address", body = SubscribeAccepted),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 422, description = "Not an email address"),
        (status = 409, description = "A request with this Idempotency-Key is still being processed; retry after Retry-After"),
    ),
)]
pub async fn subscribe_newsletter(
    State(state): State<PortfolioState>,
    JsonBody(request): JsonBody<SubscribeRequest>,
) -> Result<(StatusCode, axum::Json<SubscribeAccepted>), Error> {
    let mut fields = Fields::default();
    let email = fields.email("email", request.email.as_deref(), true);
    fields.check()?;
    // Addresses are compared case-insensitively.
    let email = email.unwrap_or_default().to_lowercase();
    let quiet_ms =
        i64::try_from(state.config.newsletter.resend_after_minutes).unwrap_or(10) * 60_000;

    let mut tx = state.db.begin_write().await?;
    let subscriber = match db::subscribers::find_by_email(tx.conn(), &email).await? {
        Some(known) => known,
        None => {
            let unsubscribe_token = secret::token::<24>();
            let mailbox = crate::mail::address::mailbox_key(&email);
            let id =
                db::subscribers::insert(tx.conn(), &email, &mailbox, &unsubscribe_token).await?;
            Subscriber {
                id,
                email,
                status: SubscriberStatus::Pending,
                unsubscribe_token,
                confirm_expires_ms: None,
                last_emailed_at_ms: None,
            }
        }
    };
    // Subscribed already: nothing to send. Pending or unsubscribed: send
    // again, but not into a flood, counted per mailbox (`victim+1@`,
    // `victim+2@`... reach one inbox).
    let mailbox = crate::mail::address::mailbox_key(&subscriber.email);
    let last_emailed = db::subscribers::last_emailed_mailbox(tx.conn(), &mailbox).await?;
    let send = subscriber.status != SubscriberStatus::Subscribed
        && last_emailed.is_none_or(|at| now_ms() - at >= quiet_ms);
    if send {
        send_subscription_email(&state, tx.conn(), &subscriber).await?;
    }
    tx.commit().await?;
    if send {
        state.mailer.wake();
    }
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
    get,
    path = "/api/newsletter/confirm",
    operation_id = "confirmNewsletter",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Subscribed", body = SubscriptionState),
        (status = 400, description = "The token is missing or has expired"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub async fn confirm_newsletter(
    State(state): State<PortfolioState>,
    query: Result<Query<TokenQuery>, Error>,
) -> Result<axum::Json<SubscriptionState>, Error> {
    let token = token_from(query)?;
    let mut tx = state.db.begin_write().await?;
    let subscriber = db::subscribers::find_by_confirm_token(tx.conn(), &token)
        .await?
        .ok_or_else(|| Error::not_found("no subscription waits for this confirmation"))?;
    if subscriber.confirmation_expired(now_ms()) {
        return Err(Error::bad_request(
            "this confirmation link has expired; subscribe again for a new one",
        ));
    }
    db::subscribers::mark_subscribed(tx.conn(), subscriber.id).await?;
    outbox::enqueue(
        tx.conn(),
        &templates::welcome(
            &state.public_url,
            &subscriber.email,
            &subscriber.unsubscribe_token,
        ),
    )
    .await?;
    tx.commit().await?;
    state.mailer.wake();
    Ok(axum::Json(SubscriptionState {
        status: SubscriptionStatus::Subscribed,
    }))
}

/// The token of a link; 400 when it is missing or cannot be one.
fn token_from(query: Result<Query<TokenQuery>, Error>) -> Result<String, Error> {
    let Query(TokenQuery { token }) =
        query.map_err(|_| Error::bad_request("the link has no token"))?;
    if token.is_empty() || token.len() > 100 {
        return Err(Error::bad_request("the token is malformed"));
    }
    Ok(token)
}

async fn unsubscribe(
    state: &PortfolioState,
    query: Result<Query<TokenQuery>, Error>,
) -> Result<axum::Json<SubscriptionState>, Error> {
    let token = token_from(query)?;
    if !db::subscribers::unsubscribe(&state.db, &token).await? {
        return Err(Error::not_found(
            "no subscription has this unsubscribe link",
        ));
    }
    Ok(axum::Json(SubscriptionState {
        status: SubscriptionStatus::Unsubscribed,
    }))
}

/// What an unsubscribe link answers, to a GET or a one-click POST.
#[derive(IntoResponses)]
pub enum UnsubscribeAnswers {
    /// Unsubscribed (again, if it already was)
    #[response(status = 200)]
    Unsubscribed(SubscriptionState),
    /// The token is missing or malformed
    #[response(status = 400)]
    BadToken,
    /// No subscription has this token
    #[response(status = 404)]
    UnknownToken,
}

/// Unsubscribes: the link in every newsletter email.
#[utoipa::path(
    get,
    path = "/api/newsletter/unsubscribe",
    operation_id = "unsubscribeNewsletter",
    tag = "newsletter",
    params(TokenQuery),
    responses(UnsubscribeAnswers)
)]
pub async fn unsubscribe_newsletter(
    State(state): State<PortfolioState>,
    query: Result<Query<TokenQuery>, Error>,
) -> Result<axum::Json<SubscriptionState>, Error> {
    unsubscribe(&state, query).await
}

/// Unsubscribes in one click (RFC 8058): mail clients POST to the
/// List-Unsubscribe URL with `List-Unsubscribe=One-Click`.
#[utoipa::path(
    post,
    path = "/api/newsletter/unsubscribe",
    operation_id = "unsubscribeNewsletterOneClick",
    tag = "newsletter",
    params(TokenQuery),
    responses(UnsubscribeAnswers)
)]
pub async fn unsubscribe_newsletter_one_click(
    State(state): State<PortfolioState>,
    query: Result<Query<TokenQuery>, Error>,
) -> Result<axum::Json<SubscriptionState>, Error> {
    unsubscribe(&state, query).await
}
