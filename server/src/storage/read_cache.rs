//! Answers kept in memory, coherent with writes, as the bytes sent
//! (serialising them again for each request would be most of its cost):
//! `getPetById`'s pets in each format, the short lists of
//! `findPetsByStatus`, the inventory, and the portfolio's content.
//!
//! Each value depends on [`Topic`]s (a pet, the pets of a status, the
//! content) and is kept with the ticket of its topics taken *before* it was
//! read from the database ([`crate::storage::changes`]); a write moves the
//! generations of what it changed after its commit, before its answer. A
//! value is served only while its ticket is current, so a read that follows
//! an acknowledged write never sees what the write replaced, and a write
//! costs the caches only what depends on what it changed.
//!
//! On PostgreSQL other processes (replicas) write too: their notices move
//! this process's generations, and each read first waits until every write
//! acknowledged before it began has done so ([`crate::storage::change_feed`]);
//! when that cannot be known (the notices' connection is broken), reads go
//! to the database and keep nothing.

use std::hash::Hash;
use std::sync::Arc;

use quick_cache::UnitWeighter;
use quick_cache::sync::{Cache, DefaultLifecycle, EntryAction, EntryResult};

use crate::storage::{Database, Generations};

/// When a read from the database began (the ticket of the value's topics
/// then), for [`ReadCache::keep`]; nothing when the cache is off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadBegun(Option<u64>);

impl ReadBegun {
    /// The cache is on and this process has caught up with the other
    /// replicas' writes: what is read now may be kept.
    pub(crate) fn tracked(self) -> bool {
        self.0.is_some()
    }
}

/// The ticket of what a key's value depends on.
pub(crate) type TicketOf<K> = fn(&Generations, &K) -> u64;

/// Each value with the ticket it was read under, at most so many, the
/// least worth keeping evicted first (quick_cache's S3-FIFO). Hashed with
/// foldhash, seeded per process: the keys are the server's own (ids and
/// formats), and SipHash would be a large part of a cached read.
type Entries<K, V> = Cache<
    K,
    (u64, Arc<V>),
    UnitWeighter,
    foldhash::fast::RandomState,
    DefaultLifecycle<K, (u64, Arc<V>)>,
>;

pub(crate) struct ReadCache<K, V> {
    /// Its hits and misses, in the metrics.
    hits: metrics::Counter,
    misses: metrics::Counter,
    enabled: bool,
    ticket_of: TicketOf<K>,
    entries: Entries<K, V>,
}

