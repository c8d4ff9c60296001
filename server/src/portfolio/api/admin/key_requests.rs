//! The operator's side of key requests: list them, approve one (a key is
//! made with the scopes chosen then, and emailed to the technical contact
//! through the outbox) or reject it. The CLI's `key-requests` calls the
//! same operations ([`ops::key_requests`]).

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;
use utoipa::IntoParams;

use crate::access::ops::Actor;
use crate::http::error::Error;
use crate::http::extract::{JsonBody, Path, Query, keep_empty};
use crate::http::idempotency::Idempotent;
use crate::http::paths;
use crate::portfolio::api::auth::{KeysManage, Private};
use crate::portfolio::api::paging::{AdminPage, KeyRequestCursor, PageQuery, page_of};
use crate::portfolio::model::{KeyRequest, KeyRequestStatus};
use crate::portfolio::ops;
use crate::portfolio::ops::key_requests::{Approval, ApprovedKeyRequest};
use crate::portfolio::reads::lists;
use crate::portfolio::state::PortfolioState;

page_of!(
    /// A page of key requests, oldest first.
    KeyRequestPage,
    KeyRequest
);

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct KeyRequestFilter {
    /// Only the requests with this status.
    #[serde(default, deserialize_with = "keep_empty")]
    status: Option<KeyRequestStatus>,
}

/// Lists the requests for API keys, oldest first.
#[utoipa::path(
    get, path = "/api/admin/key-requests",
    tag = "admin",
    params(KeyRequestFilter, PageQuery, KeyRequestCursor),
    responses(
        (status = 200, description = "A page of requests", body = KeyRequestPage,
            headers(("Link" = String, description = "Where the next page is"))),
        (status = 400, description = "A malformed status or page"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn list_key_requests(
    State(state): State<PortfolioState>,
    _caller: Private<KeysManage>,
    Query(filter): Query<KeyRequestFilter>,
    asked: AdminPage<KeyRequestCursor>,
) -> Result<Response, Error> {
    let page = lists::key_requests(&state.db, filter.status, &asked.window()).await?;
    Ok(KeyRequestPage::response(page, &asked))
}

/// Approves a request: its key is made, shown here once, and emailed to
/// the technical contact. 409 when the request was decided already.
#[utoipa::path(
    post, path = "/api/admin/key-requests/{id}/approve",
    tag = "admin",
    params(crate::http::idempotency::IdempotencyKeyHeader, ("id" = String, Path, description = "The request's id.")),
    request_body(content((Approval = "application/json"))),
    responses(
        (status = 200, description = "Approved; the key is shown this once", body = ApprovedKeyRequest),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn approve_key_request(
    State(state): State<PortfolioState>,
    Private(caller, _): Private<KeysManage>,
    Path(id): Path<String>,
    Idempotent(JsonBody(approval)): Idempotent<JsonBody<Approval>>,
) -> Result<axum::Json<ApprovedKeyRequest>, Error> {
    let by = Actor::Holding(&caller.scopes);
    let docs_url = paths::docs_url(&state.public_url);
    let approved =
        ops::key_requests::approve(state.ops(), by, &id, &approval, Some(&docs_url)).await?;
    Ok(axum::Json(approved))
}

/// Rejects a request; the technical contact is told.
#[utoipa::path(
    post, path = "/api/admin/key-requests/{id}/reject",
    tag = "admin",
    params(("id" = String, Path, description = "The request's id.")),
    responses(
        (status = 200, description = "Rejected", body = KeyRequest),
        (status = 409, description = "The request was decided already"),
    ),
    security(("oauth" = ["keys:manage"])),
)]
pub(crate) async fn reject_key_request(
    State(state): State<PortfolioState>,
    _caller: Private<KeysManage>,
    Path(id): Path<String>,
) -> Result<axum::Json<KeyRequest>, Error> {
    let request = ops::key_requests::reject(state.ops(), &id).await?;
    Ok(axum::Json(request))
}
