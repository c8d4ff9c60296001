//! The operator's side of key requests: list them, approve one (a key is
//! made with the scopes chosen then, and emailed to the technical contact
//! through the outbox) or reject it. The CLI's `key-requests` does the same
//! through [`approve`] and [`reject`].

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::access::Service;
use crate::access::db as access_db;
use crate::access::keys::{self, ApiKey, IssuedKey, NewKey};
use crate::clock::timestamp;
use crate::config::Scope;
use crate::error::Error;
use crate::extract::{JsonBody, Path, Query, keep_empty};
use crate::mail::{outbox, templates};
use crate::portfolio::PortfolioState;
use crate::portfolio::auth::{KeysManage, Private};
use crate::portfolio::db;
use crate::portfolio::model::{KeyRequest, KeyRequestStatus};
use crate::portfolio::paging::{PageQuery, page_of};
use crate::storage::Database;

/// The scopes of an approved request's key, unless the operator chooses:
/// what an integrator of the site asks for most (its context, its contact
/// form).
pub const DEFAULT_SCOPES: [Scope; 2] = [Scope::ContextRead, Scope::ContactWrite];

page_of!(
    /// A page of key requests, oldest first.
    KeyRequestPage,
    KeyRequest
);

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct KeyRequestFilter {
    /// Only the requests with this status.
    #[serde(default, deserialize_with = "keep_empty")]
    status: Option<KeyRequestStatus>,
}

/// How to approve a request.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct Approval {
    /// The key's scopes, at least one; default `context:read` and
    /// `contact:write`.
    #[schema(nullable = false, min_items = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<Scope>>,
    /// It stops working after this many days (default: never).
    #[schema(nullable = false, minimum = 1, maximum = 3650)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_days: Option<u32>,
}

/// An approved request and its key, shown this once.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct ApprovedKeyRequest {
    pub request: KeyRequest,
    pub api_key: ApiKey,
    /// The key itself (`pk_<id>_<secret>`); it is not kept, and was emailed
    /// to the technical contact.
    pub key: String,
}

/// A request approved: the request as it now stands, and its key.
#[derive(Debug)]
pub struct Approved {
    pub request: KeyRequest,
    pub key: IssuedKey,
}

impl From<Approved> for ApprovedKeyRequest {
    fn from(approved: Approved) -> Self {
        ApprovedKeyRequest {
            request: approved.request,
            api_key: approved.key.stored.key,
            key: approved.key.key,
        }
    }
}

fn not_found(id: &str) -> Error {
    Error::not_found(format!("no key request {id:?}"))
}

fn decided_already(request: &KeyRequest) -> Error {
    Error::conflict(format!(
        "the request {:?} was {} already",
        request.id,
        request.status.as_str()
    ))
}

