//! The inventory: how many pets have each status, every status present (0
//! where none), as JSON. From memory until a pet's status changes, or a pet
//! comes or goes; then from the counts the database keeps as pets are
//! written (a few rows, however many pets there are).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::Context;
use crate::http::error::Error;
use crate::petstore::db::{self, topics};
use crate::petstore::model::PetStatus;
use crate::storage::Generations;

/// What the inventory depends on: the counts.
pub(crate) fn ticket(generations: &Generations, (): &()) -> u64 {
    generations.ticket([topics::PET_COUNTS])
}

/// The inventory, as the JSON sent.
pub(crate) async fn inventory(ctx: Context<'_>) -> Result<Bytes, Error> {
    let body = ctx
        .caches
        .inventory
        .get(ctx.db, (), async || {
            let mut inventory: BTreeMap<&str, i32> =
                PetStatus::ALL.iter().map(|s| (s.as_str(), 0)).collect();
            for (status, count) in db::pets::count_by_status(ctx.db).await? {
                inventory.insert(status.as_str(), i32::try_from(count).unwrap_or(i32::MAX));
            }
            serde_json::to_vec(&inventory)
                .map(|json| Some(Bytes::from(json)))
                .map_err(|err| Error::internal("cannot write the inventory", err))
        })
        .await?
        .ok_or_else(|| Error::internal("getInventory", "no inventory was read"))?;
    Ok(Bytes::clone(&body))
}
