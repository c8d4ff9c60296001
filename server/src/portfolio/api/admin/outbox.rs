//! The emails the mail worker gave up on: why, and another chance for them
//! (as the CLI's `outbox`).

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::error::Error;
use crate::http::extract::JsonBody;
use crate::mail::outbox::{self, OutboxEntry};
use crate::portfolio::PortfolioState;
use crate::portfolio::api::auth::{Admin, Private};
use crate::portfolio::ops;
use crate::portfolio::ops::outbox::Requeued;
use crate::storage::time_from_ms;

/// How many failed emails the list shows at most.
const LIST_LIMIT: i64 = 1000;

/// An email the worker gave up on.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct FailedEmail {
    pub(crate) id: i64,
    pub(crate) recipient: String,
    pub(crate) subject: String,
    pub(crate) attempts: i32,
    /// Why the last attempt failed.
    pub(crate) last_error: String,
    /// When it was queued (or last requeued).
    pub(crate) queued_at: chrono::DateTime<chrono::Utc>,
}

impl TryFrom<OutboxEntry> for FailedEmail {
    type Error = Error;

    fn try_from(entry: OutboxEntry) -> Result<Self, Error> {
        Ok(FailedEmail {
            queued_at: time_from_ms(entry.queued_at_ms)?,
            id: entry.id,
            recipient: entry.recipient,
            subject: entry.subject,
            attempts: entry.attempts,
            last_error: entry.last_error.unwrap_or_default(),
        })
    }
}

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
    responses(
        (status = 200, description = "The failed emails", body = Vec<FailedEmail>),
    ),
    security(("oauth" = ["admin"])),
)]
pub(crate) async fn list_failed_emails(
    State(state): State<PortfolioState>,
    _caller: Private<Admin>,
) -> Result<axum::Json<Vec<FailedEmail>>, Error> {
    let failed = outbox::list(&state.db, true, LIST_LIMIT).await?;
    let failed = failed
        .into_iter()
        .map(FailedEmail::try_from)
        .collect::<Result<_, _>>()?;
    Ok(axum::Json(failed))
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
