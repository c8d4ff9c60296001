//! The official sample data: 10 pets in 4 categories, users user1..user10 and
//! a few orders, made consistent with the order rules (each order's pet has
//! the status the order gives it). Loaded on first start; optionally
//! restored periodically, as the live demo does.

use std::time::Duration;

use super::PetstoreState;
use super::pet::{Category, Pet, PetStatus, Tag};
use super::user::hash_password;
use super::wire::ApiError;
use crate::storage::IdTable;

/// The password upstream gives every sample user.
const SAMPLE_PASSWORD: &str = "XXXXXXXXXXX";

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
const SAMPLE_ORDERS: [(i64, i64, i32, &str); 3] = [
    (1, 3, 1, "placed"),
    (2, 6, 2, "approved"),
    (3, 5, 1, "delivered"),
];

/// Loads the sample data if the store is empty.
pub async fn load_if_empty(state: &PetstoreState) -> Result<(), ApiError> {
    let counts: (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT COUNT(*) FROM pets), (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM orders)",
    )
    .fetch_one(state.db.pool())
    .await?;
    if counts == (0, 0, 0) {
        restore(state).await?;
        tracing::info!("loaded the pet store's sample data");
    }
    Ok(())
}

/// Replaces everything in the store with the sample data, in one transaction.
pub async fn restore(state: &PetstoreState) -> Result<(), ApiError> {
    let password_hash = hash_password(SAMPLE_PASSWORD.to_owned()).await?;
    let mut tx = state.db.begin_write().await?;
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
    for pet in sample_pets() {
        let id = pet.id.unwrap_or_default();
        sqlx::query("INSERT INTO pets (id, name, photo_urls, tags, status) VALUES ($1, '', '[]', '[]', 'available')")
            .bind(id)
            .execute(tx.conn())
            .await?;
        super::pet::write_pet(tx.conn(), id, &pet).await?;
    }
    for n in 1..=10_i64 {
        sqlx::query(
            "INSERT INTO users (id, username, first_name, last_name, email, password_hash, phone, user_status) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(n)
        .bind(format!("user{n}"))
        .bind(format!("first name {n}"))
        .bind(format!("last name {n}"))
        .bind(format!("email{n}@test.com"))
        .bind(&password_hash)
        .bind("123-456-7890")
        .bind(if n % 2 == 0 { 2_i32 } else { 1_i32 })
        .execute(tx.conn())
        .await?;
    }
    for (id, pet_id, quantity, status) in SAMPLE_ORDERS {
        sqlx::query("INSERT INTO orders (id, pet_id, quantity, ship_date, status) VALUES ($1, $2, $3, $4, $5)")
            .bind(id)
            .bind(pet_id)
            .bind(quantity)
            .bind("2026-01-01T12:00:00.000Z")
            .bind(status)
            .execute(tx.conn())
            .await?;
    }
    // The sample ids are the server's own: new pets, users and orders get others.
    for (table, last) in [
        (IdTable::Pets, 10),
        (IdTable::Users, 10),
        (IdTable::Orders, 3),
    ] {
        state.db.reserve_ids_up_to(tx.conn(), table, last).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Restores the sample data every `every`, until the process ends.
pub fn spawn_periodic_reset(state: PetstoreState, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(every);
        ticker.tick().await; // the first tick is immediate
        loop {
            ticker.tick().await;
            match restore(&state).await {
                Ok(()) => tracing::info!("restored the pet store's sample data"),
                Err(e) => tracing::error!(error = %e.message(), "cannot restore the sample data"),
            }
        }
    })
}