/// Approves a pending request: a key with `scopes` (default
/// [`DEFAULT_SCOPES`]) is made, and emailed to the technical contact, all
/// in one transaction. 404, 409 if it was decided already, 422 for a bad
/// approval.
pub async fn approve(
    db: &Database,
    id: &str,
    approval: &Approval,
    docs_url: Option<&str>,
) -> Result<Approved, Error> {
    let scopes = approval
        .scopes
        .clone()
        .unwrap_or_else(|| DEFAULT_SCOPES.to_vec());
    let mut tx = db.begin_write().await?;
    let request = db::key_requests::get(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    if request.status != KeyRequestStatus::Pending {
        return Err(decided_already(&request));
    }
    let name: String = format!("{} ({})", request.name, request.organisation)
        .chars()
        .take(keys::MAX_NAME_CHARS)
        .collect();
    let new = NewKey {
        service: Service::Portfolio,
        name,
        scopes,
        expires_in_days: approval.expires_in_days,
    };
    let problems = new.problems();
    if !problems.is_empty() {
        return Err(Error::invalid_fields(problems));
    }
    let issued = keys::issue(
        new.service,
        &new.name,
        new.scopes.clone(),
        new.expires_at(crate::clock::now()),
    );
    access_db::insert_key(tx.conn(), &issued.stored).await?;
    let now = crate::clock::now();
    if !db::key_requests::decide(
        tx.conn(),
        id,
        KeyRequestStatus::Approved,
        Some(&issued.stored.key.id),
        now,
    )
    .await?
    {
        // Decided by someone else meanwhile: nothing of this stays.
        return Err(decided_already(&request));
    }
    let expires = issued.stored.key.expires_at.map(timestamp);
    let email = templates::api_key_issued(
        &request.technical_contact,
        templates::IssuedKeyNotice {
            requester: &request.organisation,
            key: &issued.key,
            scopes: &Scope::join(&new.scopes),
            expires: expires.as_deref(),
            docs_url,
        },
    );
    outbox::enqueue(tx.conn(), &email).await?;
    tx.commit().await?;
    Ok(Approved {
        request: KeyRequest {
            status: KeyRequestStatus::Approved,
            decided_at: Some(now),
            key_id: Some(issued.stored.key.id.clone()),
            ..request
        },
        key: issued,
    })
}

/// Rejects a pending request, and tells the technical contact. 404, or 409
/// if it was decided already.
pub async fn reject(db: &Database, id: &str) -> Result<KeyRequest, Error> {
    let mut tx = db.begin_write().await?;
    let request = db::key_requests::get(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let now = crate::clock::now();
    if request.status != KeyRequestStatus::Pending
        || !db::key_requests::decide(tx.conn(), id, KeyRequestStatus::Rejected, None, now).await?
    {
        return Err(decided_already(&request));
    }
    let email = templates::api_key_declined(&request.technical_contact, &request.organisation);
    outbox::enqueue(tx.conn(), &email).await?;
    tx.commit().await?;
    Ok(KeyRequest {
        status: KeyRequestStatus::Rejected,
        decided_at: Some(now),
        ..request
    })
}

/// Where the documentation is, for the email (the server's own address).
fn docs_url(state: &PortfolioState) -> String {
    format!("{}{}/", state.public_url, crate::docs::SWAGGER_UI_PATH)
}

/// Lists the requests for API keys, oldest first.
#[utoipa::path(
    get,
    path = "/api/admin/key-requests",
    operation_id = "listKeyRequests",
    tag = "admin",
    params(KeyRequestFilter, PageQuery),
    responses(
        (status = 200, description = "A page of requests", body = KeyRequestPage),
        (status = 400, description = "A malformed status or page"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks keys:manage"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub async fn list_key_requests(
    State(state): State<PortfolioState>,
    _caller: Private<KeysManage>,
    Query(filter): Query<KeyRequestFilter>,
    Query(page): Query<PageQuery>,
) -> Result<axum::Json<KeyRequestPage>, Error> {
    let paging = page.paging()?;
    let (requests, total) =
        db::key_requests::list(&state.db, filter.status, paging.offset(), paging.limit()).await?;
    Ok(axum::Json(KeyRequestPage::new(requests, paging, total)))
}

/// Approves a request: its key is made, shown here once, and emailed to
/// the technical contact.
#[utoipa::path(
    post,
    path = "/api/admin/key-requests/{id}/approve",
    operation_id = "approveKeyRequest",
    tag = "admin",
    params(crate::idempotency::IdempotencyKeyHeader, ("id" = String, Path, description = "The request's id.")),
    request_body(content((Approval = "application/json"))),
    responses(
        (status = 200, description = "Approved; the key is shown this once", body = ApprovedKeyRequest),
        (status = 400, description = "The body is not JSON of this shape"),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks keys:manage, or a scope it would hand out"),
        (status = 404, description = "No such request"),
        (status = 409, description = "The request was decided already"),
        (status = 422, description = "A field breaks its rule; details.fields says which"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub async fn approve_key_request(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Path(id): Path<String>,
    JsonBody(approval): JsonBody<Approval>,
) -> Result<axum::Json<ApprovedKeyRequest>, Error> {
    let scopes = approval
        .scopes
        .clone()
        .unwrap_or_else(|| DEFAULT_SCOPES.to_vec());
    super::may_grant(&caller, &scopes)?;
    let approved = approve(&state.db, &id, &approval, Some(&docs_url(&state))).await?;
    state.access.keys.remember(&approved.key.stored);
    state.mailer.wake();
    Ok(axum::Json(ApprovedKeyRequest::from(approved)))
}

/// Rejects a request; the technical contact is told.
#[utoipa::path(
    post,
    path = "/api/admin/key-requests/{id}/reject",
    operation_id = "rejectKeyRequest",
    tag = "admin",
    params(("id" = String, Path, description = "The request's id.")),
    responses(
        (status = 200, description = "Rejected", body = KeyRequest),
        (status = 401, description = "No valid bearer token"),
        (status = 403, description = "The token lacks keys:manage"),
        (status = 404, description = "No such request"),
        (status = 409, description = "The request was decided already"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub async fn reject_key_request(
    State(state): State<PortfolioState>,
    _caller: Private<KeysManage>,
    Path(id): Path<String>,
) -> Result<axum::Json<KeyRequest>, Error> {
    let request = reject(&state.db, &id).await?;
    state.mailer.wake();
    Ok(axum::Json(request))
}
