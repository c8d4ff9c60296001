//! Orders, and the pet status they set. Each rule runs in the transaction
//! that changes the order (the rules themselves are the model's).

use sqlx::{AnyConnection, FromRow};

use super::{IdTable, new_id, reserve_ids};
use crate::core::clock;
use crate::petstore::model::{Order, OrderStatus};
use crate::storage::{
    Database, StoreError, inserted_ids, positional, row_placeholders, time_from_text,
};

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
        let ship_date = row.ship_date.as_deref().map(time_from_text).transpose()?;
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
pub(crate) async fn get(db: &Database, id: i64) -> Result<Option<Order>, StoreError> {
    load(&mut *db.conn().await?, id).await
}

/// Stores an order (its defaults applied) under the id it asks for or a
/// new one, without touching its pet; the order as stored. A taken order
/// id is [`StoreError::Conflict`].
pub(crate) async fn place(
    conn: &mut AnyConnection,
    requested: Option<i64>,
    order: &Order,
) -> Result<Order, StoreError> {
    let id = new_id(conn, IdTable::Orders, requested).await?;
    insert(conn, id, order).await?;
    as_stored(id, order)
}

/// Stores new orders (none asks for an id, their defaults applied) with
/// the next ids, in one statement, without touching their pets; the orders
/// as stored, in the order given. An order whose id a client has taken
/// meanwhile goes in on its own with the next free one.
pub(super) async fn place_new(
    conn: &mut AnyConnection,
    orders: &[&Order],
) -> Result<Vec<Order>, StoreError> {
    match orders {
        [] => return Ok(Vec::new()),
        [order] => return Ok(vec![place(conn, None, order).await?]),
        _ => {}
    }
    let first = reserve_ids(conn, IdTable::Orders, orders.len()).await?;
    let sql = format!(
        "INSERT INTO orders (id, pet_id, quantity, ship_date, status) VALUES {} \
         ON CONFLICT (id) DO NOTHING RETURNING id",
        row_placeholders(orders.len(), 5)
    );
    let sql = positional(conn, &sql);
    let mut query = sqlx::query_scalar(&sql);
    for (order, id) in orders.iter().zip(first..) {
        let columns = OrderColumns::of(order);
        query = query
            .bind(id)
            .bind(order.pet_id)
            .bind(columns.quantity)
            .bind(columns.ship_date)
            .bind(columns.status);
    }
    let inserted = inserted_ids(conn, query).await?;
    let mut stored = Vec::with_capacity(orders.len());
    for (order, id) in orders.iter().zip(first..) {
        stored.push(if inserted.contains(&id) {
            as_stored(id, order)?
        } else {
            place(conn, None, order).await?
        });
    }
    Ok(stored)
}

/// The order as [`load`] would read it back after storing it as `id`.
fn as_stored(id: i64, order: &Order) -> Result<Order, StoreError> {
    let columns = OrderColumns::of(order);
    Order::try_from(OrderRow {
        id,
        pet_id: order.pet_id,
        quantity: columns.quantity,
        ship_date: columns.ship_date,
        status: columns.status.to_owned(),
    })
}

/// An order's fields as its row stores them (its defaults applied).
struct OrderColumns {
    quantity: i32,
    ship_date: Option<String>,
    status: &'static str,
}

impl OrderColumns {
    fn of(order: &Order) -> Self {
        Self {
            quantity: order.quantity.unwrap_or(1),
            ship_date: order.ship_date.map(clock::timestamp),
            status: order.status.unwrap_or(OrderStatus::Placed).as_str(),
        }
    }
}

/// Deletes an order; its pet's id and the order's status as it was, or
/// `None` if there is no such order.
pub(crate) async fn delete(
    conn: &mut AnyConnection,
    id: i64,
) -> Result<Option<(i64, OrderStatus)>, StoreError> {
    // DELETE ... RETURNING: of two deletes racing, only one sees the order.
    let deleted: Option<(i64, String)> =
        sqlx::query_as("DELETE FROM orders WHERE id = $1 RETURNING pet_id, status")
            .bind(id)
            .fetch_optional(conn)
            .await?;
    let Some((pet_id, status)) = deleted else {
        return Ok(None);
    };
    let status = OrderStatus::parse(&status)
        .ok_or_else(|| StoreError::corrupt(format!("order {id}: status")))?;
    Ok(Some((pet_id, status)))
}

/// Inserts an order with id `id` (its defaults applied), without touching its pet.
pub(super) async fn insert(
    conn: &mut AnyConnection,
    id: i64,
    order: &Order,
) -> Result<(), StoreError> {
    let columns = OrderColumns::of(order);
    sqlx::query(
        "INSERT INTO orders (id, pet_id, quantity, ship_date, status) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id)
    .bind(order.pet_id)
    .bind(columns.quantity)
    .bind(columns.ship_date)
    .bind(columns.status)
    .execute(conn)
    .await?;
    Ok(())
}
