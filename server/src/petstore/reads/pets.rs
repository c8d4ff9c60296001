//! A pet, as `getPetById` answers it: from its cache while the pet did not
//! change since it was read, else from storage.

use bytes::Bytes;

use super::Context;
use crate::http::error::Error;
use crate::petstore::db::{self, topics};
use crate::petstore::model::{Pet, PetStatus};
use crate::petstore::wire::{self, Format};
use crate::storage::Generations;

/// A pet as `getPetById` answers it, and its status (a list of pets by
/// status made of cached pets checks that each still has one of them).
#[derive(Debug)]
pub(crate) struct Cached {
    pub(crate) body: Bytes,
    pub(crate) status: Option<PetStatus>,
}

impl Cached {
    pub(crate) fn of(format: Format, pet: &Pet) -> Result<Self, Error> {
        Ok(Cached {
            body: wire::to_bytes(format, pet)?,
            status: pet.status,
        })
    }
}

/// What a cached pet depends on: itself.
pub(crate) fn ticket(generations: &Generations, (id, _): &(i64, Format)) -> u64 {
    generations.ticket([topics::pet(*id)])
}

/// Pet `id` in `format`, as the bytes sent; `None` if there is none.
pub(crate) async fn pet(ctx: Context<'_>, id: i64, format: Format) -> Result<Option<Bytes>, Error> {
    let cached = ctx
        .caches
        .pets
        .get(ctx.db, (id, format), async || {
            let pet = db::pets::get(&mut *ctx.db.conn().await?, id).await?;
            pet.map(|pet| Cached::of(format, &pet)).transpose()
        })
        .await?;
    Ok(cached.map(|cached| Bytes::clone(&cached.body)))
}
