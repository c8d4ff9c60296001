//! The contact form: a submission is stored, and the site owner told by
//! email, in one transaction.

use chrono::Utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::Context;
use crate::core::failure::Failure;
use crate::mail::{outbox, templates};
use crate::portfolio::db;
use crate::portfolio::model::fields::Fields;
use crate::portfolio::model::{ContactEntry, ContactSubmission};

/// A contact-form submission.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct ContactRequest {
    #[schema(required = true, min_length = 1, max_length = 100)]
    pub(crate) name: Option<String>,
    #[schema(required = true, format = Email, max_length = 254)]
    pub(crate) email: Option<String>,
    #[schema(max_length = 200)]
    pub(crate) subject: Option<String>,
    #[schema(max_length = 5000)]
    pub(crate) message: Option<String>,
}

/// The stored submission.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub(crate) struct ContactReceipt {
    pub(crate) id: i64,
    pub(crate) received_at: chrono::DateTime<Utc>,
}

/// Stores a submission and queues the owner's notification with it.
pub(crate) async fn submit(
    ctx: Context<'_>,
    request: ContactRequest,
    owner: &str,
) -> Result<ContactReceipt, Failure> {
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
    };
    let received_at = Utc::now();
    // The submission and its notification commit together.
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let notification = templates::contact_notification(
        &ctx.letterhead(tx.conn()).await?,
        owner,
        templates::ContactNotice {
            name: &submission.name,
            email: &submission.email,
            subject: submission.subject.as_deref(),
            message: submission.message.as_deref(),
        },
    )?;
    let id = db::contact::insert(tx.conn(), &submission, received_at).await?;
    outbox::enqueue(tx.conn(), &notification).await?;
    tx.commit().await?;
    ctx.mail_queued();
    Ok(ContactReceipt { id, received_at })
}

/// Marks submission `id` handled (the first time stays: marking it again
/// changes nothing); the submission as it stands.
pub(crate) async fn mark_handled(ctx: Context<'_>, id: i64) -> Result<ContactEntry, Failure> {
    let mut tx = ctx.db.begin_write().await?;
    tx.changes_nothing_cached();
    let entry = db::contact::mark_handled(tx.conn(), id, Utc::now())
        .await?
        .ok_or_else(|| Failure::not_found(format!("no contact submission {id}")))?;
    tx.commit().await?;
    Ok(entry)
}
