//! Single pets in memory (DESIGN 4.8): `getPetById` answers from here when
//! nothing was written since the pet was read from the database.
//!
//! Coherence costs writers nothing: every write transaction this process
//! commits moves [`Database::commits`] on (after its commit, before its
//! answer), and the cache holds only what was read under the current count.
//! So a read that follows an acknowledged write never sees what the write
//! replaced, whichever table it touched; the price is that any write empties
//! the cache, which suits a store that is read far more than written.
//!
//! Only on SQLite, which one server process owns. With PostgreSQL other
//! processes (replicas) write too and do not move this count, so the cache is
//! off there until they tell each other (`LISTEN/NOTIFY`).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::db;
use super::model::Pet;
use crate::storage::{Backend, Database, StoreError};

/// The most pets held at once (a few hundred bytes each).
const MAX_PETS: usize = 4096;

/// Pets read under one count of commits.
#[derive(Debug, Default)]
struct Entries {
    commits: u64,
    pets: HashMap<i64, Arc<Pet>>,
}

#[derive(Debug)]
pub struct PetCache {
    enabled: bool,
    entries: RwLock<Entries>,
}

impl PetCache {
    pub fn new(db: &Database) -> Self {
        PetCache {
            enabled: db.backend() == Backend::Sqlite,
            entries: RwLock::default(),
        }
    }

    /// The pet with this id, from memory if nothing was written since it was
    /// read, from the database otherwise.
    pub async fn pet(&self, db: &Database, id: i64) -> Result<Option<Arc<Pet>>, StoreError> {
        if !self.enabled {
            let pet = db::pets::get(&mut *db.conn().await?, id).await?;
            return Ok(pet.map(Arc::new));
        }
        // Read before the database is: a write that commits meanwhile moves
        // the count on, and what is read now is then never served from here.
        let commits = db.commits();
        if let Some(pet) = self.held(commits, id) {
            return Ok(Some(pet));
        }
        let pet = db::pets::get(&mut *db.conn().await?, id)
            .await?
            .map(Arc::new);
        if let Some(pet) = &pet {
            self.hold(db, commits, id, pet.clone());
        }
        Ok(pet)
    }

    fn held(&self, commits: u64, id: i64) -> Option<Arc<Pet>> {
        let entries = self.entries.read().ok()?;
        (entries.commits == commits)
            .then(|| entries.pets.get(&id).cloned())
            .flatten()
    }

    /// Keeps `pet`, read under `read_under` commits, if that is still the
    /// count (looked at under the lock, so that the entries never go back to
    /// an older count).
    fn hold(&self, db: &Database, read_under: u64, id: i64, pet: Arc<Pet>) {
        let Ok(mut entries) = self.entries.write() else {
            return;
        };
        let now = db.commits();
        if read_under != now {
            return;
        }
        if entries.commits != now {
            // Everything held was read before a write: let it go.
            entries.pets.clear();
            entries.commits = now;
        }
        if entries.pets.len() < MAX_PETS {
            entries.pets.insert(id, pet);
        }
    }
}
