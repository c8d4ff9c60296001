//! The operator's lists, a page at a time (newest first unless said):
//! subscribers, contact-form submissions, requests for API keys, and the
//! emails the mail worker gave up on.

use crate::core::failure::Failure;
use crate::mail::outbox::{self, OutboxEntry};
use crate::portfolio::db;
use crate::portfolio::model::{
    ContactEntry, FailedEmail, KeyRequest, KeyRequestStatus, SubscriberEntry, SubscriberStatus,
};
use crate::storage::{Database, time_from_ms};

pub(crate) use crate::portfolio::db::{After, Page, Window};

/// A page of the subscribers (of `status`, or all), in the order they came.
pub(crate) async fn subscribers(
    db: &Database,
    status: Option<SubscriberStatus>,
    window: &Window,
) -> Result<Page<SubscriberEntry>, Failure> {
    Ok(db::subscribers::page(db, status, window).await?)
}

/// A page of the subscribers whose address contains `contains` (any case),
/// in the order they came: at most `limit` after the first `offset`, and
/// how many match in all.
pub(crate) async fn search_subscribers(
    db: &Database,
    contains: &str,
    offset: i64,
    limit: i64,
) -> Result<(Vec<SubscriberEntry>, i64), Failure> {
    Ok(db::subscribers::search(db, contains, offset, limit).await?)
}

/// A page of the contact-form submissions, newest first.
pub(crate) async fn contact_submissions(
    db: &Database,
    window: &Window,
) -> Result<Page<ContactEntry>, Failure> {
    Ok(db::contact::page(db, window).await?)
}

/// A page of the requests for API keys (of `status`, or all), oldest first.
pub(crate) async fn key_requests(
    db: &Database,
    status: Option<KeyRequestStatus>,
    window: &Window,
) -> Result<Page<KeyRequest>, Failure> {
    Ok(db::key_requests::list(db, status, window).await?)
}

/// At most `limit` emails of the outbox (only the failed ones, or all).
pub(crate) async fn emails(
    db: &Database,
    only_failed: bool,
    limit: i64,
) -> Result<Vec<OutboxEntry>, Failure> {
    Ok(outbox::list(db, only_failed, limit).await?)
}

/// At most `limit` emails the worker gave up on, newest first.
pub(crate) async fn failed_emails(db: &Database, limit: i64) -> Result<Vec<FailedEmail>, Failure> {
    let mut failed = Vec::new();
    for entry in outbox::list(db, true, limit).await? {
        failed.push(FailedEmail {
            queued_at: time_from_ms(entry.queued_at_ms)?,
            id: entry.id,
            recipient: entry.recipient,
            subject: entry.subject,
            attempts: entry.attempts,
            last_error: entry.last_error.unwrap_or_default(),
        });
    }
    Ok(failed)
}
