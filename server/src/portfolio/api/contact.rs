//! The contact form: stored, and the site owner notified by email.

use axum::extract::State;
use axum::http::StatusCode;

use crate::http::error::Error;
use crate::http::extract::JsonBody;
use crate::http::idempotency::Idempotent;
use crate::portfolio::api::auth::{ContactWrite, Protected};
use crate::portfolio::ops;
use crate::portfolio::ops::contact::{ContactReceipt, ContactRequest};
use crate::portfolio::state::PortfolioState;

/// Submits the contact form.
#[utoipa::path(
    post, path = "/api/contact",
    tag = "contact",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((ContactRequest = "application/json"))),
    responses(
        (status = 201, description = "Stored; the site owner is notified", body = ContactReceipt),
        (status = 403, description = "The key lacks contact:write"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn submit_contact(
    State(state): State<PortfolioState>,
    _caller: Protected<ContactWrite>,
    Idempotent(JsonBody(request)): Idempotent<JsonBody<ContactRequest>>,
) -> Result<(StatusCode, axum::Json<ContactReceipt>), Error> {
    let receipt = ops::contact::submit(state.ops(), request, &state.mail.owner_address).await?;
    Ok((StatusCode::CREATED, axum::Json(receipt)))
}
