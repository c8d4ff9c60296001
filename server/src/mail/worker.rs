//! The delivery worker: each pass claims the due emails with a lease, tries
//! each once, and records the outcome. A transient failure (the server down,
//! a timeout, a 4xx reply) is retried with capped exponential backoff for as
//! long as the email's lifetime lasts (`mail.lifetime_secs`, 3 days by
//! default); only a permanent reply (5xx) or the lifetime's end marks it
//! failed, with the reason kept. It stops between emails (the ones under
//! way finish), so a graceful shutdown leaves none leased.

use std::time::Duration;

use futures::StreamExt as _;

use super::Mailer;
use super::outbox::{self, QueuedEmail, Record};
use super::transport::Outcome;
use crate::core::clock::now_ms;
use crate::storage::StoreError;
use crate::telemetry::metrics;

/// Emails claimed in one pass, at most.
const BATCH: i64 = 200;

/// Delivers the outbox until [`Mailer::stop`].
pub(crate) async fn run(mailer: Mailer) {
    let poll = Duration::from_millis(mailer.inner.config.poll_interval_ms.max(10));
    while !mailer.stopping() {
        match deliver_due(&mailer).await {
            Ok(0) => {}
            Ok(n) => {
                tracing::debug!(delivered = n, "outbox pass");
                // More may be due (a pass takes at most BATCH): look again
                // at once rather than after the poll interval.
                continue;
            }
            Err(e) => tracing::error!(error = %e, "outbox pass failed"),
        }
        tokio::select! {
            () = mailer.inner.wake.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
    }
}

/// One pass over the outbox: claims the due emails and tries each once,
/// several at a time: one per SMTP connection (`mail.smtp.connections`,
/// [`Transport::at_once`](super::transport::Transport::at_once)), their
/// claims and records committed together (SQLite's group commit). One at a
/// time, each waited for its own SMTP exchange and two commits of its own.
/// Returns how many were handled.
pub(crate) async fn deliver_due(mailer: &Mailer) -> Result<usize, StoreError> {
    let due = outbox::due(&mailer.inner.db, BATCH).await?;
    // Every attempt runs to its end, whatever the others do: one dropped
    // between its send and its record would be sent again.
    let outcomes: Vec<_> = futures::stream::iter(due)
        .map(|id| deliver(mailer, id))
        .buffer_unordered(super::transport::Transport::at_once(&mailer.inner.config))
        .collect()
        .await;
    let mut handled = 0;
    for outcome in outcomes {
        if outcome? {
            handled += 1;
        }
    }
    Ok(handled)
}

/// Claims email `id` and tries it once; false if another worker has it, or
/// this one is stopping.
async fn deliver(mailer: &Mailer, id: i64) -> Result<bool, StoreError> {
    let db = &mailer.inner.db;
    if mailer.stopping() {
        return Ok(false);
    }
    let Some(email) = outbox::claim(db, id, now_ms() + lease_ms(mailer)).await? else {
        return Ok(false);
    };
    mailer.hold(email.id, true);
    let outcome = mailer
        .inner
        .transport
        .send(&mailer.inner.from, &email)
        .await;
    let record = record_for(mailer, &email, outcome);
    outbox::record(db, email.id, email.attempts + 1, &record).await?;
    mailer.hold(email.id, false);
    match record {
        Record::Sent => metrics::email_delivered(),
        Record::Failed(_) => metrics::email_failed(),
        Record::RetryAt(..) => {}
    }
    Ok(true)
}

/// What to record of an attempt: sent; retried after a backoff while the
/// email's lifetime lasts; or failed, for a permanent reply or once the
/// lifetime is over.
fn record_for(mailer: &Mailer, email: &QueuedEmail, outcome: Outcome) -> Record {
    let config = &mailer.inner.config;
    let attempts = email.attempts + 1;
    let now = now_ms();
    let lifetime_ms = i64::try_from(config.lifetime_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    let expires_at = email.queued_at_ms.saturating_add(lifetime_ms);
    match outcome {
        Outcome::Sent => Record::Sent,
        Outcome::Retry(error) if now < expires_at => {
            let delay = retry_delay_ms(config.retry_base_ms, config.max_retry_delay_ms, attempts);
            // Never past the lifetime's end: the last try comes at the end.
            let at = now.saturating_add(delay).min(expires_at);
            tracing::warn!(email = email.id, attempts, retry_in_ms = at - now, %error, "email not delivered; will retry");
            Record::RetryAt(at, error)
        }
        Outcome::Retry(error) => {
            let error = format!(
                "not delivered within its lifetime of {} s; last error: {error}",
                config.lifetime_secs
            );
            tracing::error!(email = email.id, attempts, %error, "email failed for good");
            Record::Failed(error)
        }
        Outcome::Permanent(error) => {
            tracing::error!(email = email.id, attempts, %error, "email refused for good");
            Record::Failed(error)
        }
    }
}

/// How long a claim holds: long enough for one delivery attempt. A worker
/// that dies mid-delivery leaves its email to others after this.
fn lease_ms(mailer: &Mailer) -> i64 {
    let smtp_timeout = mailer
        .inner
        .config
        .smtp
        .as_ref()
        .map_or(0, |smtp| smtp.timeout_secs);
    i64::try_from(smtp_timeout.saturating_mul(2).saturating_add(30)).unwrap_or(60) * 1000
}

/// base * 2^(attempts - 1), at most `max_ms`.
fn retry_delay_ms(base_ms: u64, max_ms: u64, attempts: i32) -> i64 {
    let base = i64::try_from(base_ms).unwrap_or(i64::MAX);
    let max = i64::try_from(max_ms).unwrap_or(i64::MAX);
    let factor = 1_i64 << (attempts - 1).clamp(0, 40);
    base.saturating_mul(factor).min(max)
}

#[cfg(test)]
mod tests {
    use super::retry_delay_ms;

    #[test]
    fn retries_back_off_exponentially_up_to_the_cap() {
        assert_eq!(retry_delay_ms(1000, 3_600_000, 1), 1000);
        assert_eq!(retry_delay_ms(1000, 3_600_000, 2), 2000);
        assert_eq!(retry_delay_ms(1000, 3_600_000, 5), 16_000);
        assert_eq!(retry_delay_ms(1000, 3_600_000, 40), 3_600_000);
        assert_eq!(retry_delay_ms(1000, 3_600_000, 4000), 3_600_000);
    }
}
