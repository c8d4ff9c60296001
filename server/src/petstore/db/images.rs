//! Pet images, stored in the database (so that replicas on one PostgreSQL
//! share them). An image's id is never reused, so an image never changes.

use super::pets;
use crate::clock;
use crate::petstore::model::PetImage;
use crate::storage::{Database, StoreError};

/// Stores an image of pet `pet_id` and appends the URL `url_of(image id)` to
/// the pet's `photoUrls`, in one transaction. The URL, or `None` if there is
/// no such pet.
pub(crate) async fn add(
    db: &Database,
    pet_id: i64,
    image: &PetImage,
    metadata: Option<&str>,
    url_of: impl FnOnce(i64) -> String,
) -> Result<Option<String>, StoreError> {
    let mut tx = db.begin_write().await?;
    let Some(mut pet) = pets::get(tx.conn(), pet_id).await? else {
        return Ok(None);
    };
    let image_id: i64 = sqlx::query_scalar(
        "INSERT INTO pet_images (pet_id, content_type, data, additional_metadata, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(pet_id)
    .bind(&image.content_type)
    .bind(&image.data)
    .bind(metadata)
    .bind(clock::now_timestamp())
    .fetch_one(tx.conn())
    .await?;
    let url = url_of(image_id);
    pet.photo_urls.push(url.clone());
    pets::write(tx.conn(), pet_id, &pet).await?;
    tx.commit().await?;
    Ok(Some(url))
}

/// Image `image_id` of pet `pet_id`.
pub(crate) async fn get(
    db: &Database,
    pet_id: i64,
    image_id: i64,
) -> Result<Option<PetImage>, StoreError> {
    let image: Option<(String, Vec<u8>)> =
        sqlx::query_as("SELECT content_type, data FROM pet_images WHERE id = $1 AND pet_id = $2")
            .bind(image_id)
            .bind(pet_id)
            .fetch_optional(db.pool())
            .await?;
    Ok(image.map(|(content_type, data)| PetImage { content_type, data }))
}
