//! The emails the mail worker gave up on: why, and another chance for them
//! (as the CLI's `outbox`).

use axum::extract::State;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::Error;
use crate::http::extract::JsonBody;
use crate::portfolio::api::auth::{Admin, Private};
use crate::portfolio::api::paging::{Slice, SliceQuery};
use crate::portfolio::model::FailedEmail;
use crate::portfolio::ops;
use crate::portfolio::ops::outbox::Requeued;
use crate::portfolio::reads::lists;
use crate::portfolio::state::PortfolioState;

/// How many failed emails the list shows at most.
const LIST_LIMIT: i64 = 1000;

/// Which failed emails to requeue.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub(crate) struct Requeue {
    /// These ids; none or empty: every failed email.
    pub(crate) ids: Option<Vec<i64>>,
}

/// Lists the emails that failed for good, newest first (at most 1000).
#[utoipa::path(
    get, path = "/api/admin/outbox/failed",
    tag = "admin",
    params(SliceQuery),
    responses(
        (status = 200, description = "The failed emails", body = Vec<FailedEmail>,
            headers(("Link" = String, description = "Where the next slice is"))),
        (status = 400, description = "A malformed limit or cursor"),
    ),
    security(("oauth" = ["admin"])),
)]
pub(crate) async fn list_failed_emails(
    State(state): State<PortfolioState>,
    _caller: Private<Admin>,
    slice: Slice,
) -> Result<Response, Error> {
    slice.answer_items(&lists::failed_emails(&state.db, LIST_LIMIT).await?)
}

/// Puts failed emails back in the queue.
#[utoipa::path(
    post, path = "/api/admin/outbox/requeue",
    tag = "admin",
    request_body(content((Requeue = "application/json"))),
    responses(
        (status = 200, description = "What was requeued", body = Requeued),
    ),
    security(("oauth" = ["admin"])),
)]
pub(crate) async fn requeue_emails(
    State(state): State<PortfolioState>,
    _caller: Private<Admin>,
    JsonBody(requeue): JsonBody<Requeue>,
) -> Result<axum::Json<Requeued>, Error> {
    let ids = requeue.ids.unwrap_or_default();
    let requeued = ops::outbox::requeue(state.ops(), &ids).await?;
    Ok(axum::Json(requeued))
}
