//! The delivery worker: each pass claims the due emails with a lease, tries
//! each once, and records the outcome; failures are retried with exponential
//! backoff until the attempts run out. It stops between emails, so a
//! graceful shutdown leaves none leased.

use std::time::Duration;

use super::Mailer;
use super::outbox::{self, QueuedEmail, Record};
use super::transport::Outcome;
use crate::clock::now_ms;
use crate::storage::StoreError;

/// Emails claimed in one pass, at most.
const BATCH: i64 = 50;

/// The longest wait between two attempts.
const MAX_RETRY_DELAY_MS: i64 = 3_600_000;

/// Delivers the outbox until [`Mailer::stop`].
pub async fn run(mailer: Mailer) {
    let poll = Duration::from_millis(mailer.inner.config.poll_interval_ms.max(10));
    while !mailer.stopping() {
        match deliver_due(&mailer).await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(delivered = n, "outbox pass"),
            Err(e) => tracing::error!(error = %e, "outbox pass failed"),
        }
        tokio::select! {
            () = mailer.inner.wake.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
    }
}

/// One pass over the outbox: claims the due emails and tries each once.
/// Returns how many were handled.
pub async fn deliver_due(mailer: &Mailer) -> Result<usize, StoreError> {
    let db = &mailer.inner.db;
    let mut handled = 0;
    for id in outbox::due(db, BATCH).await? {
        if mailer.stopping() {
            break;
        }
        let Some(email) = outbox::claim(db, id, now_ms() + lease_ms(mailer)).await? else {
            continue;
        };
        let outcome = mailer
            .inner
            .transport
            .send(&mailer.inner.from, &email)
            .await;
        outbox::record(
            db,
            email.id,
            email.attempts + 1,
            &record_for(mailer, &email, outcome),
        )
        .await?;
        handled += 1;
    }
    Ok(handled)
}

/// What to record of an attempt: sent, retried after a backoff, or failed
/// for good once the attempts run out or the reply is permanent.
fn record_for(mailer: &Mailer, email: &QueuedEmail, outcome: Outcome) -> Record {
    let attempts = email.attempts + 1;
    let max_attempts = mailer.inner.config.max_attempts;
    match outcome {
        Outcome::Sent => Record::Sent,
        Outcome::Retry(error) if u32::try_from(attempts).unwrap_or(u32::MAX) < max_attempts => {
            let delay = retry_delay_ms(mailer.inner.config.retry_base_ms, attempts);
            tracing::warn!(email = email.id, attempts, retry_in_ms = delay, %error, "email not delivered; will retry");
            Record::RetryAt(now_ms() + delay, error)
        }
        Outcome::Retry(error) | Outcome::Permanent(error) => {
            tracing::error!(email = email.id, attempts, %error, "email failed for good");
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

/// base * 2^(attempts - 1), at most an hour.
fn retry_delay_ms(base_ms: u64, attempts: i32) -> i64 {
    let base = i64::try_from(base_ms).unwrap_or(i64::MAX);
    let factor = 1_i64 << (attempts - 1).clamp(0, 20);
    base.saturating_mul(factor).min(MAX_RETRY_DELAY_MS)
}

#[cfg(test)]
mod tests {
    use super::retry_delay_ms;

    #[test]
    fn retries_back_off_exponentially_up_to_an_hour() {
        assert_eq!(retry_delay_ms(1000, 1), 1000);
        assert_eq!(retry_delay_ms(1000, 2), 2000);
        assert_eq!(retry_delay_ms(1000, 5), 16_000);
        assert_eq!(retry_delay_ms(1000, 40), 3_600_000);
    }
}
