//! Asking for an API key (the seed: keys are obtained from the operator).
//! Anyone may ask; the request is stored, the site owner told by email, and
//! the answer is the same whoever asks, so that it reveals nothing about
//! who asked before. The operator approves (choosing the scopes) or
//! rejects it: `admin::key_requests`.

use axum::extract::State;
use axum::http::StatusCode;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::PortfolioState;
use super::db;
use super::db::key_requests::OwnerNotice;
use super::fields::Fields;
use super::model::{KeyRequest, KeyRequestStatus};
use crate::error::{Error, ErrorCode};
use crate::extract::{ClientAddress, JsonBody};
use crate::mail::{outbox, templates};
use crate::secret;

/// What the seed asks of someone who wants a key.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KeyRequestForm {
    /// Who asks.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 100)]
    pub name: Option<String>,
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200)]
    pub organisation: Option<String>,
    /// What the key is for.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 2000)]
    pub intended_use: Option<String>,
    /// How many requests, roughly, and how often.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200)]
    pub expected_volume: Option<String>,
    /// The address the key is sent to once approved.
    #[schema(required = true, nullable = false, format = Email, max_length = 254)]
    pub technical_contact: Option<String>,
}

/// The answer to a request: recorded, waiting for the operator.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct KeyRequestAccepted {
    pub id: String,
    pub status: KeyRequestStatus,
}

/// Asks the operator for an API key.
#[utoipa::path(
    post,
    path = "/api/key-requests",
    operation_id = "requestApiKey",
    tag = "keys",
    params(crate::idempotency::IdempotencyKeyHeader),
    request_body(content((KeyRequestForm = "application/json"))),
    responses(
        (status = 202, description = "Recorded; the key is emailed to the technical contact once the operator approves", body = KeyRequestAccepted),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
        (status = 409, description = "A request with this Idempotency-Key is still being processed; retry after Retry-After"),
    ),
)]
pub async fn request_api_key(
    State(state): State<PortfolioState>,
    ClientAddress(address): ClientAddress,
    JsonBody(form): JsonBody<KeyRequestForm>,
) -> Result<(StatusCode, axum::Json<KeyRequestAccepted>), Error> {
    let mut fields = Fields::default();
    let name = fields.text("name", form.name.as_deref(), true, 100);
    let organisation = fields.text("organisation", form.organisation.as_deref(), true, 200);
    let intended_use = fields.text("intended_use", form.intended_use.as_deref(), true, 2000);
    let expected_volume = fields.text(
        "expected_volume",
        form.expected_volume.as_deref(),
        true,
        200,
    );
    let technical_contact =
        fields.email("technical_contact", form.technical_contact.as_deref(), true);
    fields.check()?;

    let config = &state.config.key_requests;
    let caller = format!(
        "address:{}",
        address.map_or_else(String::new, |a| a.to_string())
    );
    let now = Utc::now();
    let quota = state
        .key_request_limiter
        .hit(&caller, config.per_address_per_hour, now.timestamp())
        .await;
    if !quota.allowed {
        let retry_after = u64::try_from((quota.reset_at - now.timestamp()).max(1)).unwrap_or(1);
        return Err(Error::new(
            ErrorCode::RateLimited,
            format!(
                "at most {} key requests an hour from one address; retry in {retry_after} s",
                config.per_address_per_hour
            ),
        )
        .with_retry_after(retry_after));
    }
    // Who asked, for the per-address cap: a hash, never the address.
    let requester = secret::sha256_hex(&format!("key-request:{caller}"));
    let (pending, pending_here) = db::key_requests::count_pending(&state.db, &requester).await?;
    if pending_here >= i64::from(config.max_pending_per_address) {
        return Err(Error::new(
            ErrorCode::RateLimited,
            format!(
                "{pending_here} requests from this address already wait for the operator; \
                 ask again once they are decided"
            ),
        )
        .with_retry_after(3600));
    }
    if pending >= i64::from(config.max_pending) {
        return Err(Error::new(
            ErrorCode::ServiceUnavailable,
            "too many requests wait for the operator; try again later",
        )
        .with_retry_after(3600));
    }
    let request = KeyRequest {
        id: format!("kr_{}", secret::hex_nonce::<8>()),
        name: name.unwrap_or_default(),
        organisation: organisation.unwrap_or_default(),
        intended_use: intended_use.unwrap_or_default(),
        expected_volume: expected_volume.unwrap_or_default(),
        technical_contact: technical_contact.unwrap_or_default(),
        status: KeyRequestStatus::Pending,
        created_at: crate::clock::now(),
        decided_at: None,
        key_id: None,
    };
    // The request and the owner's notice commit together. The owner gets at
    // most one email a quiet period: this request's own, or a digest then.
    let owner = &state.mail.owner_address;
    let quiet_ms = i64::from(config.notify_owner_every_minutes) * 60_000;
    let mut tx = state.db.begin_write().await?;
    db::key_requests::insert(tx.conn(), &request, &requester).await?;
    match db::key_requests::owner_notice(tx.conn(), now.timestamp_millis(), quiet_ms).await? {
        OwnerNotice::Now => {
            outbox::enqueue(tx.conn(), &templates::key_request_received(owner, &request)).await?;
        }
        OwnerNotice::FollowUpAt(due) => {
            outbox::enqueue_at(tx.conn(), &templates::key_requests_waiting(owner), due).await?;
        }
        OwnerNotice::Covered => {}
    }
    tx.commit().await?;
    state.mailer.wake();
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(KeyRequestAccepted {
            id: request.id,
            status: request.status,
        }),
    ))
}
