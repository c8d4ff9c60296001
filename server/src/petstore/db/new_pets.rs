//! New pets (`addPet` without an id) that arrive together are inserted
//! together: one statement for the pets, one for their tags, one commit
//! ([`crate::storage::batches`]).

use super::pets;
use crate::petstore::model::Pet;
use crate::storage::batches::{Batches, WriteInBatches};
use crate::storage::{StoreError, WriteTx};

/// The queue of new pets.
pub(crate) type NewPets = Batches<NewPet>;

/// A new pet, inserted with the others waiting; its outcome is the pet as
/// stored, with its id.
#[derive(Debug)]
pub(crate) struct NewPet;

impl WriteInBatches for NewPet {
    type Item = Pet;
    type Outcome = Pet;
    /// 7 parameters each: well under SQLite's 32,766 and PostgreSQL's 65,535.
    const MAX: usize = 500;

    async fn write(tx: &mut WriteTx, mut pets: Vec<Pet>) -> Result<Vec<Pet>, StoreError> {
        tx.changes_nothing_cached();
        let ids = {
            let all: Vec<&Pet> = pets.iter().collect();
            pets::insert_new(tx.conn(), &all).await?
        };
        for (pet, id) in pets.iter_mut().zip(ids) {
            pets::note_change(tx, id, None, pet.status);
            pet.id = Some(id);
        }
        Ok(pets)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::storage::temporary_sqlite as database;

    fn pet(name: &str) -> Pet {
        Pet {
            id: None,
            name: name.to_owned(),
            category: None,
            photo_urls: Vec::new(),
            tags: Vec::new(),
            status: None,
        }
    }

    /// Twenty pets that wait while another writer has the turn go in at
    /// the next turn, all of them, with the next twenty ids, and are
    /// answered once that turn's commit is done.
    #[tokio::test]
    async fn pets_that_wait_together_go_in_at_one_turn() {
        let (_dir, db) = database().await;
        let new_pets = NewPets::start(db.clone());
        let other_writer = db.begin_write().await.unwrap();
        let asked = (0..20).map(|n| pet(&format!("pet {n}"))).collect();
        let mut ids = Vec::new();
        let mut names = std::collections::BTreeSet::new();
        for added in new_pets.add_while_held(asked, other_writer).await {
            let stored = added.unwrap();
            ids.push(stored.id.unwrap());
            names.insert(stored.name);
        }
        ids.sort_unstable();
        assert_eq!(ids, (1..=20).collect::<Vec<_>>());
        assert_eq!(names.len(), 20);
        assert_eq!(new_pets.turns(), 1);
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pets")
            .fetch_one(db.pool())
            .await
            .unwrap();
        assert_eq!(count, 20);
    }

    /// When a client has taken one of the ids a statement gives, that pet
    /// goes in on its own with the next free id, and the sequence ends past
    /// every id given.
    #[tokio::test]
    async fn a_pet_whose_id_a_client_took_gets_the_next_free_one() {
        let (_dir, db) = database().await;
        let mut tx = db.begin_write().await.unwrap();
        assert_eq!(
            pets::insert(tx.conn(), Some(2), &pet("chosen"))
                .await
                .unwrap(),
            2
        );
        let (a, b, c) = (pet("a"), pet("b"), pet("c"));
        let ids = pets::insert_new(tx.conn(), &[&a, &b, &c]).await.unwrap();
        assert_eq!(ids, [1, 4, 3]);
        assert_eq!(pets::insert(tx.conn(), None, &pet("d")).await.unwrap(), 5);
        tx.commit().await.unwrap();
    }
}
