//! Every read of the pet store, its caching included: what a handler asks
//! for, answered from the read caches ([`Caches`]) when what they hold is
//! still current, or from storage.

pub(crate) mod images;
pub(crate) mod inventory;
pub(crate) mod pet_lists;
pub(crate) mod pets;
pub(crate) mod users;

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;

use crate::petstore::model::PetStatus;
use crate::petstore::wire::Format;
use crate::storage::Database;
use crate::storage::read_cache::ReadCache;

/// What a read needs: the database, the read caches, and what bounds the
/// whole lists.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) db: &'a Database,
    pub(crate) caches: &'a Caches,
    pub(crate) lists: &'a Arc<pet_lists::Lists>,
}

/// The pet store's read caches: answers kept in memory while nothing they
/// depend on changed (`storage::read_cache`).
#[derive(Debug)]
pub(crate) struct Caches {
    /// Single pets as `getPetById` last answered them, in each format; the
    /// lists of `findPetsByStatus` are made of them too.
    pub(crate) pets: ReadCache<(i64, Format), pets::Cached>,
    /// `findPetsByStatus`'s short answers, as the bytes sent.
    pub(crate) pet_lists: ReadCache<(BTreeSet<PetStatus>, Format), Bytes>,
    /// The inventory, as the bytes sent.
    pub(crate) inventory: ReadCache<(), Bytes>,
}

impl Caches {
    /// Empty caches on `db`'s changes, with room for `cached_pets` pets'
    /// answers.
    pub(crate) fn new(db: &Database, cached_pets: usize) -> Caches {
        Caches {
            pets: ReadCache::new(db, "pets", cached_pets, pets::ticket),
            // Every set of statuses, in each format.
            pet_lists: ReadCache::new(db, "pet_lists", 14, pet_lists::ticket),
            inventory: ReadCache::new(db, "inventory", 1, inventory::ticket),
        }
    }
}
