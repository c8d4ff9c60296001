//! Orders move pets through their statuses: the pet must be `available` to
//! be ordered; a `placed` or `approved` order makes it `pending`, a
//! `delivered` one `sold`; deleting an order that was not delivered makes
//! it `available` again. Each change of an order and its pet is one
//! transaction.

use super::Context;
use crate::core::failure::{Failure, OnConflict as _};
use crate::petstore::db;
use crate::petstore::db::new_orders::PetUnavailable;
use crate::petstore::model::{Order, OrderStatus, PetStatus, requested_id};

fn not_found(id: i64) -> Failure {
    Failure::not_found(format!("order {id} not found"))
}

/// Places an order (its defaults applied) for an available pet, which
/// takes the status the order gives it; the order as stored.
pub(crate) async fn place(ctx: Context<'_>, order: Order) -> Result<Order, Failure> {
    let requested = requested_id(order.id);
    let order = order.with_defaults();
    let pet_id = order.pet_id;
    let placed = match requested {
        // The store gives the id: the order goes in with the others that
        // arrive at the same time.
        None => ctx.new_orders.add(order).await?,
        Some(requested) => place_with_id(ctx, requested, order).await?,
    };
    placed.map_err(|PetUnavailable(status)| {
        let why = match status {
            None => "does not exist".to_owned(),
            Some(other) => format!("is {}", other.as_str()),
        };
        Failure::invalid(format!("pet {pet_id} {why}, so it cannot be ordered"))
    })
}

/// Places an order under the id the client chose.
async fn place_with_id(
    ctx: Context<'_>,
    requested: i64,
    order: Order,
) -> Result<Result<Order, PetUnavailable>, Failure> {
    let status = order.status.unwrap_or(OrderStatus::Placed);
    let taken = |_: Option<&str>| Failure::conflict(format!("order {requested} exists"));
    let mut tx = ctx.db.begin_write().await?;
    // Check and claim the pet in one statement, so that two orders racing
    // for the same pet (possible on PostgreSQL) cannot both win.
    if !db::pets::claim_available(tx.conn(), order.pet_id, status.pet_status()).await? {
        let status = db::pets::status(tx.conn(), order.pet_id).await?;
        return Ok(Err(PetUnavailable(status)));
    }
    db::pets::note_change(
        &mut tx,
        order.pet_id,
        Some(PetStatus::Available),
        Some(status.pet_status()),
    );
    let placed = db::orders::place(tx.conn(), Some(requested), &order)
        .await
        .on_conflict(taken)?;
    tx.commit().await.on_conflict(taken)?;
    Ok(Ok(placed))
}

/// The order `id`.
pub(crate) async fn get(ctx: Context<'_>, id: i64) -> Result<Order, Failure> {
    db::orders::get(ctx.db, id)
        .await?
        .ok_or_else(|| not_found(id))
}

/// Deletes order `id`, and gives its pet the status the deletion calls for.
pub(crate) async fn delete(ctx: Context<'_>, id: i64) -> Result<(), Failure> {
    let mut tx = ctx.db.begin_write().await?;
    let (pet_id, status) = db::orders::delete(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    if let Some(pet_status) = status.pet_status_once_deleted() {
        // The pet may have been deleted since; then there is nothing to release.
        db::pets::set_status(tx.conn(), pet_id, pet_status).await?;
        db::pets::note_status_unknown(&mut tx, pet_id);
    } else {
        tx.changes_nothing_cached();
    }
    tx.commit().await?;
    Ok(())
}
