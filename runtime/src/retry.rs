//! When and how often a call is tried again.

use std::time::Duration;

/// Retries of a call that got no answer, or an answer that says "later":
/// connection errors and timeouts, 429, 502, 503 and 504 (and 409 with
/// `Retry-After`, which the server answers while the first attempt with
/// the same idempotency key is still running).
///
/// `GET`, `PUT` and `DELETE` are retried as they are. A `POST` is retried
/// only when it carries an `Idempotency-Key`, which the SDK adds by itself
/// to every operation that takes one (one key per call, the same across its
/// attempts), so that a retried creation creates once. A request that never
/// reached the server (the connection was refused) is retried whatever its
/// method.
///
/// The wait before attempt *n* is random between zero and
/// `min(max_delay, base_delay * 2^n)` ("full jitter"), or what the server's
/// `Retry-After` asks; no attempt starts once `deadline` has passed since
/// the first, nor waits beyond it.
///
/// ```
/// use std::time::Duration;
/// use petstore_portfolio_client::RetryPolicy;
///
/// let patient = RetryPolicy::default()
///     .max_attempts(10)
///     .deadline(Duration::from_secs(120));
/// let never = RetryPolicy::no_retries();
/// assert_eq!(never.attempts(), 1);
/// # let _ = patient;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    deadline: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, waits from 100 ms up to 5 s, all within 30 s.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
            deadline: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// One attempt: every failure goes to the caller at once.
    pub fn no_retries() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// Attempts at most, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The first wait's ceiling; each next one doubles it.
    pub fn base_delay(mut self, delay: Duration) -> Self {
        self.base_delay = delay;
        self
    }

    /// The longest wait between attempts (a `Retry-After` may ask for more,
    /// within the deadline).
    pub fn max_delay(mut self, delay: Duration) -> Self {
        self.max_delay = delay;
        self
    }

    /// The time from the first attempt after which no attempt starts.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// How many attempts a call gets at most.
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    pub(crate) fn total(&self) -> Duration {
        self.deadline
    }

    /// The wait before the attempt after `attempt` (1 for the first):
    /// what the server asked, or full jitter.
    pub(crate) fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(asked) = retry_after {
            return asked;
        }
        let ceiling = self
            .base_delay
            .saturating_mul(2_u32.saturating_pow(attempt.saturating_sub(1)))
            .min(self.max_delay);
        let millis = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(fastrand::u64(0..=millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_within_the_ceiling_and_follow_retry_after() {
        let policy = RetryPolicy::default()
            .base_delay(Duration::from_millis(100))
            .max_delay(Duration::from_millis(300));
        for _ in 0..100 {
            assert!(policy.delay(1, None) <= Duration::from_millis(100));
            assert!(policy.delay(2, None) <= Duration::from_millis(200));
            assert!(policy.delay(9, None) <= Duration::from_millis(300));
        }
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
    }
}
