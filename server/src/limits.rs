//! Rate limiting: how many requests (or failed logins) a caller may make
//! per window (a minute, unless a limiter is made with another). Counters
//! are fixed windows kept in memory, so each server process counts on its
//! own.

use std::collections::HashMap;
use std::sync::Mutex;

/// The length of a window, unless a limiter is made with another (seconds).
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
#[derive(Debug)]
pub struct Limiter {
    counters: Mutex<HashMap<String, (i64, u32)>>,
    /// The length of a window (seconds).
    window_secs: i64,
}

impl Default for Limiter {
    fn default() -> Self {
        Self::with_window(WINDOW_SECS)
    }
}

impl Limiter {
    /// A limiter whose windows last `window_secs` seconds.
    pub fn with_window(window_secs: i64) -> Self {
        Limiter {
            counters: Mutex::default(),
            window_secs: window_secs.max(1),
        }
    }

    /// Where `caller` stands at `now` (Unix seconds) against `limit`,
    /// without counting anything.
    pub fn peek(&self, caller: &str, limit: u32, now: i64) -> Quota {
        let window = now - now.rem_euclid(self.window_secs);
        let used = match self.counters.lock() {
            Ok(counters) => counters.get(caller).copied(),
            Err(poisoned) => poisoned.into_inner().get(caller).copied(),
        }
        .filter(|(start, _)| *start == window)
        .map_or(0, |(_, used)| used);
        Quota {
            limit,
            remaining: limit.saturating_sub(used),
            reset_at: window + self.window_secs,
            allowed: used < limit,
        }
    }

    /// Takes back one request of `caller` counted in the window of `now`
    /// (an attempt that turned out not to count, such as a login that
    /// succeeded). Nothing happens once that window has passed.
    pub fn refund(&self, caller: &str, now: i64) {
        let window = now - now.rem_euclid(self.window_secs);
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
        let window = now - now.rem_euclid(self.window_secs);
        let reset_at = window + self.window_secs;
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

/// An attempt (a login, a client authentication) counted against the
/// failure limits of its callers before it is checked, so that guesses sent
/// at once cannot all slip under the limit. [`Attempt::succeeded`] gives the
/// counts back: only failures count.
#[derive(Debug)]
#[must_use = "an attempt that succeeds must give its counts back"]
pub struct Attempt<'a> {
    limiter: &'a Limiter,
    callers: Vec<String>,
    now: i64,
}

impl Limiter {
    /// Counts an attempt of each of `callers` at `now` against `limit`.
    /// When one of them is over it, nothing is counted, and the error is the
    /// seconds until its window ends (for `Retry-After`).
    pub fn attempt(&self, callers: Vec<String>, limit: u32, now: i64) -> Result<Attempt<'_>, u64> {
        let quotas: Vec<Quota> = callers
            .iter()
            .map(|caller| self.hit(caller, limit, now))
            .collect();
        if let Some(over) = quotas.iter().find(|quota| !quota.allowed) {
            for (caller, quota) in callers.iter().zip(&quotas) {
                if quota.allowed {
                    self.refund(caller, now);
                }
            }
            return Err(u64::try_from((over.reset_at - now).max(1)).unwrap_or(1));
        }
        Ok(Attempt {
            limiter: self,
            callers,
            now,
        })
    }
}

impl Attempt<'_> {
    /// The attempt succeeded: it does not count.
    pub fn succeeded(self) {
        for caller in &self.callers {
            self.limiter.refund(caller, self.now);
        }
    }

    /// The attempt failed: it stays counted.
    pub fn failed(self) {}
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
    fn only_failed_attempts_count_and_one_caller_over_stops_all() {
        let limiter = Limiter::default();
        let now = 1_800_000_000 - 1_800_000_000 % WINDOW_SECS;
        let callers = || vec!["user:a".to_owned(), "address:1".to_owned()];
        for _ in 0..5 {
            limiter.attempt(callers(), 2, now).unwrap().succeeded();
        }
        limiter.attempt(callers(), 2, now).unwrap().failed();
        let other = vec!["user:b".to_owned(), "address:1".to_owned()];
        limiter.attempt(other.clone(), 2, now).unwrap().failed();
        assert_eq!(limiter.attempt(other, 2, now + 5).err(), Some(55));
        assert_eq!(
            limiter.peek("user:b", 2, now).remaining,
            1,
            "a refused attempt counts for nobody"
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
