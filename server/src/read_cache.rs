//! Single resources in memory, kept coherent with writes (DESIGN 4.8), as
//! the bytes of their answers (serialising them again for each request cost
//! a tenth of the rate): `getPetById`'s pets in each format, the portfolio's
//! site information, and the short answers of `findPetsByStatus`.
//!
//! Coherence costs writers nothing: every write transaction this process
//! commits moves [`Database::commits`] on (after its commit, before its
//! answer), and a cache holds only what was read under the current count.
//! So a read that follows an acknowledged write never sees what the write
//! replaced, whichever table it touched. The price is that any write empties
//! the cache, which suits data read far more often than written.
//!
//! What a cache holds must therefore only be written in write transactions
//! (`Database::begin_write`): a statement run on the pool alone does not move
//! the count. A test below holds the storage modules of what is cached to
//! that.
//!
//! Only on SQLite, which one server process owns. With PostgreSQL other
//! processes (replicas) write too and do not move this count, so the caches
//! are off there until they tell each other (`LISTEN/NOTIFY`).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, RwLock};

use crate::storage::{Backend, Database};

/// Values read under one count of commits.
#[derive(Debug)]
struct Entries<K, V> {
    commits: u64,
    values: HashMap<K, Arc<V>>,
}

/// When a read from the database began (the count of commits then), for
/// [`ReadCache::keep`]; nothing when the cache is off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadBegun(Option<u64>);

#[derive(Debug)]
pub(crate) struct ReadCache<K, V> {
    /// Its hits and misses, in the metrics.
    hits: metrics::Counter,
    misses: metrics::Counter,
    enabled: bool,
    max_entries: usize,
    entries: RwLock<Entries<K, V>>,
}

impl<K: Eq + Hash + Clone, V> ReadCache<K, V> {
    /// A cache of at most `max_entries` values, on if `db` is SQLite.
    pub(crate) fn new(db: &Database, name: &'static str, max_entries: usize) -> Self {
        let (hits, misses) = crate::telemetry::metrics::read_cache_counters(name);
        ReadCache {
            hits,
            misses,
            enabled: db.backend() == Backend::Sqlite,
            max_entries,
            entries: RwLock::new(Entries {
                commits: 0,
                values: HashMap::new(),
            }),
        }
    }

    /// The value for `key`: from memory if nothing was written since it was
    /// read, from `load` (the database) otherwise.
    pub(crate) async fn get<F, E>(
        &self,
        db: &Database,
        key: K,
        load: F,
    ) -> Result<Option<Arc<V>>, E>
    where
        F: AsyncFnOnce() -> Result<Option<V>, E>,
    {
        let (held, begun) = self.lookup(db, &key);
        if let Some(value) = held {
            return Ok(Some(value));
        }
        let value = load().await?.map(Arc::new);
        if let Some(value) = &value {
            self.keep(db, begun, key, value.clone());
        }
        Ok(value)
    }

    /// What is held for `key`, if anything; if nothing, the mark a read
    /// from the database must begin under for [`ReadCache::keep`] to keep
    /// what it read.
    pub(crate) fn lookup(&self, db: &Database, key: &K) -> (Option<Arc<V>>, ReadBegun) {
        if !self.enabled {
            return (None, ReadBegun(None));
        }
        // Read before the database is: a write that commits meanwhile moves
        // the count on, and what is read now is then never served from here.
        let commits = db.commits();
        let held = self.held(commits, key);
        if held.is_some() {
            &self.hits
        } else {
            &self.misses
        }
        .increment(1);
        (held, ReadBegun(Some(commits)))
    }

    /// Keeps `value`, read from the database after `begun` was taken, if
    /// nothing was written since.
    pub(crate) fn keep(&self, db: &Database, begun: ReadBegun, key: K, value: Arc<V>) {
        if let ReadBegun(Some(commits)) = begun {
            self.hold(db, commits, key, value);
        }
    }

    fn held(&self, commits: u64, key: &K) -> Option<Arc<V>> {
        let entries = self.entries.read().ok()?;
        (entries.commits == commits)
            .then(|| entries.values.get(key).cloned())
            .flatten()
    }

    /// Keeps `value`, read under `read_under` commits, if that is still the
    /// count (looked at under the lock, so that the entries never go back to
    /// an older count).
    fn hold(&self, db: &Database, read_under: u64, key: K, value: Arc<V>) {
        let Ok(mut entries) = self.entries.write() else {
            return;
        };
        let now = db.commits();
        if read_under != now {
            return;
        }
        if entries.commits != now {
            // Everything held was read before a write: let it go.
            entries.values.clear();
            entries.commits = now;
        }
        if entries.values.len() < self.max_entries {
            entries.values.insert(key, value);
        }
    }
}

#[cfg(test)]
mod tests {
    /// Pets and the site information are cached: their storage modules,
    /// and the handlers that write content, write only in write
    /// transactions, which move the count.
    #[test]
    fn what_is_cached_is_written_only_in_write_transactions() {
        for (file, source) in [
            ("petstore/db/pets.rs", include_str!("petstore/db/pets.rs")),
            (
                "petstore/db/sample.rs",
                include_str!("petstore/db/sample.rs"),
            ),
            (
                "petstore/db/orders.rs",
                include_str!("petstore/db/orders.rs"),
            ),
            (
                "petstore/db/images.rs",
                include_str!("petstore/db/images.rs"),
            ),
            (
                "portfolio/db/content.rs",
                include_str!("portfolio/db/content.rs"),
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
        let handlers = include_str!("portfolio/admin/content.rs");
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
