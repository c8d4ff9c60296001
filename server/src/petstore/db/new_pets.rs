//! New pets (`addPet` without an id) that arrive together are inserted
//! together: one statement, one commit.
//!
//! A durable write waits for its turn at the database (SQLite lets one
//! writer in at a time) and, within it, for a round trip to the database's
//! thread for every statement. Group commit already shares the `fsync`
//! among the writers waiting ([`crate::storage`]); the round trips remained,
//! one writer after another, and bounded the rate of new pets. Here one task
//! takes the turn for every pet waiting: while it holds it, the pets that
//! came meanwhile wait in a queue, and the next turn inserts all of them in
//! one statement.
//!
//! Each pet is still acknowledged only once the commit that holds it is on
//! disk. A request dropped before its turn comes is left out (nothing of it
//! is written); one dropped later may still be written, as when an answer is
//! lost on the way back.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::pets;
use crate::petstore::model::Pet;
use crate::storage::{Database, StoreError};

/// At most this many pets in one statement (7 parameters each: well under
/// SQLite's 32,766 and PostgreSQL's 65,535).
const PETS_PER_STATEMENT: usize = 500;

/// Pets waiting for the inserter: beyond this, `add` waits for room.
const QUEUE: usize = 4096;

/// A pet waiting to be inserted, and where it goes back once stored.
struct Waiting {
    pet: Pet,
    stored: oneshot::Sender<Result<Pet, StoreError>>,
}

/// The queue of new pets; the inserter ends when the last handle is gone.
#[derive(Debug, Clone)]
pub(crate) struct NewPets {
    queue: mpsc::Sender<Waiting>,
    /// Turns the inserter has taken (each one statement for the pets
    /// waiting, unless a client took an id meanwhile).
    #[cfg_attr(not(test), allow(dead_code))]
    turns: Arc<AtomicU64>,
}

impl NewPets {
    /// Starts the inserter (a task).
    pub(crate) fn start(db: Database) -> NewPets {
        let (queue, waiting) = mpsc::channel(QUEUE);
        let turns = Arc::new(AtomicU64::new(0));
        tokio::spawn(insert_waiting(db, waiting, turns.clone()));
        NewPets { queue, turns }
    }

    /// How many turns at the database the inserter has taken: the tests
    /// see the batching by it.
    #[cfg(test)]
    pub(crate) fn turns(&self) -> u64 {
        self.turns.load(Ordering::Relaxed)
    }

    /// Stores a new pet and returns it as stored (with its id), once its
    /// commit is durable.
    pub(crate) async fn add(&self, pet: Pet) -> Result<Pet, StoreError> {
        let gone = || StoreError::Unavailable("the pet store is shutting down".to_owned());
        let (stored, answer) = oneshot::channel();
        self.queue
            .send(Waiting { pet, stored })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// The inserter: takes the writers' turn for the first pet waiting, then
/// inserts it with every pet that came meanwhile, and hands the commit to a
/// task of its own, so that the next pets can take the next turn.
async fn insert_waiting(db: Database, mut waiting: mpsc::Receiver<Waiting>, turns: Arc<AtomicU64>) {
    while let Some(first) = waiting.recv().await {
        let mut tx = match db.begin_write().await {
            Ok(tx) => tx,
            Err(err) => {
                let _ = first.stored.send(Err(err));
                continue;
            }
        };
        turns.fetch_add(1, Ordering::Relaxed);
        let mut pets = vec![first];
        while pets.len() < PETS_PER_STATEMENT {
            match waiting.try_recv() {
                Ok(next) => pets.push(next),
                Err(_) => break,
            }
        }
        // Those whose callers are gone are not written.
        pets.retain(|waiting| !waiting.stored.is_closed());
        if pets.is_empty() {
            continue;
        }
        let inserted = {
            let all: Vec<&Pet> = pets.iter().map(|waiting| &waiting.pet).collect();
            pets::insert_new(tx.conn(), &all).await
        };
        match inserted {
            Ok(ids) => {
                tokio::spawn(async move {
                    let committed = tx.commit().await;
                    for (Waiting { mut pet, stored }, id) in pets.into_iter().zip(ids) {
                        pet.id = Some(id);
                        let _ = stored.send(committed.clone().map(|()| pet));
                    }
                });
            }
            Err(err) => {
                // Dropping the transaction undoes what it did.
                drop(tx);
                for waiting in pets {
                    let _ = waiting.stored.send(Err(err.clone()));
                }
            }
        }
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
        let adding: Vec<_> = (0..20)
            .map(|n| {
                let new_pets = new_pets.clone();
                tokio::spawn(async move { new_pets.add(pet(&format!("pet {n}"))).await })
            })
            .collect();
        // The inserter holds the first and waits for the turn; the others
        // wait in the queue.
        tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while new_pets.queue.max_capacity() - new_pets.queue.capacity() < 19 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        other_writer.commit().await.unwrap();
        let mut ids = Vec::new();
        let mut names = std::collections::BTreeSet::new();
        for added in adding {
            let stored = added.await.unwrap().unwrap();
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
