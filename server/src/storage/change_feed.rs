//! On PostgreSQL, what every replica's writes changed reaches every other
//! replica's caches, and a read on any replica sees every write that was
//! acknowledged before it began. Hand-written on sqlx's `PgListener`, which
//! carries the notices; what they mean for the caches is this server's.
//!
//! - **Writes** say what they changed in the transaction itself: a
//!   `pg_notify` on [`CHANNEL`] before the commit ([`send_notice`]), so
//!   that the notice is sent if and only if the write commits, and before it
//!   is acknowledged. Every process that writes does this, followers or not
//!   (the CLI too).
//! - **The follower** of each serving replica listens on the channel and
//!   moves its [`Generations`] on for each notice from another replica (its
//!   own writes move them as they commit).
//! - **A read** first waits for a *fence* ([`ChangeFeed::catch_up`]): a
//!   notice this replica sends itself after the read began. PostgreSQL
//!   delivers the notices of different transactions in the order they
//!   committed, so when the fence arrives, the notice of every write that
//!   committed before it, and so of every write acknowledged before the read
//!   began, has arrived and been applied. Only then does the read take its
//!   ticket and look in the cache. One fence serves every read that waits
//!   for it: a round trip to the database shared by all the reads of that
//!   moment, where reading each pet would cost one each.
//!
//! If the follower's connection breaks, notices may have been lost: every
//! generation moves on (nothing cached before is served again), and until a
//! fence arrives on the new connection reads go to the database and keep
//! nothing. When that first fence arrives every generation moves on once
//! more: a read that took its ticket just before the break may have kept a
//! value that a write whose notice was lost has replaced since. A fence
//! that does not arrive within [`FENCE_TIMEOUT`] sends its reads to the
//! database too.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use sqlx::postgres::{PgConnection, PgListener};
use sqlx::{AnyConnection, AnyPool, Connection as _};
use tokio::sync::{Notify, watch};

use super::{Changes, Generations, StoreError, Topic, TopicKind};

/// The channel the notices go on.
pub(super) const CHANNEL: &str = "petstore_changes";

/// PostgreSQL's limit for a payload is 8,000 bytes: a write that changed
/// more says it changed everything.
const MAX_PAYLOAD: usize = 7_900;

/// How long a read waits for its fence before it goes to the database.
const FENCE_TIMEOUT: Duration = Duration::from_secs(1);

/// How long the follower waits before it connects again after a failure.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// Sends, in the write transaction `conn` is in, what it changed (nothing,
/// if it changed nothing cached), without waiting for the answer
/// ([`super::send_without_waiting`]): the `COMMIT` that follows goes out
/// behind it and reads its answer first, so a notice that fails fails the
/// commit (or fails here, if its answer came at once). `replica` is the
/// sender's [`replica_id`].
pub(super) fn send_notice(
    conn: &mut AnyConnection,
    replica: u64,
    changes: &Changes,
) -> Result<(), StoreError> {
    match payload(replica, changes) {
        Some(payload) => super::send_without_waiting(conn, &notice_statement(&payload)),
        None => Ok(()),
    }
}

/// `pg_notify` as a statement with its payload written in: a statement sent
/// without waiting goes unprepared, and so takes no parameters. A payload
/// is the sender's number in hex and a word per topic (ids, statuses'
/// names), with no quote in it; any would be doubled.
fn notice_statement(payload: &str) -> String {
    // `pg_notify` returns `void`, which sqlx's `Any` cannot take as a
    // column, should the answer be read while the statement is polled.
    format!(
        "SELECT 1 FROM (SELECT pg_notify('{CHANNEL}', '{}')) AS sent",
        payload.replace('\'', "''")
    )
}

/// A number that names this process among the replicas in the notices.
pub(super) fn replica_id() -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|since| since.as_nanos())
            .unwrap_or_default(),
    );
    hasher.finish()
}

/// The notice of `changes`: the sender, then a word per topic (`*` for
/// everything); `None` if nothing cached changed.
fn payload(replica: u64, changes: &Changes) -> Option<String> {
    let mut payload = format!("{replica:x}");
    match changes {
        Changes::Everything => payload.push_str(" *"),
        Changes::Only(topics) if topics.is_empty() => return None,
        Changes::Only(topics) => {
            for topic in topics {
                payload.push(' ');
                payload.push(topic.kind.letter());
                payload.push_str(&topic.id.to_string());
            }
            if payload.len() > MAX_PAYLOAD {
                payload = format!("{replica:x} *");
            }
        }
    }
    Some(payload)
}

