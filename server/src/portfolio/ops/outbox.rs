//! The outbox, as the operator tends it: failed emails requeued.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Context;
use crate::core::failure::Failure;
use crate::mail::outbox;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct Requeued {
    /// Back in the queue: the worker sends them again.
    pub(crate) requeued: Vec<i64>,
    /// Asked for, but not failed (sent, pending or unknown): left alone.
    pub(crate) not_failed: Vec<i64>,
}

/// Queues the failed emails among `ids` again; the others are left alone.
pub(crate) async fn requeue(ctx: Context<'_>, ids: &[i64]) -> Result<Requeued, Failure> {
    let requeued = outbox::requeue(ctx.db, ids).await?;
    let not_failed = ids
        .iter()
        .copied()
        .filter(|id| !requeued.contains(id))
        .collect();
    ctx.mail_queued();
    Ok(Requeued {
        requeued,
        not_failed,
    })
}
