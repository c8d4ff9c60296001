//! Asking for an API key (the seed: keys are obtained from the operator).
//! Anyone may ask; the request is stored, the site owner told by email, and
//! the answer is the same whoever asks, so that it reveals nothing about
//! who asked before. The operator approves (choosing the scopes) or
//! rejects it: `admin::key_requests`.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::Error;
use crate::http::extract::{ClientAddress, JsonBody};
use crate::http::idempotency::Idempotent;
use crate::portfolio::model::KeyRequestStatus;
use crate::portfolio::ops;
use crate::portfolio::ops::key_requests::KeyRequestForm;
use crate::portfolio::state::PortfolioState;

/// The answer to a request: recorded, waiting for the operator.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct KeyRequestAccepted {
    pub(crate) id: String,
    pub(crate) status: KeyRequestStatus,
}

/// Asks the operator for an API key.
#[utoipa::path(
    post, path = "/api/key-requests",
    tag = "keys",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body(content((KeyRequestForm = "application/json"))),
    responses(
        (status = 202, description = "Recorded; the key is emailed to the technical contact once the operator approves", body = KeyRequestAccepted),
    ),
)]
pub(crate) async fn request_api_key(
    State(state): State<PortfolioState>,
    ClientAddress(address): ClientAddress,
    Idempotent(JsonBody(form)): Idempotent<JsonBody<KeyRequestForm>>,
) -> Result<(StatusCode, axum::Json<KeyRequestAccepted>), Error> {
    let config = &state.config.key_requests;
    let caller = format!(
        "address:{}",
        address.map_or_else(String::new, |a| a.to_string())
    );
    let request = ops::key_requests::submit(
        state.ops(),
        form,
        &caller,
        &state.key_request_limiter,
        &state.mail.owner_address,
        config,
    )
    .await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(KeyRequestAccepted {
            id: request.id,
            status: request.status,
        }),
    ))
}
