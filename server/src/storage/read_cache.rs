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

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, RwLock};

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

#[derive(Debug)]
pub(crate) struct ReadCache<K, V> {
    /// Its hits and misses, in the metrics.
    hits: metrics::Counter,
    misses: metrics::Counter,
    enabled: bool,
    max_entries: usize,
    ticket_of: TicketOf<K>,
    /// Each value with the ticket it was read under. Hashed with foldhash
    /// (seeded per process) rather than SipHash: a cached read's lookup
    /// hashed its key in some 600 instructions, a fiftieth of the request
    /// (BENCHMARKS.md, issue 20); the entries are bounded.
    entries: RwLock<HashMap<K, (u64, Arc<V>), foldhash::fast::RandomState>>,
}

impl<K: Eq + Hash + Clone, V> ReadCache<K, V> {
    /// A cache of at most `max_entries` values, on if `db` can have caches
    /// ([`Database::caches_possible`]); a key's value depends on the topics
    /// `ticket_of` sums.
    pub(crate) fn new(
        db: &Database,
        name: &'static str,
        max_entries: usize,
        ticket_of: TicketOf<K>,
    ) -> Self {
        let (hits, misses) = crate::telemetry::metrics::read_cache_counters(name);
        ReadCache {
            hits,
            misses,
            enabled: db.caches_possible(),
            max_entries,
            ticket_of,
            entries: RwLock::new(HashMap::default()),
        }
    }

    /// The value for `key`: from memory if nothing it depends on was written
    /// since it was read, from `load` (the database) otherwise.
    pub(crate) async fn get<F, E>(
        &self,
        db: &Database,
        key: K,
        load: F,
    ) -> Result<Option<Arc<V>>, E>
    where
        F: AsyncFnOnce() -> Result<Option<V>, E>,
    {
        let (held, begun) = self.lookup(db, &key).await;
        if let Some(value) = held {
            return Ok(Some(value));
        }
        let value = load().await?.map(Arc::new);
        if let Some(value) = &value {
            self.keep(begun, key, value.clone());
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
        let Ok(mut entries) = self.entries.write() else {
            return;
        };
        // A value read later (under a later ticket) is not replaced.
        if entries.get(&key).is_some_and(|(held, _)| *held > ticket) {
            return;
        }
        if entries.len() >= self.max_entries && !entries.contains_key(&key) {
            // Full: start again rather than track what was used last.
            entries.clear();
        }
        entries.insert(key, (ticket, value));
    }

    fn held(&self, ticket: u64, key: &K) -> Option<Arc<V>> {
        let entries = self.entries.read().ok()?;
        let (held, value) = entries.get(key)?;
        (*held == ticket).then(|| value.clone())
    }
}

#[cfg(test)]
mod tests {
    /// Pets, the inventory and the content are cached: their storage
    /// modules, and the handlers that write content, write only in write
    /// transactions, whose commits move the generations of what changed.
    #[test]
    fn what_is_cached_is_written_only_in_write_transactions() {
        for (file, source) in [
            (
                "petstore/db/pets.rs",
                include_str!("../petstore/db/pets.rs"),
            ),
            (
                "petstore/db/sample.rs",
                include_str!("../petstore/db/sample.rs"),
            ),
            (
                "petstore/db/orders.rs",
                include_str!("../petstore/db/orders.rs"),
            ),
            (
                "petstore/db/images.rs",
                include_str!("../petstore/db/images.rs"),
            ),
            (
                "portfolio/db/content.rs",
                include_str!("../portfolio/db/content.rs"),
            ),
        ] {
            for (number, line) in source.lines().enumerate() {
                assert!(
                    !line.contains("execute(db.pool())") && !line.contains("execute(&db.pool"),
                    "{file}:{}: a write on the pool, outside a write transaction, \
                     would not reach the read caches: use db.begin_write()",
                    number + 1
                );
            }
        }
        // The content's handlers write through the storage module, in a
        // write transaction; a pool connection of their own would not.
        let handlers = include_str!("../portfolio/api/admin/content.rs");
        for (number, line) in handlers.lines().enumerate() {
            assert!(
                !line.contains("db.conn().await"),
                "portfolio/admin/content.rs:{}: a write on a pool connection, outside a \
                 write transaction, would not reach the read caches: use db.begin_write()",
                number + 1
            );
        }
    }
}
