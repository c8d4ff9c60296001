//! Rate limiting: how many requests (or failed logins) a caller may make
//! per one-minute window. Counters are fixed windows kept in memory, so each
//! server process counts on its own.

use std::collections::HashMap;
use std::sync::Mutex;

/// The length of a window (seconds).
pub const WINDOW_SECS: i64 = 60;
/// Past this many counters, the ones of finished windows are dropped.
const PRUNE_ABOVE: usize = 10_000;

/// Where a request stands against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub limit: u32,
    pub remaining: u32,
    /// Unix seconds when the window ends.
    pub reset_at: i64,
    pub allowed: bool,
}

/// Counts requests per caller and window.
#[derive(Debug, Default)]
pub struct Limiter {
    counters: Mutex<HashMap<String, (i64, u32)>>,
}

impl Limiter {
    /// Where `caller` stands at `now` (Unix seconds) against `limit`,
    /// without counting anything.
    pub fn peek(&self, caller: &str, limit: u32, now: i64) -> Quota {
        let window = now - now.rem_euclid(WINDOW_SECS);
        let used = match self.counters.lock() {
            Ok(counters) => counters.get(caller).copied(),
            Err(poisoned) => poisoned.into_inner().get(caller).copied(),
        }
        .filter(|(start, _)| *start == window)
        .map_or(0, |(_, used)| used);
        Quota {
            limit,
            remaining: limit.saturating_sub(used),
            reset_at: window + WINDOW_SECS,
            allowed: used < limit,
        }
    }

    /// Takes back one request of `caller` counted in the window of `now`
    /// (an attempt that turned out not to count, such as a login that
    /// succeeded). Nothing happens once that window has passed.
    pub fn refund(&self, caller: &str, now: i64) {
        let window = now - now.rem_euclid(WINDOW_SECS);
        let mut counters = match self.counters.lock() {
            Ok(counters) => counters,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((start, used)) = counters.get_mut(caller)
            && *start == window
        {
            *used = used.saturating_sub(1);
        }
    }

    /// Counts one request of `caller` at `now` (Unix seconds) against `limit`.
    pub fn hit(&self, caller: &str, limit: u32, now: i64) -> Quota {
        let window = now - now.rem_euclid(WINDOW_SECS);
        let reset_at = window + WINDOW_SECS;
        let mut counters = match self.counters.lock() {
            Ok(counters) => counters,
            // A panic elsewhere while counting leaves counts that are still counts.
            Err(poisoned) => poisoned.into_inner(),
        };
        if counters.len() > PRUNE_ABOVE {
            counters.retain(|_, (start, _)| *start == window);
        }
        let entry = counters.entry(caller.to_owned()).or_insert((window, 0));
        if entry.0 != window {
            *entry = (window, 0);
        }
        let allowed = entry.1 < limit;
        if allowed {
            entry.1 += 1;
        }
        Quota {
            limit,
            remaining: limit - entry.1,
            reset_at,
            allowed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refund_gives_one_back_in_the_same_window_only() {
        let limiter = Limiter::default();
        let now = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;
        limiter.hit("k", 2, now);
        limiter.hit("k", 2, now);
        limiter.refund("k", now + 1);
        assert!(limiter.hit("k", 2, now + 2).allowed);
        limiter.refund("k", now + WINDOW_SECS);
        assert!(
            !limiter.peek("k", 2, now + 3).allowed,
            "a later window gives nothing back"
        );
    }

    #[test]
    fn peeking_counts_nothing() {
        let limiter = Limiter::default();
        let now = 1_800_000_000;
        limiter.hit("k", 2, now);
        assert_eq!(limiter.peek("k", 2, now).remaining, 1);
        assert_eq!(limiter.peek("k", 2, now).remaining, 1);
        assert!(limiter.peek("other", 2, now).allowed);
    }

    #[test]
    fn a_window_allows_the_limit_then_refuses_until_it_ends() {
        let limiter = Limiter::default();
        let start = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;
        for n in 0..3 {
            let quota = limiter.hit("k", 3, start + n);
            assert!(quota.allowed);
            assert_eq!(quota.remaining, 2 - u32::try_from(n).unwrap_or(0));
        }
        let over = limiter.hit("k", 3, start + 10);
        assert!(!over.allowed);
        assert_eq!((over.remaining, over.reset_at), (0, start + WINDOW_SECS));
        assert!(
            limiter.hit("other", 3, start + 10).allowed,
            "callers count apart"
        );
        assert!(
            limiter.hit("k", 3, start + WINDOW_SECS).allowed,
            "a new window starts afresh"
        );
    }
}
