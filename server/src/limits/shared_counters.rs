//! Rate-limit counters in Redis, shared by every replica (`--redis-url`):
//! with N replicas behind a load balancer, counters of their
//! own would let N times the limit through.
//!
//! Each hit is one Lua script, atomic in Redis: a caller's one-second
//! buckets are a hash (`<prefix>:<limiter>:<caller>`), and the script drops
//! the ones that left the window, counts the request only if the rest hold
//! fewer than the limit (as the in-process buckets do), and gives the key
//! the window's lifetime. Replicas agree on the window as far as their
//! clocks agree.
//!
//! Redis unreachable is never an error for a request: the server fails
//! open. The limiters count in the process meanwhile (each replica its own
//! limit, as without Redis), readiness says `degraded`, and the log says so
//! once when it goes and once when it comes back. After a failure Redis is
//! not asked again for a second, so that requests do not each wait for a
//! timeout.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

use crate::config::redact_url;
use crate::core::clock::now_ms;

/// Where a caller stands, counted: what its buckets hold and the oldest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counted {
    pub(crate) allowed: bool,
    pub(crate) used: u32,
    /// The second of the oldest bucket still counted.
    pub(crate) oldest: Option<i64>,
}

/// How long a hit waits for Redis before the request goes on without it.
const ANSWER_WITHIN: Duration = Duration::from_millis(250);
/// After a failure, Redis is left alone this long.
const RETRY_AFTER_MS: i64 = 1000;

/// A caller's one-second buckets in a hash (second -> hits): drops the ones
/// older than the span, and counts a hit (`ARGV[4]` = 1) if the rest hold
/// fewer than the limit. `{allowed, used, oldest second or -1}`.
const COUNT: &str = r"
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local span = tonumber(ARGV[3])
local buckets = redis.call('HGETALL', KEYS[1])
local used = 0
local oldest = -1
for i = 1, #buckets, 2 do
  local second = tonumber(buckets[i])
  if second <= now - span then
    redis.call('HDEL', KEYS[1], buckets[i])
  else
    used = used + tonumber(buckets[i + 1])
    if oldest == -1 or second < oldest then oldest = second end
  end
end
if used >= limit then
  return {0, used, oldest}
end
if ARGV[4] == '1' then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('EXPIRE', KEYS[1], span + 1)
  used = used + 1
  if oldest == -1 then oldest = now end
end
return {1, used, oldest}
";

/// The counters every replica shares.
pub(crate) struct SharedCounters {
    client: redis::Client,
    /// The URL without its password, for messages.
    shown_url: String,
    prefix: String,
    connection: OnceCell<ConnectionManager>,
    count: redis::Script,
    /// Not asked before this (Unix milliseconds), after a failure.
    resting_until_ms: AtomicI64,
    /// Whether the last call failed (for the log's transitions).
    down: AtomicBool,
    /// What the last failure was, for readiness.
    last_error: Mutex<Option<String>>,
}

impl std::fmt::Debug for SharedCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedCounters")
            .field("url", &self.shown_url)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl SharedCounters {
    /// Counters at `url` (`redis://...`), their keys under `prefix`. Only the
    /// URL is checked here: Redis may come up after the server.
    pub(crate) fn new(url: &str, prefix: &str) -> anyhow::Result<SharedCounters> {
        let client = redis::Client::open(url)
            .with_context(|| format!("not a Redis URL: {}", redact_url(url)))?;
        Ok(SharedCounters {
            client,
            shown_url: redact_url(url),
            prefix: prefix.to_owned(),
            connection: OnceCell::new(),
            count: redis::Script::new(COUNT),
            resting_until_ms: AtomicI64::new(0),
            down: AtomicBool::new(false),
            last_error: Mutex::new(None),
        })
    }

    /// Counts (`hit`) or reads where `caller` of `limiter` stands at `now`
    /// against `limit`, over the buckets of the last `span` seconds (see
    /// [`crate::limits`]). `None`: Redis did not answer, count here.
    pub(crate) async fn count(
        &self,
        limiter: &str,
        caller: &str,
        limit: u32,
        now: i64,
        span: i64,
        hit: bool,
    ) -> Option<Counted> {
        let key = self.key(limiter, caller);
        let (allowed, used, oldest): (i64, i64, i64) = self
            .call(|mut connection| {
                let mut invocation = self.count.key(&key);
                invocation.arg(now).arg(limit).arg(span).arg(u8::from(hit));
                async move { invocation.invoke_async(&mut connection).await }
            })
            .await?;
        Some(Counted {
            allowed: allowed == 1,
            used: u32::try_from(used).unwrap_or(u32::MAX),
            oldest: (oldest >= 0).then_some(oldest),
        })
    }

    /// `None` if Redis answered the last call (or none was made yet);
    /// otherwise what went wrong.
    pub(crate) fn problem(&self) -> Option<String> {
        if !self.down.load(Ordering::Relaxed) {
            return None;
        }
        match self.last_error.lock() {
            Ok(error) => error.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Asks Redis now (readiness), unless it is resting after a failure.
    pub(crate) async fn ping(&self) -> Option<String> {
        let _ = self
            .call(|mut connection| async move {
                redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
            })
            .await;
        self.problem()
    }

    pub(crate) fn url(&self) -> &str {
        &self.shown_url
    }

    fn key(&self, limiter: &str, caller: &str) -> String {
        format!("{}:{limiter}:{caller}", self.prefix)
    }

    /// Runs `command` on the connection within [`ANSWER_WITHIN`], keeping
    /// track of Redis going and coming back.
    async fn call<T, F, Fut>(&self, command: F) -> Option<T>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        if now_ms() < self.resting_until_ms.load(Ordering::Relaxed) {
            return None;
        }
        let answered = tokio::time::timeout(ANSWER_WITHIN, async {
            let connection = self
                .connection
                .get_or_try_init(|| {
                    let config = ConnectionManagerConfig::new()
                        .set_connection_timeout(Some(ANSWER_WITHIN))
                        .set_response_timeout(Some(ANSWER_WITHIN))
                        .set_number_of_retries(1);
                    ConnectionManager::new_with_config(self.client.clone(), config)
                })
                .await?
                .clone();
            command(connection).await
        })
        .await;
        let failure = match answered {
            Ok(Ok(value)) => {
                if self.down.swap(false, Ordering::Relaxed) {
                    tracing::info!(redis = %self.shown_url, "Redis answers again: the rate limits are shared by the replicas again");
                }
                return Some(value);
            }
            Ok(Err(err)) => err.to_string(),
            Err(_) => format!("no answer within {} ms", ANSWER_WITHIN.as_millis()),
        };
        self.resting_until_ms
            .store(now_ms() + RETRY_AFTER_MS, Ordering::Relaxed);
        if !self.down.swap(true, Ordering::Relaxed) {
            tracing::warn!(redis = %self.shown_url, error = %failure, "Redis is unreachable: requests are still answered, and the rate limits are counted in this process until it answers");
        }
        match self.last_error.lock() {
            Ok(mut error) => *error = Some(failure),
            Err(poisoned) => *poisoned.into_inner() = Some(failure),
        }
        None
    }
}