impl<K: Eq + Hash + Clone, V> std::fmt::Debug for ReadCache<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadCache")
            .field("enabled", &self.enabled)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl<K: Eq + Hash + Clone, V> ReadCache<K, V> {
    /// A cache of at most `max_entries` values (at least one), on if `db`
    /// can have caches ([`Database::caches_possible`]); a key's value
    /// depends on the topics `ticket_of` sums.
    pub(crate) fn new(
        db: &Database,
        name: &'static str,
        max_entries: usize,
        ticket_of: TicketOf<K>,
    ) -> Self {
        let (hits, misses) = crate::telemetry::metrics::read_cache_counters(name);
        let max_entries = max_entries.max(1);
        ReadCache {
            hits,
            misses,
            enabled: db.caches_possible(),
            ticket_of,
            entries: Cache::with(
                max_entries,
                u64::try_from(max_entries).unwrap_or(u64::MAX),
                UnitWeighter,
                foldhash::fast::RandomState::default(),
                DefaultLifecycle::default(),
            ),
        }
    }

    /// The value for `key`: from memory if nothing it depends on was written
    /// since it was read, from `load` (the database) otherwise.
    ///
    /// Of the requests that miss the same key at once, one reads it and the
    /// others wait for what it reads: a write to a value everyone reads (or a
    /// cold start) would otherwise send each of them to the database at
    /// once, for a value that costs the same to read for all, and a slow one
    /// (the inventory's count over every pet) would pile up as a crowd of
    /// identical reads.
    pub(crate) async fn get<F, E>(
        &self,
        db: &Database,
        key: K,
        load: F,
    ) -> Result<Option<Arc<V>>, E>
    where
        F: AsyncFnOnce() -> Result<Option<V>, E>,
    {
        if !self.enabled || db.catch_up().await.is_err() {
            return Ok(load().await?.map(Arc::new));
        }
        // Taken before the database is read, as in `lookup_caught_up`.
        let ticket = (self.ticket_of)(db.generations(), &key);
        if let Some(value) = self.held(ticket, &key) {
            self.hits.increment(1);
            return Ok(Some(value));
        }
        // A value kept under this ticket or a later one is as new as this
        // request needs; an older one is replaced, by this request or by the
        // one already reading it, which this one then waits for.
        let entry = self
            .entries
            .entry_async(&key, |_, (held, value)| {
                if *held >= ticket {
                    EntryAction::Retain(value.clone())
                } else {
                    EntryAction::ReplaceWithGuard
                }
            })
            .await;
        let guard = match entry {
            EntryResult::Retained(value) => {
                self.hits.increment(1);
                return Ok(Some(value));
            }
            EntryResult::Vacant(guard) | EntryResult::Replaced(guard, _) => Some(guard),
            // Neither is answered to a callback that never removes and to a
            // wait without a timeout; read alone then.
            EntryResult::Removed(..) | EntryResult::Timeout => None,
        };
        self.misses.increment(1);
        let value = load().await?.map(Arc::new);
        if let (Some(guard), Some(value)) = (guard, &value) {
            // Refused only when the entry was evicted meanwhile: nothing
            // is lost but a later hit.
            let _ = guard.insert((ticket, value.clone()));
        }
        Ok(value)
    }

    /// What is held for `key`, if anything; if nothing, the mark a read
    /// from the database must begin under for [`ReadCache::keep`] to keep
    /// what it read.
    pub(crate) async fn lookup(&self, db: &Database, key: &K) -> (Option<Arc<V>>, ReadBegun) {
        if !self.enabled || db.catch_up().await.is_err() {
            return (None, ReadBegun(None));
        }
        self.lookup_caught_up(db, key)
    }

    /// [`ReadCache::lookup`] for a read that has just caught up with the
    /// other replicas (a lookup of its own returned a [`ReadBegun::tracked`]
    /// mark): the values a list is made of, looked up one by one without
    /// waiting for the replicas again each time.
    pub(crate) fn lookup_caught_up(&self, db: &Database, key: &K) -> (Option<Arc<V>>, ReadBegun) {
        if !self.enabled {
            return (None, ReadBegun(None));
        }
        // Taken before the database is read: a write that commits meanwhile
        // moves it on, and what is read now is then never served from here.
        let ticket = (self.ticket_of)(db.generations(), key);
        let held = self.held(ticket, key);
        if held.is_some() {
            &self.hits
        } else {
            &self.misses
        }
        .increment(1);
        (held, ReadBegun(Some(ticket)))
    }

    /// Keeps `value`, read from the database after `begun` was taken.
    pub(crate) fn keep(&self, begun: ReadBegun, key: K, value: Arc<V>) {
        let ReadBegun(Some(ticket)) = begun else {
            return;
        };
        // A value read later (under a later ticket) is not replaced. Two
        // reads keeping at once may still leave the older: it is then never
        // served (its ticket is no longer current), and the next read
        // keeps a newer one.
        if self
            .entries
            .peek(&key)
            .is_some_and(|(held, _)| held > ticket)
        {
            return;
        }
        self.entries.insert(key, (ticket, value));
    }

    /// Replaces what is held for `key` by the value `made` makes of what a
    /// write has just stored, under the current ticket: for a keeper
    /// ([`crate::storage::Keepers`]), which is called once the write's
    /// commit moved the generations on and before a later commit can.
    /// Nothing is made for a key not held (what nobody reads stays out),
    /// nor kept when `made` gives nothing.
    pub(crate) fn refill(
        &self,
        generations: &Generations,
        key: K,
        made: impl FnOnce() -> Option<V>,
    ) {
        if !self.enabled || self.entries.peek(&key).is_none() {
            return;
        }
        let ticket = (self.ticket_of)(generations, &key);
        if let Some(value) = made() {
            self.entries.insert(key, (ticket, Arc::new(value)));
        }
    }

    /// The value kept for `key` if it was read under `ticket` or later.
    fn held(&self, ticket: u64, key: &K) -> Option<Arc<V>> {
        let (held, value) = self.entries.get(key)?;
        (held >= ticket).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any_key(_: &Generations, _: &u64) -> u64 {
        0
    }

    /// Keeps `keys` (each its own value), read under the current ticket.
    async fn keep_all(db: &Database, cache: &ReadCache<u64, u64>, keys: std::ops::Range<u64>) {
        for key in keys {
            let (_, begun) = cache.lookup(db, &key).await;
            cache.keep(begun, key, Arc::new(key));
        }
    }

    async fn held(db: &Database, cache: &ReadCache<u64, u64>, keys: std::ops::Range<u64>) -> usize {
        let mut held = 0;
        for key in keys {
            if cache.lookup(db, &key).await.0.is_some() {
                held += 1;
            }
        }
        held
    }

    /// A cache as large as its keys (the lists, the inventory) holds them
    /// all, however small.
    #[tokio::test]
    async fn a_cache_as_large_as_its_keys_holds_them_all() {
        let (_dir, db) = crate::storage::temporary_sqlite().await;
        for size in [1, 4, 14] {
            let cache = ReadCache::new(&db, "test", size, any_key);
            let keys = 0..u64::try_from(size).unwrap();
            keep_all(&db, &cache, keys.clone()).await;
            assert_eq!(held(&db, &cache, keys).await, size, "a cache of {size}");
        }
    }

    /// A full cache makes room by evicting, not by starting over: most of
    /// what it held is still there.
    #[tokio::test]
    async fn a_full_cache_evicts_rather_than_clears() {
        let (_dir, db) = crate::storage::temporary_sqlite().await;
        let cache = ReadCache::new(&db, "test", 1000, any_key);
        keep_all(&db, &cache, 0..1000).await;
        keep_all(&db, &cache, 1000..1100).await;
        let kept = held(&db, &cache, 0..1100).await;
        assert!(
            (900..=1000).contains(&kept),
            "{kept} of 1,100 kept in a cache of 1,000"
        );
    }

    /// Requests that miss one key at once read it once: the others wait
    /// for that read and answer what it read.
    #[tokio::test]
    async fn requests_missing_one_key_at_once_read_it_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (_dir, db) = crate::storage::temporary_sqlite().await;
        let cache: ReadCache<u64, u64> = ReadCache::new(&db, "test", 10, any_key);
        let reads = AtomicUsize::new(0);
        let (release, released) = tokio::sync::watch::channel(false);
        let request = || async {
            cache
                .get(&db, 7, async || {
                    reads.fetch_add(1, Ordering::SeqCst);
                    let mut released = released.clone();
                    released.wait_for(|go| *go).await.map_err(|_| "released")?;
                    Ok::<_, &str>(Some(42))
                })
                .await
        };
        let crowd = futures::future::join_all((0..16).map(|_| request()));
        let answers = tokio::join!(crowd, async {
            // Every request has asked before the first read finishes.
            tokio::task::yield_now().await;
            release.send(true).ok();
        })
        .0;
        assert_eq!(reads.load(Ordering::SeqCst), 1, "one read for the crowd");
        for answer in answers {
            assert_eq!(answer.map(|value| value.map(|v| *v)), Ok(Some(42)));
        }
    }
}
