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

use crate::petstore::db::{self, topics};
use crate::petstore::model::{Pet, PetStatus};
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
    /// lists of `findPetsByStatus` are made of them too. A pet written whole
    /// is kept as written ([`keep_written_pets`]).
    pub(crate) pets: Arc<ReadCache<(i64, Format), pets::Cached>>,
    /// `findPetsByStatus`'s short answers, as the bytes sent, with the pets
    /// they were made of.
    pub(crate) pet_lists: ReadCache<(BTreeSet<PetStatus>, Format), pet_lists::Kept>,
    /// The inventory, as the bytes sent.
    pub(crate) inventory: ReadCache<(), Bytes>,
}

impl Caches {
    /// Empty caches on `db`'s changes, with room for `cached_pets` pets'
    /// answers.
    pub(crate) fn new(db: &Database, cached_pets: usize) -> Caches {
        let pets = Arc::new(ReadCache::new(db, "pets", cached_pets, pets::ticket));
        keep_written_pets(db, &pets);
        Caches {
            pets,
            // Every set of statuses, in each format.
            pet_lists: ReadCache::new(db, "pet_lists", 14, pet_lists::ticket),
            inventory: ReadCache::new(db, "inventory", 1, inventory::ticket),
        }
    }
}

/// Has the pets' cache keep each pet a write stored whole (a replacement, a
/// rename), in each format it holds the pet in: the pet's next reader finds
/// it there instead of reading back what the write had in hand. Each pet a
/// few clients rename is read by many (a shop's featured pets).
fn keep_written_pets(db: &Database, pets: &Arc<ReadCache<(i64, Format), pets::Cached>>) {
    let pets = Arc::downgrade(pets);
    db.keepers().add(
        topics::PET,
        Box::new(move |generations, id, value| {
            let (Some(pets), Some(written)) = (pets.upgrade(), value.downcast_ref::<Pet>()) else {
                return;
            };
            // Read back once, and only for a pet the cache holds.
            let read_back = std::cell::OnceCell::new();
            for format in [Format::Json, Format::Xml] {
                // A pet that does not read back or serialise is not kept
                // (its reader gets the error from the database's copy).
                pets.refill(generations, (id, format), || {
                    let pet = read_back
                        .get_or_init(|| db::pets::as_read_back(id, written).ok())
                        .as_ref()?;
                    pets::Cached::of(format, pet).ok()
                });
            }
        }),
    );
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::petstore::model::Category;
    use crate::petstore::wire;

    fn pet(name: &str, category: Category) -> Pet {
        Pet {
            id: None,
            name: name.to_owned(),
            category: Some(category),
            photo_urls: vec!["https://example.test/p.png".to_owned()],
            tags: Vec::new(),
            status: Some(PetStatus::Pending),
        }
    }

    /// A pet written whole is kept as written, in each format its readers
    /// hold it in: its next read is a hit, and it is what a read from the
    /// database gives (an empty category dropped, as the row drops it). A
    /// pet nobody read is not added.
    #[tokio::test]
    async fn a_pet_written_whole_is_kept_as_its_readers_would_read_it() {
        let (_dir, db) = crate::storage::temporary_sqlite().await;
        let caches = Caches::new(&db, 100);
        let lists = Arc::new(pet_lists::Lists::new(None));
        let ctx = Context {
            db: &db,
            caches: &caches,
            lists: &lists,
        };
        let dogs = Category {
            id: Some(1),
            name: Some("Dogs".to_owned()),
        };
        let mut tx = db.begin_write().await.unwrap();
        for name in ["read", "unread"] {
            db::pets::insert(tx.conn(), None, &pet(name, dogs.clone()))
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();
        for format in [Format::Json, Format::Xml] {
            pets::pet(ctx, 1, format).await.unwrap().unwrap();
        }

        let written = pet(
            "renamed",
            Category {
                id: None,
                name: None,
            },
        );
        let mut tx = db.begin_write().await.unwrap();
        for id in [1, 2] {
            db::pets::write(tx.conn(), id, &written).await.unwrap();
            db::pets::note_written(&mut tx, id, Some(PetStatus::Pending), &written);
        }
        tx.commit().await.unwrap();

        let read = db::pets::get(&mut db.conn().await.unwrap(), 1)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(read.category, None);
        for format in [Format::Json, Format::Xml] {
            let (held, _) = caches.pets.lookup(&db, &(1, format)).await;
            let held = held.unwrap_or_else(|| panic!("pet 1 not kept in {format:?}"));
            assert_eq!(held.body, wire::to_bytes(format, &read).unwrap());
            let (unread, _) = caches.pets.lookup(&db, &(2, format)).await;
            assert!(unread.is_none(), "pet 2 added in {format:?}");
        }
    }
}
