//! The `store` group: orders and the inventory.
//!
//! Orders move pets through their statuses (DESIGN 4.1): the pet must be
//! `available` to be ordered; a `placed` or `approved` order makes it
//! `pending`, a `delivered` one `sold`; deleting an order that was not
//! delivered makes it `available` again. Each rule runs in the transaction
//! that changes the order.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::FromRow;
use utoipa::ToSchema;

use super::PetstoreState;
use super::pet::{PetStatus, pet_status, set_pet_status};
use super::wire::{
    ApiError, Body, BodyFormat, Format, JsonOnly, PathParams, Reply, ToXml, WireBody,
    check_client_id, parse_form, parse_json, parse_xml, positive_id, xml_document,
};
use crate::storage::{IdTable, is_unique_violation};

/// A purchase order for a pet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename = "order", rename_all = "camelCase")]
#[schema(xml(name = "order"))]
pub struct Order {
    /// Assigned by the server when absent or 0. Ids stay within the integers
    /// that JavaScript represents exactly (at most 2^53 - 1).
    #[schema(minimum = 0, maximum = 9007199254740991_i64, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    #[schema(minimum = 1)]
    pub pet_id: i64,
    #[schema(minimum = 1, default = 1, nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<i32>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_date: Option<DateTime<Utc>>,
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<OrderStatus>,
    /// True once the order is delivered (derived from `status`; ignored on input).
    #[schema(nullable = false)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete: Option<bool>,
}

/// Order Status
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OrderStatus {
    Placed,
    Approved,
    Delivered,
}

impl OrderStatus {
    fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Placed => "placed",
            OrderStatus::Approved => "approved",
            OrderStatus::Delivered => "delivered",
        }
    }

    fn parse(value: &str) -> Option<OrderStatus> {
        [
            OrderStatus::Placed,
            OrderStatus::Approved,
            OrderStatus::Delivered,
        ]
        .into_iter()
        .find(|s| s.as_str() == value)
    }

    /// The status an order in this state gives its pet.
    pub fn pet_status(self) -> PetStatus {
        match self {
            OrderStatus::Placed | OrderStatus::Approved => PetStatus::Pending,
            OrderStatus::Delivered => PetStatus::Sold,
        }
    }
}

impl ToXml for Order {
    fn to_xml(&self) -> Result<String, quick_xml::SeError> {
        xml_document(self)
    }
}

impl WireBody for Order {
    const FORMATS: &'static [BodyFormat] = &[BodyFormat::Json, BodyFormat::Xml, BodyFormat::Form];

    fn from_json(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_json(bytes)
    }

    fn from_xml(text: &str) -> Result<Self, ApiError> {
        parse_xml::<Order, Order>(text)
    }

    fn from_form(bytes: &[u8]) -> Result<Self, ApiError> {
        parse_form::<Order, Order>(bytes)
    }

    fn validate(&self) -> Result<(), ApiError> {
        check_client_id(self.id)?;
        if self.pet_id < 1 {
            return Err(ApiError::validation("petId must be a positive integer"));
        }
        if matches!(self.quantity, Some(q) if q < 1) {
            return Err(ApiError::validation("quantity must be at least 1"));
        }
        Ok(())
    }
}

#[derive(Debug, FromRow)]
struct OrderRow {
    id: i64,
    pet_id: i64,
    quantity: i32,
    ship_date: Option<String>,
    status: String,
}

impl TryFrom<OrderRow> for Order {
    type Error = ApiError;

    fn try_from(row: OrderRow) -> Result<Self, ApiError> {
        let corrupt = |what: &str| {
            ApiError::internal("corrupt order row", format!("order {}: {what}", row.id))
        };
        let status = OrderStatus::parse(&row.status).ok_or_else(|| corrupt("status"))?;
        let ship_date = row
            .ship_date
            .as_deref()
            .map(|d| DateTime::parse_from_rfc3339(d).map(|d| d.with_timezone(&Utc)))
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

async fn load_order(conn: &mut sqlx::AnyConnection, id: i64) -> Result<Option<Order>, ApiError> {
    let row: Option<OrderRow> =
        sqlx::query_as("SELECT id, pet_id, quantity, ship_date, status FROM orders WHERE id = $1")
            .bind(id)
            .fetch_optional(conn)
            .await?;
    row.map(Order::try_from).transpose()
}

/// Returns pet inventories by status.
#[utoipa::path(
    get,
    path = "/store/inventory",
    operation_id = "getInventory",
    tag = "store",
    responses(
        (status = 200, description = "successful operation", body = BTreeMap<String, i32>,
            content_type = "application/json"),
    ),
    security(("api_key" = [])),
)]
pub async fn get_inventory(
    State(state): State<PetstoreState>,
    _json: JsonOnly,
) -> Result<axum::Json<BTreeMap<String, i32>>, ApiError> {
    let counts: Vec<(String, i64)> =
        sqlx::query_as("SELECT status, COUNT(*) FROM pets GROUP BY status")
            .fetch_all(state.db.pool())
            .await?;
    let mut inventory: BTreeMap<String, i32> = PetStatus::ALL
        .iter()
        .map(|s| (s.as_str().to_owned(), 0))
        .collect();
    for (status, count) in counts {
        inventory.insert(status, i32::try_from(count).unwrap_or(i32::MAX));
    }
    Ok(axum::Json(inventory))
}

