//! Pets: add (or replace the one with the id asked for), replace, change
//! the name or status, delete.

use super::Context;
use crate::core::failure::{Failure, OnConflict as _};
use crate::petstore::db;
use crate::petstore::model::{Pet, PetImage, PetStatus, requested_id};

fn not_found(id: i64) -> Failure {
    Failure::not_found(format!("pet {id} not found"))
}

/// Adds a pet; the pet as stored, with its id. An id that exists replaces
/// that pet (upstream behaviour that generated clients rely on).
pub(crate) async fn add(ctx: Context<'_>, pet: Pet) -> Result<Pet, Failure> {
    let mut pet = pet.with_default_status();
    let Some(requested) = requested_id(pet.id) else {
        // The store gives the id: the pet goes in with the others that
        // arrive at the same time.
        return Ok(ctx.new_pets.add(pet).await?);
    };
    let conflict = |_: Option<&str>| {
        Failure::conflict("a pet with this id was created at the same time; try again")
    };
    let mut tx = ctx.db.begin_write().await?;
    let before = db::pets::status(tx.conn(), requested).await?;
    db::pets::note_written(&mut tx, requested, before, &pet);
    if before.is_some() {
        db::pets::write(tx.conn(), requested, &pet).await?;
    } else {
        db::pets::insert(tx.conn(), Some(requested), &pet)
            .await
            .on_conflict(conflict)?;
    }
    tx.commit().await.on_conflict(conflict)?;
    pet.id = Some(requested);
    Ok(pet)
}

/// Replaces the pet with the pet's id.
pub(crate) async fn replace(ctx: Context<'_>, pet: Pet) -> Result<Pet, Failure> {
    let Some(id) = requested_id(pet.id) else {
        return Err(Failure::not_found(
            "updatePet replaces an existing pet: give its id (no pet has id 0 or none)",
        ));
    };
    // Written with the other replacements that arrive at the same time.
    ctx.replaced_pets
        .add((id, pet.with_default_status()))
        .await?
        .ok_or_else(|| not_found(id))
}

/// Gives pet `id` a new name or status (or both); the pet as changed.
pub(crate) async fn update_name_or_status(
    ctx: Context<'_>,
    id: i64,
    name: Option<String>,
    status: Option<PetStatus>,
) -> Result<Pet, Failure> {
    if let Some(name) = &name {
        crate::petstore::model::check_pet_name("name", name)?;
    }
    let mut tx = ctx.db.begin_write().await?;
    let mut pet = db::pets::get(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let before = pet.status;
    if let Some(name) = name {
        pet.name = name;
    }
    if let Some(status) = status {
        pet.status = Some(status);
    }
    db::pets::note_written(&mut tx, id, before, &pet);
    db::pets::write_keeping_tags(tx.conn(), id, &pet).await?;
    tx.commit().await?;
    Ok(pet)
}

/// Deletes pet `id`, with its tags and images.
pub(crate) async fn delete(ctx: Context<'_>, id: i64) -> Result<(), Failure> {
    let mut tx = ctx.db.begin_write().await?;
    let Some(before) = db::pets::delete(tx.conn(), id).await? else {
        return Err(not_found(id));
    };
    db::pets::note_change(&mut tx, id, Some(before), None);
    tx.commit().await?;
    Ok(())
}

/// The longest `additionalMetadata` kept with an image.
const MAX_METADATA_CHARS: usize = 1024;

/// Adds an image to pet `id`, and its URL (made by `url_of` from the
/// image's id) to the pet's `photoUrls`; the URL.
pub(crate) async fn add_image(
    ctx: Context<'_>,
    id: i64,
    image: &PetImage,
    metadata: Option<&str>,
    url_of: impl FnOnce(i64) -> String,
) -> Result<String, Failure> {
    if let Some(metadata) = metadata {
        crate::core::text_policy::check_field("additionalMetadata", metadata)?;
        if metadata.chars().count() > MAX_METADATA_CHARS {
            return Err(Failure::invalid(format!(
                "additionalMetadata must be at most {MAX_METADATA_CHARS} characters"
            )));
        }
    }
    let mut tx = ctx.db.begin_write().await?;
    let mut pet = db::pets::get(tx.conn(), id)
        .await?
        .ok_or_else(|| not_found(id))?;
    let image_id = db::images::insert(tx.conn(), id, image, metadata).await?;
    let url = url_of(image_id);
    pet.photo_urls.push(url.clone());
    db::pets::note_written(&mut tx, id, pet.status, &pet);
    db::pets::write_keeping_tags(tx.conn(), id, &pet).await?;
    tx.commit().await?;
    Ok(url)
}
