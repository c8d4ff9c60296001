//! The `store` group: orders and the inventory.
//!
//! Orders move pets through their statuses: the pet must be `available` to
//! be ordered; a `placed` or `approved` order makes it `pending`, a
//! `delivered` one `sold`; deleting an order that was not delivered makes it
//! `available` again (the rules are the model's, each applied in the
//! transaction that changes the order).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};

use crate::http::error::Error;
use crate::http::extract::Path;
use crate::http::idempotency::Idempotent;
use crate::petstore::api::auth::{Authorized, Inventory};
use crate::petstore::model::Order;
use crate::petstore::ops;
use crate::petstore::reads;
use crate::petstore::state::PetstoreState;
use crate::petstore::wire::{
    ALL_FORMATS, Body, BodyFormat, Format, JsonOnly, Reply, ToXml, WireBody, positive_id,
};

impl ToXml for Order {}

impl WireBody for Order {
    const FORMATS: &'static [BodyFormat] = ALL_FORMATS;

    fn validate(&self) -> Result<(), Error> {
        Ok(self.check_rules()?)
    }
}

/// Returns pet inventories by status.
#[utoipa::path(
    get, path = "/store/inventory",
    tag = "store",
    responses(
        (status = 200, description = "successful operation", body = BTreeMap<String, i32>,
            content_type = "application/json"),
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn get_inventory(
    State(state): State<PetstoreState>,
    _auth: Authorized<Inventory>,
    _json: JsonOnly,
) -> Result<Response, Error> {
    let body = reads::inventory::inventory(state.reads()).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Place an order for a pet. 409 when an order has its id; 422 when the pet
/// is not available.
#[utoipa::path(
    post, path = "/store/order",
    tag = "store",
    params(crate::http::idempotency::IdempotencyKeyHeader),
    request_body = Order,
    responses(
        (status = 200, description = "successful operation", body = Order),
    ),
)]
pub(crate) async fn place_order(
    State(state): State<PetstoreState>,
    format: Format,
    Idempotent(Body(order)): Idempotent<Body<Order>>,
) -> Result<Reply<Order>, Error> {
    let order = ops::orders::place(state.ops(), order).await?;
    Ok(Reply::new(format, order))
}

/// Find purchase order by ID.
#[utoipa::path(
    get, path = "/store/order/{orderId}",
    tag = "store",
    params(("orderId" = i64, Path, minimum = 1, description = "ID of order that needs to be fetched")),
    responses(
        (status = 200, description = "successful operation", body = Order),
        (status = 400, description = "Invalid ID supplied"),
    ),
)]
pub(crate) async fn get_order_by_id(
    State(state): State<PetstoreState>,
    format: Format,
    Path(order_id): Path<i64>,
) -> Result<Reply<Order>, Error> {
    let id = positive_id("orderId", order_id)?;
    let order = ops::orders::get(state.ops(), id).await?;
    Ok(Reply::new(format, order))
}

/// Delete purchase order by identifier.
#[utoipa::path(
    delete, path = "/store/order/{orderId}",
    tag = "store",
    params(("orderId" = i64, Path, minimum = 1, description = "ID of the order that needs to be deleted")),
    responses(
        (status = 200, description = "order deleted"),
        (status = 400, description = "Invalid ID supplied"),
    ),
)]
pub(crate) async fn delete_order(
    State(state): State<PetstoreState>,
    _format: Format,
    Path(order_id): Path<i64>,
) -> Result<StatusCode, Error> {
    let id = positive_id("orderId", order_id)?;
    ops::orders::delete(state.ops(), id).await?;
    Ok(StatusCode::OK)
}
