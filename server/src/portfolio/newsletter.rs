//! The newsletter: subscribe (idempotent, the same answer for new and known
//! addresses), confirm (double opt-in), unsubscribe in one request (a link, or
//! RFC 8058's one-click POST).

use axum::extract::{Query, State};
use axum::http::StatusCode;
use base64::Engine as _;
use chrono::{SecondsFormat, Utc};
use rand::RngCore as _;
use serde::{Deserialize, Serialize};
use sqlx::{AnyConnection, FromRow};
use utoipa::{IntoParams, ToSchema};

use super::error::PortfolioError;
use super::{Fields, JsonBody, PortfolioState};
use crate::mail::{self, OutgoingEmail, now_ms};

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

fn new_token() -> String {
    let mut bytes = [0_u8; 24];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn now_text() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[derive(Debug, FromRow)]
struct SubscriberRow {
    id: i64,
    email: String,
    status: String,
    unsubscribe_token: String,
    confirm_expires_ms: Option<i64>,
    last_emailed_at_ms: Option<i64>,
}

const SUBSCRIBER_COLUMNS: &str =
    "id, email, status, unsubscribe_token, confirm_expires_ms, last_emailed_at_ms";

/// The link that unsubscribes, for the body and the List-Unsubscribe header.
pub fn unsubscribe_url(public_url: &str, token: &str) -> String {
    format!("{public_url}/api/newsletter/unsubscribe?token={token}")
}

/// The welcome email: every newsletter email carries the unsubscribe link in
/// its body and in List-Unsubscribe (+ List-Unsubscribe-Post) headers.
fn welcome_email(state: &PortfolioState, to: &str, unsubscribe_token: &str) -> OutgoingEmail {
    let unsubscribe = unsubscribe_url(&state.public_url, unsubscribe_token);
    OutgoingEmail {
        to: to.to_owned(),
        subject: "Welcome to the newsletter".to_owned(),
        body: format!(
            "Thank you for subscribing. You will hear about new posts.\n\n\
             To unsubscribe, open this link (one request, no questions):\n{unsubscribe}\n"
        ),
        list_unsubscribe: Some(unsubscribe),
    }
}

fn confirmation_email(state: &PortfolioState, to: &str, confirm_token: &str) -> OutgoingEmail {
    OutgoingEmail {
        to: to.to_owned(),
        subject: "Please confirm your subscription".to_owned(),
        body: format!(
            "Someone (we hope you) asked to subscribe this address to the newsletter.\n\n\
             To confirm, open this link:\n{}/api/newsletter/confirm?token={confirm_token}\n\n\
             If it was not you, ignore this email: nothing will be sent without confirmation.\n",
            state.public_url
        ),
        list_unsubscribe: None,
    }
}

/// Queues the email a (re)subscription calls for and records when.
async fn send_subscription_email(
    state: &PortfolioState,
    conn: &mut AnyConnection,
    row_id: i64,
    email: &str,
    unsubscribe_token: &str,
) -> Result<(), PortfolioError> {
    let settings = &state.config.newsletter;
    if settings.double_opt_in {
        let confirm_token = new_token();
        let ttl_ms = i64::try_from(settings.confirmation_ttl_hours).unwrap_or(48) * 3_600_000;
        sqlx::query(
            "UPDATE subscribers SET status = 'pending', confirm_token = $1, confirm_expires_ms = $2, \
             last_emailed_at_ms = $3, updated_at = $4 WHERE id = $5",
        )
        .bind(&confirm_token)
        .bind(now_ms() + ttl_ms)
        .bind(now_ms())
        .bind(now_text())
        .bind(row_id)
        .execute(&mut *conn)
        .await?;
        mail::enqueue(conn, &confirmation_email(state, email, &confirm_token)).await?;
    } else {
        sqlx::query(
            "UPDATE subscribers SET status = 'subscribed', last_emailed_at_ms = $1, updated_at = $2 \
             WHERE id = $3",
        )
        .bind(now_ms())
        .bind(now_text())
        .bind(row_id)
        .execute(&mut *conn)
        .await?;
        mail::enqueue(conn, &welcome_email(state, email, unsubscribe_token)).await?;
    }
    Ok(())
}

/// Subscribes to the newsletter.
#[utoipa::path(
    post,
    path = "/api/newsletter",
    operation_id = "subscribeNewsletter",
    tag = "newsletter",
    request_body(content((SubscribeRequest = "application/json"))),
    responses(
        (status = 202, description = "Accepted; the same answer for every address", body = SubscribeAccepted),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 422, description = "Not an email address"),
    ),
)]
pub async fn subscribe_newsletter(
    State(state): State<PortfolioState>,
    JsonBody(request): JsonBody<SubscribeRequest>,
) -> Result<(StatusCode, axum::Json<SubscribeAccepted>), PortfolioError> {
    let mut fields = Fields::default();
    let email = fields.email("email", request.email.as_deref(), true);
    fields.check()?;
    // Addresses are compared case-insensitively.
    let email = email.unwrap_or_default().to_lowercase();

    let mut tx = state.db.begin_write().await?;
    let existing: Option<SubscriberRow> = sqlx::query_as(&format!(
        "SELECT {SUBSCRIBER_COLUMNS} FROM subscribers WHERE email = $1"
    ))
    .bind(&email)
    .fetch_optional(tx.conn())
    .await?;
    let mut queued = false;
    match existing {
        None => {
            let token = new_token();
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO subscribers (email, status, unsubscribe_token, created_at, updated_at) \
                 VALUES ($1, 'pending', $2, $3, $3) RETURNING id",
            )
            .bind(&email)
            .bind(&token)
            .bind(now_text())
            .fetch_one(tx.conn())
            .await?;
            send_subscription_email(&state, tx.conn(), id, &email, &token).await?;
            queued = true;
        }
        Some(row) if row.status == "subscribed" => {}
        Some(row) => {
            // Pending or unsubscribed: send again, but not into a flood.
            let quiet_ms =
                i64::try_from(state.config.newsletter.resend_after_minutes).unwrap_or(10) * 60_000;
            let recently = row
                .last_emailed_at_ms
                .is_some_and(|at| now_ms() - at < quiet_ms);
            if !recently {
                send_subscription_email(
                    &state,
                    tx.conn(),
                    row.id,
                    &row.email,
                    &row.unsubscribe_token,
                )
                .await?;
                queued = true;
            }
        }
    }
    tx.commit().await?;
    if queued {
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
    query: Result<Query<TokenQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<axum::Json<SubscriptionState>, PortfolioError> {
    let token = token_from(query)?;
    let mut tx = state.db.begin_write().await?;
    let row: Option<SubscriberRow> = sqlx::query_as(&format!(
        "SELECT {SUBSCRIBER_COLUMNS} FROM subscribers WHERE confirm_token = $1"
    ))
    .bind(&token)
    .fetch_optional(tx.conn())
    .await?;
    let row = row
        .ok_or_else(|| PortfolioError::not_found("no subscription waits for this confirmation"))?;
    if row.confirm_expires_ms.is_some_and(|at| at < now_ms()) {
        return Err(PortfolioError::bad_request(
            "this confirmation link has expired; subscribe again for a new one",
        ));
    }
    sqlx::query(
        "UPDATE subscribers SET status = 'subscribed', confirm_token = NULL, confirm_expires_ms = NULL, \
         last_emailed_at_ms = $1, updated_at = $2 WHERE id = $3",
    )
    .bind(now_ms())
    .bind(now_text())
    .bind(row.id)
    .execute(tx.conn())
    .await?;
    mail::enqueue(
        tx.conn(),
        &welcome_email(&state, &row.email, &row.unsubscribe_token),
    )
    .await?;
    tx.commit().await?;
    state.mailer.wake();
    Ok(axum::Json(SubscriptionState {
        status: SubscriptionStatus::Subscribed,
    }))
}

fn token_from(
    query: Result<Query<TokenQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<String, PortfolioError> {
    let Query(TokenQuery { token }) =
        query.map_err(|_| PortfolioError::bad_request("the link has no token"))?;
    if token.is_empty() || token.len() > 100 {
        return Err(PortfolioError::bad_request("the token is malformed"));
    }
    Ok(token)
}

async fn unsubscribe(
    state: &PortfolioState,
    token: &str,
) -> Result<SubscriptionState, PortfolioError> {
    let mut tx = state.db.begin_write().await?;
    let updated = sqlx::query(
        "UPDATE subscribers SET status = 'unsubscribed', confirm_token = NULL, confirm_expires_ms = NULL, \
         updated_at = $1 WHERE unsubscribe_token = $2",
    )
    .bind(now_text())
    .bind(token)
    .execute(tx.conn())
    .await?;
    if updated.rows_affected() == 0 {
        return Err(PortfolioError::not_found(
            "no subscription has this unsubscribe link",
        ));
    }
    tx.commit().await?;
    Ok(SubscriptionState {
        status: SubscriptionStatus::Unsubscribed,
    })
}

/// Unsubscribes: the link in every newsletter email.
#[utoipa::path(
    get,
    path = "/api/newsletter/unsubscribe",
    operation_id = "unsubscribeNewsletter",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Unsubscribed (again, if it already was)", body = SubscriptionState),
        (status = 400, description = "The token is missing or malformed"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub async fn unsubscribe_newsletter(
    State(state): State<PortfolioState>,
    query: Result<Query<TokenQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<axum::Json<SubscriptionState>, PortfolioError> {
    let token = token_from(query)?;
    Ok(axum::Json(unsubscribe(&state, &token).await?))
}

/// Unsubscribes in one click (RFC 8058): mail clients POST to the
/// List-Unsubscribe URL with `List-Unsubscribe=One-Click`.
#[utoipa::path(
    post,
    path = "/api/newsletter/unsubscribe",
    operation_id = "unsubscribeNewsletterOneClick",
    tag = "newsletter",
    params(TokenQuery),
    responses(
        (status = 200, description = "Unsubscribed (again, if it already was)", body = SubscriptionState),
        (status = 400, description = "The token is missing or malformed"),
        (status = 404, description = "No subscription has this token"),
    ),
)]
pub async fn unsubscribe_newsletter_one_click(
    State(state): State<PortfolioState>,
    query: Result<Query<TokenQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<axum::Json<SubscriptionState>, PortfolioError> {
    let token = token_from(query)?;
    Ok(axum::Json(unsubscribe(&state, &token).await?))
}

/// Deprecated alias of `POST /api/newsletter`, at the path the catalogue lists.
#[utoipa::path(
    post,
    path = "/newsletter",
    operation_id = "subscribeNewsletterAlias",
    tag = "newsletter",
    request_body(content((SubscribeRequest = "application/json"))),
    responses(
        (status = 202, description = "Accepted; the same answer for every address", body = SubscribeAccepted),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 422, description = "Not an email address"),
    ),
)]
pub async fn subscribe_newsletter_alias(
    state: State<PortfolioState>,
    body: JsonBody<SubscribeRequest>,
) -> Result<(StatusCode, axum::Json<SubscribeAccepted>), PortfolioError> {
    subscribe_newsletter(state, body).await
}
