//! New orders (`placeOrder` without an id) that arrive together are placed
//! together ([`crate::storage::batches`]): one statement claims their pets,
//! one inserts the orders, one commit. An order is placed only if its pet
//! is `available`; of several orders for one pet, the first in the queue
//! has it.

use std::collections::{BTreeMap, BTreeSet, btree_map::Entry};

use super::{orders, pets};
use crate::petstore::model::{Order, OrderStatus, PetStatus};
use crate::storage::batches::{Batches, WriteInBatches};
use crate::storage::{StoreError, WriteTx};

/// The queue of new orders.
pub(crate) type NewOrders = Batches<NewOrder>;

/// Why an order was not placed: its pet is not available. Its status, or
/// `None` if there is no such pet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PetUnavailable(pub(crate) Option<PetStatus>);

/// A new order (its defaults applied), placed with the others waiting; its
/// outcome is the order as stored, with its id, or why it was not placed.
#[derive(Debug)]
pub(crate) struct NewOrder;

impl WriteInBatches for NewOrder {
    type Item = Order;
    type Outcome = Result<Order, PetUnavailable>;
    /// 5 parameters each in the insert: well under SQLite's 32,766.
    const MAX: usize = 500;

    async fn write(
        tx: &mut WriteTx,
        orders: Vec<Order>,
    ) -> Result<Vec<Result<Order, PetUnavailable>>, StoreError> {
        // Only what the claims below note: a batch whose orders are all
        // refused changes nothing (unsaid, it would count as everything).
        tx.changes_nothing_cached();
        // The first order for each pet claims it, with the status that
        // order gives it.
        let mut claims: BTreeMap<i64, PetStatus> = BTreeMap::new();
        let mut first_for_pet = Vec::with_capacity(orders.len());
        for order in &orders {
            let status = order.status.unwrap_or(OrderStatus::Placed).pet_status();
            first_for_pet.push(match claims.entry(order.pet_id) {
                Entry::Vacant(claim) => {
                    claim.insert(status);
                    true
                }
                Entry::Occupied(_) => false,
            });
        }
        let mut by_status: BTreeMap<PetStatus, Vec<i64>> = BTreeMap::new();
        for (pet, status) in &claims {
            by_status.entry(*status).or_default().push(*pet);
        }
        let mut claimed = BTreeSet::new();
        for (status, pets) in &by_status {
            for pet in pets::claim_available_many(tx.conn(), pets, *status).await? {
                pets::note_change(tx, pet, Some(PetStatus::Available), Some(*status));
                claimed.insert(pet);
            }
        }
        // Placed: the first order for each pet claimed; the others are told
        // what their pet is now (not available, or not there).
        let placed: Vec<bool> = orders
            .iter()
            .zip(first_for_pet)
            .map(|(order, first)| first && claimed.contains(&order.pet_id))
            .collect();
        let to_place: Vec<&Order> = orders
            .iter()
            .zip(&placed)
            .filter_map(|(order, placed)| placed.then_some(order))
            .collect();
        let mut stored = orders::place_new(tx.conn(), &to_place).await?.into_iter();
        let refused: Vec<i64> = orders
            .iter()
            .zip(&placed)
            .filter_map(|(order, placed)| (!placed).then_some(order.pet_id))
            .collect();
        let statuses = pets::statuses(tx.conn(), &refused).await?;
        orders
            .iter()
            .zip(placed)
            .map(|(order, placed)| {
                if placed {
                    let order = stored.next().ok_or_else(|| {
                        StoreError::Database("an order placed went missing".to_owned())
                    })?;
                    Ok(Ok(order))
                } else {
                    Ok(Err(PetUnavailable(statuses.get(&order.pet_id).copied())))
                }
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::petstore::model::Pet;
    use crate::storage::temporary_sqlite as database;

    fn pet(name: &str, status: PetStatus) -> Pet {
        Pet {
            id: None,
            name: name.to_owned(),
            category: None,
            photo_urls: Vec::new(),
            tags: Vec::new(),
            status: Some(status),
        }
    }

    fn order(pet_id: i64, status: OrderStatus) -> Order {
        Order {
            id: None,
            pet_id,
            quantity: None,
            ship_date: None,
            status: Some(status),
            complete: None,
        }
        .with_defaults()
    }

    /// Orders that wait together are placed at one turn: each available
    /// pet goes to the first order for it and takes the status that order
    /// gives; the others are told the status their pet has (or that it is
    /// not there), and nothing of theirs is stored.
    #[tokio::test]
    async fn orders_that_wait_together_are_placed_at_one_turn() {
        let (_dir, db) = database().await;
        let mut tx = db.begin_write().await.unwrap();
        for (name, status) in [
            ("a", PetStatus::Available),
            ("b", PetStatus::Available),
            ("c", PetStatus::Sold),
            ("d", PetStatus::Available),
        ] {
            pets::insert(tx.conn(), None, &pet(name, status))
                .await
                .unwrap();
        }
        // A client took the orders' next id.
        orders::insert(tx.conn(), 2, &order(4, OrderStatus::Placed))
            .await
            .unwrap();
        let other_writer = tx;
        let new_orders = NewOrders::start(db.clone());
        let asked = [
            order(1, OrderStatus::Placed),
            order(2, OrderStatus::Delivered),
            order(1, OrderStatus::Approved),
            order(3, OrderStatus::Placed),
            order(99, OrderStatus::Placed),
        ];
        let outcomes: Vec<_> = new_orders
            .add_while_held(asked.to_vec(), other_writer)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(new_orders.turns(), 1);
        let ids: Vec<Option<i64>> = outcomes
            .iter()
            .map(|outcome| outcome.as_ref().ok().and_then(|order| order.id))
            .collect();
        assert_eq!(ids, [Some(1), Some(3), None, None, None]);
        assert_eq!(outcomes[2], Err(PetUnavailable(Some(PetStatus::Pending))));
        assert_eq!(outcomes[3], Err(PetUnavailable(Some(PetStatus::Sold))));
        assert_eq!(outcomes[4], Err(PetUnavailable(None)));
        let stored = orders::get(&db, 3).await.unwrap().unwrap();
        assert_eq!(Ok(&stored), outcomes[1].as_ref());
        assert_eq!(stored.complete, Some(true));
        let mut conn = db.pool().acquire().await.unwrap();
        let statuses = pets::statuses(&mut conn, &[1, 2, 3, 4]).await.unwrap();
        assert_eq!(
            statuses.into_values().collect::<Vec<_>>(),
            [
                PetStatus::Pending,
                PetStatus::Sold,
                PetStatus::Sold,
                PetStatus::Available
            ]
        );
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM orders")
            .fetch_one(db.pool())
            .await
            .unwrap();
        assert_eq!(count, 3);
    }

    /// Writes of every kind that wait together go in at one turn, in one
    /// transaction: a new pet, an order and a replacement.
    #[tokio::test]
    async fn writes_of_every_kind_that_wait_together_share_one_turn() {
        use crate::petstore::db::new_pets::NewPets;
        use crate::petstore::db::replaced_pets::ReplacedPets;
        use crate::storage::batches::Writer;

        let (_dir, db) = database().await;
        let mut holder = db.begin_write().await.unwrap();
        for name in ["a", "b"] {
            pets::insert(holder.conn(), None, &pet(name, PetStatus::Available))
                .await
                .unwrap();
        }
        let writer = Writer::start(db.clone());
        let (new_pets, new_orders, replaced) = (
            NewPets::on(&writer),
            NewOrders::on(&writer),
            ReplacedPets::on(&writer),
        );
        let added = tokio::spawn(async move { new_pets.add(pet("c", PetStatus::Sold)).await });
        let ordered =
            tokio::spawn(async move { new_orders.add(order(1, OrderStatus::Placed)).await });
        let renamed =
            tokio::spawn(async move { replaced.add((2, pet("b2", PetStatus::Sold))).await });
        // The writer holds the first and waits for the turn; the other two
        // wait in its queue.
        writer.wait_until_queued(2).await;
        holder.commit().await.unwrap();
        let added = added.await.unwrap().unwrap();
        let ordered = ordered.await.unwrap().unwrap().unwrap();
        let renamed = renamed.await.unwrap().unwrap().unwrap();
        assert_eq!(writer.turns(), 1, "one turn for the three kinds");
        assert_eq!(added.id, Some(3));
        assert_eq!((ordered.id, ordered.pet_id), (Some(1), 1));
        assert_eq!(renamed.name, "b2");
        let mut conn = db.pool().acquire().await.unwrap();
        let statuses = pets::statuses(&mut conn, &[1, 2, 3]).await.unwrap();
        assert_eq!(
            statuses.into_values().collect::<Vec<_>>(),
            [PetStatus::Pending, PetStatus::Sold, PetStatus::Sold]
        );
    }

    /// A kind's write that fails undoes the whole turn: the new pet written
    /// before the orders failed is not kept, and both writers are told.
    #[tokio::test]
    async fn a_kind_that_fails_undoes_the_whole_turn() {
        use crate::petstore::db::new_pets::NewPets;
        use crate::storage::batches::Writer;

        let (_dir, db) = database().await;
        let mut holder = db.begin_write().await.unwrap();
        pets::insert(holder.conn(), None, &pet("a", PetStatus::Available))
            .await
            .unwrap();
        // Orders cannot be written any more.
        sqlx::query("ALTER TABLE orders RENAME TO orders_gone")
            .execute(holder.conn())
            .await
            .unwrap();
        let writer = Writer::start(db.clone());
        let (new_pets, new_orders) = (NewPets::on(&writer), NewOrders::on(&writer));
        let added = tokio::spawn(async move { new_pets.add(pet("b", PetStatus::Sold)).await });
        let ordered =
            tokio::spawn(async move { new_orders.add(order(1, OrderStatus::Placed)).await });
        writer.wait_until_queued(1).await;
        holder.commit().await.unwrap();
        assert!(added.await.unwrap().is_err(), "the pet is told it failed");
        assert!(ordered.await.unwrap().is_err());
        assert_eq!(writer.turns(), 1);
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pets")
            .fetch_one(db.pool())
            .await
            .unwrap();
        assert_eq!(count, 1, "only the holder's pet");
    }

    /// A batch whose orders are all refused empties no cache.
    #[tokio::test]
    async fn refused_orders_change_nothing_cached() {
        let (_dir, db) = database().await;
        let mut tx = db.begin_write().await.unwrap();
        pets::insert(tx.conn(), None, &pet("sold", PetStatus::Sold))
            .await
            .unwrap();
        tx.commit().await.unwrap();
        let new_orders = NewOrders::start(db.clone());
        let other_pet = || {
            db.generations()
                .ticket([crate::petstore::db::topics::pet(7)])
        };
        let before = other_pet();
        let refused = new_orders.add(order(1, OrderStatus::Placed)).await.unwrap();
        assert_eq!(refused, Err(PetUnavailable(Some(PetStatus::Sold))));
        assert_eq!(other_pet(), before);
    }
}
