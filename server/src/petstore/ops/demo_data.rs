//! The official sample data: 10 pets in 4 categories, users user1..user10 and
//! a few orders, made consistent with the order rules (each order's pet has
//! the status the order gives it). Loaded on first start; optionally
//! restored periodically, as the live demo does.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::petstore::db::sample::{self, Contents};
use crate::petstore::model::{Category, Order, OrderStatus, Pet, PetStatus, Tag, User};
use crate::storage::Database;
use crate::storage::StoreError;

/// The password upstream gives every sample user.
#[cfg(test)]
const SAMPLE_PASSWORD: &str = "XXXXXXXXXXX";

/// [`SAMPLE_PASSWORD`]'s argon2id hash (OWASP parameters), made once: the
/// password is public, so a salt shared by every installation hides nothing,
/// and loading the sample data (at start, at each reset) costs no hash,
/// which would take tens of milliseconds and a 19 MiB block that the hashing
/// thread then keeps.
const SAMPLE_PASSWORD_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$uomCgW0qHoSmcEFjUN6eWQ$uZHZDkIIoEKnFa3tDEMctiL0rcHKTYZ/q9OcZk5xd4U";

fn sample_pets() -> Vec<Pet> {
    let pets = [
        (1, "Cat 1", (2, "Cats"), [1, 2], PetStatus::Available),
        (2, "Cat 2", (2, "Cats"), [2, 3], PetStatus::Available),
        (3, "Cat 3", (2, "Cats"), [3, 4], PetStatus::Pending),
        (4, "Dog 1", (1, "Dogs"), [1, 2], PetStatus::Available),
        (5, "Dog 2", (1, "Dogs"), [2, 3], PetStatus::Sold),
        (6, "Dog 3", (1, "Dogs"), [3, 4], PetStatus::Pending),
        (7, "Lion 1", (4, "Lions"), [1, 2], PetStatus::Available),
        (8, "Lion 2", (4, "Lions"), [2, 3], PetStatus::Available),
        (9, "Lion 3", (4, "Lions"), [3, 4], PetStatus::Available),
        (10, "Rabbit 1", (3, "Rabbits"), [3, 4], PetStatus::Available),
    ];
    pets.into_iter()
        .map(|(id, name, (category_id, category), tags, status)| Pet {
            id: Some(id),
            name: name.to_owned(),
            category: Some(Category {
                id: Some(category_id),
                name: Some(category.to_owned()),
            }),
            photo_urls: vec!["url1".to_owned(), "url2".to_owned()],
            tags: tags
                .into_iter()
                .map(|t| Tag {
                    id: Some(t),
                    name: Some(format!("tag{t}")),
                })
                .collect(),
            status: Some(status),
        })
        .collect()
}

/// (order id, pet id, quantity, status): Cat 3 and Dog 3 are pending because
/// of their orders, Dog 2 was sold by a delivered one.
const SAMPLE_ORDERS: [(i64, i64, i32, OrderStatus); 3] = [
    (1, 3, 1, OrderStatus::Placed),
    (2, 6, 2, OrderStatus::Approved),
    (3, 5, 1, OrderStatus::Delivered),
];

fn sample_orders() -> Vec<Order> {
    let ship_date = DateTime::<Utc>::from_timestamp(1_767_268_800, 0); // 2026-01-01T12:00:00Z
    SAMPLE_ORDERS
        .into_iter()
        .map(|(id, pet_id, quantity, status)| Order {
            id: Some(id),
            pet_id,
            quantity: Some(quantity),
            ship_date,
            status: Some(status),
            complete: None,
        })
        .collect()
}

/// user1..user10, as upstream has them.
fn sample_users() -> Vec<User> {
    (1..=10_i64)
        .map(|n| User {
            id: Some(n),
            username: format!("user{n}"),
            first_name: Some(format!("first name {n}")),
            last_name: Some(format!("last name {n}")),
            email: Some(format!("email{n}@test.com")),
            password: None,
            phone: Some("123-456-7890".to_owned()),
            user_status: Some(if n % 2 == 0 { 2 } else { 1 }),
        })
        .collect()
}

/// Loads the sample data if the store is empty.
pub(crate) async fn load_if_empty(db: &Database) -> Result<(), StoreError> {
    if sample::store_is_empty(db).await? {
        restore(db).await?;
        tracing::info!("loaded the pet store's sample data");
    }
    Ok(())
}

/// Replaces everything in the store with the sample data, in one transaction.
pub(crate) async fn restore(db: &Database) -> Result<(), StoreError> {
    let contents = Contents {
        pets: sample_pets(),
        users: sample_users()
            .into_iter()
            .map(|user| (user, SAMPLE_PASSWORD_HASH.to_owned()))
            .collect(),
        orders: sample_orders(),
    };
    sample::replace_all(db, &contents).await?;
    Ok(())
}

/// Restores the sample data every `every`, until the process ends.
pub(crate) fn spawn_periodic_reset(db: Database, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(every);
        ticker.tick().await; // the first tick is immediate
        loop {
            ticker.tick().await;
            match restore(&db).await {
                Ok(()) => tracing::info!("restored the pet store's sample data"),
                Err(e) => tracing::error!(error = %e, "cannot restore the sample data"),
            }
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::core::password::Hasher;

    #[tokio::test]
    async fn the_sample_users_hash_is_that_of_the_sample_password() {
        let hasher = Hasher::start(1, 1).unwrap();
        let hash = Some(SAMPLE_PASSWORD_HASH.to_owned());
        assert!(
            hasher
                .verify(SAMPLE_PASSWORD.to_owned(), hash.clone())
                .await
                .unwrap()
        );
        assert!(!hasher.verify("XXXXXXXXXXY".to_owned(), hash).await.unwrap());
    }
}
