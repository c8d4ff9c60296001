//! The sample data's storage: is the store empty, and replace everything.

use super::{IdTable, orders, pets, reserve_ids_up_to, users};
use crate::petstore::model::{Order, Pet, User};
use crate::storage::{Database, StoreError};

/// True when the store has no pets, users or orders.
pub(crate) async fn store_is_empty(db: &Database) -> Result<bool, StoreError> {
    let counts: (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM pets), (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM orders)",
    )
    .fetch_one(db.pool())
    .await?;
    Ok(counts == (0, 0, 0))
}

/// What the store holds after a reset; every item has its id.
#[derive(Debug)]
pub(crate) struct Contents {
    pub(crate) pets: Vec<Pet>,
    /// Each with the hash of its password.
    pub(crate) users: Vec<(User, String)>,
    pub(crate) orders: Vec<Order>,
}

/// Replaces everything in the store with `contents`, in one transaction.
pub(crate) async fn replace_all(db: &Database, contents: &Contents) -> Result<(), StoreError> {
    let mut tx = db.begin_write().await?;
    for table in [
        "user_sessions",
        "users",
        "orders",
        "pet_images",
        "pet_tags",
        "pets",
    ] {
        sqlx::query(&format!("DELETE FROM {table}"))
            .execute(tx.conn())
            .await?;
    }
    for pet in &contents.pets {
        pets::insert(tx.conn(), pet.id, pet).await?;
    }
    for (user, hash) in &contents.users {
        users::insert(tx.conn(), user.id, user, Some(hash)).await?;
    }
    for order in &contents.orders {
        orders::insert(tx.conn(), order.id.unwrap_or_default(), order).await?;
    }
    // These ids are the server's own: new pets, users and orders get others.
    let last = |ids: &mut dyn Iterator<Item = Option<i64>>| ids.flatten().max().unwrap_or(0);
    for (table, last) in [
        (IdTable::Pets, last(&mut contents.pets.iter().map(|p| p.id))),
        (
            IdTable::Users,
            last(&mut contents.users.iter().map(|(u, _)| u.id)),
        ),
        (
            IdTable::Orders,
            last(&mut contents.orders.iter().map(|o| o.id)),
        ),
    ] {
        reserve_ids_up_to(tx.conn(), table, last).await?;
    }
    // Sessions and remembered passwords cached anywhere are gone too.
    crate::access::db::bump_version(tx.conn()).await?;
    tx.commit().await?;
    Ok(())
}