/// What a notice says.
#[derive(Debug, PartialEq)]
enum Notice {
    /// Another replica's write changed these.
    Changed(Changes),
    /// A fence this replica sent.
    Fence(u64),
    /// Another replica's fence, or one's own write (applied as it
    /// committed).
    NotForUs,
}

fn parse(replica: u64, payload: &str) -> Notice {
    let mut words = payload.split(' ');
    let from = words
        .next()
        .and_then(|word| u64::from_str_radix(word, 16).ok());
    let words: Vec<&str> = words.collect();
    if from == Some(replica) {
        return match words.as_slice() {
            [fence] => fence
                .strip_prefix('f')
                .and_then(|n| n.parse().ok())
                .map_or(Notice::NotForUs, Notice::Fence),
            _ => Notice::NotForUs,
        };
    }
    if words.first().is_some_and(|word| word.starts_with('f')) {
        return Notice::NotForUs;
    }
    let mut changes = Changes::nothing_cached();
    for word in words {
        let topic = word.split_at_checked(1).and_then(|(letter, id)| {
            Some(Topic::of(
                TopicKind::from_letter(*letter.as_bytes().first()?)?,
                id.parse().ok()?,
            ))
        });
        match topic {
            Some(topic) => changes.add([topic]),
            // `*`, or a word this version does not know (a newer
            // replica's): everything, which is never wrong.
            None => return Notice::Changed(Changes::Everything),
        }
    }
    Notice::Changed(changes)
}

/// A serving replica's follower of the other replicas' writes, and the
/// fences its reads wait for.
#[derive(Debug)]
pub(crate) struct ChangeFeed {
    replica: u64,
    pool: AnyPool,
    /// Whether notices arrive: false until the first fence arrives, and
    /// again from a broken connection until a fence arrives on the next.
    following: AtomicBool,
    /// The number of the last fence sent (or about to be).
    sent: AtomicU64,
    /// The number of the last fence that arrived, and how many times the
    /// connection broke (waiters give up when it does).
    arrived: watch::Sender<(u64, u64)>,
    /// Wakes the fencer: a read waits.
    wanted: Notify,
}

impl ChangeFeed {
    /// Starts following (two tasks, which end when the pool is closed).
    pub(super) fn start(
        url: String,
        pool: AnyPool,
        replica: u64,
        generations: Arc<Generations>,
    ) -> Arc<Self> {
        let feed = Arc::new(ChangeFeed {
            replica,
            pool,
            following: AtomicBool::new(false),
            sent: AtomicU64::new(0),
            arrived: watch::channel((0, 0)).0,
            wanted: Notify::new(),
        });
        tokio::spawn(follow(feed.clone(), url.clone(), generations));
        tokio::spawn(send_fences(feed.clone(), url));
        // The first fence says that notices arrive.
        feed.wanted.notify_one();
        feed
    }

    /// Waits until every write acknowledged before this call is in the
    /// generations. An error (not following, or the fence is late) means
    /// the caller must read the database and keep nothing.
    pub(crate) async fn catch_up(&self) -> Result<(), StoreError> {
        let not_following =
            || StoreError::Unavailable("the replicas' changes are not being followed".to_owned());
        if !self.following.load(Ordering::Acquire) {
            self.wanted.notify_one();
            return Err(not_following());
        }
        let mut arrived = self.arrived.subscribe();
        let breaks = arrived.borrow().1;
        // A fence sent from now on: the next one.
        let fence = self.sent.load(Ordering::SeqCst) + 1;
        self.wanted.notify_one();
        let waited = tokio::time::timeout(
            FENCE_TIMEOUT,
            arrived.wait_for(|(arrived, broke)| *arrived >= fence || *broke != breaks),
        )
        .await;
        match waited {
            Ok(Ok(state)) if state.1 == breaks => Ok(()),
            _ => Err(not_following()),
        }
    }
}

/// The fencer: while reads wait, sends one fence at a time and waits for it
/// to arrive. It sends on a connection of its own, committed at once: on a
/// pooled one, fences (and so every read) would queue behind the writers
/// when they hold every connection. It ends when the pool is closed.
async fn send_fences(feed: Arc<ChangeFeed>, url: String) {
    let mut closed = feed.pool.close_event();
    closed
        .do_until(async {
            let mut conn: Option<PgConnection> = None;
            loop {
                feed.wanted.notified().await;
                let fence = feed.sent.fetch_add(1, Ordering::SeqCst) + 1;
                let mut arrived = feed.arrived.subscribe();
                let breaks = arrived.borrow().1;
                let payload = format!("{:x} f{fence}", feed.replica);
                if let Err(err) = send_fence(&mut conn, &url, &payload).await {
                    tracing::warn!(error = %err, "cannot send a fence for the other replicas' changes");
                    conn = None;
                    tokio::time::sleep(RECONNECT_AFTER).await;
                    continue;
                }
                let _ = tokio::time::timeout(
                    FENCE_TIMEOUT,
                    arrived.wait_for(|(arrived, broke)| *arrived >= fence || *broke != breaks),
                )
                .await;
            }
        })
        .await
        .ok();
}

