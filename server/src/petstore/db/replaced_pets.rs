//! Pets replaced (`updatePet`) at the same time are replaced together
//! ([`crate::storage::batches`]): one statement reads the statuses and tags
//! they had, one writes them all, two re-index the tags of those whose tags
//! changed (none when no tags changed, as when a pet is renamed), one
//! commit.
//!
//! One by one, each replacement held the writers' turn for five round
//! trips; at a few thousand writes a second, the replacements alone kept
//! the turn busy and every write queued behind them.

use std::collections::BTreeMap;

use super::pets;
use crate::petstore::model::Pet;
use crate::storage::batches::{Batches, WriteInBatches};
use crate::storage::{StoreError, WriteTx};

/// The queue of replacements.
pub(crate) type ReplacedPets = Batches<ReplacedPet>;

/// Pet `.0` replaced by `.1` (its default status applied), with the other
/// replacements waiting; the outcome is the pet as stored, or `None` if
/// there is no such pet (nothing is written for it).
#[derive(Debug)]
pub(crate) struct ReplacedPet;

impl WriteInBatches for ReplacedPet {
    type Item = (i64, Pet);
    type Outcome = Option<Pet>;
    /// 7 parameters each in the update: well under SQLite's 32,766.
    const MAX: usize = 500;

    async fn write(
        tx: &mut WriteTx,
        replacements: Vec<(i64, Pet)>,
    ) -> Result<Vec<Option<Pet>>, StoreError> {
        // Only what is noted below: replacements of pets that are not
        // there change nothing.
        tx.changes_nothing_cached();
        let ids: Vec<i64> = replacements.iter().map(|(id, _)| *id).collect();
        let mut stored = pets::statuses_and_tags(tx.conn(), &ids).await?;
        // Several replacements of one pet: each is noted, in the order they
        // came, and the last is what stays.
        let mut last: BTreeMap<i64, &Pet> = BTreeMap::new();
        let mut found = Vec::with_capacity(replacements.len());
        for (id, pet) in &replacements {
            let Some((before, _)) = stored.get_mut(id) else {
                found.push(false);
                continue;
            };
            // Each written whole: the caches keep the last.
            pets::note_written(tx, *id, Some(*before), pet);
            if let Some(after) = pet.status {
                *before = after;
            }
            last.insert(*id, pet);
            found.push(true);
        }
        let written: Vec<(i64, &Pet)> = last.into_iter().collect();
        let mut retagged = Vec::new();
        for (id, pet) in &written {
            let tags_before = stored.get(id).map(|(_, tags)| tags.as_str());
            if tags_before != Some(pets::stored_tags(pet)?.as_str()) {
                retagged.push((*id, *pet));
            }
        }
        pets::write_many(tx.conn(), &written, &retagged).await?;
        Ok(replacements
            .into_iter()
            .zip(found)
            .map(|((_, pet), found)| found.then_some(pet))
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::petstore::model::{Category, PetStatus, Tag};
    use crate::storage::temporary_sqlite as database;

    fn pet(name: &str, status: PetStatus, tags: &[&str]) -> Pet {
        Pet {
            id: None,
            name: name.to_owned(),
            category: Some(Category {
                id: Some(7),
                name: Some(format!("{name}'s kind")),
            }),
            photo_urls: vec![format!("https://example.test/{name}.png")],
            tags: tags
                .iter()
                .map(|t| Tag {
                    id: None,
                    name: Some((*t).to_owned()),
                })
                .collect(),
            status: Some(status),
        }
    }

    /// Replacements that wait together are written at one turn: each pet
    /// that is there becomes what its last replacement says, tags and all;
    /// a replacement of a pet that is not there is told so and writes
    /// nothing.
    #[tokio::test]
    async fn replacements_that_wait_together_are_written_at_one_turn() {
        let (_dir, db) = database().await;
        let mut tx = db.begin_write().await.unwrap();
        for name in ["a", "b"] {
            pets::insert(tx.conn(), None, &pet(name, PetStatus::Available, &["old"]))
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();

        let replaced = ReplacedPets::start(db.clone());
        let other_writer = db.begin_write().await.unwrap();
        let asked = [
            (1, pet("a2", PetStatus::Pending, &["x", "y"])),
            (3, pet("nobody", PetStatus::Sold, &[])),
            (2, pet("b2", PetStatus::Sold, &["z"])),
            (1, pet("a3", PetStatus::Sold, &["w"])),
        ];
        let answers: Vec<_> = replaced
            .add_while_held(asked.to_vec(), other_writer)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(replaced.turns(), 1);
        let expected: Vec<Option<Pet>> = asked
            .iter()
            .map(|(id, pet)| (*id != 3).then(|| pet.clone()))
            .collect();
        assert_eq!(answers, expected);

        let mut conn = db.conn().await.unwrap();
        let stored_a = pets::get(&mut conn, 1).await.unwrap().unwrap();
        assert_eq!(stored_a.name, "a3");
        assert_eq!(stored_a.status, Some(PetStatus::Sold));
        assert_eq!(stored_a.tags, asked[3].1.tags);
        assert_eq!(stored_a.category, asked[3].1.category);
        let stored_b = pets::get(&mut conn, 2).await.unwrap().unwrap();
        assert_eq!(stored_b.name, "b2");
        assert!(pets::get(&mut conn, 3).await.unwrap().is_none());
        let tags: Vec<(i64, String)> =
            sqlx::query_as("SELECT pet_id, name FROM pet_tags ORDER BY pet_id, name")
                .fetch_all(&mut *conn)
                .await
                .unwrap();
        assert_eq!(tags, [(1, "w".to_owned()), (2, "z".to_owned())]);
    }

    /// A replacement that keeps the pet's tags leaves their index as it
    /// is (its rows are not dropped and written again: a row put there
    /// beside them stays); one that changes them re-indexes them, in the
    /// same batch.
    #[tokio::test]
    async fn only_pets_whose_tags_change_are_re_indexed() {
        let (_dir, db) = database().await;
        let mut tx = db.begin_write().await.unwrap();
        for name in ["a", "b"] {
            pets::insert(
                tx.conn(),
                None,
                &pet(name, PetStatus::Available, &["old", "kept"]),
            )
            .await
            .unwrap();
        }
        // Rows a re-index would drop.
        sqlx::query("INSERT INTO pet_tags (pet_id, name) VALUES (1, 'marker'), (2, 'marker')")
            .execute(tx.conn())
            .await
            .unwrap();
        tx.commit().await.unwrap();

        let replaced = ReplacedPets::start(db.clone());
        let other_writer = db.begin_write().await.unwrap();
        let asked = vec![
            (1, pet("a2", PetStatus::Sold, &["old", "kept"])),
            (2, pet("b", PetStatus::Available, &["kept", "new"])),
        ];
        let answers = replaced.add_while_held(asked, other_writer).await;
        assert_eq!(answers[0].as_ref().unwrap().as_ref().unwrap().name, "a2");
        assert!(answers[1].as_ref().unwrap().is_some());
        assert_eq!(replaced.turns(), 1);

        let index: Vec<(i64, String)> =
            sqlx::query_as("SELECT pet_id, name FROM pet_tags ORDER BY pet_id, name")
                .fetch_all(db.pool())
                .await
                .unwrap();
        let index: Vec<(i64, &str)> = index.iter().map(|(id, n)| (*id, n.as_str())).collect();
        assert_eq!(
            index,
            [
                (1, "kept"),
                (1, "marker"),
                (1, "old"),
                (2, "kept"),
                (2, "new")
            ]
        );
    }
}
