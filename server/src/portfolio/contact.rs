//! The contact form: stored, and the site owner notified by email.

use axum::extract::State;
use axum::http::StatusCode;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::PortfolioState;
use super::auth::{ContactWrite, Protected};
use super::db;
use super::fields::Fields;
use super::model::ContactSubmission;
use crate::error::Error;
use crate::extract::JsonBody;
use crate::mail::{outbox, templates};

/// A contact-form submission.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ContactRequest {
    #[schema(required = true, nullable = false, min_length = 1, max_length = 100)]
    pub name: Option<String>,
    #[schema(required = true, nullable = false, format = Email, max_length = 254)]
    pub email: Option<String>,
    #[schema(max_length = 200, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[schema(max_length = 5000, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The stored submission.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ContactReceipt {
    pub id: i64,
    pub received_at: chrono::DateTime<Utc>,
}

/// Submits the contact form.
#[utoipa::path(
    post,
    path = "/api/contact",
    operation_id = "submitContact",
    tag = "contact",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((ContactRequest = "application/json"))),
    responses(
        (status = 201, description = "Stored; the site owner is notified", body = ContactReceipt),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid API key"),
        (status = 403, description = "The key lacks contact:write"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
        (status = 409, description = "A request with this Idempotency-Key is still being processed; retry after Retry-After"),
    ),
    security(("api_key" = [])),
)]
pub async fn submit_contact(
    State(state): State<PortfolioState>,
    _caller: Protected<ContactWrite>,
    JsonBody(request): JsonBody<ContactRequest>,
) -> Result<(StatusCode, axum::Json<ContactReceipt>), Error> {
    let mut fields = Fields::default();
    let name = fields.text("name", request.name.as_deref(), true, 100);
    let email = fields.email("email", request.email.as_deref(), true);
    fields.text("subject", request.subject.as_deref(), false, 200);
    fields.text("message", request.message.as_deref(), false, 5000);
    fields.check()?;
    let submission = ContactSubmission {
        name: name.unwrap_or_default(),
        email: email.unwrap_or_default(),
        subject: request.subject,
        message: request.message,
        received_at: Utc::now(),
    };
    let notification = templates::contact_notification(
        &state.mail.owner_address,
        templates::ContactNotice {
            name: &submission.name,
            email: &submission.email,
            subject: submission.subject.as_deref(),
            message: submission.message.as_deref(),
        },
    );
    // The submission and its notification commit together.
    let mut tx = state.db.begin_write().await?;
    let id = db::contact::insert(tx.conn(), &submission).await?;
    outbox::enqueue(tx.conn(), &notification).await?;
    tx.commit().await?;
    state.mailer.wake();
    Ok((
        StatusCode::CREATED,
        axum::Json(ContactReceipt {
            id,
            received_at: submission.received_at,
        }),
    ))
}