/// Sends a fence on `conn`, connecting first if it is not open.
async fn send_fence(
    conn: &mut Option<PgConnection>,
    url: &str,
    payload: &str,
) -> Result<(), sqlx::Error> {
    let conn = match conn {
        Some(conn) => conn,
        None => conn.insert(PgConnection::connect(url).await?),
    };
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(CHANNEL)
        .bind(payload)
        .execute(conn)
        .await?;
    Ok(())
}

/// The follower: listens on the channel and applies each notice, connecting
/// again whenever the connection breaks. It ends when the pool is closed.
async fn follow(feed: Arc<ChangeFeed>, url: String, generations: Arc<Generations>) {
    let mut closed = feed.pool.close_event();
    closed
        .do_until(async {
            loop {
                follow_one_connection(&feed, &url, &generations).await;
                // Notices may have been lost: nothing read before is served,
                // and reads wait for a fence on the next connection.
                feed.following.store(false, Ordering::Release);
                generations.advance(&Changes::Everything);
                feed.arrived.send_modify(|(_, breaks)| *breaks += 1);
                tokio::time::sleep(RECONNECT_AFTER).await;
            }
        })
        .await
        .ok();
}

/// Listens on one connection until it breaks.
async fn follow_one_connection(feed: &ChangeFeed, url: &str, generations: &Generations) {
    let listener = async {
        let mut listener = PgListener::connect(url).await?;
        listener.listen(CHANNEL).await?;
        Ok::<_, sqlx::Error>(listener)
    };
    let mut listener = match listener.await {
        Ok(listener) => listener,
        Err(err) => {
            tracing::warn!(error = %err, "cannot follow the other replicas' changes; trying again");
            return;
        }
    };
    // A fence sent now says when notices arrive.
    feed.wanted.notify_one();
    let broke = loop {
        match listener.try_recv().await {
            Ok(Some(notice)) => match parse(feed.replica, notice.payload()) {
                Notice::Changed(changes) => generations.advance(&changes),
                Notice::Fence(fence) => {
                    if !feed.following.load(Ordering::Acquire) {
                        // The first fence on this connection: what was read
                        // since the last one broke (a write's notice may
                        // have been lost after the read) is not served
                        // either. Moved on before any read can pass.
                        generations.advance(&Changes::Everything);
                        feed.following.store(true, Ordering::Release);
                    }
                    feed.arrived
                        .send_modify(|(arrived, _)| *arrived = (*arrived).max(fence));
                }
                Notice::NotForUs => {}
            },
            Ok(None) => break "the connection was lost".to_owned(),
            Err(err) => break err.to_string(),
        }
    };
    tracing::warn!(error = %broke, "stopped following the other replicas' changes; reconnecting");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_say_what_changed_and_who_sent_them() {
        let kind = |letter| TopicKind::new(letter);
        let changes = Changes::Only(vec![
            Topic::of(kind(b'p'), 42),
            Topic::of(kind(b's'), 2),
            Topic::whole(kind(b'c')),
            Topic::whole(kind(b't')),
        ]);
        let sent = payload(7, &changes).unwrap();
        assert_eq!(sent, "7 p42 s2 c0 t0");
        assert_eq!(parse(8, &sent), Notice::Changed(changes));
        assert_eq!(parse(7, &sent), Notice::NotForUs, "its own write");
        assert_eq!(payload(7, &Changes::nothing_cached()), None);
        let everything = payload(7, &Changes::Everything).unwrap();
        assert_eq!(parse(8, &everything), Notice::Changed(Changes::Everything));
        let many = Changes::Only((0..2_000).map(|id| Topic::of(kind(b'p'), id)).collect());
        assert_eq!(payload(7, &many).as_deref(), Some("7 *"));
        assert_eq!(parse(7, "7 f12"), Notice::Fence(12));
        assert_eq!(parse(8, "7 f12"), Notice::NotForUs);
        assert_eq!(
            parse(8, "7 p1 Sold"),
            Notice::Changed(Changes::Everything),
            "a word it does not know"
        );
    }
}
