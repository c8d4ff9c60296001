//! Orders, and the pet status they set. Each rule runs in the transaction
//! that changes the order (the rules themselves are the model's).

use sqlx::{AnyConnection, FromRow};

use super::{IdTable, new_id, pets};
use crate::clock;
use crate::petstore::model::{Order, OrderRefused, OrderStatus};
use crate::storage::{Database, StoreError};

#[derive(Debug, FromRow)]
struct OrderRow {
    id: i64,
    pet_id: i64,
    quantity: i32,
    ship_date: Option<String>,
    status: String,
}

impl TryFrom<OrderRow> for Order {
    type Error = StoreError;

    fn try_from(row: OrderRow) -> Result<Self, StoreError> {
        let corrupt = |what: &str| StoreError::corrupt(format!("order {}: {what}", row.id));
        let status = OrderStatus::parse(&row.status).ok_or_else(|| corrupt("status"))?;
        let ship_date = row
            .ship_date
            .as_deref()
            .map(clock::parse_timestamp)
            .transpose()
            .map_err(|_| corrupt("ship_date"))?;
        Ok(Order {
            id: Some(row.id),
            pet_id: row.pet_id,
            quantity: Some(row.quantity),
            ship_date,
            status: Some(status),
            complete: Some(status == OrderStatus::Delivered),
        })
    }
}

async fn load(conn: &mut AnyConnection, id: i64) -> Result<Option<Order>, StoreError> {
    let row: Option<OrderRow> =
        sqlx::query_as("SELECT id, pet_id, quantity, ship_date, status FROM orders WHERE id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await?;
    row.map(Order::try_from).transpose()
}

/// One order.
pub async fn get(db: &Database, id: i64) -> Result<Option<Order>, StoreError> {
    load(&mut *db.conn().await?, id).await
}

/// Places an order (its defaults applied) for an available pet, which takes
/// the status the order gives it, in one transaction; the order as stored.
/// A taken order id is [`StoreError::Conflict`].
pub async fn place(
    db: &Database,
    requested: Option<i64>,
    order: &Order,
) -> Result<Result<Order, OrderRefused>, StoreError> {
    let status = order.status.unwrap_or(OrderStatus::Placed);
    let mut tx = db.begin_write().await?;
    // Check and claim the pet in one statement, so that two orders racing for
    // the same pet (possible on PostgreSQL) cannot both win.
    if !pets::claim_available(tx.conn(), order.pet_id, status.pet_status()).await? {
        let refused = match pets::status(tx.conn(), order.pet_id).await? {
            None => OrderRefused::NoSuchPet,
            Some(other) => OrderRefused::PetIs(other),
        };
        return Ok(Err(refused));
    }
    let id = new_id(tx.conn(), IdTable::Orders, requested).await?;
    insert(tx.conn(), id, order).await?;
    let placed = load(tx.conn(), id).await?.ok_or(StoreError::NotFound)?;
    tx.commit().await?;
    Ok(Ok(placed))
}

/// Deletes an order and gives its pet the status the deletion calls for,
/// in one transaction; false if there is no such order.
pub async fn delete(db: &Database, id: i64) -> Result<bool, StoreError> {
    let mut tx = db.begin_write().await?;
    // DELETE ... RETURNING: of two deletes racing, only one sees the order.
    let deleted: Option<(i64, String)> =
        sqlx::query_as("DELETE FROM orders WHERE id = $1 RETURNING pet_id, status")
            .bind(id)
            .fetch_optional(tx.conn())
            .await?;
    let Some((pet_id, status)) = deleted else {
        return Ok(false);
    };
    let status = OrderStatus::parse(&status)
        .ok_or_else(|| StoreError::corrupt(format!("order {id}: status")))?;
    if let Some(pet_status) = status.pet_status_once_deleted() {
        // The pet may have been deleted since; then there is nothing to release.
        pets::set_status(tx.conn(), pet_id, pet_status).await?;
    }
    tx.commit().await?;
    Ok(true)
}

/// Inserts an order with id `id` (its defaults applied), without touching its pet.
pub(super) async fn insert(
    conn: &mut AnyConnection,
    id: i64,
    order: &Order,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO orders (id, pet_id, quantity, ship_date, status) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id)
    .bind(order.pet_id)
    .bind(order.quantity.unwrap_or(1))
    .bind(order.ship_date.map(clock::timestamp))
    .bind(order.status.unwrap_or(OrderStatus::Placed).as_str())
    .execute(conn)
    .await?;
    Ok(())
}
