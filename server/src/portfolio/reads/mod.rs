//! Every read of the portfolio, its caching included: what a handler (or
//! the operator's CLI) asks for, answered from the read caches ([`Caches`])
//! while what they hold is still current, or from storage.

pub(crate) mod analytics;
pub(crate) mod console;
pub(crate) mod content;
pub(crate) mod lists;
pub(crate) mod newsletter;

use bytes::Bytes;

use crate::storage::Database;
use crate::storage::read_cache::ReadCache;

/// What a read needs: the database and the read caches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) db: &'a Database,
    pub(crate) caches: &'a Caches,
}

/// The portfolio's read caches: answers kept in memory while nothing they
/// depend on changed (`storage::read_cache`).
#[derive(Debug)]
pub(crate) struct Caches {
    /// The content's answers, as the bytes sent (`llm-context`'s without
    /// its time).
    pub(crate) content: ReadCache<content::Cached, Bytes>,
}

impl Caches {
    /// What the reads need: these caches and the database they keep.
    pub(crate) fn reader<'a>(&'a self, db: &'a Database) -> Context<'a> {
        Context { db, caches: self }
    }

    /// Empty caches on `db`'s changes.
    pub(crate) fn new(db: &Database) -> Caches {
        Caches {
            content: ReadCache::new(db, "content", content::Cached::COUNT, content::ticket),
        }
    }
}