/// Place an order for a pet.
#[utoipa::path(
    post,
    path = "/store/order",
    operation_id = "placeOrder",
    tag = "store",
    request_body(content(
        (Order = "application/json"),
        (Order = "application/xml"),
        (Order = "application/x-www-form-urlencoded"),
    )),
    responses(
        (status = 200, description = "successful operation",
            content((Order = "application/json"), (Order = "application/xml"))),
        (status = 400, description = "Invalid input"),
        (status = 409, description = "An order with this id exists"),
        (status = 422, description = "Validation exception, or the pet is not available"),
    ),
)]
pub async fn place_order(
    State(state): State<PetstoreState>,
    format: Format,
    Body(order): Body<Order>,
) -> Result<Reply<Order>, ApiError> {
    let status = order.status.unwrap_or(OrderStatus::Placed);
    let quantity = order.quantity.unwrap_or(1);
    let ship_date = order
        .ship_date
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let mut tx = state.db.begin_write().await?;
    // Check and claim the pet in one statement, so that two orders racing for
    // the same pet (possible on PostgreSQL) cannot both win.
    let claimed = sqlx::query("UPDATE pets SET status = $1 WHERE id = $2 AND status = 'available'")
        .bind(status.pet_status().as_str())
        .bind(order.pet_id)
        .execute(tx.conn())
        .await?;
    if claimed.rows_affected() == 0 {
        let why = match pet_status(tx.conn(), order.pet_id).await? {
            None => "does not exist".to_owned(),
            Some(other) => format!("is {}", other.as_str()),
        };
        return Err(ApiError::validation(format!(
            "pet {} {why}, so it cannot be ordered",
            order.pet_id
        )));
    }
    let id = match order.id.filter(|id| *id > 0) {
        Some(id) => id,
        None => state.db.next_id(tx.conn(), IdTable::Orders).await?,
    };
    sqlx::query(
        "INSERT INTO orders (id, pet_id, quantity, ship_date, status) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(id)
    .bind(order.pet_id)
    .bind(quantity)
    .bind(ship_date)
    .bind(status.as_str())
    .execute(tx.conn())
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            ApiError::conflict(format!("order {id} exists"))
        } else {
            ApiError::from(e)
        }
    })?;
    let placed = load_order(tx.conn(), id)
        .await?
        .ok_or_else(|| ApiError::internal("order vanished", id))?;
    tx.commit().await?;
    Ok(Reply::new(format, placed))
}

/// Find purchase order by ID.
#[utoipa::path(
    get,
    path = "/store/order/{orderId}",
    operation_id = "getOrderById",
    tag = "store",
    params(("orderId" = i64, Path, minimum = 1, description = "ID of order that needs to be fetched")),
    responses(
        (status = 200, description = "successful operation",
            content((Order = "application/json"), (Order = "application/xml"))),
        (status = 400, description = "Invalid ID supplied"),
        (status = 404, description = "Order not found"),
    ),
)]
pub async fn get_order_by_id(
    State(state): State<PetstoreState>,
    format: Format,
    PathParams(order_id): PathParams<i64>,
) -> Result<Reply<Order>, ApiError> {
    let id = positive_id("orderId", order_id)?;
    let mut conn = state.db.pool().acquire().await?;
    let order = load_order(&mut conn, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("order {id} not found")))?;
    Ok(Reply::new(format, order))
}

/// Delete purchase order by identifier.
#[utoipa::path(
    delete,
    path = "/store/order/{orderId}",
    operation_id = "deleteOrder",
    tag = "store",
    params(("orderId" = i64, Path, minimum = 1, description = "ID of the order that needs to be deleted")),
    responses(
        (status = 200, description = "order deleted"),
        (status = 400, description = "Invalid ID supplied"),
        (status = 404, description = "Order not found"),
    ),
)]
pub async fn delete_order(
    State(state): State<PetstoreState>,
    _format: Format,
    PathParams(order_id): PathParams<i64>,
) -> Result<Response, ApiError> {
    let id = positive_id("orderId", order_id)?;
    let mut tx = state.db.begin_write().await?;
    // DELETE ... RETURNING: of two deletes racing, only one sees the order.
    let deleted: Option<(i64, String)> =
        sqlx::query_as("DELETE FROM orders WHERE id = $1 RETURNING pet_id, status")
            .bind(id)
            .fetch_optional(tx.conn())
            .await?;
    let (pet_id, status) =
        deleted.ok_or_else(|| ApiError::not_found(format!("order {id} not found")))?;
    if OrderStatus::parse(&status) != Some(OrderStatus::Delivered) {
        // The pet may have been deleted since; then there is nothing to release.
        set_pet_status(tx.conn(), pet_id, PetStatus::Available).await?;
    }
    tx.commit().await?;
    Ok(StatusCode::OK.into_response())
}
